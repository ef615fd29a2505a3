#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Integration tests against a real local Slurm cluster (test/cluster): the
# Slurm the build was configured with (SLURM_PREFIX), with munge or, with
# SLURM_EFA_TEST_AUTH=slurm, auth/slurm as Slinky runs it. Emits TAP. Skips,
# with the reason, only when the cluster cannot start; scripts/test treats a
# skip as a failure.
set -euo pipefail

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
export top_srcdir top_builddir
SPANK_EFA_SO=$top_builddir/.libs/spank_efa.so
export SPANK_EFA_SO

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

case "${SLURM_EFA_INTEGRATION:-yes}" in
skip | no) skip_all "SLURM_EFA_INTEGRATION=${SLURM_EFA_INTEGRATION} disables the cluster tests" ;;
esac
[ "$(id -u)" -eq 0 ] || skip_all "the local Slurm cluster needs root (slurmd, munged, useradd)"
[ -f "$SPANK_EFA_SO" ] || skip_all "$SPANK_EFA_SO not built"
AUTH=${SLURM_EFA_TEST_AUTH:-munge}
# SLURM_EFA_TEST_LAYOUT=pcluster: Slurm as ParallelCluster installs it, its
# daemons without SLURM_CONF or its commands on their PATH (test/cluster).
LAYOUT=${SLURM_EFA_TEST_LAYOUT:-plain}

# auth/slurm's commands find slurmctld through the fixed path
# /run/slurmctld/sack.socket, and each slurmd makes /run/slurm/sack.socket:
# the tests run in a mount namespace of their own with those two directories
# private, so no other cluster on the host is asked or disturbed.
if [ "$AUTH" = slurm ] && [ "${SLURM_EFA_PRIVATE_RUN:-}" != "$$" ]; then
	mkdir -p /run/slurmctld /run/slurm
	# shellcheck disable=SC2016
	exec unshare --mount --propagation private bash -c '
		mount -t tmpfs -o mode=0755 slurm-efa-test /run/slurmctld &&
		mount -t tmpfs -o mode=0755 slurm-efa-test /run/slurm || {
			echo "1..0 # SKIP cannot mount a private /run/slurmctld for auth/slurm"
			exit 0
		}
		SLURM_EFA_PRIVATE_RUN=$$ exec "$@"' bash "$0" "$@"
fi

