# SPDX-License-Identifier: Apache-2.0
# A job in Slurm's own private mount namespace: job_container/tmpfs (which
# 26.05 calls namespace/tmpfs) gives each job a private /tmp and /dev/shm,
# a namespace the tasks join before task_init, over the node's own root.
# Such a task is on the node, not in a container: it gets the node's EFA
# environment, its bindings and the node's checkpoint directory, and a
# checkpointed step does not fail as one in a container image would.
#
# The plugin is a node's (slurmd and slurmstepd) with PrologFlags=Contain
# (slurmctld): every daemon is restarted with it, and again without it at
# the end.

# The plugin keeps each job's namespace by bind-mounting the
# /proc/PID/ns/mnt file of a child that unshared it. Inside a mount
# namespace other than the host's first, this machine's kernel refuses that
# bind every other time (EINVAL; plain mount(8) shows it: unshare --mount,
# then bind a child namespace's ns/mnt), and a job whose namespace failed
# can stay COMPLETING. An auth/slurm cluster runs in such a namespace
# (run.sh: the fixed /run paths), so the plugin is tested on the munge
# clusters, which run in the host's, as slurmd does on a real node.
if [ "$AUTH" = slurm ]; then
	diag "t_namespace: not run on an auth/slurm cluster, which runs in a mount namespace of its own (see the file)"
	return 0
fi

user=$SLURM_EFA_TEST_USER
conf_dir=$(dirname "$SLURM_CONF")
ns_conf=$conf_dir/job_container.conf
# The plugin mounts a private /tmp over the cluster's directory: what the
# job's tasks see (their working and checkpoint directories, the
# namespaces' own base) lives outside /tmp, as /fsx would.
ns_dir=$(mktemp -d /var/tmp/slurm-efa-ns.XXXXXX)
chmod 755 "$ns_dir"
ns_base=$ns_dir/base
ckroot=$ns_dir/fsx
cp "$SLURM_CONF" "$SLURM_EFA_CLUSTER/slurm.conf.no-ns"

