# efa-cuda: NVIDIA GPU instances with GPUDirect RDMA over EFA.
# Included by the p4d, p5, p5en and p6 profiles.
Include=efa-common

# libfabric before 1.18 used GPUDirect RDMA only when asked; 1.18 and
# later detect it (fi_efa(7); aws-ofi-nccl doc/efa-env-var.md). Setting it
# on newer stacks is harmless but was the classic cargo-cult line.
Env=FI_EFA_USE_DEVICE_RDMA=1 If=libfabric<1.18

# EFA installers before 1.29.1 shipped a libfabric whose CUDA memory ops
# synchronisation conflicts with NCCL 2.19 and later (aws-ofi-nccl
# doc/efa-env-var.md). Fixed in the installer, so only old stacks get it.
Env=FI_EFA_SET_CUDA_SYNC_MEMOPS=0 If=installer<1.29.1

# Not set on purpose: aws-ofi-nccl sets FI_EFA_FORK_SAFE=1 on CUDA
# platforms and the per-platform NCCL tunables (NCCL_BUFFSIZE,
# NCCL_P2P_NET_CHUNKSIZE, NCCL_TOPO_FILE, ...) itself, without overriding
# the user; hard-coding them here would pin today's values on tomorrow's
# plugin.
