# SPDX-License-Identifier: Apache-2.0
# What jobs moved over EFA, for Prometheus (MetricsDir=): each step's
# counters are read when it starts and ends, the difference added to its
# job's totals on each node, and every node writes a file node_exporter's
# textfile collector serves. The steps' tasks move "traffic" by raising the
# fixture's hw_counters files (plain files under root=), as the efa driver
# would; node_exporter (Debian's) serves the files, promtool checks them.

metrics=$SLURM_EFA_CLUSTER/metrics
mdir=$metrics/textfile
mkdir -p "$mdir" "$metrics/cache"
chmod 755 "$mdir"
# Private copies of n1's (p5) and n2's (p4d) hardware: the tasks write to them.
for n in n1 n2; do
	fixture=$(readlink "$ROOTS/$n")
	cp -a "$fixture/." "$metrics/$n"
	set_root "$n" "$metrics/$n"
	for dev in $(ls "$metrics/$n/sys/class/infiniband"); do
		hw=$metrics/$n/sys/class/infiniband/$dev/ports/1/hw_counters
		mkdir -p "$hw"
		for c in tx_bytes rx_bytes tx_pkts rx_pkts rdma_read_bytes retrans_timeout_events; do
			echo 1000 >"$hw/$c"
		done
	done
done
first_dev() {	# first_dev NODE
	ls "$metrics/$1/sys/class/infiniband" | head -n 1
}
write_efa_conf "NodeCacheDir=$metrics/cache" "MetricsDir=$mdir"
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"

# A task's way of moving bytes: raise its node's first device's COUNTER by
# N, once its step is counted.
counted=$(counted_fn "$metrics/cache")
bump="$counted"'; bump() { counted; f=$(ls -d '"$ROOTS"'/$SLURMD_NODENAME/sys/class/infiniband/* | head -n 1)/ports/1/hw_counters/$1; echo $(( $(cat "$f") + $2 )) >"$f"; }'
prom() {	# prom NODE: the node's file
	cat "$mdir/slurm_efa_$1.prom" 2>/dev/null
}
value() {	# value NODE METRIC JOB: the job's figure in the node's file
	prom "$1" | sed -n "s/^$2{node=\"$1\",job_id=\"$3\",[^}]*} //p"
}
wait_ended() {	# wait_ended NODE JOB: until the node's epilog said the job ended
	local _
	for _ in $(seq 50); do
		[ "$(value "$1" slurm_efa_job_running "$2")" = 0 ] && return 0
		sleep 0.2
	done
	return 1
}

run srun -N2 -w 'n[1-2]' --ntasks-per-node=1 --efa bash -c "$bump"'
	bump tx_bytes $(( (SLURM_NODEID + 1) * 5000 )); bump rx_bytes 700
	[ "$SLURM_NODEID" = 1 ] && bump retrans_timeout_events 3
	[ "$SLURM_NODEID" = 0 ] && echo "job=$SLURM_JOB_ID"; true'
is "$rc" 0 "a two-node --efa step whose tasks move bytes runs"
job=$(sed -n 's/^job=//p' <<<"$out")
wait_ended n1 "$job" && wait_ended n2 "$job"
is "$?" 0 "  each node's file says the job ended there"
is "$(value n1 slurm_efa_job_tx_bytes_total "$job")" 5000 "  n1: the bytes its task sent"
is "$(value n2 slurm_efa_job_tx_bytes_total "$job")" 10000 "  n2: the bytes its task sent"
is "$(value n2 slurm_efa_job_rx_bytes_total "$job")" 700 "  n2: the bytes it received"
is "$(value n2 slurm_efa_job_retransmit_timeouts_total "$job")" 3 "  n2: its retransmit timeouts"
is "$(value n1 slurm_efa_job_retransmit_timeouts_total "$job")" 0 "  n1: none"
is "$(value n1 slurm_efa_job_steps_ended_total "$job")" 1 "  one step ended"
like "$out" "efa: step $job\.0 on node n2: EFA errors while it ran: EFA device $(first_dev n2): port 1: retrans_timeout_events rose by 3\. Its collectives may have slowed or stalled" \
	"  the step's stderr names the retransmit timeouts that rose on n2"
unlike "$out" "on node n1: EFA errors" "  and none on n1, where none rose"
unlike "$out" "did not use EFA" "  a step that moved bytes is not told it ran without EFA"
like "$(prom n1)" "slurm_efa_job_tx_bytes_total\{node=\"n1\",job_id=\"$job\",user=\"root\",partition=\"gpu\"\} 5000" \
	"  labelled with job id, user and partition"
like "$(prom n2)" "slurm_efa_device_tx_bytes_total\{node=\"n2\",device=\"$(first_dev n2)\",port=\"1\"\} 11000" \
	"  the device's own counter, as the driver shows it"
