# p5e.48xlarge: p5 with H200s; same PCIe and EFA layout.
Match=p5e.48xlarge
Include=efa-cuda
# 32 EFA devices (awslabs/awsome-distributed-ai
# 4.validation_and_observability/2.gpu-cluster-healthcheck/instance-profiles.conf).
EFADevices=p5e.48xlarge:32
