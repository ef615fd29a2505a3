# SPDX-License-Identifier: Apache-2.0
# Hang detection on the real Slurm (HangAfter=, HangAction=): a two-node
# --efa step whose tasks move traffic (they raise the fixture's
# hw_counters files, as the efa driver would) and write output, then stop
# both, is found hung within HangAfter= plus two HangCheckInterval= on every
# node: told once on the job's stderr, recorded in its AdminComment, and
# requeued (auto-resume: its next run gets CHECKPOINT_RESUME_DIR), cancelled
# or left running as the partition says. No alarm for a step with traffic,
# with output or checkpoints growing, on one node, opted out, or with a
# heartbeat. Sick links (SickLinks=yes): of three nodes, the one whose
# retransmit timeouts climb while the others' stay flat is named and
# drained while its job finishes; all three climbing, nobody. Run on 22.05
# and 26.05 (the issue's releases; 24.11 shares
# 26.05's API and adds minutes to CI).

case $SLURM_RELEASE in
24.*)
	# Not a skip (scripts/test counts one as a failure): this release is
	# left out on purpose, to keep the suite's time.
	echo "# t_hang.sh: hang detection and sick links are tested on 22.05 and 26.05, not on $SLURM_RELEASE"
	return 0
	;;
esac

hang=$SLURM_EFA_CLUSTER/hang
mkdir -p "$hang"
chmod 777 "$hang"
# Private copies of each node's hardware with traffic counters (n3, a
# CPU node in the cluster's picture, gets a p4d's): the tasks write them.
for n in n1 n2 n3 n4; do
	fixture=$(readlink "$ROOTS/$n")
	[ "$n" != n3 ] || fixture=$FIXTURES/p4d.24xlarge
	rm -rf "${hang:?}/$n"
	cp -a "$fixture/." "$hang/$n"
	for dev in $(ls "$hang/$n/sys/class/infiniband"); do
		hw=$hang/$n/sys/class/infiniband/$dev/ports/1/hw_counters
		mkdir -p "$hw"
		for c in tx_bytes rx_bytes tx_pkts rx_pkts rdma_read_bytes retrans_timeout_events; do
			echo 1000 >"$hw/$c"
		done
	done
	chmod -R a+w "$hang/$n/sys/class/infiniband/"
	set_root "$n" "$hang/$n"
done
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
mdir=$hang/metrics
mkdir -p "$mdir"
chmod 755 "$mdir"
hang_conf() {	# hang_conf ACTION: HangAfter=3 s, sampled every second
	write_efa_conf "HangCheckInterval=1" "MetricsDir=$mdir" "PartitionName=gpu HangAfter=3 HangAction=$1"
}
# A task's way of moving bytes: raise its node's first device's tx_bytes,
# once its step is counted (its watch starts from that reading).
counted=$(counted_fn "$SLURM_EFA_CLUSTER/nodecache")
bump="$counted"'; bump() { counted; f=$(ls -d '"$ROOTS"'/$SLURMD_NODENAME/sys/class/infiniband/* | head -n 1)/ports/1/hw_counters/tx_bytes; echo $(( $(cat "$f") + 100 )) >"$f"; }'
record() {	# record JOBID: the EFA summary in the job's AdminComment
	scontrol -o show job "$1" 2>/dev/null | grep -o '{"efa":{[^ ]*' | head -n 1
}
hangs() {	# hangs JOBID: "run step action" per hang recorded
	python3 -c 'import json, sys
for h in json.loads(sys.argv[1])["efa"].get("hangs", []): print(h["run"], h["step"], h["action"])' \
		"$(record "$1")" 2>/dev/null
}
# A training run: moves traffic and writes a line a second for 3 s, then
# stops both (a collective that never completes) until killed.
cat >"$hang/stall.sh" <<EOF
#!/bin/bash
$bump
for i in 1 2 3; do sleep 1; bump; echo "step \$i on \$SLURMD_NODENAME"; done
date +%s.%N >$hang/stopped.\$SLURM_JOB_ID.\$SLURM_NODEID
sleep 300
EOF
chmod +x "$hang/stall.sh"

