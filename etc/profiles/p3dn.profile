# p3dn.24xlarge: 8 V100 and 1 EFA, without GPUDirect RDMA (aws-ofi-nccl
# src/platform-aws.cpp, entry "p3dn.24xlarge", gdr_required = false).
Match=p3dn*
Include=efa-common
