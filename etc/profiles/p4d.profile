# p4d.24xlarge: 8 A100 (40 GB), 4 EFA (one per PCIe switch, shared by two
# GPUs). Usually run with older EFA installers, which is where the
# conditions in efa-cuda matter.
Match=p4d.24xlarge
Include=efa-cuda