is "$(prom n1 | grep -c '^slurm_efa_device_tx_bytes_total{')" \
	"$(ls "$metrics/n1/sys/class/infiniband" | wc -l)" "  one series per EFA device of the p5"
run promtool check metrics <"$mdir/slurm_efa_n1.prom"
is "$rc/$out" "0/" "promtool check metrics accepts the file"

# A step's figures start a second after its tasks do (usage.h), from a
# reading a thread of its slurmstepd takes once they run: nothing is read
# on the way from srun to the tasks. A step that ends sooner is not
# counted at all; what a longer one's tasks moved before then is not its.
run srun -N2 -w 'n[1-2]' --efa bash -c '[ "$SLURM_NODEID" = 0 ] && echo job=$SLURM_JOB_ID; true'
short=$(sed -n 's/^job=//p' <<<"$out")
is "$rc/$(prom n1 | grep -c "job_id=\"$short\"")/$(prom n2 | grep -c "job_id=\"$short\"")" "0/0/0" \
	"a two-node --efa step whose tasks end at once: in neither node's file"
is "$(grep -ac "step $short\.0 moved" "$SLURM_EFA_CLUSTER/log/slurmd-n1.log")" 0 \
	"  and no reading in slurmd's log: it read no counters"
early='f=$(ls -d '"$ROOTS"'/$SLURMD_NODENAME/sys/class/infiniband/* | head -n 1)/ports/1/hw_counters/tx_bytes; echo $(( $(cat "$f") + 777 )) >"$f"'
run srun -N1 -w n1 --efa bash -c "$early; $bump"'; bump tx_bytes 5000; echo job=$SLURM_JOB_ID'
late=$(sed -n 's/^job=//p' <<<"$out")
wait_ended n1 "$late"
is "$rc/$(value n1 slurm_efa_job_tx_bytes_total "$late")" 0/5000 \
	"a step whose task sends 777 bytes at once and 5000 once counted: 5000 are its"

# A job user's step: its start goes into the node's store (root's, closed
# to others), which only root may write, and slurmstepd runs user_init and
# the tasks' fork with the user's uid: whatever reads or stores the start
# must do it as root, and the user's step is counted on each node, as
# root's is. (It runs 3 s: its start is read a second after its tasks
# start, and the user cannot see the store to wait for it.)
run runuser -u "$SLURM_EFA_TEST_USER" -- env SLURM_CONF="$SLURM_CONF" srun -D /tmp -N2 -w 'n[1-2]' \
	--ntasks-per-node=2 --efa bash -c 'sleep 3; [ "$SLURM_PROCID" = 0 ] && echo job=$SLURM_JOB_ID; true'
is "$rc" 0 "a job user's two-node --efa step runs"
ujob=$(sed -n 's/^job=//p' <<<"$out")
wait_ended n1 "$ujob" && wait_ended n2 "$ujob"
is "$?" 0 "  each node's file says the job ended there"
is "$(value n1 slurm_efa_job_steps_ended_total "$ujob")/$(value n2 slurm_efa_job_steps_ended_total "$ujob")" \
	1/1 "  its step was counted on both nodes"
like "$(prom n2)" "slurm_efa_job_steps_ended_total\{node=\"n2\",job_id=\"$ujob\",user=\"$SLURM_EFA_TEST_USER\"," \
	"  labelled with its user"

# Two steps of one job that overlap on a node (srun ... & srun ... & wait)
# each read the device's counters, which hold both steps' traffic: the
# job's total on the node counts it once.
run sbatch --parsable -N1 -w n1 --efa -o /dev/null --wrap "
	srun -n1 --overlap bash -c '$bump; sleep 3; bump tx_bytes 1000000' &
	srun -n1 --overlap bash -c '$bump; sleep 1; bump tx_bytes 2000000' &
	wait"
ojob=$out
wait_job "$ojob"
wait_ended n1 "$ojob" || diag "job $ojob never ended on n1: $(prom n1 | grep "job_id=\"$ojob\"")"
is "$(value n1 slurm_efa_job_steps_ended_total "$ojob")" 2 "a job whose two steps overlap on n1: both ended there"
is "$(value n1 slurm_efa_job_tx_bytes_total "$ojob")" 3000000 \
	"  the 3000000 bytes they moved are counted once, not once a step (5000000)"
like "$(grep -a "\[$ojob\.[01]\] efa: node n1: step $ojob\.[01] moved" "$SLURM_EFA_CLUSTER/log/slurmd-n1.log" | tr '\n' ' ')" \
	"step $ojob\.[01] moved (2000000|3000000) bytes.*step $ojob\.[01] moved (2000000|3000000) bytes" \
	"  each step's own figures are still the devices' while it ran"

