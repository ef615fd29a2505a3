# p4d.24xlarge: 8 A100 (40 GB), 4 EFA (one per PCIe switch, shared by two
# GPUs). Usually run with older EFA installers, which is where the
# conditions in efa-cuda matter.
Match=p4d.24xlarge
Include=efa-cuda
# A healthy node shows 4 EFA devices (awslabs/awsome-distributed-ai
# 4.validation_and_observability/2.gpu-cluster-healthcheck/instance-profiles.conf).
EFADevices=p4d.24xlarge:4
