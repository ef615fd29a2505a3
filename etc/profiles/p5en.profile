# p5en.48xlarge: 8 H200, 16 EFAv3 (two per GPU). aws-ofi-nccl sets
# NCCL_NETDEVS_POLICY=max:1 for it.
Match=p5en.48xlarge
Include=efa-cuda
