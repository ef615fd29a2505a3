# Cluster helpers for the integration tests (bash). Sourced by run.sh;
# every t_*.sh runs in the same shell with these.

# shellcheck source=../lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"

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
# shipped profiles), then the lines given.
write_efa_conf() {
	{
		echo "ProfileDir=${PROFILE_DIR:-$top_srcdir/etc/profiles}"
		printf '%s\n' "$@"
	} >"$EFA_CONF"
}

# Waits (bounded) until a job has left the queue.
wait_job() {
	local _
	for _ in $(seq 120); do
		[ -n "$(squeue -h -j "$1" 2>/dev/null)" ] || return 0
		sleep 0.5
	done
}
