# p5.4xlarge: 1 H100 and 1 EFA, without GPUDirect RDMA: aws-ofi-nccl's
# entry for it requires no GDR and sets no variables (src/platform-aws.cpp,
# entry "p5.4xlarge", gdr_required = false), so only the settings every EFA
# node needs apply, none of efa-cuda's GPUDirect RDMA ones.
Match=p5.4xlarge
Include=efa-common
