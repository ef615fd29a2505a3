# efa-common: what every EFA node needs, whatever its accelerators.
# Included by the instance profiles; matches no instance type itself.
#
# Env=NAME=VALUE [If=COMPONENT<VERSION,...]: see README.md ("Profiles").
# A variable the job already has is never overwritten (unless efa.conf's
# ForceEnv= lists it); RDMAV_*, FI_EFA_MTU_SIZE, FI_EFA_TX_IOV_LIMIT and
# FI_EFA_RX_IOV_LIMIT can never be set here.

# NCCL bootstraps over TCP before it opens EFA; keep it off container
# bridges and loopback (aws-ofi-nccl doc/efa-env-var.md, AWS's
# awsome-distributed-training sbatch examples).
Env=NCCL_SOCKET_IFNAME=^docker,lo,veth

# aws-ofi-nccl 1.5.0 and older neither forced the efa provider nor limited
# NCCL to the protocol EFA supports; newer plugins do both themselves
# (aws-ofi-nccl doc/efa-env-var.md).
Env=FI_PROVIDER=efa If=ofi-nccl<=1.5.0
Env=NCCL_PROTO=simple If=ofi-nccl<=1.5.0
