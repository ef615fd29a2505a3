# SPDX-License-Identifier: Apache-2.0
# --efa-rank-order=topology: the launch variables number a step's nodes
# grouped by the switches of the topology file Slurm reads. The test
# cluster's EFA nodes, n1, n2 and n4 (n3 is a CPU instance), sit under two
# leaves in interleaved name order (n1, n4 under one; n2, n3 under the
# other): every node must agree on RANK and NODE_RANK grouped by leaf, SLURM_PROCID stays Slurm's, and a topology that does not name a
# node, or names one twice, leaves Slurm's order with one warning and a
# step that runs. A real PyTorch job initialises from the reordered ranks.

slurm_topo=$(dirname "$SLURM_CONF")/topology.conf
interleaved="SwitchName=top Switches=leaf[1-2]
SwitchName=leaf1 Nodes=n[1,4]
SwitchName=leaf2 Nodes=n[2-3]"

# Gives slurmctld the topology TEXT and checks that it shows SWITCH.
load_topology() {	# load_topology TEXT SWITCH WHAT
	local up=0
	rm -f "$slurm_topo"
	printf '%s\n' "$1" >"$slurm_topo"
	scontrol reconfigure
	until_up 30 sh -c "scontrol show topology | grep -q '^SwitchName=$2 '" || up=$?
	is "$up" 0 "$3"
	wait_nodes_idle || diag "nodes not idle: $(node_states | paste -sd ' ')"
}

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
load_topology "$interleaved" leaf1 "slurmctld reads the interleaved tree"

