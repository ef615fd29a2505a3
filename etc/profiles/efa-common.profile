# efa-common: what every EFA node needs, whatever its accelerators.
# Included by the instance profiles; matches no instance type itself.
#
# Env=NAME=VALUE [If=COMPONENT<VERSION,...]: see docs/admin.md ("Profiles").
# A variable the job already has is never overwritten (unless efa.conf's
# ForceEnv= lists it); RDMAV_*, FI_EFA_MTU_SIZE, FI_EFA_TX_IOV_LIMIT and
# FI_EFA_RX_IOV_LIMIT can never be set here.

# NCCL bootstraps over TCP before it opens EFA; keep it off container
# bridges and loopback: the value AWS's own NCCL test image sets
# (awsome-distributed-training micro-benchmarks/nccl-tests/
# nccl-tests.Dockerfile, "Set Open MPI variables to exclude network
# interface"). Its EFA cheatsheet (1.architectures/efa-cheatsheet.md,
# section 1) names the interfaces to use instead ("en"); excluding works
# whatever the instance names them.
Env=NCCL_SOCKET_IFNAME=^docker,lo,veth

# aws-ofi-nccl 1.5.0 and older neither forced the efa provider nor limited
# NCCL to the protocol EFA supports; newer plugins do both themselves
# (aws-ofi-nccl doc/efa-env-var.md, section 1 rows FI_PROVIDER and
# NCCL_PROTO, and section 2 "Sample Presets").
Env=FI_PROVIDER=efa If=ofi-nccl<=1.5.0
Env=NCCL_PROTO=simple If=ofi-nccl<=1.5.0
