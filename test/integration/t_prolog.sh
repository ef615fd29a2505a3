# SPDX-License-Identifier: Apache-2.0
# The job prolog's and epilog's gate on the real Slurm: a job that asked
# for EFA and lands on a node whose EFA port went down never starts there.
# The plugin's job prolog drains the node with slurm-efa's reason and
# fails, and slurmd has slurmctld requeue the job (not held:
# SchedulerParameters=nohold_on_prolog_fail); it then runs on a healthy
# node. A port that goes down while a job runs is found by its epilog. A
# job that did not ask for EFA is not held back, and a broken efa.conf
# drains nothing.

gate=$SLURM_EFA_CLUSTER/gate
mkdir -p "$gate/state"
gconf=$gate/efa.conf
printf '%s\n' "ProfileDir=$top_srcdir/etc/profiles" "NodeCacheDir=$gate/state" >"$gconf"
# n1's hardware, a p5 whose first EFA device's port can go down.
cp -a "$FIXTURES/p5.48xlarge/." "$gate/n1"
set_root n1 "$gate/n1"
dev=$(ls "$gate/n1/sys/class/infiniband" | head -n 1)
port=$gate/n1/sys/class/infiniband/$dev/ports/1/state
reason="efa: EFA device $dev: port 1 is 1: DOWN, not ACTIVE"
set_plugstack "$(plugin_line "config=$gconf" "root=$ROOTS/%n")"
state_of() {	# state_of NODE: "STATE REASON" as sinfo shows them
	sinfo -h -n "$1" -N -o '%T %E' | head -n 1
}

batch -w n1 --efa 'echo "ran on $SLURMD_NODENAME"'
is "$rc/$out" "0/ran on n1" "a healthy node: an --efa job starts there"

echo "1: DOWN" >"$port"
batch -w n1 'echo "ran on $SLURMD_NODENAME"'
is "$rc/$out" "0/ran on n1" "its EFA port down: a job without --efa still starts there"
is "$(state_of n1)" "idle none" "  and the node stays in service"

run sbatch --parsable -w n1 --efa -o "$gate/job.out" \
	--wrap 'echo "ran on $SLURMD_NODENAME after ${SLURM_RESTART_COUNT:-0} requeue(s)"'
job=$out
until_up 60 sh -c "sinfo -h -n n1 -o %T | grep -q ^drain" ||
	diag "n1 not drained: $(state_of n1); job: $(job_state "$job")"
like "$(state_of n1)" "^drain(ed|ing) $reason$" \
	"an --efa job on it: its prolog drains the node, the reason naming the device and the port"
# (Restarts=1 shows while the job is still COMPLETING: wait for both.)
until_up 60 sh -c "scontrol -o show job $job | grep -q 'JobState=PENDING .*Restarts=1 '" ||
	diag "job $job: $(job_state "$job") $(job_field "$job" Restarts)"
is "$(job_field "$job" JobState)/$(job_field "$job" Restarts)" "PENDING/1" \
	"  the job is back in the queue, requeued once"
unlike "$(job_field "$job" Reason)" "[Hh]eld" "  and not held (nohold_on_prolog_fail)"
# (26.05 leaves Slurm's own notice of the failed launch in the output.)
unlike "$(cat "$gate/job.out" 2>/dev/null)" "^ran on" "  none of it ran on the broken node"
like "$(grep -h "efa: job $job cannot start" "$SLURM_EFA_CLUSTER/log/slurmd-n1.log")" \
	"efa: job $job cannot start on node n1, which failed slurm-efa's health check: EFA device $dev: port 1 is 1: DOWN, not ACTIVE. Slurm puts the job back in the queue" \
	"  slurmd's log says why"

# It asked for n1 alone: let it go to n2, as a job that asked for any
# node would have gone at once.
scontrol update JobId="$job" NodeList=n2
wait_job "$job"
is "$(cat "$gate/job.out" 2>/dev/null)" "ran on n2 after 1 requeue(s)" \
	"  it then runs on a healthy node" || diag "$(job_state "$job")"

# slurmd's locked memory, which every job inherits: with
# HealthMinLockedMemory= at what n1's slurmd has, jobs start (one from a
# shell at 64 KiB too: the limit a job carries is not the node's); a
# slurmd lowered below it fails the check.
slurmd_pid=$(pidfile_pid "$SLURM_EFA_CLUSTER/run/slurmd-n1.pid")
soft=$(awk '/^Max locked memory/ { print $4 }' "/proc/$slurmd_pid/limits")
hard=$(awk '/^Max locked memory/ { print $5 }' "/proc/$slurmd_pid/limits")
echo "HealthMinLockedMemory=$soft" >>"$gconf"
echo "4: ACTIVE" >"$port"
resume_node n1
out=$(ulimit -S -l 64 && batch -w n1 --efa 'echo "ran on $SLURMD_NODENAME"' && echo "$rc/$out")
is "$out" "0/ran on n1" "HealthMinLockedMemory=$soft, slurmd's own: an --efa job from a shell at 64 KiB starts"
prlimit --pid "$slurmd_pid" --memlock="4096:$hard"
run sbatch --parsable -w n1 --efa -o /dev/null --wrap true
job=$out
until_up 60 sh -c "sinfo -h -n n1 -o %T | grep -q ^drain" ||
	diag "n1 not drained: $(state_of n1); job: $(job_state "$job")"
