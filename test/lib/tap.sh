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

# The processes a test started in the background, each pid with the time
# its process started. The kernel hands a pid out again once its process
# is gone, within a minute on a busy machine whose pid_max is 32768, so a
# root `kill` of a server a test had stopped already can reach whatever has
# that pid now: a slurmd of the cluster tested beside it, which then shuts
# down. A signal goes only to the process that was started.
declare -gA bg_started=()

# The start time of process PID (clock ticks after boot, field 22 of
# /proc/PID/stat, read after the command name, which may hold spaces and
# parentheses); nothing when there is no such process.
proc_start_time() {	# proc_start_time PID
	local stat fields
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	read -r -a fields <<<"${stat##*) }"
	echo "${fields[19]:-}"
}

bg_track() {	# bg_track PID: right after starting PID with &
	bg_started[$1]=$(proc_start_time "$1")
}

# 0 while PID is the process bg_track saw (a zombie still is).
bg_alive() {	# bg_alive PID
	local start
	start=$(proc_start_time "$1")
	[ -n "$start" ] && [ "$start" = "${bg_started[$1]:-}" ]
}

# Sends SIGNAL (TERM) to PID while it is the process bg_track saw; 1 when
# that process is gone (its pid free or another's).
bg_kill() {	# bg_kill PID [SIGNAL]
	bg_alive "$1" && kill -s "${2:-TERM}" "$1" 2>/dev/null
}

bg_kill_all() {	# every process bg_track saw that is still there
	local p
	for p in "${!bg_started[@]}"; do
		bg_kill "$p" || true
	done
}

# Starts a stand-in server (test/standins/fake*) in the background, which prints
# the port it listens on first; sets $port and $server_pid (bg_track'ed:
# bg_kill_all stops it). Redirect stderr on the call to keep its log.
start_server() {	# start_server PORTFILE CMD...
	local file=$1
	shift
	# A file left by an earlier server would be read before this one
	# truncates it.
	rm -f "$file"
	"$@" >"$file" &
	server_pid=$!
	bg_track "$server_pid"
	for _ in $(seq 50); do
		[ -s "$file" ] && break
		sleep 0.1
	done
	port=$(head -n 1 "$file")
}
