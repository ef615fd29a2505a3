# SPDX-License-Identifier: Apache-2.0
# Slurm's accounting as Slinky deploys it: slurmdbd over a real MariaDB
# (test/cluster/up --accounting: both private to the cluster, on its own
# ports). A finished --efa job and its steps are in sacct. (run.sh leaves
# this test out, saying why, where this Slurm or this machine has no MySQL
# storage.)

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
run sbatch --parsable --wait -N2 -w 'n[1-2]' --efa -J efa-acct -o /dev/null --wrap 'srun true'
job=$out
is "$rc" 0 "a two-node --efa job runs to its end"
until_up 30 sh -c "sacct -n -P -X -j $job -o JobName,State | grep -qx efa-acct.COMPLETED" ||
	diag "sacct: $(sacct -j "$job" 2>&1)"
is "$(sacct -n -P -X -j "$job" -o JobName,State,NodeList,Partition)" "efa-acct|COMPLETED|n[1-2]|gpu" \
	"sacct shows the job: its name, state, nodes and partition"
is "$(sacct -n -P -j "$job" -o JobID,State | grep -v '\.extern|' | sort | paste -sd ' ')" \
	"$job.0|COMPLETED $job.batch|COMPLETED $job|COMPLETED" "  and its steps"

# JobRecord=yes: the steps' EFA summary reaches slurmdbd with the job's
# AdminComment. (Copies of n1's and n2's hardware, with EFA counters that
# stay put: a step that moved nothing.)
acct=$SLURM_EFA_CLUSTER/accounting-roots
mkdir -p "$acct"
for n in n1 n2; do
	cp -a "$(readlink "$ROOTS/$n")/." "$acct/$n"
	for dev in $(ls "$acct/$n/sys/class/infiniband"); do
		mkdir -p "$acct/$n/sys/class/infiniband/$dev/ports/1/hw_counters"
		echo 1000 >"$acct/$n/sys/class/infiniband/$dev/ports/1/hw_counters/tx_bytes"
	done
	set_root "$n" "$acct/$n"
done
write_efa_conf "FallbackAfter=1" "JobRecord=yes"
run sbatch --parsable --wait -N2 -w 'n[1-2]' --efa -o /dev/null --wrap 'srun sleep 4'
job=$out
until_up 30 sh -c "sacct -n -P -X -j $job -o AdminComment | grep -q efa" ||
	diag "sacct: $(sacct -n -P -X -j "$job" -o State,AdminComment 2>&1)"
like "$(sacct -n -P -X -j "$job" -o AdminComment)" \
	'^\{"efa":\{"steps":\[\{"step":0,"nodes":"n\[1-2\]","node_count":2,"reported":"3",.*"fallback":true,.*"bytes":0,' \
	"JobRecord=yes: sacct shows the job's EFA summary: its step, both nodes reported, 0 bytes, a fall-back"

# slurm-efa stats reads it from slurmrestd: slurmctld's record, or
# slurmdbd's through /slurmdb/ (the cluster's local slurmrestd serves it).
rest_client_setup "$SLURM_EFA_CLUSTER/acct-rest"
stats=("${as_rest[@]}" "$top_builddir/slurm-efa" stats "$job" --config "$rest_conf")
run "${stats[@]}"
like "$out" "^job $job \(wrap, completed on n\[1-2\]\), from slurmctld: 1 step with EFA figures" \
	"slurm-efa stats: the job, from slurmctld"
like "$out" '^0 +n\[1-2\] +2/2 +[0-9]+ +0 +0 +0 +0 +0 +0 +0 +yes +no$' "  its step: both nodes, no bytes, a fall-back"
like "$out" "step 0 did not use EFA: it ran [0-9]+ s on 2 nodes and its first node moved nothing over EFA" \
	"  said in words"
run "${stats[@]}" --accounting
is "$rc" 0 "slurm-efa stats --accounting: from slurmdbd, through /slurmdb/" || diag "$out"
like "$out" "^job $job \(wrap, completed on n\[1-2\]\), from slurmdbd: 1 step with EFA figures" "  the same job"
like "$out" '^0 +n\[1-2\] +2/2 +[0-9]+ +0 +0 +0 +0 +0 +0 +0 +yes +no$' "  the same step"
run "${stats[@]}" --accounting --json
is "$(python3 -c 'import json, sys
d = json.load(sys.stdin)
s = d["efa"]["steps"][0]
print(d["from"], d["job_id"], s["step"], s["reported"], s["fallback"])' <<<"$out" 2>&1)" "slurmdbd $job 0 3 True" \
	"  --json: the summary as recorded"
run "${as_rest[@]}" "$top_builddir/slurm-efa" stats 999999 --config "$rest_conf"
is "$rc" 1 "a job neither knows: exit 1"
like "$out" "slurm-efa: job 999999: slurmdbd has no job 999999" "  saying so"

# A step whose tasks moved bytes (raising their node's first device's
# counters, as the driver would, once the step is counted): slurmdbd's
# record sums its nodes.
{ counted_fn "$SLURM_EFA_CLUSTER/nodecache"; echo; echo 'counted || exit 1'; } >"$acct/move.sh"
cat >>"$acct/move.sh" <<'MOVE'
f=$(ls -d "$EFA_ROOTS/$SLURMD_NODENAME"/sys/class/infiniband/* | head -n 1)/ports/1/hw_counters
echo $(($(cat "$f/tx_bytes") + (SLURM_NODEID + 1) * 2000000)) >"$f/tx_bytes"
echo 2 >"$f/retrans_timeout_events"
MOVE
for n in n1 n2; do
	for dev in $(ls "$acct/$n/sys/class/infiniband"); do
		echo 0 >"$acct/$n/sys/class/infiniband/$dev/ports/1/hw_counters/retrans_timeout_events"
	done
done
run sbatch --parsable --wait -N2 -w 'n[1-2]' --efa -o /dev/null --export=ALL,EFA_ROOTS="$ROOTS" \
	--wrap "srun bash $acct/move.sh"
job=$out
until_up 30 sh -c "sacct -n -P -X -j $job -o AdminComment | grep -q efa" ||
	diag "sacct: $(sacct -n -P -X -j "$job" -o State,AdminComment 2>&1)"
run "${as_rest[@]}" "$top_builddir/slurm-efa" stats "$job" --accounting --config "$rest_conf"
like "$out" '^0 +n\[1-2\] +2/2 +[0-9]+ +6000000 +6000000 +0 +0 +4 +0 +0 +no +no$' \
	"a step whose tasks sent 2 MB and 4 MB (each past the fall-back threshold, 1 MiB, however long it ran): slurmdbd's record sums both nodes, and their retransmit timeouts" ||
	diag "$out"
write_efa_conf
set_root n1 "$FIXTURES/p5.48xlarge"
set_root n2 "$FIXTURES/p4d.24xlarge"
