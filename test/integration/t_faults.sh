# SPDX-License-Identifier: Apache-2.0
# Faults an admin meets: efa.conf missing or broken on one node (with the
# plugin `required` and `optional`), and slurmctld restarted while jobs
# run. Nodes: n1 p5.48xlarge, n2 p4d.24xlarge, n3 cpu-only, n4 trn1.32xlarge.

# Each node reads its own efa.conf (config=.../%n/efa.conf), as if the file
# were local to it; n2's is missing.
write_efa_conf
for n in n1 n2 n3 n4; do
	mkdir -p "$SLURM_EFA_CLUSTER/nodeconf/$n"
	[ "$n" = n2 ] || cp "$EFA_CONF" "$SLURM_EFA_CLUSTER/nodeconf/$n/efa.conf"
done
node_conf="config=$SLURM_EFA_CLUSTER/nodeconf/%n/efa.conf"
set_plugstack "$(plugin_line "$node_conf" "root=$ROOTS/%n")"

batch -w n2 --efa "printenv FI_EFA_USE_DEVICE_RDMA; echo reached"
ok "$([ "$rc" -ne 0 ]; echo $?)" "required plugin, efa.conf missing on n2: sbatch --efa there fails"
like "$out" "efa: node n2 cannot use EFA: .*nodeconf/n2/efa.conf.*\(tell your cluster admin\)" \
	"  with a message naming the node and the file"
unlike "$out" "reached" "  before the job script runs"
run srun -w n2 bash -c 'echo "${FI_EFA_USE_DEVICE_RDMA-unset}"'
is "$rc/$out" "0/unset" "  a job without --efa on n2 runs as usual"
run srun -w n1 --efa printenv NCCL_SOCKET_IFNAME
is "$rc/$out" "0/^docker,lo,veth" "  and --efa on the other nodes is unaffected"

printf 'ProfileDir=%s\nNoSuchKey=1\n' "$top_srcdir/etc/profiles" >"$SLURM_EFA_CLUSTER/nodeconf/n2/efa.conf"
run srun -w n2 --efa true
ok "$([ "$rc" -ne 0 ]; echo $?)" "efa.conf broken on n2: srun --efa there fails"
like "$out" "efa: node n2 cannot use EFA: .*efa.conf:2: .*NoSuchKey" "  naming the file, line and key"

set_plugstack "optional $SPANK_EFA_SO $node_conf root=$ROOTS/%n"
run srun -w n2 --efa bash -c 'echo "rdma=${FI_EFA_USE_DEVICE_RDMA-unset}"'
is "$rc" 0 "optional plugin, broken efa.conf on n2: Slurm ignores the plugin's failure and runs the step"
like "$out" "efa: node n2 cannot use EFA: .*efa.conf:2: " "  the user still sees why EFA is missing"
like "$out" "^rdma=unset$" "  and the task runs without the EFA environment"
run srun -w n1 --efa printenv NCCL_SOCKET_IFNAME
is "$rc/$out" "0/^docker,lo,veth" "  n1, whose efa.conf is fine, still gets it"
rm "$SLURM_EFA_CLUSTER/nodeconf/n2/efa.conf"
batch -w n2 --efa "echo rdma=\${FI_EFA_USE_DEVICE_RDMA-unset}"
is "$rc" 0 "optional plugin, efa.conf missing on n2: the batch job runs"
like "$out" "^rdma=unset$" "  without the EFA environment"
is "$(node_states)" "n1 idle"$'\n'"n2 idle"$'\n'"n3 idle"$'\n'"n4 idle" \
	"no node was drained by any of the failures"
rm -r "$SLURM_EFA_CLUSTER/nodeconf"

# A p4d that loses one of its 4 EFA devices (the efa driver lets go of
# it) while a job runs there (a job that asks for EFA on a node already
# so never starts: the prolog's gate, t_prolog.sh): --efa=required fails
# the next step naming it, auto runs and warns, the node stays up.
write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
salloc --no-shell -w n2 -J faults-3nics >/dev/null 2>&1
alloc=$(squeue -h -n faults-3nics -o %i | head -n 1)
run srun --jobid="$alloc" -w n2 true	# its prolog, on the whole p4d
set_root n2 "$FIXTURES/p4d-3nics"
run srun --jobid="$alloc" -w n2 --efa=required true
is "$((rc != 0))" 1 "--efa=required on a p4d with 3 of its 4 EFA devices fails the step"
like "$out" "efa: --efa=required but node n2 has 3 of the 4 EFA devices a p4d\.24xlarge has \(1 missing: PCI 0000:a0:1b\.0 without the efa driver\)\. The node needs repair" \
	"  naming how many are expected and which is missing"
