# efa-neuron: AWS Trainium and Inferentia instances. The Neuron runtime's
# collectives go through libfabric directly, so the settings aws-ofi-nccl
# makes for CUDA hosts must be made here: AWS Neuron's own training setup
# for trn1 clusters exports FI_PROVIDER=efa and FI_EFA_USE_DEVICE_RDMA=1
# (aws-neuron/neuronx-nemo-megatron
# nemo/examples/nlp/language_modeling/train_setup.sh).
Include=efa-common
Env=FI_PROVIDER=efa
Env=FI_EFA_USE_DEVICE_RDMA=1
# Fork safety needs the flag only on kernels older than 5.15, such as
# Amazon Linux 2's 5.10 (awsome-distributed-training
# 1.architectures/efa-cheatsheet.md, section 1 row FI_EFA_FORK_SAFE), and
# where it acts it turns libfabric's huge pages off; aws-ofi-nccl leaves it
# unset on Neuron at the Neuron team's request (both in aws-ofi-nccl
# src/platform-aws.cpp, platform_init).
Env=FI_EFA_FORK_SAFE=1 If=kernel<5.15
