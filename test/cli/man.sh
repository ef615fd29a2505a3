#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The man pages render without warnings (mandoc -T lint, and man/groff where
# present) and name what they must: every slurm-efa command, every efa.conf
# key of src/common/config/efa_conf.c, every SPANK option, every libslurmrest call.
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

man_dir=$top_srcdir/man
pages=(slurm-efa.1 slurmrest.3 efa.conf.5 spank_efa.8 slurm-efa-healthcheck.8)

if ! command -v mandoc >/dev/null; then
	echo "1..0 # SKIP mandoc is not installed (Debian: apt-get install mandoc; scripts/install-deps does)"
	exit 0
fi

for p in "${pages[@]}"; do
	run mandoc -T lint -W style "$man_dir/$p"
	is "$rc:$out" "0:" "$p: mandoc -T lint finds nothing, not even style"
	if command -v man >/dev/null && command -v groff >/dev/null; then
		set +e
		warnings=$(MANWIDTH=80 man --warnings -E UTF-8 -l "$man_dir/$p" 2>&1 >/dev/null)
		set -e
		is "$warnings" "" "$p: man --warnings -l is silent"
	fi
done

# Rendered text, one page: escapes like \- become plain characters.
text() {
	mandoc -T utf8 "$man_dir/$1" | sed 's/.\x08//g'
}

page=$(text slurm-efa.1)
commands=$(sed -n 's/^\t{ "\([a-z-]*\)", cmd_.*/\1/p' "$top_srcdir/src/cli/slurm-efa.c")
[ -n "$commands" ] || ok 1 "found the command table in src/cli/slurm-efa.c"
for c in $commands; do
	like "$page" "^   $c$" "slurm-efa(1) has a section for 'slurm-efa $c'"
done

page=$(text efa.conf.5)
keys=$(sed -n 's/^\t[GP]\(KEY\|COUNT\|LIMIT\)("\([A-Za-z0-9]*\)".*/\2/p' "$top_srcdir/src/common/config/efa_conf.c")
[ -n "$keys" ] || ok 1 "found the key tables in src/common/config/efa_conf.c"
for k in $keys PartitionName; do
	like "$page" "^       $k=" "efa.conf(5) documents $k="
done
for kind in "EFA=required" "EFA=optional" "EFA=off" "PartitionName=DEFAULT"; do
	like "$page" "^       PartitionName=.*$kind|^       $kind" "efa.conf(5) has an example with $kind"
done

page=$(text spank_efa.8)
# The job options' one table (the plugin registers each of them).
options=$(sed -n 's/^\t\[EFA_OPT_[A-Z_]*\] = { "\([a-z-]*\)", .*/\1/p' \
	"$top_srcdir/src/common/cluster/job_options.c")
ok "$([ "$(wc -w <<<"$options")" -ge 6 ]; echo $?)" "found the job options' table in src/common/cluster/job_options.c (6 or more)"
for o in $options; do
	like "$page" "^       --$o" "spank_efa(8) documents --$o"
done
for a in config= root=; do
	like "$page" "^       $a" "spank_efa(8) documents the plugstack argument $a"
done

page=$(text slurmrest.3)
for f in $(grep -oE '^[a-z_ *]*\bslurmrest_[a-z_]+\(' "$top_srcdir/src/rest/slurmrest.h" |
	grep -oE 'slurmrest_[a-z_]+\(' | tr -d '(' | sort -u); do
	like "$page" "$f\(" "slurmrest(3) shows $f()"
done

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
