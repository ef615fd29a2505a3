# nvidia: a node with NVIDIA GPUs whose instance type no other profile
# names (a family newer than these profiles): the CUDA base. Its GPUDirect
# RDMA variables only apply to stacks older than any such family ships
# with (efa-cuda.profile).
Accelerator=nvidia
Include=efa-cuda