task='echo "$SLURMD_NODENAME procid=$SLURM_PROCID nodeid=$SLURM_NODEID rank=${RANK-} node=${NODE_RANK-} local=${LOCAL_RANK-} world=${WORLD_SIZE-}"'
ranks() {	# ranks SRUN-ARGS...: each task's line, by RANK
	run srun -w 'n[1-2,4]' --efa "$@" bash -c "$task"
	out=$(sort -t= -k4,4n <<<"$out")
}
# "NODE rank=R node=N" of each line.
placed() {
	sed 's/procid=[0-9]* nodeid=[0-9]* //; s/ local=.*//' <<<"$1"
}
# Whether every line's RANK and NODE_RANK are Slurm's own SLURM_PROCID
# and SLURM_NODEID: "slurm's" or the first line where they are not.
slurms_own() {
	awk '{ split($0, f, /[ =]/); if (f[3] != f[7] || f[5] != f[9]) { print; exit 1 } }
	     END { if (NR) print "slurm'"'"'s" }' <<<"$1" || true
}

ranks -N3 --ntasks-per-node=2
is "$(slurms_own "$out")" "slurm's" "without --efa-rank-order: RANK and NODE_RANK are Slurm's SLURM_PROCID and SLURM_NODEID"
slurm_ids=$(sed 's/ nodeid=.*local=\([0-9]*\).*/ local=\1/' <<<"$out" | sort)

ranks -N3 --ntasks-per-node=2 --efa-rank-order=topology
is "$rc" 0 "a 3-node step with --efa-rank-order=topology runs"
is "$(sed 's/ nodeid=.*local=\([0-9]*\).*/ local=\1/' <<<"$out" | sort)" "$slurm_ids" \
	"  SLURM_PROCID and LOCAL_RANK stay Slurm's"
is "$(sed 's/procid=[0-9]* nodeid=[0-9]* //' <<<"$out")" "n1 rank=0 node=0 local=0 world=6
n1 rank=1 node=0 local=1 world=6
n4 rank=2 node=1 local=0 world=6
n4 rank=3 node=1 local=1 world=6
n2 rank=4 node=2 local=0 world=6
n2 rank=5 node=2 local=1 world=6" "  RANK and NODE_RANK grouped by leaf (n1, n4, then n2), the same on every node"

ranks -N3 -n5 --efa-rank-order=topology
is "$(placed "$out")" "n1 rank=0 node=0
n1 rank=1 node=0
n1 rank=2 node=0
n4 rank=3 node=1
n2 rank=4 node=2" "  uneven tasks (Slurm's 3,1,1): ranks follow each node's own count"

batch -N3 -w 'n[1-2,4]' --efa --efa-rank-order=topology "srun --ntasks-per-node=1 bash -c '$task' | sort -t= -k4,4n"
is "$(placed "$out")" "n1 rank=0 node=0
n4 rank=1 node=1
n2 rank=2 node=2" "sbatch --efa-rank-order=topology: the job's steps inherit it"

# The same tree as an admin may write it, in the syntax Slurm's parser
# takes (parse_config.c, hostlist.c): blanks around '=', quoted values, a
# line continued by a backslash, comments, a list separated by a blank.
load_topology '# the leaves, two EFA nodes and n3 under each
SwitchName = top Switches="leaf[1-2]"
SwitchName=leaf1 \
  Nodes=n1,\
n4   # the first leaf
SwitchName=leaf2 Nodes="n2 n3"' leaf2 "slurmctld reads a topology.conf with continued lines, quotes and comments"
like "$(scontrol show topology)" "^SwitchName=leaf1 .*Nodes=(n1,n4|n\[1,4\])$" "  Slurm joins the continued line: n1,n4 under leaf1"
like "$(scontrol show topology)" "^SwitchName=top .*Nodes=n\[1-4\]" "  and expands \"n2 n3\": all four nodes under top"
ranks -N3 --ntasks-per-node=1 --efa-rank-order=topology
is "$(placed "$out")" "n1 rank=0 node=0
n4 rank=1 node=1
n2 rank=2 node=2" "  the plugin reads it as Slurm does: ranks grouped by leaf"
unlike "$out" "warning" "  without a warning"
load_topology "$interleaved" leaf1 "slurmctld reads the interleaved tree again"

# The issue's layout over all four nodes: n1, n3 under one leaf, n2, n4
# under the other. n3 has no EFA: --efa=auto sets it nothing EFA-specific,
# but its tasks are ranks like the others'.
printf 'SwitchName=top Switches=leaf[1-2]\nSwitchName=leaf1 Nodes=n[1,3]\nSwitchName=leaf2 Nodes=n[2,4]\n' >"$slurm_topo"
run srun -N4 -w 'n[1-4]' --ntasks-per-node=2 --efa=auto --efa-rank-order=topology \
	bash -c 'echo "$SLURMD_NODENAME rank=${RANK-} node=${NODE_RANK-} local=${LOCAL_RANK-} world=${WORLD_SIZE-} master=${MASTER_ADDR-}:${MASTER_PORT-} profile=${SLURM_EFA_PROFILE-none}"'
is "$rc" 0 "4 nodes, n1 and n3 under one leaf, n2 and n4 under the other, --efa=auto: the step runs"
is "$(sed 's/ master=[^ ]*//; s/ profile=.*//' <<<"$out" | sort -t= -k2,2n)" "n1 rank=0 node=0 local=0 world=8
n1 rank=1 node=0 local=1 world=8
n3 rank=2 node=1 local=0 world=8
n3 rank=3 node=1 local=1 world=8
n2 rank=4 node=2 local=0 world=8
n2 rank=5 node=2 local=1 world=8
n4 rank=6 node=3 local=0 world=8
n4 rank=7 node=3 local=1 world=8" "  ranks grouped by leaf on every node, n3 (no EFA) numbered with the rest"
is "$(grep -o 'master=[^ ]*' <<<"$out" | sort -u | wc -l)" 1 "  one MASTER_ADDR:MASTER_PORT on every node"
is "$(grep '^n3 ' <<<"$out" | grep -o 'profile=.*' | sort -u)" "profile=none" "  and n3 no EFA profile"
printf '%s\n' "$interleaved" >"$slurm_topo"

# mpirun's hostfile in the same order, from the topology file scontrol's
# slurm.conf sits beside.
batch -N3 -w 'n[1-2,4]' "$top_builddir/slurm-efa hostfile --slots 2"
is "$out" $'n1 slots=2\nn4 slots=2\nn2 slots=2' "slurm-efa hostfile in a job: its hosts in the order its ranks have"
run "$top_builddir/slurm-efa" hostfile --nodes 'n[1-4]'
is "$out" $'n1\nn4\nn2\nn3' "slurm-efa hostfile --nodes: grouped by leaf"
run "$top_builddir/slurm-efa" topo --cluster --nodes 'n[1-4]'
is "$(tail -2 <<<"$out" | tr -s ' ')" $'1 0 0 0\n2 2 2 2' \
	"slurm-efa topo --cluster --nodes: the ring's crossings per layer, from the topology.conf Slurm reads"
# (slurmctld's: under --layout pcluster the link PREFIX/etc to this dir.)
named=$(sed -n '1s/.*, topology //p' <<<"$out")
is "$(realpath "$named")" "$(realpath "$(dirname "$SLURM_CONF")/topology.conf")" "  and names that file ($named)"

write_efa_conf "PartitionName=gpu RankOrder=topology"
ranks -N3 --ntasks-per-node=1 -p gpu
is "$(placed "$out")" "n1 rank=0 node=0
n4 rank=1 node=1
n2 rank=2 node=2" "a partition's RankOrder=topology is its jobs' default"
ranks -N3 --ntasks-per-node=1 -p gpu --efa-rank-order=slurm
is "$(slurms_own "$out")" "slurm's" "  and --efa-rank-order=slurm overrides it"
write_efa_conf

run srun -N1 -w n1 --efa --efa-rank-order=sideways true
like "$out" "invalid --efa-rank-order value 'sideways': use --efa-rank-order=topology" \
	"a bad --efa-rank-order is refused, saying which values there are"

# Files slurmctld is not told about: only the plugin reads them here.
# topology/block's syntax: nodes grouped by block.
printf 'BlockName=b1 Nodes=n[1,4]\nBlockName=b2 Nodes=n[2-3]\nBlockSizes=2\n' >"$slurm_topo"
ranks -N3 --ntasks-per-node=1 --efa-rank-order=topology
is "$(placed "$out")" "n1 rank=0 node=0
n4 rank=1 node=1
n2 rank=2 node=2" "blocks (topology/block's topology.conf): nodes grouped by block"
# topology.yaml beside a one-switch topology.conf: Slurm reads it first
# from 25.05 on (and the plugin with it); 22.05 and 24.11 never read it.
printf '%s\n' "$TOPOLOGY_DEFAULT" >"$slurm_topo"
slurm_yaml=$(dirname "$SLURM_CONF")/topology.yaml
cat >"$slurm_yaml" <<'YAML'
- topology: tree
  tree:
    switches:
      - switch: all
        nodes: n[1-4]
- topology: blocks
  cluster_default: true
  block:
    block_sizes: [2]
    blocks:
      - block: b1
        nodes: n[1,4]
      - block: b2
        nodes: n[2-3]
YAML
ranks -N3 --ntasks-per-node=1 --efa-rank-order=topology
rm -f "$slurm_yaml"
case $SLURM_RELEASE in
2[2-4].*) want=$'n1 rank=0 node=0\nn2 rank=1 node=1\nn4 rank=2 node=2' what="$SLURM_RELEASE reads topology.conf, not topology.yaml" ;;
*) want=$'n1 rank=0 node=0\nn4 rank=1 node=1\nn2 rank=2 node=2' what="$SLURM_RELEASE reads topology.yaml first: its cluster_default blocks" ;;
esac
is "$(placed "$out")" "$want" "$what"


for bad in "SwitchName=top Switches=leaf[1-2]
SwitchName=leaf1 Nodes=n1
SwitchName=leaf2 Nodes=n[2-3]|a topology without n4|node n4 is not in it" \
	"SwitchName=top Switches=leaf[1-2]
SwitchName=leaf1 Nodes=n[1,4]
SwitchName=leaf2 Nodes=n[2-4]|n4 named twice|topology.conf:3: node n4 is under leaf1 already .line 2." \
	"SwitchName=top Switches=top|a loop|topology.conf:1: switch top is below itself"; do
	IFS='|' read -r text what why <<<"${bad//$'\n'/\\n}"
	printf '%b\n' "$text" >"$slurm_topo"
	ranks -N3 --ntasks-per-node=1 --efa-rank-order=topology
	is "$rc" 0 "$what: the step runs"
	is "$(grep -c 'efa: warning: --efa-rank-order=topology' <<<"$out")" 1 "  with one warning"
	like "$out" "$why" "  that says why"
	is "$(slurms_own "$(grep -v warning <<<"$out")")" "slurm's" "  in Slurm's order"
done
# The batch script is no rank: only its step says it once.
batch -N3 -w 'n[1-2,4]' --efa --efa-rank-order=topology "srun --ntasks-per-node=1 true"
is "$rc" 0 "a batch job under the looping topology runs"
is "$(grep -c 'efa: warning: --efa-rank-order=topology' <<<"$out")" 1 "  and its output has one warning, its step's"
rm -f "$slurm_topo"
ranks -N3 --ntasks-per-node=1 --efa-rank-order=topology
is "$rc" 0 "no topology file at all: the step runs"
like "$out" "efa: warning: --efa-rank-order=topology: .*topology.conf.*ranks are in Slurm's order" \
	"  with the warning naming the file"
printf '%s\n' "$interleaved" >"$slurm_topo"

py=/usr/bin/python3
if "$py" -c 'import torch.distributed' 2>/dev/null; then
	script=$SLURM_EFA_CLUSTER/allreduce_ranked.py
	cat >"$script" <<'PY'
import datetime, os, torch, torch.distributed as dist
dist.init_process_group("gloo", init_method="env://",
                        timeout=datetime.timedelta(seconds=60))
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
print(f"{os.environ['SLURMD_NODENAME']} rank={dist.get_rank()} sum={t.item():g}")
dist.destroy_process_group()
PY
	chmod 644 "$script"
	run srun -N3 -w 'n[1-2,4]' --ntasks-per-node=1 --efa --efa-rank-order=topology -t 2 "$py" "$script"
	is "$rc" 0 "PyTorch initialises from the topology-ordered variables"
	is "$(sort <<<"$out")" "n1 rank=0 sum=6
n2 rank=2 sum=6
n4 rank=1 sum=6" "  with ranks by leaf, and all-reduces to 1+2+3"

	# As Lightning's SLURMEnvironment initialises (lightning/fabric/plugins/
	# environments/slurm.py): global rank from SLURM_PROCID, world from
	# SLURM_NTASKS, and MASTER_ADDR kept as it is set (main_address sets
	# it from SLURM_NODELIST only when it is not). Topology order starts at
	# Slurm's first node, so Lightning's rank 0 runs where MASTER_ADDR is.
	lscript=$SLURM_EFA_CLUSTER/allreduce_lightning.py
	cat >"$lscript" <<'PY'
import datetime, os, torch, torch.distributed as dist
rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
dist.init_process_group("gloo", init_method="tcp://%s:%s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]),
                        rank=rank, world_size=world, timeout=datetime.timedelta(seconds=60))
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
print(f"{os.environ['SLURMD_NODENAME']} procid={rank} rank={os.environ['RANK']} sum={t.item():g}")
dist.destroy_process_group()
PY
	chmod 644 "$lscript"
	run srun -N3 -w 'n[1-2,4]' --ntasks-per-node=1 --efa --efa-rank-order=topology -t 2 "$py" "$lscript"
	is "$rc" 0 "a job ranked by SLURM_PROCID as Lightning ranks it meets at MASTER_ADDR under --efa-rank-order=topology"
	is "$(sort <<<"$out" | awk '{ print $1, $4 }')" "n1 sum=6
n2 sum=6
n4 sum=6" "  every rank all-reduces to 1+2+3"
	like "$out" "^n1 procid=0 rank=0 sum=6$" \
		"  SLURM_PROCID 0 and RANK 0 are both on Slurm's first node, n1 (SLURM_PROCID elsewhere is Slurm's: by name on 22.05, by switch on 26.05)"
else
	ok 1 "Debian's python3-torch is installed (scripts/install-deps installs it)"
fi

load_topology "$TOPOLOGY_DEFAULT" all "the one-switch topology is back"