run srun --jobid="$alloc" -w n2 --efa=auto bash -c 'echo "ifname=${NCCL_SOCKET_IFNAME-unset}"'
is "$rc" 0 "--efa=auto on it runs the step"
like "$out" "efa: warning: node n2 has 3 of the 4 EFA devices" "  and warns the job"
like "$out" "^ifname=\^docker,lo,veth$" "  with the EFA environment of the devices it has"
scancel "$alloc"
wait_job "$alloc"
is "$(node_states | grep '^n2 ')" "n2 idle" "  the node is not drained"
set_root n2 "$FIXTURES/p4d.24xlarge"

# slurmctld restarted while jobs run: it comes back with the same
# environment and arguments (its job_submit.lua loads the bridge again).
write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"

outfile=$SLURM_EFA_CLUSTER/out/restart.out
marker=$SLURM_EFA_CLUSTER/out/restart.go
rm -f "$marker"
show='echo "$w ifname=${NCCL_SOCKET_IFNAME-} rdma=${FI_EFA_USE_DEVICE_RDMA-} rank=${RANK-}"'
job=$(sbatch --parsable -N2 -w n1,n2 --ntasks-per-node=1 --efa --output="$outfile" --wrap "
srun -l bash -c 'w=before; $show; while [ ! -e $marker ]; do sleep 0.2; done; w=after; $show'
echo done") || true
for _ in $(seq 150); do
	[ "$(grep -c before "$outfile" 2>/dev/null)" = 2 ] && break
	sleep 0.2
done
# Its pid file as a reconfigure leaves it when the re-executed slurmctld's
# pid has fewer digits than the one before (26.05.3's update_pidfile
# rewrites the file in place, after a wrap of the machine's pids): the
# old pid's tail on a second line. Slurm reads the first number; so must
# the tests, or they lose the daemon.
ctld_pidfile=$SLURM_EFA_CLUSTER/run/slurmctld.pid
printf '%s\n9\n' "$(pidfile_pid "$ctld_pidfile")" >"$ctld_pidfile"
# A slurmctld that does not come back is a failure here, not the end of
# the run (set -e): its last log lines say why.
if restart_slurmctld; then
	ok 0 "slurmctld restarted while a --efa job's step runs"
else
	ok 1 "slurmctld restarted while a --efa job's step runs"
	diag "$(tail -n 20 "$SLURM_EFA_CLUSTER/log/slurmctld.log")"
fi
touch "$marker"
for _ in $(seq 150); do
	grep -qx done "$outfile" && break
	sleep 0.2
done
p5="ifname=^docker,lo,veth rdma= rank="
p4d="ifname=^docker,lo,veth rdma=1 rank="
is "$(sort "$outfile")" "0: after $p5""0"$'\n'"0: before $p5""0"$'\n'"1: after $p4d""1"$'\n'"1: before $p4d""1"$'\n'"done" \
	"  the running step keeps its environment and the job ends normally"
# Slurm 22.05 itself holds the job's next step for about a minute after a
# restart ("Requested nodes are busy"): new jobs show the plugin at work.
wait_job "$job"
wait_nodes_idle	# every slurmd has registered again
run srun -N1 -w n4 --efa printenv SLURM_EFA_PROFILE
is "$rc/$out" "0/trn1" "  a new job after the restart gets its environment (nothing of slurm-efa restarted)"
snap_dir=$SLURM_EFA_CLUSTER/faults-sync
mkdir -p "$snap_dir"
chown "$SLURMRESTD_USER" "$snap_dir"
write_efa_conf "Snapshot=$snap_dir/snapshot.json" "PartitionName=gpu SingleZone=yes"
run runuser -u "$SLURMRESTD_USER" -- "$top_builddir/slurm-efa" sync --once --config "$EFA_CONF" \
	--url "unix:$SLURMRESTD_SOCKET"
is "$rc" 0 "  slurm-efa sync talks to the restarted slurmctld through slurmrestd"
job=$(sbatch --parsable -N2 -p gpu --efa=auto --hold --wrap true)
like "$(scontrol show job "$job" | grep -o 'Features=[^ ]*')" '^Features=\[az-' \
	"  and the restarted slurmctld's bridge sets the zone constraint"
scancel "$job"
write_efa_conf
