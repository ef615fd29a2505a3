# p4de.24xlarge: p4d with 80 GB A100s; same PCIe and EFA layout.
Match=p4de.24xlarge
Include=efa-cuda
# 4 EFA devices (awslabs/awsome-distributed-ai
# 4.validation_and_observability/2.gpu-cluster-healthcheck/instance-profiles.conf).
EFADevices=p4de.24xlarge:4
