# SPDX-License-Identifier: Apache-2.0
# Auto-resume on the real Slurm: a batch job with --efa-resume=1 is
# preempted, then requeued by an admin, which do not count; then its node
# dies (its slurmd and everything it started killed): it is requeued by
# Slurm (NODE_FAIL, same job id), runs again on healthy nodes, never the
# dead one, and its tasks see the run (SLURM_RESTART_COUNT) and
# CHECKPOINT_RESUME_DIR, the newest complete checkpoint although a newer
# incomplete one is there. That run is its last: after the next node
# failure its next run ends as it starts. A job that fails on healthy nodes
# is not requeued; a bad --efa-resume is refused at submission.

resume=$SLURM_EFA_CLUSTER/resume
ck=$resume/ck
mkdir -p "$ck/checkpoint-10" "$ck/checkpoint-20"
# Hugging Face Trainer: trainer_state.json comes last; checkpoint-20, newer,
# was cut off before it.
touch "$ck/checkpoint-10/training_args.bin" "$ck/checkpoint-20/config.json"
printf '{\n  "global_step": 10\n}\n' >"$ck/checkpoint-10/trainer_state.json"
head -c 4096 /dev/zero >"$ck/checkpoint-20/model.safetensors"
touch -d '-2 min' "$ck/checkpoint-10"
write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF")"

# slurmctld finds a dead node within SlurmdTimeout: 10 s here, as bench/run's
# section 8 has it (the cluster's 30 s are for the other tests' slow steps
# under valgrind), set back at the end.
timeout_before=$(sed -n 's/^SlurmdTimeout=//p' "$SLURM_CONF")
slurmd_timeout() {	# slurmd_timeout SECONDS: in slurm.conf, then reconfigure
	sed -i "s/^SlurmdTimeout=.*/SlurmdTimeout=$1/" "$SLURM_CONF"
	scontrol reconfigure || true
	until_up 30 sh -c "scontrol show config | grep -Eq '^SlurmdTimeout += $1 sec'" ||
		diag "SlurmdTimeout=$1 did not take effect: $(scontrol show config | grep SlurmdTimeout)"
	wait_nodes_idle || diag "nodes not idle after the reconfigure: $(node_states | paste -sd ' ')"
}
slurmd_timeout 10

# A node dies (its slurmd, and the job's slurmstepds and tasks on it,
# killed) and comes back: test/cluster/node.
node_die() {	# node_die NODE JOBID
	local said
	said=$("$top_srcdir/test/cluster/node" "$SLURM_EFA_CLUSTER" kill "$1" "$2" 2>&1) || diag "$said"
}
node_revive() {	# node_revive NODE: slurmd started again as it was
	local said
	said=$("$top_srcdir/test/cluster/node" "$SLURM_EFA_CLUSTER" revive "$1" 2>&1) || diag "$said"
}
job_record() {	# job_record JOBID: the EFA summary in its AdminComment (no blanks)
	scontrol -o show job "$1" 2>/dev/null | grep -o '{"efa":{[^ ]*' | head -n 1
}
running_with_restarts() {	# running_with_restarts JOBID N
	[ "$(job_field "$1" JobState)/$(job_field "$1" Restarts)" = "RUNNING/$2" ]
}

cat >"$resume/train.sh" <<EOF
#!/bin/bash
srun bash -c 'echo "run=\${SLURM_RESTART_COUNT:-0} node=\$SLURMD_NODENAME resume=\${CHECKPOINT_RESUME_DIR:-none}"' >>$resume/runs.txt
touch $resume/started.\${SLURM_RESTART_COUNT:-0}
sleep 600
EOF
run sbatch --parsable -N2 --efa-resume=1 --checkpoint-dir="$ck" -o "$resume/train.out" "$resume/train.sh"
job=$out
is "$(job_field "$job" Requeue)" 1 "sbatch --efa-resume=1: the bridge made the job requeueable"
until_up 60 test -e "$resume/started.0" || diag "the first run did not start: $(job_state "$job")"
like "$(grep '^run=0 ' "$resume/runs.txt" | sort | paste -sd ' ')" \
	"^run=0 node=n[0-9] resume=$ck/checkpoint-10 run=0 node=n[0-9] resume=$ck/checkpoint-10$" \
	"the first run's tasks get CHECKPOINT_RESUME_DIR: checkpoint-10, not the newer incomplete checkpoint-20"