# --- requeue: the job runs again from its checkpoint ------------------------
ck=$hang/ck
mkdir -p "$ck/checkpoint-10"
touch "$ck/checkpoint-10/training_args.bin"
printf '{\n  "global_step": 10\n}\n' >"$ck/checkpoint-10/trainer_state.json"
hang_conf requeue
cat >"$hang/train.sh" <<EOF
#!/bin/bash
if [ "\${SLURM_RESTART_COUNT:-0}" -gt 0 ]; then
	srun bash -c 'echo "run=\$SLURM_RESTART_COUNT node=\$SLURMD_NODENAME resume=\${CHECKPOINT_RESUME_DIR:-none}"'
	exit 0
fi
srun $hang/stall.sh
EOF
run sbatch --parsable -N2 -w 'n[1-2]' --efa --efa-resume=1 --checkpoint-dir="$ck" \
	--open-mode=append -o "$hang/train.out" "$hang/train.sh"
job=$out
is "$rc" 0 "a two-node --efa --efa-resume=1 job whose step will stop is submitted (HangAfter=3 s, HangAction=requeue)"
until_up 60 sh -c "[ -n \"\$(cat $hang/stopped.$job.* 2>/dev/null)\" ]" || diag "it never stopped: $(job_state "$job")"
until_up 30 sh -c "scontrol -o show job $job | grep -q '\"hangs\"'"
found=$(date +%s.%N)
stopped=$(sort -n "$hang"/stopped."$job".* 2>/dev/null | tail -n 1)
is "$(hangs "$job")" "0 0 requeue" "  found hung: its record has the hang, run 0 step 0, requeued"
latency=$(awk -v a="$stopped" -v b="$found" 'BEGIN { printf "%.1f", b - a }')
ok "$(awk -v l="$latency" 'BEGIN { print !(l <= 3 + 2 * 1 + 1.5) }')" \
	"  within HangAfter plus two intervals (3 + 2 s; 1.5 s for the test's own polling): ${latency} s after the tasks stopped"
until_up 90 sh -c "scontrol -o show job $job | grep -q 'JobState=COMPLETED'" ||
	diag "the requeued run did not complete: $(job_state "$job")"
is "$(job_field "$job" Restarts)" 1 "  requeued by Slurm once: Restarts=1"
like "$(cat "$hang/train.out")" "efa: job $job hung: step 0 on n\[1-2\]: no EFA traffic, no output and no checkpoint write on any of its nodes for [0-9]+ s \(HangAfter=3 s\); newest complete checkpoint at the step's start: $ck/checkpoint-10; requeued: resume 1 of 1" \
	"  its stderr says so, with the evidence, the checkpoint and what was done"
is "$(grep -c "efa: job $job hung" "$hang/train.out")" 1 "  once"
like "$(cat "$hang/train.out")" "run=1 node=n[12] resume=$ck/checkpoint-10" \
	"  its next run starts from CHECKPOINT_RESUME_DIR"
unlike "$(record "$job")" '"requeues"' "  the requeue is not a healthy one: it used the job's resume"
wait_nodes_idle >/dev/null || true