like "$(state_of n1)" "^drain(ed|ing) efa: slurmd's locked-memory limit is 4 KiB, below HealthMinLockedMemory=" \
	"  slurmd lowered to 4 KiB: an --efa job's prolog drains the node, saying so"
scancel "$job"
prlimit --pid "$slurmd_pid" --memlock="$soft:$hard"
sed -i '/^HealthMinLockedMemory=/d' "$gconf"

# The job epilog's gate: an --efa job during which n1's EFA port goes down
# ends there; its epilog drains the node, saying so. Without an expedited
# requeue (t_resume.sh) the job's end is its own: FAILED.
resume_node n1
run sbatch --parsable -w n1 --efa -o /dev/null \
	--wrap "touch $gate/running; until [ -e $gate/go ]; do sleep 0.2; done; exit 1"
job=$out
# (Its script, not slurmctld's RUNNING: a job is RUNNING before the node
# has run its prolog, and a port down then fails the prolog instead.)
until_up 60 test -e "$gate/running" || diag "job $job: $(job_state "$job")"
echo "1: DOWN" >"$port"
touch "$gate/go"
wait_job "$job"
until_up 30 sh -c "sinfo -h -n n1 -o %T | grep -q ^drain" || diag "n1 not drained: $(state_of n1)"
like "$(state_of n1)" "^drain(ed|ing) $reason$" \
	"an --efa job during which n1's EFA port went down: its epilog drains the node, naming the port"
like "$(grep -h "efa: job $job ended on node n1" "$SLURM_EFA_CLUSTER/log/slurmd-n1.log")" \
	"which failed slurm-efa's health check: EFA device $dev: port 1 is 1: DOWN, not ACTIVE" "  slurmd's log says why"
is "$(job_field "$job" JobState)" "FAILED" "  the job, which exited 1, ends FAILED"

# A checkpoint file system that stops answering (test/standins/hangfs, a
# hung FSx for Lustre mount) under the job's partition's CheckpointRoot=:
# the gate drains the node after CheckpointTimeout=, saying so, and the
# job goes back to the queue; answering again, the node runs jobs again.
# Another partition's root is not the job's business.
if hangfs_usable; then
	resume_node n1
	echo "4: ACTIVE" >"$port"
	hangfs_mount "$gate/fsx"
	printf '%s\n' "CheckpointTimeout=2" "PartitionName=gpu CheckpointRoot=$gate/fsx/ckpt CheckpointFS=any" >>"$gconf"
	touch "$HANGFS_GATE"
	batch -p cpu -w n1 --efa 'echo "ran on $SLURMD_NODENAME"'
	is "$rc/$out" "0/ran on n1" "gpu's checkpoint file system hung: an --efa job in partition cpu starts on n1"
	run sbatch --parsable -p gpu -w n1 --efa -o /dev/null --wrap true
	job=$out
	until_up 60 sh -c "sinfo -h -n n1 -o %T | grep -q ^drain" ||
		diag "n1 not drained: $(state_of n1); job: $(job_state "$job")"
	like "$(state_of n1)" "^drain(ed|ing) efa: checkpoint file system $gate/fsx/ckpt \(CheckpointRoot= of partition gpu\) did not answer within 2 s \(CheckpointTimeout=\)$" \
		"  one in partition gpu: its prolog drains n1, naming the root and the limit"
	until_up 30 sh -c "scontrol -o show job $job | grep -q JobState=PENDING" || diag "job $job: $(job_state "$job")"
	is "$(job_field "$job" JobState)/$(job_field "$job" Restarts)" "PENDING/1" "  and the job is back in the queue"
	scancel "$job"
	hangfs_umount "$gate/fsx"
	sed -i '/^CheckpointTimeout=/d; /^PartitionName=gpu CheckpointRoot=/d' "$gconf"
else
	ok 1 "test/standins/hangfs and fusermount3 are there (scripts/install-deps installs fuse3 and libfuse3-dev)"
fi

# Bad input is not a fault: an efa.conf the gate cannot read drains nothing.
resume_node n1
echo "NoSuchKey=1" >"$gate/bad.conf"
set_plugstack "$(plugin_line "config=$gate/bad.conf" "root=$ROOTS/%n")"
batch -w n1 --efa=auto 'echo started'
like "$(state_of n1)" "^(idle|mixed) none$" "a broken efa.conf: the gate drains nothing"

echo "4: ACTIVE" >"$port"
set_root n1 "$FIXTURES/p5.48xlarge"