# The resumes count node failures only: a preemption (a partition of a
# higher PriorityTier, PreemptMode=REQUEUE) and an admin's requeue run the
# job again without using up its --efa-resume=1.
scontrol create PartitionName=urgent Nodes=n[1-4] PriorityTier=10 State=UP
run sbatch --parsable -p urgent --exclusive -w "$(job_field "$job" NodeList)" -o /dev/null --wrap "sleep 2"
urgent=$out
until_up 120 test -e "$resume/started.1" ||
	diag "the preempted job did not run again: $(job_state "$job"); urgent job: $(job_state "$urgent")"
until_up 30 running_with_restarts "$job" 1 || diag "job $job: $(job_state "$job")"
is "$(job_field "$job" Restarts)" 1 "preempted by a job of a higher PriorityTier: the job is requeued and runs again"
like "$(job_record "$job")" '"requeues":\[\{"run":0,"cause":"preemption"\}\]' \
	"  its record says run 0 was requeued by a preemption"
like "$(cat "$resume/train.out")" \
	"efa: job $job runs again \(run 1\): 0 node failures of the 1 it may be resumed after \(a preemption or requeue does not count\)" \
	"  told the preemption used none of its resumes"
is "$(job_field "$job" Requeue)" 1 "  its requeue stays on"
scontrol delete PartitionName=urgent || true
scontrol requeue "$job"
until_up 120 test -e "$resume/started.2" || diag "the requeued job did not run again: $(job_state "$job")"
until_up 30 running_with_restarts "$job" 2 || diag "job $job: $(job_state "$job")"
like "$(job_record "$job")" '"requeues":\[\{"run":0,"cause":"preemption"\},\{"run":1,"cause":"request"\}\]' \
	"scontrol requeue by an admin: run 1 recorded as requeued by request"
like "$(cat "$resume/train.out")" "efa: job $job runs again \(run 2\): 0 node failures of the 1" \
	"  and the job's resumes are still all there"

first_nodes=$(scontrol show hostnames "$(job_field "$job" NodeList)" | paste -sd ' ')
batch_host=$(job_field "$job" BatchHost)
victim=$(scontrol show hostnames "$(job_field "$job" NodeList)" | grep -vx "$batch_host" | head -n 1)
t0=$SECONDS
node_die "$victim" "$job"
# (Its script, not slurmctld's state: while slurmctld requeues it, a
# job shows Restarts=3 before it has left RUNNING.)
until_up 240 test -e "$resume/started.3" ||
	diag "the job was not requeued and started again: $(job_state "$job"); $(job_log "$job")"
until_up 30 running_with_restarts "$job" 3 || diag "job $job: $(job_state "$job")"
diag "node $victim killed: the job ran again after $((SECONDS - t0)) s (SlurmdTimeout=10, cred_expire=$(scontrol show config | sed -n "s/^AuthInfo .*cred_expire=\([0-9]*\).*/\1/p"))"
is "$(job_field "$job" Restarts)" 3 "its node killed: the job is requeued and runs again, same job id"
second_nodes=$(scontrol show hostnames "$(job_field "$job" NodeList)" | paste -sd ' ')
unlike " $second_nodes " " $victim " "  on healthy nodes ($second_nodes), not the dead $victim (the run before: $first_nodes)"
like "$(sinfo -h -n "$victim" -o '%t')" "^down" "  $victim is down"
runs=$(grep '^run=3 ' "$resume/runs.txt" | sort || true)
is "$(wc -l <<<"$runs")" 2 "  both tasks of the run report"
unlike "$runs" "node=$victim " "  none of them on $victim"
like "$(paste -sd ' ' <<<"$runs")" \
	"^run=3 node=n[0-9] resume=$ck/checkpoint-10 run=3 node=n[0-9] resume=$ck/checkpoint-10$" \
	"  each sees SLURM_RESTART_COUNT=3 and CHECKPOINT_RESUME_DIR=checkpoint-10"
unlike "$(job_record "$job")" '"run":2' "  its record names no healthy requeue of run 2"
is "$(job_field "$job" Requeue)" 1 "  its last resume: requeue stays on (a preemption would still requeue it)"
like "$(cat "$resume/train.out")" \
	"efa: job $job runs again after a node failure, its last resume \(1 of 1\): if a node fails now the job ends; CHECKPOINT_RESUME_DIR=$ck/checkpoint-10" \
	"  and the job's output says it is its last resume"

