# SPDX-License-Identifier: Apache-2.0
# The job_submit bridge in the real slurmctld, with slurm-efa sync keeping
# the zone snapshot: single-zone placement, checkpoint roots, the snapshot's
# freshness. Zone az-us-west-2a is n1,n2; az-us-west-2b is n3,n4.

efa=$top_builddir/slurm-efa
sync_dir=$SLURM_EFA_CLUSTER/sync
mkdir -p "$sync_dir" "$SLURM_EFA_CLUSTER/ckpt"
chown "$SLURMRESTD_USER" "$sync_dir"
policy_conf() {	# policy_conf [MaxAge] [OnSnapshotMissing] [more keys of gpu]
	write_efa_conf "RestURL=unix:$SLURMRESTD_SOCKET" "Snapshot=$sync_dir/snapshot.json" \
		"SnapshotMaxAge=${1:-30}" "OnSnapshotMissing=${2:-accept}" \
		"PartitionName=gpu SingleZone=yes CheckpointRoot=$SLURM_EFA_CLUSTER/ckpt CheckpointFS=any${3:+ $3}"
	chmod 644 "$EFA_CONF"
}
policy_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
runuser -u "$SLURMRESTD_USER" -- "$efa" sync --interval 1 --config "$EFA_CONF" 2>"$sync_dir/sync.log" &
sync_pid=$!
bg_track "$sync_pid"
for _ in $(seq 50); do
	[ -s "$sync_dir/snapshot.json" ] && break
	sleep 0.2
done

zone_of() {	# zone_of NODE...: the zone features of the nodes, sorted, unique
	for n in $(scontrol show hostnames "$*"); do
		sinfo -h -n "$n" -o %f | tr ',' '\n' | grep '^az-'
	done | sort -u
}

batch -N2 --efa=auto -J zone-test "echo nodes=\$SLURM_JOB_NODELIST"
is "$rc" 0 "sbatch -N2 --efa=auto runs (n3 has no EFA: auto lets it run there)"
nodes=$(sed -n 's/^nodes=//p' <<<"$out")
is "$(zone_of "$nodes" | wc -l)" 1 "  both nodes ($nodes) are in one zone"
job=$(squeue -h -t all -n zone-test -o %i | tail -n 1)
like "$(scontrol show job "$job" | grep -o 'Features=[^ ]*')" \
	'Features=\[az-us-west-2(a|b)\|az-us-west-2(a|b)\]' "  the bridge set the zone constraint"
like "$(scontrol show job "$job")" "AdminComment=slurm-efa: checkpoints in $SLURM_EFA_CLUSTER/ckpt/root/zone-test" \
	"  and recorded the checkpoint directory"

# A partition list: the job may run in either, so gpu's policy holds even
# though cpu, listed first, has none.
batch -p cpu,gpu -N2 --efa=auto -J list-test "echo nodes=\$SLURM_JOB_NODELIST"
is "$rc" 0 "sbatch -p cpu,gpu -N2 runs"
job=$(squeue -h -t all -n list-test -o %i | tail -n 1)
like "$(scontrol show job "$job" | grep -o 'Features=[^ ]*')" \
	'Features=\[az-us-west-2(a|b)\|az-us-west-2(a|b)\]' "  the bridge set gpu's zone constraint on it"
is "$(zone_of "$(sed -n 's/^nodes=//p' <<<"$out")" | wc -l)" 1 "  and its nodes are in one zone"

# The constraint the bridge sets is routine: slurmctld logs it at debug, so
# at SlurmctldDebug=info a busy cluster's log does not grow a line a job.
unlike "$(cat "$SLURM_EFA_CLUSTER/log/slurmctld.log")" "efa: job of root in gpu: constraint '' ->" \
	"  slurmctld's log at info has no line for the routine constraint"
scontrol setdebug debug
batch -N2 --efa=auto -J debug-test true
scontrol setdebug info
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmctld.log")" \
	"efa: job of root in gpu: constraint '' -> '\[az-us-west-2(a|b)\|az-us-west-2(a|b)\]'" \
	"  at debug it has, naming the job and the constraint"

