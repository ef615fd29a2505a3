# p4de.24xlarge: p4d with 80 GB A100s; same PCIe and EFA layout.
Match=p4de.24xlarge
Include=efa-cuda
