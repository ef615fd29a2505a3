#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-efa topo on the fixtures (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

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

run "$efa" topo --root "$fixtures/trn2.48xlarge"
like "$out" "^trn2\.48xlarge: 16 accelerators, 16 EFA NICs$" "trn2: summary line"
like "$out" "^  NEURON15  cores 60-63 \(8 physical, 2 per logical core\)$" \
	"trn2: logical NeuronCores, as NEURON_RT_VISIBLE_CORES numbers them (the runtime's default)"
like "$out" "^  64 logical NeuronCores, 128 physical$" "trn2: 64 logical of 128 physical"
run env NEURON_LOGICAL_NC_CONFIG=1 "$efa" topo --root "$fixtures/trn2.48xlarge"
like "$out" "^  NEURON15  cores 120-127 \(8 physical, 1 per logical core\)$" \
	"trn2 with NEURON_LOGICAL_NC_CONFIG=1: one physical core per logical core"
run "$efa" topo --json --root "$fixtures/trn2.48xlarge"
is "$(jq -r '[.accelerators[].cores] | add' <<<"$out") $(jq -r '[.accelerators[].physical_cores] | add' <<<"$out")" \
	"64 128" "trn2 JSON: logical and physical cores"
run "$efa" topo --root "$fixtures/trn1.32xlarge"
like "$out" "^  NEURON15  cores 30-31 \(2 physical, 1 per logical core\)$" "trn1: logical = physical cores"

run "$efa" topo --root "$fixtures/cpu-only"
like "$out" "^c6i\.4xlarge: 0 accelerators, 0 EFA NICs$" "a CPU node has nothing to show"

# --cluster: the network tree from a snapshot's layers.
node() {	# node NAME ZONE STATE LAYERS(JSON) [BLOCK]
	printf '{"name": "%s", "zone": "%s", "feature": "az-%s", "state": "%s", "usable": true, "partitions": ["gpu"], "layers": %s%s}' \
		"$1" "$2" "$2" "$3" "$4" "${5:+, \"block\": \"$5\"}"
}
{
	echo '{"format": 1, "generated": 1795990000, "zone_prefix": "az-", "layer_prefixes": ["nn1-", "nn2-", "nn3-", "nn4-"], "block_prefix": "cb-", "nodes": ['
	node p5-002 us-east-1a idle '["nn-a", "nn-b", "nn-c", null]'; echo ,
	node p5-001 us-east-1a allocated '["nn-a", "nn-b", "nn-c", null]'; echo ,
	node p5-003 us-east-1a idle '["nn-a", "nn-b", "nn-d", null]'; echo ,
	node p5-004 us-east-1a idle '["nn-a", null, null, null]'; echo ,
	node gb-001 us-east-1a idle '["nn-a", "nn-b", "nn-d", "nn-e"]' us-1; echo ,
	node gb-002 us-east-1a idle '["nn-a", "nn-b", "nn-d", "nn-f"]' us-1; echo ,
	node p5-101 us-east-1b idle null
	echo ']}'
} >"$tmp/snapshot.json"
printf 'Snapshot=%s\n' "$tmp/snapshot.json" >"$tmp/efa.conf"
run "$efa" topo --cluster --snapshot --config "$tmp/efa.conf"
is "$rc" 0 "topo --cluster --snapshot exits 0"
like "$out" "^zone us-east-1a: 6 nodes, 6 usable$" "  a zone"
like "$out" "^      layer 3 nn-c: p5-\[001-002\]$" "  its leaves under layers 1 and 2, nodes as a hostlist"
like "$out" "^        p5-001 +allocated$" "  each node with its state"
like "$out" "^  layer 1 nn-a: p5-004$" "  a node with one layer (a reservation's) under its layer 1"
# (The three lines in a row, joined: grep takes a newline in a pattern for "or".)
like "$(grep -A2 '^      layer 3 nn-d: p5-003$' <<<"$out" | paste -sd '|')" \
	"^      layer 3 nn-d: p5-003\|        p5-003 +idle\|        layer 4 nn-e: gb-001$" \
	"  a 4-layer node under its layer 4, beside a 3-layer node"
like "$out" "^  capacity block us-1: gb-\[001-002\]$" "  the zone's capacity block"
like "$out" "^zone us-east-1b: 1 node, 1 usable$" "  a zone without layers"
like "$out" "^7 nodes; 1 without layer features \(nn1-,nn2-,nn3-,nn4-\), 0 with contradicting ones$" "  and the counts"
run "$efa" topo --cluster --snapshot --json --config "$tmp/efa.conf"
is "$(jq -r '.zones[0].switches[0].switches[0].switches | map(.name) | join(",")' <<<"$out")" "nn-c,nn-d" \
	"topo --cluster --json: the layer-3 switches of zone a"
is "$(jq -r '[.zones[1].zone, .zones[1].nodes[0].name, .without_layers] | join(" ")' <<<"$out")" \
	"us-east-1b p5-101 1" "  a zone's own nodes, and the count"
is "$(jq -c '.zones[0].capacity_blocks' <<<"$out")" '[{"name":"us-1","nodes":["gb-001","gb-002"]}]' \
	"  and its capacity blocks"
run "$efa" topo --cluster --snapshot --config "$tmp/nowhere.conf"
is "$rc" 2 "topo --cluster with a missing efa.conf: exit 2"
run "$efa" topo --cluster --bogus
is "$rc" 2 "topo --cluster with an unknown option: exit 2"

# zones and topo --cluster read their arguments alike (cli_source_args):
# "--partition V" and "--partition=V" are one option.
run "$efa" zones --snapshot --config "$tmp/efa.conf" --partition gpu
spaced=$out spaced_rc=$rc
run "$efa" zones --snapshot --config "$tmp/efa.conf" --partition=gpu
is "$rc/$out" "$spaced_rc/$spaced" "zones --partition gpu and --partition=gpu answer alike"
like "$out" "us-east-1a" "  with the zones"
run "$efa" zones --snapshot --config "$tmp/efa.conf" --partition
is "$rc" 2 "zones --partition without a value: a usage error"
like "$out" "slurm-efa: --partition needs a value" "  saying so"
run "$efa" zones --snapshot --config "$tmp/efa.conf" --cluster
is "$rc" 2 "zones --cluster (topo's option): refused"
like "$out" "^slurm-efa zones: unexpected argument '--cluster'" "  named, with the usage"
run "$efa" topo --cluster --snapshot --config "$tmp/efa.conf" --partition=gpu
is "$rc" 2 "topo --cluster --partition=gpu (zones' option): refused"
like "$out" "^slurm-efa topo: unexpected argument '--partition=gpu'" "  named, with the usage"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
