# SPDX-License-Identifier: Apache-2.0
# Cluster helpers for the integration tests (bash). Sourced by run.sh;
# every t_*.sh runs in the same shell with these.

# shellcheck source=../lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"
# shellcheck source=../cluster/pidfile.sh
. "$top_srcdir/test/cluster/pidfile.sh"
# shellcheck source=../cluster/place-conf.sh
. "$top_srcdir/test/cluster/place-conf.sh"

# Submits a batch job, waits for it, and puts its output in $out and its
# exit status in $rc. Extra sbatch options first, then --wrap text.
# With BATCH_USER=NAME, that user submits it (and it runs as them).
batch() {
	local wrap=${*: -1} outfile as=()
	outfile=$(mktemp "$SLURM_EFA_CLUSTER/out/job.XXXXXX")
	if [ -n "${BATCH_USER:-}" ]; then
		chown "$BATCH_USER" "$outfile"
		as=(runuser -u "$BATCH_USER" -- env SLURM_CONF="$SLURM_CONF")
	fi
	set +e
	timeout 120 "${as[@]}" sbatch --wait --quiet --output="$outfile" "${@:1:$#-1}" --wrap="$wrap" \
		>"$outfile.submit" 2>&1
	rc=$?
	set -e
	out=$(cat "$outfile.submit" "$outfile")
}

# Replaces the plugstack.conf that every new step reads (no restart).
set_plugstack() {
	printf '%s\n' "$@" >"$SLURM_EFA_CLUSTER/plugstack.conf"
}

plugin_line() {	# plugin_line [ARGS...]
	echo "required $SPANK_EFA_SO $*"
}

# All node states, e.g. "n1 idle".
node_states() {
	sinfo -h -N -o '%N %T' | sort -u
}

# efa.conf for the cluster's plugin: ProfileDir first ($PROFILE_DIR or the
# shipped profiles), NodeCacheDir in the cluster's directory unless given
# (not the host's /run/slurm-efa), then the lines given.
write_efa_conf() {
	{
		echo "ProfileDir=${PROFILE_DIR:-$top_srcdir/etc/profiles}"
		case " $* " in
		*" NodeCacheDir="*) ;;
		*)
			mkdir -p "$SLURM_EFA_CLUSTER/nodecache"
			echo "NodeCacheDir=$SLURM_EFA_CLUSTER/nodecache"
			;;
		esac
		printf '%s\n' "$@"
	} >"$EFA_CONF.new"
	# Whole or not at all: slurmctld's bridge reads it at any time, and
	# refuses slurm-efa's jobs while it cannot parse it.
	mv -f "$EFA_CONF.new" "$EFA_CONF"
}

# counted_fn CACHE: a shell function, counted, for a step's tasks: it
# waits until the step's start reading is in the node's store under CACHE
# (NodeCacheDir=). A step's counters are first read a second after its
# tasks start (usage.h, EFA_USAGE_START_AFTER_S): what a task moves
# before then is not its step's. The store is root's: root's tasks only.
counted_fn() {
	printf '%s' 'counted() { local i s='"$1"'/usage-$SLURMD_NODENAME/step-$SLURM_JOB_ID.$SLURM_STEP_ID; for i in $(seq 200); do [ -e "$s" ] && return 0; sleep 0.1; done; echo "efa test: step $SLURM_JOB_ID.$SLURM_STEP_ID was never counted on $SLURMD_NODENAME" >&2; return 1; }'
}

# set_root NODE DIR: the node's hardware tree (plugstack's root=$ROOTS/%n),
# swapped in one rename. The epilog of the job before may still be reading
# it: it sees the old tree or the new one, never none, which would be a
# node whose EFA devices are all gone (and the gate drains such a node).
set_root() {
	ln -sfn "$2" "$ROOTS/.$1.new"
	mv -Tf "$ROOTS/.$1.new" "$ROOTS/$1"
}

# Waits (bounded) until a job has ended.
wait_job() {
	local _ state
	for _ in $(seq 240); do
		# scontrol, not squeue: an empty squeue answer may also be a
		# slurmctld too busy to answer, and that is not an end.
		state=$(scontrol -o show job "$1" 2>&1 || true)
		case $state in
		*"Invalid job id"*) return 0 ;;
		*JobState=PENDING* | *JobState=EXPEDITING* | *JobState=CONFIGURING* | *JobState=RUNNING* | \
			*JobState=COMPLETING* | *JobState=SUSPENDED* | *JobState=REQUEUED* | \
			*JobState=RESIZING* | *JobState=SIGNALING* | *JobState=STAGE_OUT*) ;;
		*JobState=*) return 0 ;;
		esac
		sleep 0.5
	done
	diag "job $1 has not ended after 120 s: $(grep -o 'JobState=[^ ]* Reason=[^ ]*' <<<"$state")"
}

