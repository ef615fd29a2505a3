#!/bin/bash
# slurm-efa topo on the fixtures (TAP).
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# shellcheck source=../lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"

efa=$top_builddir/slurm-efa
fixtures=$top_builddir/test/fixtures
export SLURM_EFA_CONF=$top_srcdir/etc/efa.conf.example

run "$efa" topo --root "$fixtures/p4d.24xlarge"
is "$rc" 0 "topo on a p4d exits 0"
like "$out" "^p4d\.24xlarge: 8 accelerators, 4 EFA NICs$" "  summary line"
like "$out" "^GPU0 +PHB +NODE +SYS +SYS +0 +0000:10:1c\.0$" "  GPU0's row: its bus NIC, then NUMA, then the far side"
like "$out" "^GPU7 +SYS +SYS +NODE +PHB +1 +0000:a0:1d\.0$" "  GPU7's row"
like "$out" "^  NIC0 +rdmap16s27 +0000:10:1b\.0 NUMA 0 uverbs0$" "  NIC legend"

run "$efa" topo --json --root "$fixtures/p5.48xlarge"
is "$(jq -r '[.accelerators[0].nics[] | select(. == "PXB")] | length' <<<"$out")" 4 \
	"p5 JSON: GPU0 has 4 NICs behind its switch"
is "$(jq -r '.accelerators[4].pci' <<<"$out")" "0000:a8:00.0" "p5 JSON: GPU4 is a8:00.0 (driver minor order)"

run "$efa" topo --root "$fixtures/p5-pod"
like "$out" "\(not usable here\)" "pod: GPUs the pod did not get are marked"
like "$out" "uverbs0 \(no /dev node: not usable\)" "pod: NICs without a device node are marked"

run "$efa" topo --root "$fixtures/cpu-only"
like "$out" "^c6i\.4xlarge: 0 accelerators, 0 EFA NICs$" "a CPU node has nothing to show"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