# A long step's figures are live: the health check writes the file again
# with what its running steps moved so far.
rm -f "$metrics/moved"
srun -N1 -w n1 --efa bash -c "$bump"'; bump tx_bytes 2000; echo $SLURM_JOB_ID >'"$metrics/moved"'; sleep 60' \
	>/dev/null 2>&1 &
for _ in $(seq 100); do [ -s "$metrics/moved" ] && break; sleep 0.1; done
job2=$(cat "$metrics/moved")
run env SLURMD_NODENAME=n1 "$top_builddir/slurm-efa" check --node --config "$EFA_CONF" --root "$ROOTS/n1"
is "$rc" 0 "the health check passes while a step runs"
is "$(value n1 slurm_efa_job_running "$job2")" 1 "  and the file shows the job running"
is "$(value n1 slurm_efa_job_tx_bytes_total "$job2")" 2000 "  with the bytes its step has moved so far"
run srun -N1 -w n1 --efa bash -c "$counted"'; counted; echo job=$SLURM_JOB_ID'
beside=$(sed -n 's/^job=//p' <<<"$out")
wait_ended n1 "$beside"
is "$(value n1 slurm_efa_job_shared "$beside")" 1 "  another job's step beside it: that job is marked shared"
scancel "$job2"
wait_ended n1 "$job2"
is "$(value n1 slurm_efa_job_tx_bytes_total "$job2")" 2000 "  cancelled, its step's figures are kept"
is "$(value n1 slurm_efa_job_shared "$job2")/$(value n1 slurm_efa_job_shared "$job")" "1/0" \
	"  and it is shared too; the first job, alone on its nodes, is not"
wait

# node_exporter serves the files.
port=$(($(cat "$SLURM_EFA_CLUSTER/run/base-port") + 8))
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$mdir" >"$metrics/node_exporter.log" 2>&1 &
exporter=$!
bg_track "$exporter"
scraped=""
for _ in $(seq 50); do
	scraped=$(curl -sf "http://127.0.0.1:$port/metrics") && break
	sleep 0.2
done
like "$scraped" "slurm_efa_job_tx_bytes_total\{job_id=\"$job\",node=\"n2\",partition=\"gpu\",user=\"root\"\} 10000" \
	"node_exporter serves a job's bytes from the node's file"
is "$(grep -c '^node_textfile_scrape_error 0$' <<<"$scraped")" 1 "  and reads every file without an error"
bg_kill "$exporter"
wait "$exporter" 2>/dev/null || true

# Bad input: counter files that are not numbers, or that go back (a driver
# reload), never fail a step or make a figure negative.
hw=$metrics/n1/sys/class/infiniband/$(first_dev n1)/ports/1/hw_counters
echo "N/A" >"$hw/rx_bytes"
run srun -N1 -w n1 --efa bash -c "$bump"'; counted; echo 10 >'"$hw"'/tx_bytes; echo job=$SLURM_JOB_ID'
is "$rc" 0 "a counter that is not a number and one that goes back: the step runs"
job3=$(sed -n 's/^job=//p' <<<"$out")
wait_ended n1 "$job3"
is "$(value n1 slurm_efa_job_tx_bytes_total "$job3")" 10 "  the one that went back counts from 0, never negative"
is "$(value n1 slurm_efa_job_rx_bytes_total "$job3")" 0 "  the one that is not a number counts nothing"
echo 1000 >"$hw/rx_bytes"

# A MetricsDir= others can write to is refused, and said; the step runs.
chmod 777 "$mdir"
before=$(prom n1 | grep -c "job_id=\"$job3\"")
run srun -N1 -w n1 --efa true
is "$rc" 0 "MetricsDir= writable by others: the step runs"
run env SLURMD_NODENAME=n1 "$top_builddir/slurm-efa" check --node --config "$EFA_CONF" --root "$ROOTS/n1"
like "$out" "metrics not written: MetricsDir=$mdir is writable by others, who could plant the node's figures: chmod o-w it" \
	"  the health check says why nothing is written"
is "$(prom n1 | grep -c "job_id=\"$job3\"")" "$before" "  and the file is left as it was"
chmod 755 "$mdir"

