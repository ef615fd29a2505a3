# SPDX-License-Identifier: Apache-2.0
# A real client of the launch variables: Debian's PyTorch initialises
# torch.distributed from slurm-efa's RANK, WORLD_SIZE, LOCAL_RANK,
# MASTER_ADDR and MASTER_PORT alone (init_method="env://", gloo over
# loopback) in a 2-node x 2-task --efa step, and all-reduces. The test
# cluster's node names resolve nowhere: MASTER_ADDR must be the first
# node's address, as Slurm reaches it.

py=/usr/bin/python3
if ! "$py" -c 'import torch.distributed' 2>/dev/null; then
	ok 1 "Debian's python3-torch is installed (scripts/install-deps installs it)"
	return 0
fi
write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
script=$SLURM_EFA_CLUSTER/allreduce.py
cat >"$script" <<'PY'
import datetime, os, torch, torch.distributed as dist
dist.init_process_group("gloo", init_method="env://",
                        timeout=datetime.timedelta(seconds=60))
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(f"rank={dist.get_rank()} world={dist.get_world_size()} "
      f"local={os.environ['LOCAL_RANK']} master={os.environ['MASTER_ADDR']} sum={t.item():g}")
dist.destroy_process_group()
PY
chmod 644 "$script"
ok "$(getent hosts n1 >/dev/null; echo $((! $?)))" "the test cluster's node names do not resolve (n1 has no address)"

run srun -N2 -w n1,n2 --ntasks-per-node=2 --efa -t 2 "$py" "$script"
is "$rc" 0 "a 2-node x 2-task PyTorch step initialises from slurm-efa's variables alone"
is "$(sort <<<"$out")" "rank=0 world=4 local=0 master=127.0.0.1 sum=10
rank=1 world=4 local=1 master=127.0.0.1 sum=10
rank=2 world=4 local=0 master=127.0.0.1 sum=10
rank=3 world=4 local=1 master=127.0.0.1 sum=10" \
	"  and all-reduces to 1+2+3+4 on every rank, MASTER_ADDR the first node's address"

# The job's own MASTER_ADDR still wins.
run env MASTER_ADDR=localhost srun -N1 -w n1 -n1 --efa bash -c 'echo "$MASTER_ADDR"'
is "$out" "localhost" "a job's own MASTER_ADDR is kept"
