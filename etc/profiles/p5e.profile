# p5e.48xlarge: p5 with H200s; same PCIe and EFA layout.
Match=p5e.48xlarge
Include=efa-cuda