# --- cancel, then notify, side by side on n[1-2] and n[3-4] -----------------
hang_conf cancel
run sbatch --parsable -N2 -w 'n[1-2]' --efa -o "$hang/cancel.out" --wrap "srun $hang/stall.sh"
cjob=$out
# Its step has read efa.conf once its first line is out.
until_up 20 grep -q "step 1" "$hang/cancel.out"
hang_conf notify
run sbatch --parsable -N2 -w 'n[3-4]' --efa -o "$hang/notify.out" --wrap "srun $hang/stall.sh"
njob=$out
until_up 40 sh -c "scontrol -o show job $cjob | grep -q 'JobState=CANCELLED'"
is "$(job_field "$cjob" JobState)" CANCELLED "HangAction=cancel: the hung job is cancelled"
is "$(hangs "$cjob")" "0 0 cancel" "  its record says so"
until_up 10 sh -c "grep -q 'hung' $hang/cancel.out"
like "$(cat "$hang/cancel.out")" "efa: job $cjob hung: .*cancelled \(HangAction=cancel\)" "  and its stderr"
rest_client_setup "$SLURM_EFA_CLUSTER/hang-rest"
run "${as_rest[@]}" "$top_builddir/slurm-efa" stats "$cjob" --config "$rest_conf"
like "$out" "^run 0, step 0 hung on n\[1-2\]: nothing moved for [0-9]+ s; cancelled$" \
	"  slurm-efa stats shows the hang"
for n in n1 n2; do
	is "$(sed -n "s/^slurm_efa_job_hangs_total{node=\"$n\",job_id=\"$cjob\",[^}]*} //p" "$mdir/slurm_efa_$n.prom")" 1 \
		"  $n's file for node_exporter counts it (MetricsDir=)"
done
until_up 40 sh -c "scontrol -o show job $njob | grep -q '\"hangs\"'"
is "$(hangs "$njob")" "0 0 notify" "HangAction=notify: the hung job's record has the hang"
notified=$SECONDS

# --- no alarm: what a working job does -------------------------------------
# Side by side, each over four HangAfter periods, under HangAction=cancel:
# the one that moves traffic (node-wide counters) on n[1-2] with a one-node
# job, the others on n[3-4], beside the notified job (which moves nothing).
hang_conf cancel
quiet_for_long='sleep 12'
start_pair() {	# start_pair NODES NAME OPTIONS SCRIPT: a two-node job
	sbatch --parsable -N2 -w "$1" --efa $3 -o "$hang/$2.out" --wrap "$4" 2>&1
}
ckq=$hang/ckq
mkdir -p "$ckq"
names=(traffic output checkpoints optout heartbeat single nostep)
jobs=(
	"$(start_pair 'n[1-2]' traffic '' "srun bash -c '$bump; for i in \$(seq 12); do bump; sleep 1; done'")"
	"$(start_pair 'n[3-4]' output '' "srun bash -c 'for i in \$(seq 12); do echo \$i; sleep 1; done'")"
	"$(start_pair 'n[3-4]' checkpoints "--checkpoint-dir=$ckq" "srun bash -c 'for i in \$(seq 6); do mkdir -p \$CHECKPOINT_DIR/step_\$i.\$SLURM_NODEID; sleep 2; done'")"
	"$(start_pair 'n[3-4]' optout --efa-hang=off "srun bash -c '$quiet_for_long'")"
	"$(start_pair 'n[3-4]' heartbeat '' "srun bash -c 'for i in \$(seq 12); do touch \"\$SLURM_EFA_HEARTBEAT\"; sleep 1; done'")"
	"$(sbatch --parsable -N1 -w n1 --efa -o "$hang/single.out" --wrap "srun -N1 bash -c '$quiet_for_long'" 2>&1)"
	"$(start_pair 'n[3-4]' nostep '' "$quiet_for_long; srun true")"
)
sleep $((notified + 8 - SECONDS > 0 ? notified + 8 - SECONDS : 0))
is "$(job_field "$njob" JobState)" RUNNING "  it keeps running, 8 s (more than two HangAfter) later"
like "$(cat "$hang/notify.out")" "efa: job $njob hung: .*it keeps running: cancel it \(scancel $njob\)" \
	"  its stderr says what to do"
is "$(grep -c "efa: job $njob hung" "$hang/notify.out")" 1 "  once"
scancel "$njob"
for j in "${jobs[@]}" "$njob"; do wait_job "$j"; done
for i in "${!jobs[@]}"; do
	j=${jobs[$i]}
	is "$(job_field "$j" JobState)/$(grep -c hung "$hang/${names[$i]}.out")/$(hangs "$j" | wc -l)" \
		"COMPLETED/0/0" "no alarm over four HangAfter periods (HangAction=cancel): ${names[$i]}"
