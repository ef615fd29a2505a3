#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-efa hostfile: a job's hosts in topology order for mpirun, and
# slurm-efa topo --cluster --job/--nodes: its ring's crossings per layer,
# from a topology file given or found through scontrol (a stand-in
# scontrol in SLURM_EFA_SLURM_BINDIR here; the real one in test/integration/t_rank_order.sh)
# (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

unset SLURM_JOB_NODELIST
cat >"$tmp/topology.conf" <<'TOPO'
# two leaves, names interleaved
SwitchName=top Switches=leaf[1-2]
SwitchName=leaf1 Nodes=gpu-[01,03]
SwitchName=leaf2 Nodes=gpu-[02,04]
TOPO

run "$efa" hostfile --nodes 'gpu-[01-04]' --topology "$tmp/topology.conf"
is "$rc" 0 "hostfile --nodes --topology: exit 0"
is "$out" $'gpu-01\ngpu-03\ngpu-02\ngpu-04' "  the hosts grouped by leaf switch"
run "$efa" hostfile --nodes 'gpu-[01-03]' --topology "$tmp/topology.conf" --slots 8
is "$out" $'gpu-01 slots=8\ngpu-03 slots=8\ngpu-02 slots=8' "--slots N: Open MPI's slots= per host"
run "$efa" hostfile --nodes 'gpu-[02-03]' --topology "$tmp/topology.conf" --slots 2 --seq
is "$out" $'gpu-02\ngpu-02\ngpu-03\ngpu-03' "--seq: one line per rank, for --map-by seq"
run "$efa" hostfile --nodes 'gpu-[01-04]' --order slurm
is "$out" $'gpu-01\ngpu-02\ngpu-03\ngpu-04' "--order slurm: Slurm's order, no topology read"
run "$efa" hostfile --nodes='gpu-[01-03]' --topology="$tmp/topology.conf" --slots=8
is "$out" $'gpu-01 slots=8\ngpu-03 slots=8\ngpu-02 slots=8' "--opt=V as --opt V, as every command takes them"
run "$efa" topo --cluster --nodes='gpu-[01-04]' --topology="$tmp/topology.conf"
is "$rc" 0 "  topo --cluster --nodes=... --topology=... too"
run env SLURM_JOB_NODELIST='gpu-[01-02,04]' "$efa" hostfile --topology "$tmp/topology.conf"
is "$out" $'gpu-01\ngpu-02\ngpu-04' "inside a job: its SLURM_JOB_NODELIST"

run "$efa" hostfile --nodes 'gpu-[01-05]' --topology "$tmp/topology.conf"
is "$rc" 0 "a node the topology does not name: still a hostfile"
is "$(grep -v warning <<<"$out")" $'gpu-01\ngpu-02\ngpu-03\ngpu-04\ngpu-05' "  in Slurm's order"
like "$out" "^slurm-efa hostfile: warning: $tmp/topology.conf: node gpu-05 is not in it" "  with a warning naming the node"
printf 'SwitchName=a Nodes=gpu-01\nSwitchName=a Nodes=gpu-02\n' >"$tmp/twice.conf"
run "$efa" hostfile --nodes 'gpu-[01-02]' --topology "$tmp/twice.conf"
like "$out" "twice.conf:2: a is defined again .line 1." "a malformed topology: file and line"

# scontrol says where slurm.conf is; the topology file sits beside it.
mkdir -p "$tmp/bin" "$tmp/etc"
cp "$tmp/topology.conf" "$tmp/etc/topology.conf"
cat >"$tmp/bin/scontrol" <<SH
#!/bin/sh
case "\$*" in
"show config") printf 'SLURM_CONF              = $tmp/etc/slurm.conf\nSLURM_VERSION           = 22.05.8\n' ;;
"-o show job 42") printf 'JobId=42 JobName=x NodeList=gpu-[01-04] BatchHost=gpu-01\n' ;;
"-o show job 43") printf 'JobId=43 JobName=x NodeList=(null) BatchHost=\n' ;;
*) echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1 ;;
esac
SH
chmod 755 "$tmp/bin/scontrol"
run env SLURM_EFA_SLURM_BINDIR="$tmp/bin" "$efa" hostfile --job 42
is "$out" $'gpu-01\ngpu-03\ngpu-02\ngpu-04' "--job ID: its nodes, under the topology.conf beside Slurm's slurm.conf"
printf -- '- topology: blocks\n  block:\n    blocks:\n      - block: b1\n        nodes: gpu-[01-02]\n      - block: b2\n        nodes: gpu-[03-04]\n' \
	>"$tmp/etc/topology.yaml"
run env SLURM_EFA_SLURM_BINDIR="$tmp/bin" "$efa" hostfile --job 42
is "$out" $'gpu-01\ngpu-03\ngpu-02\ngpu-04' "  22.05 does not read topology.yaml"
sed -i 's/= 22.05.8/= 26.05.3/' "$tmp/bin/scontrol"
run env SLURM_EFA_SLURM_BINDIR="$tmp/bin" "$efa" hostfile --job 42
is "$out" $'gpu-01\ngpu-02\ngpu-03\ngpu-04' "  26.05 reads topology.yaml first: its blocks"
run env SLURM_EFA_SLURM_BINDIR="$tmp/bin" "$efa" hostfile --job 43
is "$rc" 1 "a job without nodes: exit 1"
like "$out" "job 43 has no nodes yet" "  saying so"
run env SLURM_EFA_SLURM_BINDIR="$tmp/bin" "$efa" hostfile --job 44
like "$out" "^slurm-efa: job 44: .*Invalid job id" "an unknown job: scontrol's own message"

# The ring's crossings.
run "$efa" topo --cluster --nodes 'gpu-[01-04]' --topology "$tmp/topology.conf"
is "$out" "ring through 4 nodes (gpu-[01-04]), topology $tmp/topology.conf
layer   Slurm's order  topology order  least
1                   0               0      0
2                   4               2      2" \
	"topo --cluster --nodes: every ring edge crosses a leaf in Slurm's order, two in topology order, the least"
run env SLURM_EFA_SLURM_BINDIR="$tmp/bin" "$efa" topo --cluster --job 42 --json
like "$out" '"topology": "'"$tmp"'/etc/topology.yaml"' "topo --cluster --job: the topology file Slurm reads (26.05: topology.yaml)"
like "$(tr -d ' \n' <<<"$out")" '"layer":1,"slurm_order":2,"topology_order":2,"least":2' \
	"  --json: blocks are one layer; gpu-01..04 in two blocks are already grouped"
run "$efa" topo --cluster --nodes 'gpu-[01-05]' --topology "$tmp/topology.conf"
is "$rc" 1 "a node the topology does not name: exit 1"
like "$out" "node gpu-05 is not in it" "  naming it"
run "$efa" topo --cluster --job 1 --nodes n1
is "$rc" 2 "--job and --nodes together: usage error"

run "$efa" hostfile
is "$rc" 1 "outside a job without --job or --nodes: exit 1"
like "$out" "no job: run inside one, or give --job ID or --nodes LIST" "  saying what to give"
run "$efa" hostfile --nodes n1 --slots 0
is "$rc" 2 "--slots 0 is a usage error"
run "$efa" hostfile --nodes n1 --order sideways
like "$out" "invalid --efa-rank-order value 'sideways'" "a bad --order names the values"
run "$efa" hostfile --nodes n1 --job 1
is "$rc" 2 "--job and --nodes together: usage error"
run "$efa" hostfile --nodes n1 --json
is "$rc" 2 "hostfile --json: usage error"
like "$out" "^slurm-efa hostfile: --json: a hostfile is plain text" "  saying why"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
