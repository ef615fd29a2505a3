# efa-cuda: NVIDIA GPU instances with GPUDirect RDMA over EFA.
# Included by the p4d, p5, p5en and p6 profiles.
Include=efa-common

# GPUDirect RDMA must be asked for unless both libfabric is 1.18 or newer
# and aws-ofi-nccl 1.7.0 or newer (aws-ofi-nccl doc/efa-env-var.md:
# section 1 row FI_EFA_USE_DEVICE_RDMA, and the section 2 presets for
# aws-ofi-nccl >=1.6.0,<1.7.0 and <=1.5.0 on p4/p5). Either line sets it.
# Setting it on newer stacks is harmless but was the classic cargo-cult
# line.
Env=FI_EFA_USE_DEVICE_RDMA=1 If=libfabric<1.18
Env=FI_EFA_USE_DEVICE_RDMA=1 If=ofi-nccl<1.7.0

# EFA installers before 1.29.1 with NCCL 2.19 and later fail to register
# GPU memory ("Unable to register memory (type = 2)") unless this is set
# (awsome-distributed-training 1.architectures/efa-cheatsheet.md, section
# 1 row FI_EFA_SET_CUDA_SYNC_MEMOPS). The NCCL version is the job's, not
# the node's, so every old installer gets it.
Env=FI_EFA_SET_CUDA_SYNC_MEMOPS=0 If=installer<1.29.1

# Not set on purpose: aws-ofi-nccl sets FI_EFA_FORK_SAFE=1 on CUDA
# platforms and the per-platform NCCL tunables (NCCL_BUFFSIZE,
# NCCL_P2P_NET_CHUNKSIZE, NCCL_NVLS_CHUNKSIZE, NCCL_NET_FORCE_FLUSH,
# NCCL_TOPO_FILE, NCCL_TUNER_PLUGIN) itself, without overriding the user
# (aws-ofi-nccl src/platform-aws.cpp, platform_data_map and
# platform_init); hard-coding them here would pin today's values on
# tomorrow's plugin.
