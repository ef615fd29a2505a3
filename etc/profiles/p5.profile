# p5.48xlarge: 8 H100, 32 EFA (four per GPU, behind the GPU's PCIe switch).
# aws-ofi-nccl adds the NVLS chunk sizes and NCCL_NET_FORCE_FLUSH=0 for it
# (src/platform-aws.cpp, entry "p5/p5e"). p5.4xlarge has a profile of its
# own.
Match=p5.48xlarge
Include=efa-cuda
# 32 EFA devices (awslabs/awsome-distributed-ai
# 4.validation_and_observability/2.gpu-cluster-healthcheck/instance-profiles.conf).
EFADevices=p5.48xlarge:32