run sbatch -N3 --efa --wrap true
ok $((rc == 0)) "sbatch -N3 is refused"
like "$out" "efa: no Availability Zone in partition gpu has 3 usable nodes, and EFA jobs cannot span zones: the largest, us-west-2(a|b), has 2" \
	"  sbatch prints why and the largest zone"

run sbatch -N2 -C 'az-us-west-2a|az-us-west-2b' --wrap true
like "$out" "use one zone \(-C az-us-west-2a\) or a matching OR" "a constraint that mixes zones is refused with the fix"
run sbatch -N2 -C '[az-us-west-2a*1&az-us-west-2b*1]' --wrap true
ok $((rc == 0)) "Slurm's multiple counts over two zones ([a*1&b*1], nodes from both) are refused"
like "$out" "lets nodes of one job come from different Availability Zones" "  saying why"

run sbatch -N1 --checkpoint-dir=/elsewhere/ckpt --wrap true
ok $((rc == 0)) "--checkpoint-dir outside CheckpointRoot is refused"
like "$out" "efa: --checkpoint-dir: .*$SLURM_EFA_CLUSTER/ckpt" "  sbatch names the allowed root"

scontrol update nodename=n1,n2 state=drain reason="slurm-efa zone test"
for _ in $(seq 30); do
	[ "$(jq -r '.zones[] | select(.name == "us-west-2a") | .usable' "$sync_dir/snapshot.json")" = 0 ] && break
	sleep 0.5
done
batch -N2 --efa=auto "echo nodes=\$SLURM_JOB_NODELIST"
is "$(sed -n 's/^nodes=//p' <<<"$out")" "n[3-4]" "with zone a drained, the next -N2 job goes to zone b"
scontrol update nodename=n1,n2 state=resume

# An update is judged as a submission would be: the options the job was
# submitted with, in the partition the update moves it to. Jobs held
# pending, in cpu (no policy there yet), moved to gpu (EFA=required, one
# zone, a checkpoint root), by their user and by root.
user=$SLURM_EFA_TEST_USER
as_user=(runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF")
policy_conf 30 accept EFA=required
held() {	# held SBATCH-OPTION...: a held job of $user in cpu; its id
	run "${as_user[@]}" sbatch -p cpu --hold -o /dev/null "$@" --wrap true
	[ "$rc" = 0 ] || diag "sbatch -p cpu --hold $* as $user: $out"
	sed -n 's/^Submitted batch job //p' <<<"$out"
}
moved() {	# moved WHO JOB PARTITION: scontrol update by WHO (user|root)
	local who=(); [ "$1" = user ] && who=("${as_user[@]}")
	run "${who[@]}" scontrol update JobId="$2" Partition="$3"
}
off=$(held -N2 --efa=off)
moved user "$off" gpu
ok $((rc == 0)) "a user's pending --efa=off job moved into an EFA=required partition is refused"
is "$(job_field "$off" Partition)" cpu "  and stays where it was"
case $(scontrol --version) in
*" 22."*) like "$out" "Requested partition configuration not available now" \
	"  scontrol says the partition is not available to it (22.05 shows no message of a job_modify)" ;;
*) like "$out" "efa: partition gpu requires EFA \(EFA=required\): remove --efa=off" "  scontrol says why, as sbatch would" ;;
esac
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmctld.log")" "efa: refused the update of a job of $user in gpu: efa: partition gpu requires EFA" \
	"  slurmctld's log says why"
moved root "$off" gpu
ok $((rc == 0)) "  root's update is refused the same way"
elsewhere=$(held -N1 --checkpoint-dir=/elsewhere/ckpt)
moved user "$elsewhere" gpu
ok $((rc == 0)) "a job whose --checkpoint-dir lies outside the new partition's CheckpointRoot= is refused"
is "$(job_field "$elsewhere" Partition)" cpu "  and stays where it was"
good=$(held -N2 --efa)
moved user "$good" gpu
is "$rc" 0 "a 2-node --efa job moved into gpu is accepted"
like "$(job_field "$good" Features)" '^\[az-us-west-2(a|b)(\|az-us-west-2(a|b))?\]$' \
	"  with gpu's zone constraint (its node count from the job; zone a may still count as drained)"
