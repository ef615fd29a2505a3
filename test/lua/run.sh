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
status=0
out=$("$lua" "$top_srcdir/test/lua/bridge.lua") || status=1
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

for setting in reject accept; do
	printf 'OnSnapshotMissing=%s\n' "$setting" >"$SLURM_EFA_CONF"
	want=$([ "$setting" = reject ] && echo -1 || echo 0)
	got=$(LUA_CPATH="$tmp/?.so" "$lua" "$top_srcdir/test/lua/nomodule.lua" 2>"$tmp/log")
	check "$want" "$got" "without the C module, OnSnapshotMissing=$setting decides"
done
check 1 "$(grep -c 'slurm_efa Lua module did not load' "$tmp/log")" "  and the log says the module is missing"
echo "1..$n"
exit "$status"