# 26.05 names the plugin type NamespaceType= (JobContainerType= still
# works there, with a warning in slurmctld's log).
ns_type="JobContainerType=job_container/tmpfs"
for d in "${SLURM_PREFIX:-/usr}"/lib/slurm "${SLURM_PREFIX:-/usr}"/lib/*/slurm-wlm; do
	[ -e "$d/namespace_tmpfs.so" ] && ns_type="NamespaceType=namespace/tmpfs"
done

# Every daemon started again with slurm.conf as it is now: slurmctld first
# (PrologFlags), then the four slurmd at once (the plugin), each waited for
# until slurmctld has it idle.
restart_cluster() {
	local n pids=() failed=0
	restart_slurmctld || return 1
	for n in n1 n2 n3 n4; do
		"$top_srcdir/test/cluster/node" "$SLURM_EFA_CLUSTER" restart "$n" >"$SLURM_EFA_CLUSTER/restart-$n.log" 2>&1 &
		pids+=($!)
	done
	for n in "${pids[@]}"; do
		wait "$n" || failed=1
	done
	for n in n1 n2 n3 n4; do
		"$top_srcdir/test/cluster/node" "$SLURM_EFA_CLUSTER" keep "$n"
	done
	[ "$failed" -eq 0 ] || { diag "$(cat "$SLURM_EFA_CLUSTER"/restart-n*.log)"; return 1; }
}

mkdir -p "$ns_base" "$ckroot"
chmod 1777 "$ckroot"
for n in n1 n2 n3 n4; do
	echo "NodeName=$n AutoBasePath=true BasePath=$ns_base/$n"
done >"$ns_conf"
printf '%s\n' "$ns_type" "PrologFlags=Contain" >>"$SLURM_CONF"
if restart_cluster; then
	ok 0 "every daemon restarted with $ns_type and PrologFlags=Contain"
else
	ok 1 "every daemon restarted with $ns_type and PrologFlags=Contain"
fi

# NodeCacheDir= stays in the cluster's directory, and root= leads there
# too: with contain_spank a step's end reads the counters and the node's
# store from inside the job's namespace, where that /tmp is the job's own.
write_efa_conf "PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
slurmd_ns=$(readlink "/proc/$(pidfile_pid "$SLURM_EFA_CLUSTER/run/slurmd-n1.pid")/ns/mnt")
show='echo "$SLURMD_NODENAME $(readlink /proc/self/ns/mnt) ${SLURM_EFA_PROFILE-unset} ${FI_EFA_IFACE:+iface} ${CHECKPOINT_DIR-unset} $(test -d "${CHECKPOINT_DIR-/nonexistent}" && echo made)"'

# How many steps' ends slurmd's log on n1 has, and whether one more than
# $ended (ns_step's).
n1_ends() {
	grep -cE "efa: node n1: step [0-9]+\.0 moved [0-9]+ bytes out" \
		"$SLURM_EFA_CLUSTER/log/slurmd-n1.log" || true
}
n1_ended() {
	[ "$(n1_ends)" -gt "$ended" ]
}

# ns_step HOW NAME: a checkpointed 2-node --efa step of the user, job NAME,
# in the job's namespace, and what its tasks and its end on n1 show.
ns_step() {
	local how=$1 dir=$ckroot/$user/$2 tasks ns_of_nodes ended
	ended=$(n1_ends)
	# srun, not sbatch: a batch script waits in slurmd's spool directory,
	# which is under the cluster's /tmp here.
	run runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" srun -N2 -w n1,n2 --ntasks-per-node=2 \
		-J "$2" -D "$ckroot" -l --efa --efa-bind=closest bash -c "$show; sleep 3"
	is "$rc" 0 "$how: a checkpointed 2-node --efa step of $user runs in the job's private namespace"
	[ "$rc" -eq 0 ] || diag "$out"
	out=$(sort <<<"$out")
	tasks=$(grep -E '^[0-3]: ' <<<"$out" || true)
	# One namespace a node: each node's slurmd makes the job's own.
	ns_of_nodes=$(awk '{ print $2, $3 }' <<<"$tasks" | sort -u)
	ok $((!($(wc -l <<<"$tasks") == 4 && $(wc -l <<<"$ns_of_nodes") == 2 &&
		$(awk '{ print $2 }' <<<"$ns_of_nodes" | sort -u | wc -l) == 2))) \
		"  the tasks of each node share one mount namespace"
	if [ -n "$ns_of_nodes" ] && ! grep -qF " $slurmd_ns" <<<"$ns_of_nodes"; then
		ok 0 "  which is the job's, not the node's ($slurmd_ns)"
	else
		ok 1 "  which is the job's, not the node's ($slurmd_ns)"
		diag "$ns_of_nodes"
	fi
	is "$(awk '{ print $1, $2, $4, $5, $6, $7 }' <<<"$tasks")" "0: n1 p5 iface $dir made
1: n1 p5 iface $dir made
2: n2 p4d iface $dir made
3: n2 p4d iface $dir made" \
		"  each task gets its node's profile, its NICs and the checkpoint directory, made on the node"
	unlike "$out" "container image|inside container|error: efa:" "  and is not taken for a task in a container"
	is "$(stat -c '%U %a' "$dir")" "$user 700" "  the directory is the user's on the node itself"
	# The step's end reads the counters again and finds its start in
	# the node's store (slurmd's log says what it moved): its tasks run
	# 3 s, for its start is read a second after they start.
	until_up 10 n1_ended || true
	is "$(n1_ends)" $((ended + 1)) "  its end on n1 counts what it moved over EFA"
}
ns_step "$ns_type" ns-train

# 24.11 and later can run user_init, task_post_fork and task_exit inside
# the job's namespace too (SlurmdParameters=contain_spank).
full=$(compgen -G "${SLURM_PREFIX:-/usr}/lib/slurm/libslurmfull.so" ||
	compgen -G "${SLURM_PREFIX:-/usr}/lib/*/slurm-wlm/libslurmfull.so" || true)
if [ -n "$full" ] && grep -qa contain_spank "$full"; then
	echo "SlurmdParameters=config_overrides,contain_spank" >>"$SLURM_CONF"
	if restart_cluster; then
		ok 0 "every daemon restarted with SlurmdParameters=contain_spank"
	else
		ok 1 "every daemon restarted with SlurmdParameters=contain_spank"
	fi
	ns_step "contain_spank" ns-contained
else
	diag "Slurm $SLURM_RELEASE has no SlurmdParameters=contain_spank: not tested"
fi

cp "$SLURM_EFA_CLUSTER/slurm.conf.no-ns" "$SLURM_CONF"
rm -f "$ns_conf"
if restart_cluster; then
	ok 0 "every daemon restarted without the job namespace"
else
	ok 1 "every daemon restarted without the job namespace"
fi
run srun -N1 -w n1 --efa bash -c 'readlink /proc/self/ns/mnt'
is "$out" "$slurmd_ns" "  a task runs in the node's mount namespace again"
while read -r m; do
	umount -l "$m" 2>/dev/null || true
done < <(awk -v d="$ns_dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r)
rm -rf "$ns_dir" || diag "$ns_dir could not be removed"
