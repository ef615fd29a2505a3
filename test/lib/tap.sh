# SPDX-License-Identifier: Apache-2.0
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

# grep reads a pattern with a newline in it as several, any of which may
# match (an empty one matches every line): such a check could never fail.
pattern_ok() {	# pattern_ok REGEX
	[[ $1 != *$'\n'* ]] && return 0
	diag "a pattern with a newline is several patterns to grep: match one line at a time"
	return 1
}

like() {	# like TEXT REGEX DESCRIPTION
	local text=$1 re=$2; shift 2
	if ! pattern_ok "$re"; then
		ok 1 "$*"
	elif grep -aEq -- "$re" <<<"$text"; then
		ok 0 "$*"
	else
		ok 1 "$*"
		diag "text: '$text'"$'\n'"does not match: /$re/"
	fi
}

unlike() {	# unlike TEXT REGEX DESCRIPTION
	local text=$1 re=$2; shift 2
	if ! pattern_ok "$re" || grep -aEq -- "$re" <<<"$text"; then
		ok 1 "$*"
		diag "text: '$text'"$'\n'"matches: /$re/"
	else
		ok 0 "$*"
	fi
}

# Runs a command with a time limit, capturing stdout+stderr in $out and
# the exit status in $rc (so a hung Slurm command fails one test, not all).
# srun and salloc say when a job had to wait for its nodes (a node still
# cleaning up after the previous test's job): not part of any answer.
run() {
	set +e
	out=$(timeout 120 "$@" 2>&1)
	rc=$?
	set -e
	out=$(grep -aEv '^(srun|salloc): (job [0-9]+ queued and waiting for resources|job [0-9]+ has been allocated resources|Pending job allocation [0-9]+|Granted job allocation [0-9]+)$' <<<"$out" || true)
}

# Like run, and sets $ms to the wall time it took.
timed() {	# timed CMD...: $out, $rc and $ms
	local t0 t1
	t0=$(date +%s%N)
	run "$@"
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
}

# Starts a stand-in server (test/standins/fake*) in the background, which prints
# the port it listens on first; sets $port and adds its pid to the array
# $pids (the caller kills them). Redirect stderr on the call to keep its log.
start_server() {	# start_server PORTFILE CMD...
	local file=$1
	shift
	# A file left by an earlier server would be read before this one
	# truncates it.
	rm -f "$file"
	"$@" >"$file" &
	pids+=($!)
	for _ in $(seq 50); do
		[ -s "$file" ] && break
		sleep 0.1
	done
	port=$(head -n 1 "$file")
}
