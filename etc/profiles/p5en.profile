# p5en.48xlarge: 8 H200, 16 EFAv3 (two per GPU). aws-ofi-nccl sets
# NCCL_NETDEVS_POLICY=max:1 for it.
Match=p5en.48xlarge
Include=efa-cuda
# 16 EFA devices (awslabs/awsome-distributed-ai
# 4.validation_and_observability/2.gpu-cluster-healthcheck/
# instance-profiles.conf); they can show late, and that health check counts
# again 3 times, 5 s apart (checks/2-efa-enumeration.sh).
EFADevices=p5en.48xlarge:16
EFADevicesWait=15
