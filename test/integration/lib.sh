# TAP helpers and cluster helpers for the integration tests (bash).
# Sourced by run.sh; every t_*.sh runs in the same shell with these.

tap_n=0
tap_failed=0

ok() {	# ok COND_STATUS DESCRIPTION
	local status=$1; shift
	tap_n=$((tap_n + 1))
	if [ "$status" -eq 0 ]; then
		echo "ok $tap_n - $*"
	else
		echo "not ok $tap_n - $*"
		tap_failed=$((tap_failed + 1))
	fi
	return "$status"
}

diag() {
	sed 's/^/# /' <<<"$*"
}

is() {	# is GOT WANT DESCRIPTION
	local got=$1 want=$2; shift 2
	[ "$got" = "$want" ]
	ok $? "$*" || diag "got: '$got'"$'\n'"want: '$want'"
}

like() {	# like TEXT REGEX DESCRIPTION
	local text=$1 re=$2; shift 2
	grep -Eq -- "$re" <<<"$text"
	ok $? "$*" || diag "text: '$text'"$'\n'"does not match: /$re/"
}

unlike() {	# unlike TEXT REGEX DESCRIPTION
	local text=$1 re=$2; shift 2
	! grep -Eq -- "$re" <<<"$text"
	ok $? "$*" || diag "text: '$text'"$'\n'"matches: /$re/"
}

# Runs a command with a time limit, capturing stdout+stderr in $out and
# the exit status in $rc (so a hung Slurm command fails one test, not all).
run() {
	set +e
	out=$(timeout 120 "$@" 2>&1)
	rc=$?
	set -e
}

# Submits a batch job, waits for it, and puts its output in $out and its
# exit status in $rc. Extra sbatch options first, then --wrap text.
batch() {
	local wrap=${*: -1} outfile
	outfile=$(mktemp "$SLURM_EFA_CLUSTER/out/job.XXXXXX")
	set +e
	timeout 120 sbatch --wait --quiet --output="$outfile" "${@:1:$#-1}" --wrap="$wrap" \
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