done

# --- sick links: one node's link far above its peers' ----------------------
write_efa_conf "HangCheckInterval=1" "MetricsDir=$mdir" "SickLinks=yes" "SickLinkDrain=yes"
bumpc="$counted"'; bumpc() { counted; f=$(ls -d '"$ROOTS"'/$SLURMD_NODENAME/sys/class/infiniband/* | head -n 1)/ports/1/hw_counters/$1; echo $(( $(cat "$f") + $2 )) >"$f"; }'
# Every task sends 1000 packets a second for 8 s; where SICK matches its
# node, 200 of them time out and are sent again.
links_job() {	# links_job NAME SICK: a three-node job, its id
	sbatch --parsable -N3 -w 'n[1-3]' --efa -o "$hang/$1.out" --wrap "srun bash -c '$bumpc
		for i in \$(seq 8); do bumpc tx_pkts 1000
			case \$SLURMD_NODENAME in $2) bumpc retrans_timeout_events 200 ;; esac; sleep 1; done'" 2>&1
}
sjob=$(links_job sick n2)
until_up 30 sh -c "scontrol -o show node n2 | grep -q 'Reason=efa: sick link'"
like "$(scontrol -o show node n2)" "State=[A-Z+]*DRAIN.* Reason=efa: sick link: 0.2 retransmits per packet sent in job $sjob, its peers 0.01" \
	"SickLinkDrain=yes: the node whose link stands out among three is drained while the job runs, saying why"
wait_job "$sjob"
is "$(job_field "$sjob" JobState)" COMPLETED "  the job finishes there"
like "$(cat "$hang/sick.out")" "efa: job $sjob step 0: sick link on node n2: 0.2 retransmitted packets and timeouts per packet sent since the step started, over 10 times its 2 peers' median \(0.01, SickLinkFloor=0.01\): its collectives wait for it; drained: no new job lands on it; this job goes on" \
	"  its stderr names the node, with the evidence"
is "$(grep -c "sick link on node" "$hang/sick.out")" 1 "  only that node, once"
is "$(python3 -c 'import json, sys
for k in json.loads(sys.argv[1])["efa"]["sick"]: print(k["node"], k["drained"])' "$(record "$sjob")" 2>&1)" "n2 True" \
	"  its record has it"
run "${as_rest[@]}" "$top_builddir/slurm-efa" stats "$sjob" --config "$rest_conf"
like "$out" "^run 0, step 0: sick link on n2: 0.2 retransmits per packet sent, its peers 0.01; drained$" \
	"  slurm-efa stats shows it"
is "$(sed -n "s/^slurm_efa_job_sick_links_total{node=\"n2\",job_id=\"$sjob\",[^}]*} //p" "$mdir/slurm_efa_n2.prom")" 1 \
	"  and n2's file for node_exporter counts it"
scontrol update NodeName=n2 State=RESUME
ajob=$(links_job all 'n[1-3]')
wait_job "$ajob"
is "$(job_field "$ajob" JobState)/$(grep -c "sick link" "$hang/all.out")/$(record "$ajob" | grep -c '"sick"')/$(scontrol -o show node n[1-3] | grep -c 'Reason=efa: sick')" \
	"COMPLETED/0/0/0" "every node's link climbing alike (a congested fabric): nobody named or drained"
is "$(python3 -c 'import json, sys
print(sorted(n for n, r in json.loads(sys.argv[1])["efa"]["links"][0]["above"]))' "$(record "$ajob")" 2>&1)" "[0, 1, 2]" \
	"  though each node's rate passed the floor and was compared"

set_root n1 "$FIXTURES/p5.48xlarge"
set_root n2 "$FIXTURES/p4d.24xlarge"
set_root n3 "$FIXTURES/cpu-only"
set_root n4 "$FIXTURES/trn1.32xlarge"
write_efa_conf
