# p5.48xlarge: 8 H100, 32 EFA (four per GPU, behind the GPU's PCIe switch).
# aws-ofi-nccl adds the NVLS chunk sizes and NCCL_NET_FORCE_FLUSH=0 for it.
Match=p5.48xlarge,p5.4xlarge
Include=efa-cuda
