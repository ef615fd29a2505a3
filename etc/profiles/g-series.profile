# g5, g6, g6e, gr6 and g7e with EFA: NVIDIA GPUs without GPUDirect RDMA
# over EFA. aws-ofi-nccl requires no GDR on g5.48xlarge and lists the
# others in no entry (src/platform-aws.cpp), so none of efa-cuda's
# GPUDirect RDMA variables apply: only what every EFA node needs.
Match=g5*,g6*,gr6*,g7e*
Include=efa-common
