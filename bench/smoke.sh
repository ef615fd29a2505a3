#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/run --quick: the benchmark harness still builds, runs every
# benchmark and writes its table (TAP). It never checks a timing.
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# shellcheck source=../test/lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table=$tmp/latest.md

set +e
timeout 600 "$top_srcdir/bench/run" --quick --builddir "$top_builddir" --out "$table" >"$tmp/out" 2>&1
rc=$?
set -e
is "$rc" 0 "bench/run --quick exits 0"
[ "$rc" -eq 0 ] || diag "$(tail -n 30 "$tmp/out")"
text=$(cat "$table" 2>/dev/null || true)

like "$text" "^- machine: [0-9]+ CPUs, .*, Linux " "the table names the machine's CPUs and model"
like "$text" "^- Slurm [0-9]+\.[0-9]+\.[0-9]+; slurm-efa commit " "  Slurm's version and the commit"
like "$text" "^\`bench/run --quick\` on [0-9]{4}-[0-9]{2}-[0-9]{2}T" "  the date"

# Every measurement has a row with a number, or says why it was skipped.
number='[0-9][0-9,]*(\.[0-9]+)?'
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| step launch .*(\| $number \[.*\] ms \||skipped: )" \
	"step launch: a row, naming the Slurm it ran on"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (step launch .*\| $number \[$number–$number\] \(the median's 95 % CI $number–$number\) \| ≤ 1\.01 \||step launch .*skipped: )" \
	"  its ratio with the median's 95 % confidence interval"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (step launch .*, steps of an allocation side by side \([0-9]+ rounds, bench/launch_ab\): \(b\) .*\| $number \[.*\] ms \| \(a\) no plugin: $number .*\(the median's 95 % CI $number–$number\) \| ≤ 1\.01 \||step launch .*skipped: )" \
	"step launch side by side (bench/launch_ab): a row deciding the target, with its CI"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (the same without .--efa., steps of an allocation side by side .*: \(g\) spank_efa\.so loaded, against \(f\) an empty SPANK plugin \| $number \[.*\] ms \|.* \| ≤ 1\.005 \||step launch .*skipped: )" \
	"step launch without --efa, against an empty SPANK plugin: a row"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (the same, steps of an allocation side by side .*: \(v\) the variables alone .*\| $number \[.*\] ms \||step launch .*skipped: )" \
	"  and what the variables alone cost, side by side"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (the same, steps of an allocation side by side .*: \(r\) spank_efa\.so .*--efa-rank-order=topology.* against \(a\) none.*\| $number \[.*\] ms \|.* \| ≤ 1\.01 \||step launch .*skipped: )" \
	"  ranks in network order, against no plugin, side by side"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (the same, steps of an allocation side by side .*: \(m\) against \(b\), what .MetricsDir=. adds to a step that ends within a second .*\| $number \[.*\] ms \||step launch .*skipped: )" \
	"  and what MetricsDir= adds to a step, side by side"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (the same, steps of an allocation, [0-9]+ rounds among the TaskProlog's reconfigures: \(b\) .*\| \(measured; ≤ 1\.01 decided side by side\) \||step launch .*skipped: )" \
	"  the rounds among the reconfigures are measured, not judged"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (the same, steps of an allocation: \(b\) against \(v\) a plugin that only sets the same [0-9]+ variables.*\| $number \[.*\] ms \||step launch .*skipped: )" \
	"  and against a plugin that only sets the same variables"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (page faults of the whole machine during one step, steps of an allocation .*\| [0-9,]+ \[[0-9,]+–[0-9,]+\] \| \(v\) [0-9,]+ .*\(a\) [0-9,]+ |step launch .*skipped: )" \
	"  and the page faults of a step, with and without the plugin"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (step launch .srun -N2 --ntasks-per-node=8 true., a new job each .*\| $number \[.*\] ms \||step launch .*skipped: )" \
	"  and step launch as a new job each"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (what Slurm adds to a new job for any plugin with a health gate: \(h\).*\| $number \[.*\] ms \||step launch .*skipped: )" \
	"  and the floor of a plugin with a job prolog and epilog, against the empty one"
like "$text" "^\| 1 \| [0-9]+\.[0-9]+\.[0-9]+ \| (the same without .--efa., a new job each: \(g\) spank_efa\.so loaded, against \(h\) that floor.*\| $number \[.*\] ms \||step launch .*skipped: )" \
	"  and spank_efa.so without --efa against that floor"
like "$text" "^\| 2 \| any \| plugin work per step per node, p5\.48xlarge.* \| $number \[" "plugin work per step: a row"
like "$text" "^\| 5 \| any \| node health check \(slurm-efa check --node\), p5\.48xlarge \| $number \[.*\] ms \| slurm-efa --version: $number " \
	"node health check: a row, against running the program at all"
like "$text" "^\| 7 \| any \| reading the EFA counters at a step's start, p5\.48xlarge.* \| $number \[.*\] µs \| open\+read\+close" \
	"EFA counters: a row for a step's start"
like "$text" "^\| 7 \| any \| reading them again at the step's end.* \| $number \[.*\] µs \|" "  and one for its end"
like "$text" "^\| 3 \| [0-9]+\.[0-9]+\.[0-9]+ \| submission throughput.*(\| $number \[.*\] jobs/s|skipped: )" \
	"submission throughput: a row, naming the Slurm"
like "$text" "^\| 8 \| [0-9]+\.[0-9]+\.[0-9]+ \| failure → restart \| +\| (not measured with --quick|skipped: )" \
	"failure to restart: a row, saying why --quick does not measure it"
# bench/run --quick measures the oldest and the newest API version it speaks.
for v in 38 45; do
	like "$text" "^\| v0\.0\.$v \| [0-9,]+ \| .* ms \| .* MiB \| .* KiB \| .* µs \($number\) \|$" \
		"snapshot scale, v0.0.$v: a row per size"
	like "$text" "^\| 4 \| any \| bridge decision, [0-9,]+ nodes, v0\.0\.$v \| $number µs" "  the decision target's row"
	like "$text" "^\| 4 \| any \| growth .* v0\.0\.$v \| time: .* \| largest $number× \|" "  the growth's row"
done
unlike "$text" "\| n/a" "no measurement is missing (n/a)"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