run "${as_user[@]}" scontrol update JobId="$good" Name=renamed
is "$rc" 0 "  its user's update of its name succeeds"
is "$(job_field "$good" JobName)" renamed "  and applies"
scancel "$off" "$elsewhere" "$good" 2>/dev/null || true
policy_conf

# slurmrestd submissions meet the same bridge (22.05 returns only the code).
printf '#!/bin/bash\ntrue\n' >"$sync_dir/job.sh"
run runuser -u "$SLURMRESTD_USER" -- "$efa" submit --config "$EFA_CONF" -N3 -p gpu -D /tmp "$sync_dir/job.sh"
is "$rc" 1 "a slurmrestd submission the bridge refuses fails"
like "$out" "slurm-efa submit: job refused: Slurm:" "  with Slurm's error"

# The snapshot goes stale when sync stops.
bg_kill "$sync_pid"
wait "$sync_pid" 2>/dev/null || true
like "$(cat "$sync_dir/sync.log")" "wrote $sync_dir/snapshot.json: 4 nodes" "sync wrote the snapshot"
policy_conf 1 accept
sleep 2
batch -N2 --efa=auto -J stale-accept true
is "$rc" 0 "sync stopped, snapshot aged out, OnSnapshotMissing=accept: the job runs"
job=$(squeue -h -t all -n stale-accept -o %i | tail -n 1)
like "$(scontrol show job "$job" | grep -o 'Features=[^ ]*')" "^Features=\(null\)$" "  without a zone constraint"
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmctld.log")" "efa: job of root in gpu: the zone snapshot is [0-9]+ s old" \
	"  and slurmctld logs the warning"
policy_conf 1 reject
run sbatch -N2 --efa --wrap true
ok $((rc == 0)) "OnSnapshotMissing=reject refuses"
like "$out" "Retry in a minute; cluster admins: check that slurm-efa sync is running" "  telling both what to do"

echo '{"format": 1, "generated": ' >"$sync_dir/snapshot.json"
policy_conf 3600 reject
run sbatch -N2 --efa --wrap true
like "$out" "not a snapshot" "a broken snapshot file is refused as missing"
run scontrol ping
like "$out" "is UP" "  and slurmctld is still up"

# A slurmctld whose Lua cannot find the bridge (its path moved with an
# upgrade): the shipped job_submit.lua fails closed for what the policy
# covers, whatever OnSnapshotMissing= says. job_submit/lua loads the script
# afresh when its mtime moves on.
policy_conf 3600 accept
reload_job_submit() {
	touch -d "@$(($(date +%s) + $1))" "$SLURM_EFA_CLUSTER/job_submit.lua"
}
mv "$SLURM_EFA_LUA_DIR/slurm_efa_bridge.lua" "$SLURM_EFA_LUA_DIR/moved.lua"
reload_job_submit 2
run sbatch -N2 -p gpu --efa --wrap true
ok $((rc == 0)) "without the bridge, a 2-node --efa job in a SingleZone=yes partition is refused"
like "$out" "efa: this job cannot be checked now: it asks for slurm-efa .*Contact your cluster admin" \
	"  telling the user to contact the admin"
run sbatch -N1 -p gpu --wrap true
ok $((rc == 0)) "  so is a job without --efa in that partition"
run sbatch -N1 -p cpu -o /dev/null --wrap true
is "$rc" 0 "  a job that asks for nothing in a partition without a policy goes through"
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmctld.log")" "efa: cannot load slurm_efa_bridge \(module 'slurm_efa_bridge' not found" \
	"  and slurmctld's log says what failed"
mv "$SLURM_EFA_LUA_DIR/moved.lua" "$SLURM_EFA_LUA_DIR/slurm_efa_bridge.lua"
reload_job_submit 4
run sbatch -N2 -p gpu --efa --hold --wrap true
is "$rc" 0 "with the bridge back, the --efa job is accepted again"
scancel "$(sed -n 's/^Submitted batch job //p' <<<"$out")" 2>/dev/null || true

write_efa_conf
