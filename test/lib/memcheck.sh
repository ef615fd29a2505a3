# SPDX-License-Identifier: Apache-2.0
# memcheck: one TAP check that a program of the build tree runs clean under
# valgrind memcheck (bash; needs tap.sh, $top_srcdir and $top_builddir).
# Clean means no invalid access, no use of uninitialised memory and no
# definite or indirect leak. "Still reachable" memory (libcurl's and
# OpenSSL's one-time set-up, kept until exit) is not a leak and is not
# counted. There is no suppression file: nothing in Slurm, libcurl,
# OpenSSL or glibc has needed one.

# Put before valgrind, e.g. (runuser -u USER --) to run as another user, or
# (timeout --preserve-status -s TERM 8) to stop a daemon: the signal goes
# to valgrind, which hands it to the program and then checks for leaks.
memcheck_prefix=()

# memcheck DESCRIPTION PROGRAM ARGS...: runs PROGRAM (a libtool wrapper is
# fine) under valgrind; its stdout and stderr go to $out, its exit status
# to $rc. Valgrind reports on a descriptor of its own, so $out holds only
# the program's words, and the report becomes TAP diagnostics on failure.
memcheck() {
	local desc=$1 log
	shift
	log=$(mktemp)
	set +e
	# libtool runs the real program with the uninstalled libraries; runuser
	# keeps LD_LIBRARY_PATH, and fd 3 is opened here, as the caller.
	out=$(timeout 300 "$top_builddir/libtool" --mode=execute "${memcheck_prefix[@]}" \
		valgrind --quiet --error-exitcode=99 --log-fd=3 \
		--leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect "$@" 2>&1 3>"$log")
	rc=$?
	set -e
	# 0, 1 and 2 are the programs' own answers (slurm-efa's exit codes,
	# and examples/nodes'); 99 is valgrind's verdict, 124 the time limit,
	# above 128 a signal.
	if [ "$rc" -le 2 ]; then
		ok 0 "$desc: clean under memcheck (exit $rc)"
	else
		ok 1 "$desc: clean under memcheck (exit $rc)"
		head -n 60 "$log" | sed 's/^/# /'
		[ -s "$log" ] || diag "output: $out"
	fi
	rm -f "$log"
}