cluster_log=$(mktemp /tmp/slurm-efa-up.XXXXXX)
# topology/tree from the start (changing the plugin needs a restart): with
# every node under one switch it places jobs as no topology would, until
# t_topology.sh has slurm-efa sync write the real tree (and puts this back).
topo_extra=$(mktemp /tmp/slurm-efa-topo.XXXXXX)
TOPOLOGY_DEFAULT="SwitchName=all Nodes=n[1-4]"
export TOPOLOGY_DEFAULT
printf 'TopologyPlugin=topology/tree\n' >"$topo_extra"
printf '%s\n' "$TOPOLOGY_DEFAULT" >"$topo_extra.conf"
# slurmctld's job_submit.lua finds the bridge and efa.conf the way a site's
# would: through LUA_PATH/LUA_CPATH and SLURM_EFA_CONF in its environment.
cluster_dir=$(mktemp -d /tmp/slurm-efa-cluster.XXXXXX)
chmod 755 "$cluster_dir"
# After a failed check the cluster's logs are kept in the build tree (the
# previous run's are replaced): the cluster's directory is removed.
kept_logs=$top_builddir/test/integration/cluster-log
rm -rf "$kept_logs"
stop_cluster() {
	local m
	"$top_srcdir/test/cluster/down" "$cluster_dir" >/dev/null 2>&1 || true
	# What a test that stopped midway left mounted there (hangfs, the
	# full-disk tmpfs), deepest first: rm -rf cannot remove a mount point.
	while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done < <(awk -v d="$cluster_dir/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r)
	if [ "${tap_failed:-0}" -gt 0 ] && [ -d "$cluster_dir/log" ]; then
		cp -r "$cluster_dir/log" "$kept_logs" && echo "# the cluster's logs are kept in $kept_logs"
	fi
	rm -rf "$cluster_dir" "$topo_extra" "$topo_extra.conf" "${SLURM_EFA_LUA_DIR:-}"
}
# A command of a test that fails outside a check ends the run (set -e):
# it is said as a failed check, naming the test, the command where the
# shell saw it and the last check before it, so that a summary shows it.
stopped_at=""
trap 'stopped_at="line $LINENO: $BASH_COMMAND"' ERR
harness_stopped() {	# harness_stopped STATUS
	[ "$1" -ne 0 ] && [ -n "${t_name:-}" ] && [ -z "${plan_said:-}" ] || return 0
	ok 1 "$t_name stopped after check $tap_n: a command outside the checks failed (exit $1${stopped_at:+, $stopped_at})"
	echo "1..$tap_n"
}
# What a test left running in the background (a test that stopped midway
# never reaches its own kill): its output is the harness's, and the TAP
# driver reads until the last writer is gone. TERM first, which runuser
# passes on to the command it runs.
stop_jobs() {
	local pids
	# (Running ones only: a job bash has reaped may have its pid reused.)
	pids=$(jobs -pr)
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086 # one pid a word
	kill $pids 2>/dev/null || true
	for _ in $(seq 20); do
		[ -n "$(jobs -pr)" ] || return 0
		sleep 0.1
	done
	# shellcheck disable=SC2046
	kill -KILL $(jobs -pr) 2>/dev/null || true
}
trap 'harness_stopped "$?"; stop_jobs; stop_cluster' EXIT
# The bridge's Lua files where slurmctld's LUA_PATH points: a copy, so
# that a test can take the bridge away as a broken upgrade would.
SLURM_EFA_LUA_DIR=$(mktemp -d /tmp/slurm-efa-lua.XXXXXX)
chmod 755 "$SLURM_EFA_LUA_DIR"
export SLURM_EFA_LUA_DIR
# Accounting (slurmdbd over a private MariaDB) where this Slurm has its
# MySQL storage plugin and MariaDB is installed; t_accounting says when not.
accounting=()
accounting_missing=""
if ! command -v mariadbd >/dev/null; then
	accounting_missing="MariaDB is not installed (package mariadb-server)"
elif ! compgen -G "${SLURM_PREFIX:-/usr}/lib/slurm/accounting_storage_mysql.so" >/dev/null &&
	! compgen -G "${SLURM_PREFIX:-/usr}/lib/*/slurm-wlm/accounting_storage_mysql.so" >/dev/null; then
	accounting_missing="Slurm ${SLURM_VERSION:-here} has no accounting_storage_mysql.so (Debian: package slurmdbd; from source: built without libmariadb-dev)"
else
	accounting=(--accounting)
fi
export accounting_missing
start_cluster() {
	cp "$top_srcdir"/lua/*.lua "$SLURM_EFA_LUA_DIR/"
	"$top_srcdir/test/cluster/up" --dir "$cluster_dir" "${accounting[@]}" \
		--slurm "${SLURM_PREFIX:-/usr}" --auth "$AUTH" --layout "$LAYOUT" \
		--conf-extra "$topo_extra" --topology-conf "$topo_extra.conf" \
		--plugstack-line "required $SPANK_EFA_SO" \
		--job-submit "$top_srcdir/lua/job_submit.lua" \
		--cli-filter "$top_srcdir/lua/cli_filter.lua" \
		--daemon-env "SLURM_EFA_CONF=$cluster_dir/efa.conf" \
		--daemon-env "LUA_PATH=$SLURM_EFA_LUA_DIR/?.lua;;" \
		--daemon-env "LUA_CPATH=$top_builddir/.libs/?.so;;" >"$cluster_log" 2>&1
}
# A start that fails is tried once more from scratch, with what the first
# try printed kept above: a daemon slow to come up on a loaded machine is
# not what these tests are about, but it stays visible.
if ! start_cluster; then
	sed 's/^/# first start: /' "$cluster_log"
	"$top_srcdir/test/cluster/down" "$cluster_dir" >/dev/null 2>&1 || true
	find "$cluster_dir" -mindepth 1 -delete
	if ! start_cluster; then
		sed 's/^/# /' "$cluster_log"
		skip_all "the local Slurm cluster could not start, twice (see the lines above)"
	fi
fi
rm -f "$cluster_log" "$topo_extra" "$topo_extra.conf"
# shellcheck source=/dev/null
. "$cluster_dir/env"
echo "# Slurm $SLURM_RELEASE, auth/$AUTH, slurmrestd $SLURMRESTD_API, layout $LAYOUT"
export SLURM_EFA_TEST_LAYOUT=$LAYOUT
# sbatch, salloc and srun load cli_filter.lua, which finds the bridge as
# slurmctld does. efa.conf stays the host's (none) unless a test names the
# cluster's, as a submit host with /etc/slurm/efa.conf would have it.
export LUA_PATH="$SLURM_EFA_LUA_DIR/?.lua;;" LUA_CPATH="$top_builddir/.libs/?.so;;"
mkdir -p "$SLURM_EFA_CLUSTER/out"
chmod 1777 "$SLURM_EFA_CLUSTER/out"

# How each slurmd was started (test/cluster/node keep), so that one found
# gone between two test files is started again as it was.
for n in n1 n2 n3 n4; do
	"$top_srcdir/test/cluster/node" "$SLURM_EFA_CLUSTER" keep "$n"
done

# Each node's hardware, for plugstack lines with root=$ROOTS/%n.
FIXTURES=$top_builddir/test/fixtures
ROOTS=$SLURM_EFA_CLUSTER/roots
EFA_CONF=$SLURM_EFA_CLUSTER/efa.conf
export FIXTURES ROOTS EFA_CONF
mkdir -p "$ROOTS"
ln -s "$FIXTURES/p5.48xlarge" "$ROOTS/n1"
ln -s "$FIXTURES/p4d.24xlarge" "$ROOTS/n2"
ln -s "$FIXTURES/cpu-only" "$ROOTS/n3"
ln -s "$FIXTURES/trn1.32xlarge" "$ROOTS/n4"

# shellcheck source=lib.sh
. "$top_srcdir/test/integration/lib.sh"
# The efa.conf slurmctld's bridge and every node read (SLURM_EFA_CONF,
# config=), there from the start: the bridge refuses the jobs that ask for
# slurm-efa while the efa.conf SLURM_EFA_CONF names cannot be read.
write_efa_conf

# The container tests (t_container.sh) run NVIDIA's pyxis and enroot, which
# scripts/build-containers builds: SLURM_EFA_PYXIS is the spank_pyxis.so
# built against this Slurm (enroot is installed in /usr). Without it they
# are not run, never skipped: "# containers: not tested: WHY" says why
# (SLURM_EFA_CONTAINERS_MISSING, from scripts/test). When they run,
# "# containers: pyxis X + enroot Y: N checks" counts the checks they made;
# scripts/test's summary reads either line.
SLURM_EFA_PYXIS=${SLURM_EFA_PYXIS:-}
SLURM_EFA_PYXIS_VERSION=${SLURM_EFA_PYXIS_VERSION:-unknown}
SLURM_EFA_ENROOT_VERSION=${SLURM_EFA_ENROOT_VERSION:-$(enroot version 2>/dev/null || echo unknown)}
export SLURM_EFA_PYXIS SLURM_EFA_PYXIS_VERSION SLURM_EFA_ENROOT_VERSION
containers_said=0
containers() {
	echo "# containers: $*"
	containers_said=1
}

# Accounting, the same way: "# accounting: not tested: WHY" or
# "# accounting: slurmdbd + MariaDB: N checks" (t_accounting.sh).
if [ -n "$accounting_missing" ]; then
	echo "# accounting: not tested: $accounting_missing"
fi

# A daemon of the cluster that a test file left stopped, or that something
# no test meant stopped (a crash; a signal meant for a process whose pid it
# now has) fails a check of its own, with the end of its log; a slurmd is
# started again as it was, so that the files after it still test what they
# are about instead of failing for want of a node.
# The daemons watched, as "NAME PIDFILE LOG": those running at the start,
# each with its pid when last seen.
watched=()
declare -A last_pid=()
watch_daemons() {
	local d name pidfile pid
	for d in "slurmctld run/slurmctld.pid log/slurmctld.log" \
		"slurmd-n1 run/slurmd-n1.pid log/slurmd-n1.log" "slurmd-n2 run/slurmd-n2.pid log/slurmd-n2.log" \
		"slurmd-n3 run/slurmd-n3.pid log/slurmd-n3.log" "slurmd-n4 run/slurmd-n4.pid log/slurmd-n4.log" \
		"slurmdbd run/slurmdbd.pid log/slurmdbd.log" "munged munge/munged.pid munge/munged.log"; do
		read -r name pidfile _ <<<"$d"
		pid=$(cluster_pid "$SLURM_EFA_CLUSTER/$pidfile") || continue
		watched+=("$d")
		last_pid[$name]=$pid
	done
}
# How a daemon that is gone ended, as far as can be told: a Slurm daemon or
# munged removes its pid file when it shuts down (SIGTERM, or an error its
# log names), not when it crashes or is killed; the kernel logs a crash or
# an out-of-memory kill with the pid (when this machine lets root read it).
how_it_ended() {	# how_it_ended PIDFILE PID
	if [ -e "$SLURM_EFA_CLUSTER/$1" ]; then
		echo "its pid file is still there: it ended without shutting down (a crash, SIGKILL or a fatal error)"
	else
		echo "its pid file is gone: it shut down (SIGTERM, or an error its log names)"
	fi
	dmesg 2>/dev/null | grep -aE "\[$2\]: |[Kk]illed process $2 " | tail -n 3 | sed 's/^/kernel: /' || true
}
daemons_after() {	# daemons_after TEST
	local d name pidfile log pid gone=() ends=() revived
	for d in "${watched[@]}"; do
		read -r name pidfile log <<<"$d"
		if pid=$(cluster_pid_settled "$SLURM_EFA_CLUSTER/$pidfile"); then
			last_pid[$name]=$pid
			continue
		fi
		gone+=("$name")
		ends+=("$(how_it_ended "$pidfile" "${last_pid[$name]}")"$'\n'"the end of its log:"$'\n'"$(tail -n 8 "$SLURM_EFA_CLUSTER/$log" 2>&1)")
	done
	ok "${#gone[@]}" "the cluster's daemons all still run after $1${gone[*]:+ (not: ${gone[*]})}"
	for d in "${!gone[@]}"; do
		diag "${gone[$d]} is not running: ${ends[$d]}"
		[[ ${gone[$d]} == slurmd-* ]] || continue
		if revived=$("$top_srcdir/test/cluster/node" "$SLURM_EFA_CLUSTER" revive "${gone[$d]#slurmd-}" 2>&1); then
			diag "${gone[$d]} started again, as it was"
		else
			diag "${gone[$d]} did not start again: $revived"
		fi
	done
}

watch_daemons

# SLURM_EFA_TESTS="t_env.sh t_bind.sh" runs only those (for development).
for t in "$top_srcdir"/test/integration/t_*.sh; do
	t_name=$(basename "$t")
	[ "$t_name" != t_accounting.sh ] || [ -z "$accounting_missing" ] || continue
	if [ -n "${SLURM_EFA_TESTS:-}" ] && [[ " $SLURM_EFA_TESTS " != *" $t_name "* ]]; then
		[ "$t_name" != t_container.sh ] || containers "not tested: SLURM_EFA_TESTS leaves t_container.sh out"
		continue
	fi
	if [ "$t_name" = t_container.sh ]; then
		if [ -z "$SLURM_EFA_PYXIS" ]; then
			containers "not tested: ${SLURM_EFA_CONTAINERS_MISSING:-SLURM_EFA_PYXIS is not set}"
			continue
		fi
		if [ ! -f "$SLURM_EFA_PYXIS" ]; then
			ok 1 "SLURM_EFA_PYXIS is a file: $SLURM_EFA_PYXIS"
			containers "not tested: SLURM_EFA_PYXIS=$SLURM_EFA_PYXIS does not exist"
			continue
		fi
	fi
	echo "# $t_name"
	t_start=$SECONDS
	t_checks=$tap_n
	# shellcheck source=/dev/null
	. "$t"
	echo "# $t_name took $((SECONDS - t_start)) s"
	if [ "$t_name" = t_container.sh ]; then
		containers "pyxis $SLURM_EFA_PYXIS_VERSION + enroot $SLURM_EFA_ENROOT_VERSION: $((tap_n - t_checks)) checks"
	fi
	if [ "$t_name" = t_accounting.sh ]; then
		echo "# accounting: slurmdbd + MariaDB $(mariadbd --version | awk '{ print $3 }'): $((tap_n - t_checks)) checks"
	fi
	daemons_after "$t_name"
done
[ "$containers_said" -eq 1 ] || containers "not tested: there is no test/integration/t_container.sh"

echo "1..$tap_n"
plan_said=1
[ "$tap_failed" -eq 0 ]
