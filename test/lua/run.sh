#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The Lua side of the job_submit bridge, under the Lua version slurmctld
# uses (TAP).
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
lua=${LUA:-lua${LUA_VERSION:-5.1}}
if ! command -v "$lua" >/dev/null; then
	echo "1..0 # SKIP $lua not installed (scripts/install-deps installs it)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TEST_DIR=$tmp SLURM_EFA_CONF=$tmp/efa.conf
export LUA_PATH="$top_srcdir/lua/?.lua;;"
export LUA_CPATH="$top_builddir/.libs/?.so;;"
# The cli_filter asks slurmctld for its default partition: a stand-in
# scontrol printing as "scontrol -o show partition" does, or failing as it
# does with slurmctld away; each call is noted.
mkdir "$tmp/bin"
cat >"$tmp/bin/scontrol" <<'SCONTROL'
#!/bin/sh
echo "$*" >>"$TEST_DIR/scontrol-asked"
if [ -e "$TEST_DIR/scontrol-fails" ]; then
	echo "slurm_load_partitions: Unable to contact slurm controller (connect failure)" >&2
	exit 1
fi
[ "$*" = "-o show partition" ] || exit 2
echo "PartitionName=train AllowGroups=ALL Default=NO QoS=N/A DefaultTime=NONE Nodes=t[1-2]"
echo "PartitionName=free AllowGroups=ALL Default=YES QoS=N/A DefaultTime=NONE Nodes=t[1-4]"
SCONTROL
chmod +x "$tmp/bin/scontrol"
status=0
out=$(SLURM_EFA_SLURM_BINDIR="$tmp/bin" "$lua" "$top_srcdir/test/lua/bridge.lua") || status=1
echo "$out"
n=$(grep -c '^\(not \)\{0,1\}ok ' <<<"$out")

check() {	# check WANT GOT DESCRIPTION
	n=$((n + 1))
	if [ "$1" = "$2" ]; then
		echo "ok $n - $3"
	else
		echo "not ok $n - $3"
		echo "#   got '$2', want '$1'"
		status=1
	fi
}

# The shipped job_submit.lua without the bridge (LUA_PATH misses it), and
# the bridge without its C module (LUA_CPATH misses it), whatever
# OnSnapshotMissing= says: refused when the policy covers the job,
# accepted otherwise, the two alike.
printf '%s\n' "OnSnapshotMissing=accept" "PartitionName = gpu  EFA = required SingleZone=yes" \
	"PartitionName=cpu EFA=off" >"$SLURM_EFA_CONF"
for without in bridge module; do
	if [ "$without" = bridge ]; then
		got=$(LUA_PATH="$tmp/?.lua" LUA_CPATH="$tmp/?.so" "$lua" "$top_srcdir/test/lua/nobridge.lua" \
			"$top_srcdir/lua/job_submit.lua" 2>&1) || true
		missing="cannot load slurm_efa_bridge (.*): jobs that ask for slurm-efa"
		cause="is not loaded"
		lines=1	# one line of its own, then the refusal
	else
		got=$(LUA_CPATH="$tmp/?.so" "$lua" "$top_srcdir/test/lua/nobridge.lua" bridge 2>&1) || true
		missing="refused a job of alice: .*the slurm_efa Lua module did not load .*LUA_CPATH"
		cause="the slurm_efa Lua module did not load"
		lines=2	# each refusal says it
	fi
	verdict() { sed -n "s/^$1 //p" <<<"$got"; }
	check -1 "$(verdict efa_option)" "no $without: a job with --efa is refused, whatever OnSnapshotMissing= says"
	check -1 "$(verdict rest_option)" "  so is a slurmrestd job with --checkpoint-dir in its environment"
	check -1 "$(verdict rank_option)" "  or with --efa-rank-order in sbatch's"
	check -1 "$(verdict policy_partition)" "  and a job in a partition efa.conf gives a policy ('PartitionName = gpu  EFA = required')"
	check -1 "$(verdict policy_in_list)" "  or in a list naming one"
	check 0 "$(verdict plain_job)" "  a job that asks for nothing in a partition without a policy goes through"
	check 0 "$(verdict default_partition)" "  (its default partition too)"
	check 0 "$(verdict modify_time)" "  a change that moves nothing is let through"
	check 2015 "$(verdict modify_to_gpu)" "  a move into a partition with a policy is refused (ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE)"
	check 1 "$(grep -c '^user: efa: this job cannot be checked now: it asks for slurm-efa .*Contact your cluster admin' <<<"$got")" \
		"  the user is told to contact the admin"
	check "$lines" "$(grep -c "^log: efa: $missing" <<<"$got")" "  the admin's log says what failed"
	check "$lines" "$(grep -c "^log: efa: refused a job of alice: it asks for slurm-efa.*$cause" <<<"$got")" \
		"  and which job was refused"
done
echo "1..$n"
exit "$status"