# The state of a job and why, for a diagnostic.
job_state() {	# job_state JOBID
	scontrol -o show job "$1" 2>&1 |
		grep -o 'JobState=[^ ]* Reason=[^ ]*\|ExitCode=[^ ]*\|\<NodeList=[^ ]*\|Invalid job id.*' |
		paste -sd ' '
}

job_field() {	# job_field JOBID NAME: NAME=VALUE of scontrol show job
	scontrol -o show job "$1" 2>/dev/null | grep -o "\<$2=[^ ]*" | head -n 1 | cut -d= -f2-
}

# What the daemons logged about a job, for the diagnostics of a job that
# did not do what a check wanted: the cluster's logs go with its directory.
job_log() {	# job_log JOBID
	grep -HE "(JobId=|[Jj]ob |StepId=|step |\[)$1([^0-9]|\$)" "$SLURM_EFA_CLUSTER"/log/*.log 2>/dev/null |
		sed "s|^$SLURM_EFA_CLUSTER/log/||" | tail -n 25
}

# The pid a daemon's pid file names, while that is a process of this
# cluster (marked in its environment): a pid file outlives its daemon, and
# its pid may be another process's by now.
cluster_pid() {	# cluster_pid PIDFILE
	local pid
	pid=$(pidfile_pid "$1") || return 1
	grep -qzxF "SLURM_EFA_CLUSTER_DAEMON=$SLURM_EFA_CLUSTER" "/proc/$pid/environ" 2>/dev/null || return 1
	echo "$pid"
}

# cluster_pid, waiting up to 5 s while the pid file names a process that is
# gone: a daemon that a reconfigure re-executed (slurmctld and slurmd from
# 23.11 on) writes its own pid only once the process before it has exited
# and let go of the file's lock (26.05's controller.c, _update_pidfile;
# slurmd.c, _wait_on_old_slurmd), and it answers requests before that.
cluster_pid_settled() {	# cluster_pid_settled PIDFILE
	until_up 5 cluster_pid "$1" && cluster_pid "$1"
}

# Stops the daemon of a pid file and starts it again with the same
# environment and arguments, after PREFIX (e.g. valgrind ...) if given.
# With RESTART_FROM=DIR, the command line and environment are those
# daemon_save kept in DIR (a daemon under valgrind shows valgrind's own).
# The caller waits for it to be ready.
restart_daemon() {	# restart_daemon PIDFILE [PREFIX...]
	local pid cmd=() envv=() _
	if ! pid=$(cluster_pid_settled "$1"); then
		diag "restart_daemon: $1 names no process of this cluster"
		return 1
	fi
	shift
	if [ -n "${RESTART_FROM:-}" ]; then
		mapfile -d '' -t cmd <"$RESTART_FROM/cmdline"
		mapfile -d '' -t envv <"$RESTART_FROM/environ"
	else
		mapfile -d '' -t cmd <"/proc/$pid/cmdline"
		# A daemon a reconfigure re-executed (23.11 on) has its parent's
		# sockets and pipes in SLURMD_RECONF_*, SLURMCTLD_RECONF_* and
		# SACK_RECONFIG_FD (auth/slurm): a new one must not.
		mapfile -d '' -t envv < <(grep -zv '^[A-Z_]*RECONF' "/proc/$pid/environ")
	fi
	kill "$pid"
	# Its ports and pid file are free only once it is gone (a slurmctld
	# saves its state first).
	for _ in $(seq 600); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	env -i "${envv[@]}" "$@" "${cmd[@]}" </dev/null >/dev/null 2>&1
}

# slurmctld stopped and started again as it was, then waited for (20 s at
# most) until it answers.
restart_slurmctld() {
	restart_daemon "$SLURM_EFA_CLUSTER/run/slurmctld.pid" && until_up 20 scontrol ping
}

# Keeps the command line and environment of the daemon of a pid file in
# DIR, for restart_daemon with RESTART_FROM=DIR.
daemon_save() {	# daemon_save PIDFILE DIR
	local pid
	pid=$(pidfile_pid "$1")
	mkdir -p "$2"
	cp "/proc/$pid/cmdline" "$2/cmdline"
	grep -zv '^[A-Z_]*RECONF' "/proc/$pid/environ" >"$2/environ"
}

# Polls CMD every 0.2 s until it succeeds; 1 when SECONDS pass first.
until_up() {	# until_up SECONDS CMD...: polls
	local n=$(($1 * 5))
	shift
	while ((n-- > 0)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# True when NODE runs no job and has no job's epilog still to run: its
# State= names neither ALLOCATED, MIXED nor COMPLETING.
node_settled() {	# node_settled NODE
	local state
	state=$(scontrol -o show node "$1" | grep -o ' State=[^ ]*') || return 1
	case $state in
	*ALLOCATED* | *MIXED* | *COMPLETING*) return 1 ;;
	esac
}

# A node as sinfo shows it: "STATE REASON" (drained, draining, idle, ...).
node_line() {	# node_line NODE
	sinfo -h -n "$1" -N -o '%T %E' | head -n 1
}
node_drained_for() {	# node_drained_for NODE REASON-PREFIX: drained or draining for it
	[[ $(node_line "$1") =~ ^drain(ed|ing)\ $2 ]]
}
node_idle() {	# node_idle NODE
	[ "$(node_line "$1" | cut -d' ' -f1)" = idle ]
}

# Puts NODE back in service once it has settled: a job whose prolog failed
# there still has its epilog to come, and an epilog that fails after the
# resume drains the node again ("Epilog error").
resume_node() {	# resume_node NODE
	until_up 60 node_settled "$1" || diag "$1 has not settled: $(scontrol -o show node "$1" | grep -o ' State=[^ ]*')"
	scontrol update NodeName="$1" State=RESUME 2>/dev/null || true	# (not drained when a check before failed)
	# (22.05 shows a node "mixed" for a while after a failed launch: in
	# service is what counts.)
	until_up 30 sh -c "sinfo -h -n $1 -o %T | grep -qv ^drain" || diag "$1 is not back: $(sinfo -h -n "$1" -N -o '%T %E')"
}

# test/standins/hangfs: a file system that hangs while $HANGFS_GATE exists
# (a hung FSx for Lustre mount), an empty directory "ckpt" in it.
HANGFS_GATE=$SLURM_EFA_CLUSTER/hangfs.gate
hangfs_usable() {
	[ -x "$top_builddir/test/standins/hangfs" ] && command -v fusermount3 >/dev/null
}
hangfs_mount() {	# hangfs_mount DIR (sets hang_pid)
	mkdir -p "$1"
	"$top_builddir/test/standins/hangfs" "$1" "$HANGFS_GATE" >>"$SLURM_EFA_CLUSTER/hangfs.log" 2>&1 &
	hang_pid=$!
	bg_track "$hang_pid"
	for _ in $(seq 50); do [ -d "$1/ckpt" ] && break; sleep 0.1; done
}
hangfs_umount() {	# hangfs_umount DIR
	rm -f "$HANGFS_GATE"
	fusermount3 -u "$1" 2>/dev/null || umount -l "$1" 2>/dev/null || true
	bg_kill "$hang_pid" || true
	wait "$hang_pid" 2>/dev/null || true
}

# Waits (bounded) until every node is idle and responding.
wait_nodes_idle() {
	local _
	for _ in $(seq 150); do
		[ "$(node_states | awk '{print $2}' | sort -u)" = idle ] && return 0
		sleep 0.2
	done
	return 1
}

# A home for slurm-efa as a client of the cluster's slurmrestd: DIR/efa.conf
# (RestURL= the unix socket, Snapshot=DIR/snapshot.json) and DIR/root.jwt.
# Sets rest_conf, as_rest (local auth takes the peer's uid: run as
# slurmrestd's user) and jwt (the options for TCP with root's token).
rest_client_setup() {	# rest_client_setup DIR
	mkdir -p "$1"
	chown "$SLURMRESTD_USER" "$1"
	rest_conf=$1/efa.conf
	printf '%s\n' "RestURL=unix:$SLURMRESTD_SOCKET" "Snapshot=$1/snapshot.json" "SnapshotMaxAge=60" \
		>"$rest_conf"
	chmod 644 "$rest_conf"
	as_rest=(runuser -u "$SLURMRESTD_USER" --)
	scontrol token username=root lifespan=900 >"$1/root.jwt"
	chmod 600 "$1/root.jwt"
	jwt=(--url "$SLURMRESTD_URL" --user root --token-file "$1/root.jwt")
}

# POSTs a job to the cluster's slurmrestd over its unix socket, as its user.
# The body is written in v0.0.38's shape ({"script": ..., "job": {...,
# "environment": {NAME: VALUE}}}) and sent in the shape of the version the
# cluster's slurmrestd serves: from v0.0.40 on the script sits inside "job",
# the environment is a list of "NAME=VALUE" and "nodes" a string.
# Sets out and rc like run.
rest_submit() {	# rest_submit JSONFILE
	local body
	if [ "$SLURMRESTD_API" = v0.0.38 ]; then
		body=$(cat "$1")
	else
		body=$(jq -c '{job: (.job + {script: .script,
			environment: (.job.environment | to_entries | map("\(.key)=\(.value)"))}
			| if has("nodes") then .nodes |= tostring else . end)}' "$1")
	fi
	run runuser -u "$SLURMRESTD_USER" -- curl -sS --unix-socket "$SLURMRESTD_SOCKET" -X POST \
		-H 'Content-Type: application/json' --data-binary @- \
		"http://localhost/slurm/$SLURMRESTD_API/job/submit" <<<"$body"
}

# The start of an error line of slurmstepd on NODE as srun shows it:
# "slurmstepd-NODE: error:" on 22.05 and 24.11, "[TIMESTAMP] error:" on
# 26.05 (its stepd logs to the task's stderr with a time, no name).
stepd_error() {	# stepd_error NODE
	case $SLURM_RELEASE in
	2[2-4].*) echo "slurmstepd-$1: error:" ;;
	*) echo "\[[0-9T:.-]+\] error:" ;;
	esac
}

# The API version libslurmrest picks with this cluster's slurmrestd: the
# newest both speak, which for every Slurm of the matrix is the newest it
# serves (libslurmrest speaks v0.0.38 to v0.0.45).
REST_CLIENT_API=$SLURMRESTD_API

# A stand-in Kubernetes API in DIR (test/standins/fakekube over TLS, with its
# own CA in DIR/ca.pem and token in DIR/token): Kubernetes nodes kn-a in
# us-west-2a and kn-b in us-west-2b, and the pods kube_api_pods writes.
# Sets kube_url and kube_pid; returns 1 when it cannot start (no fakekube,
# no openssl).
kube_api_start() {	# kube_api_start DIR
	local dir=$1 _
	mkdir -p "$dir/api"
	[ -x "$top_builddir/test/standins/fakekube" ] || return 1
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$dir/key.pem" -out "$dir/ca.pem" -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 || return 1
	jq -n '{kind: "NodeList", apiVersion: "v1", metadata: {}, items: [
		{metadata: {name: "kn-a", labels: {"topology.kubernetes.io/zone": "us-west-2a"}}},
		{metadata: {name: "kn-b", labels: {"topology.kubernetes.io/zone": "us-west-2b"}}}]}' \
		>"$dir/api/nodes.json"
	kube_api_pods "$dir"
	echo "in-cluster-token" >"$dir/token"
	# Marked as the cluster's, so that its teardown stops it.
	SLURM_EFA_CLUSTER_DAEMON=$SLURM_EFA_CLUSTER "$top_builddir/test/standins/fakekube" 900 "$dir/api" \
		"$dir/ca.pem" "$dir/key.pem" "$dir/token" >"$dir/port" 2>"$dir/requests.log" &
	kube_pid=$!
	bg_track "$kube_pid"
	for _ in $(seq 50); do [ -s "$dir/port" ] && break; sleep 0.1; done
	kube_url=https://127.0.0.1:$(cat "$dir/port")
}

# The pods of namespace slurm, one per HOST:NODE (NODE kn-a or kn-b; none:
# pending), named as Slinky's slurm-operator 1.2.1 names a NodeSet's pods:
# the NodeSet's name and the ordinal (slurm-worker-p5-1), with the Slurm
# node's name as spec.hostname and in the label
# nodeset.slinky.slurm.net/pod-hostname (p5-1). The stand-in reads the file
# at each request.
kube_api_pods() {	# kube_api_pods DIR HOST:NODE...
	local dir=$1 p host
	shift
	for p in "$@"; do
		host=${p%%:*}
		jq -n --arg h "$host" --arg n "${p#*:}" \
			--arg set "$(sed -E 's/-?([0-9]+)$//' <<<"$host")" --arg i "$(grep -oE '[0-9]+$' <<<"$host")" \
			'{metadata: {name: "slurm-worker-\($set)-\($i)", namespace: "slurm",
				labels: {"app.kubernetes.io/name": "slurmd",
					"nodeset.slinky.slurm.net/pod-name": "slurm-worker-\($set)-\($i)",
					"nodeset.slinky.slurm.net/pod-index": $i,
					"nodeset.slinky.slurm.net/pod-hostname": $h,
					"nodeset.slinky.slurm.net/scaling-mode": "StatefulSet"}},
			spec: ({hostname: $h} + (if $n == "none" then {} else {nodeName: $n} end))}'
	done | jq -s '{kind: "PodList", apiVersion: "v1", metadata: {}, items: .}' >"$dir/api/pods.json.new"
	mv "$dir/api/pods.json.new" "$dir/api/pods.json"
}

# efa.conf lines for sync with zones from the stand-in Kubernetes API in DIR.
kube_conf_lines() {	# kube_conf_lines DIR
	printf '%s\n' "ZoneSource=kubernetes" "KubernetesURL=$kube_url" "KubernetesTokenFile=$1/token" \
		"KubernetesCAFile=$1/ca.pem" "KubernetesNamespace=slurm"
}