# The limit: a node failure now requeues it once more (Slurm does), and
# that run ends as it starts, its script never run. An admin (or a
# watcher of instance events) sets a node DOWN: Slurm requeues the job at
# once, not after SlurmdTimeout. From 24.11 on the node's slurmd still
# answers, so that under ReturnToService=2 the node is back in service
# within milliseconds, before the batch step reads the nodes' states: the
# requeue counts by the node slurmctld says failed (FailedNode). 22.05
# names none, and its node dies first.
node_revive "$victim"
victim2=$(scontrol show hostnames "$(job_field "$job" NodeList)" | grep -vx "$(job_field "$job" BatchHost)" | head -n 1)
if ((10#${SLURM_RELEASE%%.*} < 24)); then
	node_die "$victim2" "$job"
fi
scontrol update NodeName="$victim2" State=DOWN Reason="efa-test: found broken"
until_up 240 sh -c "scontrol -o show job $job | grep -q 'JobState=FAILED'" ||
	diag "the job did not end: $(job_state "$job")"
is "$(job_field "$job" JobState)/$(job_field "$job" Restarts)" "FAILED/4" \
	"a node of its last run set DOWN: its next run ends as it starts, FAILED"
ok "$([ ! -e "$resume/started.4" ]; echo $?)" "  its script did not run"
like "$(cat "$resume/train.out")" \
	"efa: job $job ends here: a node failed under its last resume \(2 node failures, --efa-resume=1 allows 1\)\. Resubmit it to go on; CHECKPOINT_RESUME_DIR=$ck/checkpoint-10" \
	"  its output says why, and where to go on from"
if [ "${SLURM_EFA_CLUSTER_ACCOUNTING:-0}" = 1 ]; then
	# Slurm's accounting keeps each run (sacct --duplicates).
	until_up 30 sh -c "[ \$(sacct -n -D -X -j $job -o State | wc -l) -ge 5 ]" || true
	rows=$(sacct -n -P -D -X -j "$job" -o State,NodeList)
	is "$(wc -l <<<"$rows")" 5 "sacct --duplicates shows the job's five runs"
	like "$(sed -n 1p <<<"$rows")" "^PREEMPTED\|" "  the first preempted"
	like "$(sed -n 2p <<<"$rows")" "^REQUEUED\|" "  the second requeued"
	third=$(sed -n 3p <<<"$rows")
	like "$third" "^(NODE_FAIL|REQUEUED)\|" "  the third ended by its node's failure"
	like " $(scontrol show hostnames "${third#*|}" | paste -sd ' ') " " $victim " "  on nodes that held $victim"
	like "$(sed -n 4p <<<"$rows")" "^(NODE_FAIL|REQUEUED)\|" "  the fourth too"
	like "$(sed -n 5p <<<"$rows")" "^FAILED\|" "  the fifth FAILED as it started"
fi
if ((10#${SLURM_RELEASE%%.*} < 24)); then
	node_revive "$victim2"
else
	# Back in service already under ReturnToService=2 (Slurm then refuses
	# the RESUME as an invalid transition); the admin's RESUME where not.
	scontrol update NodeName="$victim2" State=RESUME 2>/dev/null || true
fi
scancel "$job" 2>/dev/null || true

# A job that fails on healthy nodes is its own failure: not requeued.
run sbatch --parsable -N1 --efa-resume=2 -o /dev/null --wrap 'exit 1'
job=$out
wait_job "$job"
is "$(job_field "$job" JobState)/$(job_field "$job" Restarts)" "FAILED/0" \
	"--efa-resume=2, the script exits 1 on a healthy node: FAILED, not requeued"

run sbatch --efa-resume=many -o /dev/null --wrap true
ok $((rc == 0)) "--efa-resume=many is refused by sbatch"
like "$out" "invalid --efa-resume value 'many'" "  with the reason"
wait_nodes_idle || diag "nodes not idle after t_resume: $(node_states | paste -sd ' ')"

# An EFA port that goes down under a running two-node job while its slurmd
# stays up, on every release: the job's steps fail and its batch script
# ends (exit 1, as a training script whose collective failed); the epilog
# on n1 finds the port down, drains n1 and requeues the completing job
# (scontrol requeue), which runs again elsewhere, its last resume.
cp -a "$FIXTURES/p5.48xlarge/." "$resume/n1"
set_root n1 "$resume/n1"
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
port=$resume/n1/sys/class/infiniband/$(ls "$resume/n1/sys/class/infiniband" | head -n 1)/ports/1/state
# A batch script that runs until NAME.go and fails, as a training script
# whose collective failed; a resumed run says where it runs.
fails_on_go() {	# fails_on_go NAME: $resume/NAME.sh
	cat >"$resume/$1.sh" <<EOS
#!/bin/bash
if [ "\${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then
	echo "run \$SLURM_RESTART_COUNT on \$SLURM_JOB_NODELIST"
	exit 0
fi
touch $resume/$1.running
until [ -e $resume/$1.go ]; do sleep 0.2; done
exit 1
EOS
}
fails_on_go port
run sbatch --parsable -N2 -w n1,n2 --efa --efa-resume=1 -o "$resume/port.out" "$resume/port.sh"
job=$out
until_up 60 test -e "$resume/port.running" || diag "job $job: $(job_state "$job")"
echo "1: DOWN" >"$port"
touch "$resume/port.go"
until_up 60 sh -c "scontrol -o show job $job | grep -Eq 'JobState=(PENDING|EXPEDITING|REQUEUED).*Restarts=1'" ||
	diag "job $job: $(job_state "$job"); n1's log: $(grep -a "efa:.*job $job" "$SLURM_EFA_CLUSTER/log/slurmd-n1.log" | tail -n 3)"
is "$(job_field "$job" Restarts)" 1 "n1's EFA port down under a running 2-node --efa-resume=1 job, slurmd up: the job is requeued"
like "$(sinfo -h -n n1 -o '%T %E')" "^drain(ed|ing) efa: EFA device .*port 1 is 1: DOWN" "  n1 is drained"
like "$(grep -a "efa: job $job ended on node n1" "$SLURM_EFA_CLUSTER/log/slurmd-n1.log")" \
	"failed slurm-efa's health check: .*DOWN.*the job is requeued to run again on other nodes \(--efa-resume=1\)" \
	"  n1's epilog says why"
# It asked for n1: let it go to the other nodes with EFA.
scontrol update JobId="$job" NodeList=n2,n4
wait_job "$job"
like "$(cat "$resume/port.out")" "^run 1 on n\[2,4\]$" "  it runs again, on healthy nodes" || diag "$(job_state "$job")"
like "$(cat "$resume/port.out")" "efa: job $job runs again after a node failure, its last resume \(1 of 1\)" \
	"  told it is its last resume"
echo "4: ACTIVE" >"$port"
scontrol update NodeName=n1 State=RESUME
rm -f "$resume/port.running" "$resume/port.go"

# Slurm 26.05's expedited requeue (ResumeExpedite=yes, with the cluster's
# SlurmctldParameters=enable_expedited_requeue): a resumable job that
# fails requeues at once when an epilog blames its node, and is held
# otherwise (job_mgr.c). slurm-efa's epilog blames a node whose EFA broke:
# an --efa-resume=1 job during which n1's EFA port goes down runs again at
# once; one that exits 1 on a healthy node is held, as Slurm holds it.
if ((10#${SLURM_RELEASE%%.*} >= 26)); then
	write_efa_conf "ResumeExpedite=yes"
	fails_on_go expedite
	run sbatch --parsable -w n1 --efa --efa-resume=1 -o "$resume/expedite.out" "$resume/expedite.sh"
	job=$out
	is "$(job_field "$job" ExpeditedRequeue)" "Yes" "26.05, ResumeExpedite=yes: the bridge asks the expedited requeue"
	# (Its script, not slurmctld's RUNNING, which comes before n1's prolog.)
	until_up 60 test -e "$resume/expedite.running" || diag "job $job: $(job_state "$job")"
	echo "1: DOWN" >"$port"
	t0=$SECONDS
	touch "$resume/expedite.go"
	# (A job pending again after an expedited requeue shows EXPEDITING.)
	until_up 60 sh -c "scontrol -o show job $job | grep -Eq 'JobState=(PENDING|EXPEDITING).*Restarts=1'" ||
		diag "job $job: $(job_state "$job")"
	echo "# n1's EFA port down: the job was requeued $((SECONDS - t0)) s after it failed"
	like "$(job_field "$job" JobState)/$(job_field "$job" Restarts)" "^(PENDING|EXPEDITING)/1$" \
		"  its EFA port down while it ran: its epilog blames n1 and the job is requeued at once"
	unlike "$(job_field "$job" Reason)" "Held" "  not held"
	like "$(sinfo -h -n n1 -o '%T %E')" "^drain(ed|ing) efa: EFA device .*port 1 is 1: DOWN" "  n1 is drained"
	# It asked for n1 alone: let it go to n2.
	scontrol update JobId="$job" NodeList=n2
	wait_job "$job"
	like "$(cat "$resume/expedite.out")" "^run 1 on n2$" "  it runs again, on a healthy node" ||
		diag "$(job_state "$job")"
	like "$(cat "$resume/expedite.out")" "efa: job $job runs again after a node failure, its last resume \(1 of 1\)" \
		"  and is told it is its last resume"

	run sbatch --parsable -w n2 --efa --efa-resume=1 -o /dev/null --wrap 'exit 1'
	job=$out
	until_up 60 sh -c "scontrol -o show job $job | grep -q JobState=REQUEUE_HOLD" ||
		diag "job $job: $(job_state "$job")"
	is "$(job_field "$job" JobState)/$(job_field "$job" Reason)" "REQUEUE_HOLD/job_requeued_in_held_state" \
		"  a job that exits 1 on a healthy node is requeued held, as Slurm holds it"
	scancel "$job"
	echo "4: ACTIVE" >"$port"
	scontrol update NodeName=n1 State=RESUME
	write_efa_conf
	wait_nodes_idle || diag "nodes not idle after the expedited requeue: $(node_states | paste -sd ' ')"
fi

# The plugin alone, on a site that set JobRequeue=0 and runs no job_submit
# bridge: the job is submitted unrequeueable, its first run turns its
# requeue on, and when n1's EFA port goes down under it the epilog's
# requeue runs it again elsewhere.
cp "$SLURM_CONF" "$resume/slurm.conf.before"
sed -i -e '/^JobSubmitPlugins=/d' -e '/^CliFilterPlugins=/d' "$SLURM_CONF"
echo "JobRequeue=0" >>"$SLURM_CONF"
scontrol reconfigure || true
wait_nodes_idle || diag "nodes not idle after the reconfigure: $(node_states | paste -sd ' ')"
fails_on_go alone
run sbatch --parsable --hold -N2 -w n1,n2 --efa --efa-resume=1 -o "$resume/alone.out" "$resume/alone.sh"
job=$out
is "$(job_field "$job" Requeue)" 0 "JobRequeue=0 and no job_submit bridge: an --efa-resume=1 job is submitted unrequeueable"
scontrol release "$job"
until_up 60 test -e "$resume/alone.running" || diag "job $job: $(job_state "$job")"
is "$(job_field "$job" Requeue)" 1 "  its first run turns its requeue on (the plugin alone)"
echo "1: DOWN" >"$port"
touch "$resume/alone.go"
until_up 60 sh -c "scontrol -o show job $job | grep -Eq 'JobState=(PENDING|REQUEUED).*Restarts=1'" ||
	diag "job $job: $(job_state "$job"); n1's log: $(grep -a "efa:.*job $job" "$SLURM_EFA_CLUSTER/log/slurmd-n1.log" | tail -n 3)"
is "$(job_field "$job" Restarts)" 1 "  n1's EFA port down under it: the epilog requeues it"
scontrol update JobId="$job" NodeList=n2,n4
wait_job "$job"
like "$(cat "$resume/alone.out")" "^run 1 on n\[2,4\]$" "  and it runs again, on healthy nodes" ||
	diag "$(job_state "$job")"
echo "4: ACTIVE" >"$port"
scontrol update NodeName=n1 State=RESUME
# The bridge back, and the cluster's SlurmdTimeout, in one reconfigure.
cp "$resume/slurm.conf.before" "$SLURM_CONF"

set_root n1 "$FIXTURES/p5.48xlarge"
slurmd_timeout "$timeout_before"