# The silent fall-back: a step on several nodes that ran FallbackAfter=
# or longer and moved next to nothing over EFA is told so on its stderr,
# once, by its first node; with or without MetricsDir=.
write_efa_conf "NodeCacheDir=$metrics/cache" "FallbackAfter=2"
run srun -N2 -w 'n[1-2]' --ntasks-per-node=2 --efa bash -c 'sleep 4; [ "$SLURM_PROCID" = 0 ] && echo job=$SLURM_JOB_ID; true'
job4=$(sed -n 's/^job=//p' <<<"$out")
is "$rc" 0 "a two-node --efa step that moves nothing over EFA for 4 s runs (FallbackAfter=2, no MetricsDir=)"
like "$out" "efa: step $job4\.0 ran [0-9]+ s on 2 nodes \(n\[1-2\]\) and moved 0 bytes over EFA on n1: it did not use EFA, and its traffic took a slower path\. Look for NCCL_NET=Socket in the job's or the image's environment, an image without aws-ofi-nccl \(slurm-efa env --image\), or a framework using its own transport \(gloo, MPI over TCP\)$" \
	"  its stderr ends with the fall-back line, naming the step, its nodes and the bytes"
is "$(grep -c "did not use EFA" <<<"$out")" 1 "  said once, not by each node or task"
like "$(grep -h "efa: node n2: step $job4\.0 moved 0 bytes out and 0 in over EFA" "$SLURM_EFA_CLUSTER/log/slurmd-n2.log")" \
	"moved 0 bytes" "  each node's slurmd log has the step's figures"
run env NCCL_NET=Socket srun -N2 -w 'n[1-2]' --efa bash -c 'sleep 4'
like "$out" "did not use EFA.* environment \(this step has NCCL_NET=Socket\), an image" \
	"  a step with NCCL_NET=Socket in its environment is told so"
run srun -N2 -w 'n[1-2]' --efa bash -c "$bump"'; sleep 3; bump rx_bytes 2000000'
is "$rc/$(grep -c "did not use EFA" <<<"$out")" "0/0" "a two-node step that moved 2 MB over EFA: no fall-back line"
run srun -N1 -w n1 --efa bash -c 'sleep 3'
is "$rc/$(grep -c "did not use EFA" <<<"$out")" "0/0" "a one-node step: none"
run srun -N2 -w 'n[1-2]' --efa true
is "$rc/$(grep -c "did not use EFA" <<<"$out")" "0/0" "a step shorter than FallbackAfter=: none"
run srun -N2 -w 'n[1-2]' --efa=off bash -c 'sleep 3'
is "$rc/$(grep -c "did not use EFA" <<<"$out")" "0/0" "an --efa=off step: none"
write_efa_conf "NodeCacheDir=$metrics/cache" "FallbackAfter=0"
run srun -N2 -w 'n[1-2]' --efa bash -c 'sleep 3'
is "$rc/$(grep -c "did not use EFA" <<<"$out")" "0/0" "FallbackAfter=0: never"

# JobRecord=yes: each --efa step on several nodes adds its figures to the
# job's AdminComment, summed over its nodes, the site's own text kept.
write_efa_conf "NodeCacheDir=$metrics/cache" "FallbackAfter=2" "JobRecord=yes"
rm -f "$metrics/rec.go"
run sbatch --parsable -N3 -w 'n[1-2,4]' --efa -o "$metrics/rec.out" --wrap "
	until [ -e $metrics/rec.go ]; do sleep 0.2; done
	srun -N2 -w 'n[1-2]' bash -c '$bump; bump tx_bytes 3000000'
	srun -N3 bash -c 'sleep 5'"
rjob=$out
until_up 60 sh -c "scontrol -o show job $rjob | grep -q JobState=RUNNING" || diag "job $rjob: $(job_state "$rjob")"
scontrol update JobId="$rjob" AdminComment="ticket OPS-12"
touch "$metrics/rec.go"
wait_job "$rjob"
# (scontrol ends the line with a space before 26.05.)
comment=$(scontrol show job "$rjob" | sed -n 's/^ *AdminComment=\(.*[^ ]\) *$/\1/p')
like "$comment" '^ticket OPS-12 \{"efa":\{"steps":\[' \
	"JobRecord=yes: the job's AdminComment keeps the site's text, the EFA summary after it"
steps=$(python3 -c 'import json, sys
c = sys.argv[1]
for s in json.loads(c[c.index("{\"efa\":"):])["efa"]["steps"]:
	print(s["step"], s["nodes"], s["node_count"], s["reported"], s["tx_bytes"], s["fallback"], s["seconds"] >= 3)' "$comment" 2>&1 || true)
is "$(sed -n 1p <<<"$steps")" "0 n[1-2] 2 3 6000000 False False" \
	"  step 0: both nodes' parts, their bytes summed, not a fall-back"
is "$(sed -n 2p <<<"$steps")" "1 n[1-2,4] 3 7 0 True True" \
	"  step 1: all three nodes' parts, though they ended at once; a fall-back, as its stderr said"
like "$(cat "$metrics/rec.out")" "efa: step $rjob\.1 ran [0-9]+ s on 3 nodes" "  (which it did)"

set_root n1 "$FIXTURES/p5.48xlarge"
set_root n2 "$FIXTURES/p4d.24xlarge"
write_efa_conf
