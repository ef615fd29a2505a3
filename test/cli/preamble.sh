# SPDX-License-Identifier: Apache-2.0
# What every CLI test starts with (bash, sourced after set -euo pipefail):
# the TAP helpers, the slurm-efa under test ($efa), the fixtures
# ($fixtures), a scratch directory ($tmp) removed at exit with every
# stand-in server still running (start_server and bg_track in tap.sh).
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# shellcheck source=../lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"

efa=$top_builddir/slurm-efa
fixtures=$top_builddir/test/fixtures
tmp=$(mktemp -d)
cli_test_cleanup() {
	bg_kill_all
	rm -rf "$tmp"
}
trap cli_test_cleanup EXIT
