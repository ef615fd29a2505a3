# TAP helpers for the shell tests (bash): every check prints one TAP line.

tap_n=0
tap_failed=0

# Every check prints one TAP line and returns 0, so a failed check never
# stops the run (run.sh uses set -e for the harness itself).
ok() {	# ok STATUS DESCRIPTION
	local status=$1; shift
	tap_n=$((tap_n + 1))
	if [ "$status" -eq 0 ]; then
		echo "ok $tap_n - $*"
	else
		echo "not ok $tap_n - $*"
		tap_failed=$((tap_failed + 1))
	fi
}

diag() {
	sed 's/^/# /' <<<"$*"
}

is() {	# is GOT WANT DESCRIPTION
	local got=$1 want=$2; shift 2
	if [ "$got" = "$want" ]; then
		ok 0 "$*"
	else
		ok 1 "$*"
		diag "got: '$got'"$'\n'"want: '$want'"
	fi
}

like() {	# like TEXT REGEX DESCRIPTION
	local text=$1 re=$2; shift 2
	if grep -Eq -- "$re" <<<"$text"; then
		ok 0 "$*"
	else
		ok 1 "$*"
		diag "text: '$text'"$'\n'"does not match: /$re/"
	fi
}

unlike() {	# unlike TEXT REGEX DESCRIPTION
	local text=$1 re=$2; shift 2
	if grep -Eq -- "$re" <<<"$text"; then
		ok 1 "$*"
		diag "text: '$text'"$'\n'"matches: /$re/"
	else
		ok 0 "$*"
	fi
}

# Runs a command with a time limit, capturing stdout+stderr in $out and
# the exit status in $rc (so a hung Slurm command fails one test, not all).
run() {
	set +e
	out=$(timeout 120 "$@" 2>&1)
	rc=$?
	set -e
}

