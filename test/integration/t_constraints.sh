# SPDX-License-Identifier: Apache-2.0
# Slurm's constraint grammar against the real slurmctld, one row of
# test/fixtures/constraints.tsv at a time (test_policy.c reads the same
# table): what the job_submit bridge decides for a two-node job in the
# SingleZone=yes partition gpu, what slurmctld itself does with the form
# where no policy applies, and that what the bridge keeps or writes stays in
# one zone. Zone az-us-west-2a is n1,n2; az-us-west-2b is n3,n4.

efa=$top_builddir/slurm-efa
table=$top_builddir/test/fixtures/constraints.tsv
sync_dir=$SLURM_EFA_CLUSTER/sync-constraints
mkdir -p "$sync_dir"
chown "$SLURMRESTD_USER" "$sync_dir"
write_efa_conf "RestURL=unix:$SLURMRESTD_SOCKET" "Snapshot=$sync_dir/snapshot.json" \
	"SnapshotMaxAge=3600" "OnSnapshotMissing=reject" "PartitionName=gpu SingleZone=yes"
chmod 644 "$EFA_CONF"
runuser -u "$SLURMRESTD_USER" -- "$efa" sync --interval 5 --config "$EFA_CONF" 2>"$sync_dir/sync.log" &
sync_pid=$!
bg_track "$sync_pid"
for _ in $(seq 50); do
	[ -s "$sync_dir/snapshot.json" ] && break
	sleep 0.2
done
# Partitions efa.conf says nothing of, so the bridge leaves their jobs
# alone: "span" has one node of each zone, "whole" all four.
scontrol create partitionname=span nodes=n1,n3 state=up
scontrol create partitionname=whole nodes=n[1-4] state=up

release=$(sinfo --version | awk '{split($2, v, "."); print v[1] "." v[2]}')
column=$(awk -F'\t' -v r="$release" '/^# constraint\t/ { for (i = 3; i <= NF; i++) if ($i == r) print i }' "$table")
[ -n "$column" ] || diag "the table has no column for Slurm $release: slurmctld's answers are shown, not compared"

zones_of() {	# zones_of NODES: how many zones the nodes are in
	for n in $(scontrol show hostnames "$1"); do
		sinfo -h -n "$n" -o %f | tr ',' '\n' | grep '^az-'
	done | sort -u | wc -l
}

# Where slurmctld runs a two-node job with the constraint in a partition:
# its nodes, or invalid, unavailable (no two nodes can ever meet it) or
# pending. Jobs really run: sbatch --test-only does not apply a matching OR
# (job_req_node_filter, node_scheduler.c: "just matches first element of
# MOR"), and says n[1,3] for [az-us-west-2a|az-us-west-2b].
# The job says its nodes itself: once it ran, scontrol's NodeList shrinks
# to the nodes still completing (each node's epilog ends on its own).
place() {	# place PARTITION CONSTRAINT
	local c=() o job state said
	[ "$2" = - ] || c=(-C "$2")
	said=$(mktemp "$SLURM_EFA_CLUSTER/out/place.XXXXXX")
	if ! o=$(timeout 60 sbatch --parsable -p "$1" -N2 "${c[@]}" -o "$said" \
		--wrap 'echo "$SLURM_JOB_NODELIST"' 2>&1); then
		case $o in
		*"Invalid feature specification"*) echo invalid ;;
		*"Requested node configuration is not available"*) echo unavailable ;;
		*) echo "unexpected: $o" ;;
		esac
		return
	fi
	job=${o%%;*}
	for _ in $(seq 60); do
		state=$(scontrol -o show job "$job" 2>&1)
		case $state in
		*JobState=PENDING*) sleep 0.5 ;;
		*) wait_job "$job"; cat "$said"; return ;;
		esac
	done
	scancel "$job"
	echo "pending: $(grep -o 'Reason=[^ ]*' <<<"$state")"
}

# What slurmctld does with a form for a two-node job, no policy applying:
# invalid, spans (it runs it on n1 and n3), one (it runs it, only within
# one zone) or none (it accepts the form but no two nodes meet it).
slurm_does() {	# slurm_does CONSTRAINT
	local nodes
	nodes=$(place span "$1")
	case $nodes in
	invalid) echo invalid; return ;;
	unavailable) ;;
	n*) [ "$(zones_of "$nodes")" = 2 ] && echo spans || echo "unexpected: span ran it on $nodes"; return ;;
	*) echo "$nodes"; return ;;
	esac
	nodes=$(place whole "$1")
	case $nodes in
	unavailable) echo none ;;
	n*) [ "$(zones_of "$nodes")" = 1 ] && echo one || echo "unexpected: whole ran it on $nodes" ;;
	*) echo "$nodes" ;;
	esac
}

# The constraint a held job got from the bridge, as slurmctld stores it.
features_of() {	# features_of JOBID
	scontrol -o show job "$1" | sed -n 's/.* Features=\([^ ]*\) .*/\1/p'
}

rows=0
while IFS=$'\t' read -r c policy r1 r2 note; do
	case $c in '#'* | '') continue ;; esac
	rows=$((rows + 1))
	want_slurm=""
	if [ -n "$column" ]; then
		cols=("$c" "$policy" "$r1" "$r2")
		want_slurm=${cols[$((column - 1))]}
	fi
	got_slurm=$(slurm_does "$c")
	if [ -n "$want_slurm" ]; then
		is "$got_slurm" "$want_slurm" "'$c': slurmctld $release finds it $want_slurm for two nodes"
	else
		diag "'$c': slurmctld $release finds it $got_slurm"
	fi

	opts=(-H -p gpu -N2 -J t-constraints)
	[ "$c" = - ] || opts+=(-C "$c")
	run sbatch "${opts[@]}" --wrap true
	job=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' <<<"$out")
	case $policy in
	refuse:*)
		ok $((rc == 0)) "  the bridge refuses it"
		like "$out" "efa: .*$(sed 's/[][\.*^$()|+?{}]/\\&/g' <<<"${policy#refuse:}")" "  saying why"
		case $got_slurm in
		spans | invalid | none) ok 0 "  and slurmctld alone would place it across zones, or not at all ($got_slurm)" ;;
		*) ok $(($(grep -c '^strict: ' <<<"$note") != 1)) "  slurmctld alone keeps it in one zone; the table says why it is refused: ${note:-nothing}" ;;
		esac
		;;
	keep | set:*)
		want=$c
		[ "$policy" = keep ] || want=${policy#set:}
		if [ "$got_slurm" = invalid ]; then
			ok $((rc == 0)) "  the bridge passes it on and slurmctld refuses it"
			unlike "$out" "efa: " "  with its own message"
		else
			is "$rc" 0 "  the bridge accepts it"
			is "$(features_of "$job")" "${want//,/\&}" "  as $want"
			is "$(slurm_does "$want")" one "  which slurmctld places within one zone only"
		fi
		;;
	*) ok 1 "row '$c': policy '$policy' is keep, set: or refuse:" ;;
	esac
	[ -z "$job" ] || scancel "$job"
done <"$table"
ok $((rows < 50)) "the table's $rows rows were checked"

bg_kill "$sync_pid"
wait "$sync_pid" 2>/dev/null || true
scontrol delete partitionname=span
scontrol delete partitionname=whole
write_efa_conf
