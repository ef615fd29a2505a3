# efa-neuron: AWS Trainium instances. The Neuron runtime's collectives go
# through libfabric directly, so the settings aws-ofi-nccl makes for CUDA
# hosts must be made here (AWS Neuron documentation, "EFA setup" for
# trn1/trn2 training).
Include=efa-common
Env=FI_PROVIDER=efa
Env=FI_EFA_USE_DEVICE_RDMA=1
Env=FI_EFA_FORK_SAFE=1
