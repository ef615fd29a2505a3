# SPDX-License-Identifier: Apache-2.0
# Network topology from the nodes' EC2 layer features: slurm-efa sync writes
# topology.conf, slurmctld (TopologyPlugin=topology/tree, from run.sh)
# reloads it, and a 2-node job lands under one leaf switch. All four nodes
# go into zone a here, with layer features set in slurm.conf at run time.
# On 23.11 and later, topology/block follows, over two zones. Then one
# sync --once with WriteFeatures=yes and a reconfigure as TopologyReload=
# must leave both the tree and the features in place. The end puts
# the plugin, the zones, the features and the one-switch topology.conf
# back.

efa=$top_builddir/slurm-efa
topo_dir=$SLURM_EFA_CLUSTER/topology
mkdir -p "$topo_dir"
# Slurm 22.05 reads topology.conf beside slurm.conf and nowhere else: a
# link there lets sync write (and rename) in a directory of its own.
slurm_topo=$(dirname "$SLURM_CONF")/topology.conf
topo_file=$topo_dir/topology.conf
cp "$slurm_topo" "$topo_file"
ln -sfn "$topo_file" "$slurm_topo"
# scontrol reconfigure re-reads topology.conf on every release.
reload="scontrol reconfigure"
sync_log=$topo_dir/sync.log

topo_conf() {	# topo_conf [RELOAD]
	write_efa_conf "RestURL=unix:$SLURMRESTD_SOCKET" "Snapshot=$topo_dir/snapshot.json" \
		"Topology=tree" "TopologyFile=$topo_file" "TopologyReload=\"${1:-$reload}\""
	chmod 644 "$EFA_CONF"
}

# Features go into slurm.conf, where they survive the reconfigure that
# loads topology.conf: from 23.11 on a reconfigure (scontrol reconfigure
# or SIGHUP) starts a new slurmctld, which drops features set with scontrol
# update (seen on 26.05). They count once reconfigure has run.
set_features() {	# set_features NODE[,NODE...] FEATURES
	local n
	for n in ${1//,/ }; do
		sed -i "s/^\(NodeName=$n .*Features=\)[^ ]*/\1$2/" "$SLURM_CONF"
	done
}

# Reloads slurm.conf and topology.conf; returns once slurmctld answers
# with the nodes' features of slurm.conf.
reconfigure() {
	scontrol reconfigure
	until_true sh -c "sinfo -h -N -o '%N %b' | grep -q '^n1 $(sed -n 's/^NodeName=n1 .*Features=\([^ ]*\).*/\1/p' "$SLURM_CONF")\$'"
}

layers() {	# layers NODE LEAF: NODE in zone a, under core1 -> spine1 -> LEAF
	set_features "$1" "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-$2"
}

until_true() {	# until_true CMD...: polls for up to 15 s
	local _
	for _ in $(seq 75); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# Starts a 2-node job that stays; once it runs, prints its nodes and the
# idle ones ("n[2-3] n1,n4"), and cancels it.
running_on() {
	local job state _
	wait_nodes_idle
	job=$(sbatch --parsable -N2 -o /dev/null --wrap 'sleep 30')
	for _ in $(seq 100); do
		state=$(squeue -h -j "$job" -o %T)
		[ "$state" = RUNNING ] && break
		sleep 0.2
	done
	echo "$(squeue -h -j "$job" -o %N) $(sinfo -h -N -t idle -o %N | sort -u | paste -sd, -)"
	scancel "$job"
	wait_job "$job"
}

write_efa_conf
wait_nodes_idle || diag "nodes not idle: $(node_states | paste -sd ' ')"
batch -N2 "echo nodes=\$SLURM_JOB_NODELIST"
is "$(sed -n 's/^nodes=//p' <<<"$out")" "n[1-2]" "with every node under one switch, a 2-node job takes n[1-2]"
[ "$(sed -n 's/^nodes=//p' <<<"$out")" = "n[1-2]" ] ||
	diag "nodes: $(node_states | paste -sd ' '); topology: $(scontrol show topology | paste -sd ' ')"

layers n1 leafb
layers n2 leafa
layers n3 leafa
layers n4 leafb
reconfigure
topo_conf
"$efa" sync --interval 1 --config "$EFA_CONF" 2>"$sync_log" &
sync_pid=$!
bg_track "$sync_pid"
until_true grep -q leafa "$topo_file"
run cat "$topo_file"
like "$out" "^SwitchName=us-west-2a Switches=core1$" "sync wrote topology.conf: the zone's switch on top"
like "$out" "^SwitchName=core1 Switches=spine1$" "  layer 1 above layer 2"
like "$out" "^SwitchName=spine1 Switches=leafa,leafb$" "  layer 2 above the leaves"
like "$out" "^SwitchName=leafa Nodes=n\[2-3\]$" "  leaf a holds n2 and n3"
like "$out" "^SwitchName=leafb Nodes=n\[1,4\]$" "  leaf b holds n1 and n4"
is "$(stat -c %a "$topo_file")" 644 "  mode 0644"
until_true grep -q "TopologyReload" "$sync_log"
like "$(cat "$sync_log")" "topology: wrote $topo_file: 5 switches, 4 nodes \(0 without layer features, 0 with contradicting ones\)" \
	"  and logged it"
like "$(cat "$sync_log")" "topology: TopologyReload 'scontrol reconfigure' done" "  then ran TopologyReload"

until_true sh -c 'scontrol show topology | grep -q leafa'
run scontrol show topology
diag "$out"
like "$out" "^SwitchName=us-west-2a Level=3 LinkSpeed=1 Nodes=n\[1-4\] Switches=core1$" \
	"scontrol show topology: the zone at level 3"
like "$out" "^SwitchName=leafa Level=0 LinkSpeed=1 Nodes=n\[2-3\]$" "  leaf a at level 0"
like "$out" "^SwitchName=leafb Level=0 LinkSpeed=1 Nodes=n\[1,4\]$" "  leaf b at level 0"
like "$(sinfo -h -n n1 -o %b)" "nn3-leafb" "  the nodes' layer features survive the reload"
ok "$([ -L "$slurm_topo" ]; echo $?)" "  slurmctld read it through the link beside slurm.conf"

read -r nodes idle <<<"$(running_on)"
like "$nodes" '^n\[(2-3|1,4)\]$' "a 2-node job lands on the two nodes of one leaf ($nodes), not n[1-2]"
if [ "$nodes" = "n[2-3]" ]; then other="n1,n4"; else other="n2,n3"; fi
is "$idle" "$other" "  while the other leaf's nodes are idle"

# A node moves to the other leaf (and one comes back the other way).
layers n1 leafa
layers n2 leafb
reconfigure
until_true grep -q "leafa Nodes=n\[1,3\]" "$topo_file"
like "$(grep -c 'topology: wrote' "$sync_log")" "^2$" "sync rewrote topology.conf when nodes changed leaves"
like "$(cat "$sync_log")" "nodes moved: 2 \(n1: leafb -> leafa, n2: leafa -> leafb\)" "  logging which nodes moved where"
until_true sh -c 'scontrol show topology | grep -q "leafa Level=0 LinkSpeed=1 Nodes=n\[1,3\]"'
read -r nodes idle <<<"$(running_on)"
like "$nodes" '^n\[(1,3|2,4)\]$' "  and the next 2-node job follows the new leaves ($nodes)"
if [ "$nodes" = "n[1,3]" ]; then other="n2,n4"; else other="n1,n3"; fi
is "$idle" "$other" "  the other leaf idle"
sleep 2
is "$(grep -c 'topology: wrote' "$sync_log")" 2 "jobs starting and ending change states, not the tree: no rewrite"
is "$(grep -c 'TopologyReload' "$sync_log")" 2 "  and no reload"
bg_kill "$sync_pid"
wait "$sync_pid" 2>/dev/null || true

run "$efa" topo --cluster --config "$EFA_CONF"
like "$out" "^zone us-west-2a: 4 nodes, 4 usable$" "topo --cluster: the zone"
like "$out" "^      layer 3 leafa: n\[1,3\]$" "  its leaves under layers 1 and 2"
like "$out" "^        n3 +idle$" "  nodes with their states"
run "$efa" topo --cluster --snapshot --json --config "$EFA_CONF"
is "$(jq -r '.zones[0].switches[0].switches[0].switches | map("\(.name)=\(.nodes | map(.name) | join("+"))") | join(" ")' <<<"$out")" \
	"leafa=n1+n3 leafb=n2+n4" "topo --cluster --snapshot --json: the same tree from the snapshot"

# n4 loses its layers; the reload fails, which is said and not fatal.
set_features n4 "az-us-west-2a,efa"
reconfigure
topo_conf "echo reload refused; exit 3"
run "$efa" sync --once --config "$EFA_CONF"
is "$rc" 0 "sync --once with a failing TopologyReload still succeeds"
like "$out" "TopologyReload 'echo reload refused; exit 3' exited 3: reload refused" "  logging its status and output"
like "$out" "wrote $topo_dir/snapshot.json" "  and the snapshot is written"
like "$out" "1 without layer features" "a node without layer features is counted"
like "$(cat "$topo_file")" "SwitchName=us-west-2a-nolayers Nodes=n4" "  and placed under its zone's switch"
scontrol reconfigure
until_true sh -c 'scontrol show topology | grep -q nolayers'
like "$(scontrol show topology)" "SwitchName=us-west-2a Level=3 LinkSpeed=1 Nodes=n\[1-4\] Switches=core1,us-west-2a-nolayers" \
	"  which slurmctld accepts"
run "$efa" sync --once --config "$EFA_CONF"
like "$out" "topology: unchanged $topo_file" "the same nodes again: unchanged"
unlike "$out" "TopologyReload" "  and no reload"

# Depths mix: EC2 gives 4 layers for some types, 3 for others, 1 to 3 in
# capacity reservations, and an UltraServer's instances share a capacity
# block. The default prefixes take 4 layers; each node goes under its
# deepest, and slurmctld accepts the tree.
set_features n1 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa,nn4-x1,cb-us1"
set_features n2 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa,nn4-x2,cb-us1"
set_features n3 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa"
set_features n4 "az-us-west-2a,efa,nn1-core1"
reconfigure
topo_conf
run "$efa" sync --once --config "$EFA_CONF"
is "$(grep -v '^#' "$topo_file" | paste -sd ' ')" \
	"SwitchName=us-west-2a Switches=core1 SwitchName=core1 Switches=core1-nolayers,spine1 SwitchName=core1-nolayers Nodes=n4 SwitchName=spine1 Switches=leafa SwitchName=leafa Switches=leafa-nolayers,x[1-2] SwitchName=leafa-nolayers Nodes=n3 SwitchName=x1 Nodes=n1 SwitchName=x2 Nodes=n2" \
	"4, 3 and 1 layers: each node under its deepest layer"
until_true sh -c 'scontrol show topology | grep -q "^SwitchName=x1 "'
run scontrol show topology
like "$out" "^SwitchName=leafa Level=1 .*Nodes=n\[1-3\] Switches=leafa-nolayers,x\[1-2\]" \
	"  slurmctld reads the mixed depths"
like "$out" "^SwitchName=us-west-2a Level=4 .*Nodes=n\[1-4\]" "  under the zone, 5 levels deep"
read -r nodes _ <<<"$(running_on)"
like "$nodes" "^n\[[1-3][-,][1-3]\]$" "  a 2-node job lands under leafa (n1 to n3), not beside n4 under core1"
if [ "$(printf '%s\n' 23.11 "${SLURM_VERSION:-0}" | sort -V | head -n 1)" = 23.11 ]; then
	write_efa_conf "RestURL=unix:$SLURMRESTD_SOCKET" "Snapshot=$topo_dir/snapshot.json" \
		"Topology=block" "TopologyFile=$topo_file" "TopologyReload=true"
	chmod 644 "$EFA_CONF"
	run "$efa" sync --once --config "$EFA_CONF"
	like "$(grep -v '^#' "$topo_file" | paste -sd ' ')" \
		"^BlockSizes=1(,2,4)? BlockName=us1 Nodes=n\[1-2\] BlockName=core1-nolayers Nodes=n4 BlockName=leafa-nolayers Nodes=n3( BlockName=us-west-2a-empty1)?$" \
		"Topology=block: the UltraServer's capacity block is one block (26.05 pads the zone)"
	sed -i 's|^TopologyPlugin=topology/tree$|TopologyPlugin=topology/block|' "$SLURM_CONF"
	scontrol reconfigure || true
	until_true sh -c 'scontrol show topology | grep -q "^BlockName=us1 "'
	like "$(scontrol show topology)" "^BlockName=us1 .*Nodes=n\[1-2\]" "  which slurmctld reads"
	sed -i 's|^TopologyPlugin=topology/block$|TopologyPlugin=topology/tree|' "$SLURM_CONF"
fi
set_features n1,n2,n3,n4 "az-us-west-2a,efa"
printf '%s\n' "$TOPOLOGY_DEFAULT" >"$topo_file"
reconfigure

# topology/block (23.11 and later): a block per leaf, and BlockSizes such
# that no block Slurm joins from side-by-side ones spans two zones. With n1
# taken, a 2-node job gets zone b's two leaves, joined. The plugin changes
# at a reconfigure, which from 23.11 on starts a new slurmctld.
block_case() {	# block_case WHAT LEAF1 LEAF2 LEAF3 LEAF4 FILE JOINED
	local what=$1 hold job _
	set_features n1 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-$2"
	set_features n2 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-$3"
	set_features n3 "az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-$4"
	set_features n4 "az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-$5"
	sed -i 's|^TopologyPlugin=topology/block$|TopologyPlugin=topology/tree|' "$SLURM_CONF"
	printf '%s\n' "$TOPOLOGY_DEFAULT" >"$topo_file"
	reconfigure
	write_efa_conf "RestURL=unix:$SLURMRESTD_SOCKET" "Snapshot=$topo_dir/snapshot.json" \
		"Topology=block" "TopologyFile=$topo_file" "TopologyReload=true"
	chmod 644 "$EFA_CONF"
	run "$efa" sync --once --config "$EFA_CONF"
	is "$(grep -v '^#' "$topo_file" | paste -sd ' ')" "$6" "Topology=block, $what: sync writes the blocks"
	sed -i 's|^TopologyPlugin=topology/tree$|TopologyPlugin=topology/block|' "$SLURM_CONF"
	scontrol reconfigure || true
	until_true sh -c 'scontrol show topology | grep -q "^AggregatedBlock"'
	run scontrol show topology
	diag "$out"
	like "$out" "^AggregatedBlock=$7 .*Nodes=n\[3-4\]" "  slurmctld joins zone b's leaves ($7)"
	unlike "$out" "^(Aggregated)?Block(Name)?=.*Nodes=n\[[12][-,][34]" "  and no block holds nodes of both zones"
	wait_nodes_idle
	hold=$(sbatch --parsable --exclusive -w n1 -o /dev/null --wrap 'sleep 60')
	job=$(sbatch --parsable -N2 -o /dev/null --wrap 'sleep 60')
	for _ in $(seq 100); do
		[ "$(squeue -h -j "$job" -o %T)" = RUNNING ] && break
		sleep 0.2
	done
	is "$(squeue -h -j "$job" -o '%T %N')" "RUNNING n[3-4]" \
		"  with n1 taken, a 2-node job runs in zone b's joined block"
	[ "$(squeue -h -j "$job" -o %T)" = RUNNING ] || diag "job $job: $(job_state "$job")"
	scancel "$hold" "$job"
	wait_job "$hold"
	wait_job "$job"
	# --efa-rank-order=topology reads the blocks slurmctld now uses (and
	# sync wrote, empty ones too): n1, n2, n4 keep Slurm's order, no warning.
	wait_nodes_idle
	set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
	run srun -N3 -w 'n[1-2,4]' --efa --efa-rank-order=topology bash -c 'echo "$SLURMD_NODENAME ${RANK-} ${NODE_RANK-}"'
	is "$(sort -k2n <<<"$out")" $'n1 0 0\nn2 1 1\nn4 2 2' "  an --efa-rank-order=topology step under topology/block: ranks by block, no warning"
}

if [ "$(printf '%s\n' 23.11 "${SLURM_VERSION:-0}" | sort -V | head -n 1)" = 23.11 ]; then
	block_case "two leaves in each zone" leafa leafb leafc leafd \
		"BlockSizes=1,2 BlockName=leafa Nodes=n1 BlockName=leafb Nodes=n2 BlockName=leafc Nodes=n3 BlockName=leafd Nodes=n4" \
		leafc,leafd
	# 26.05 reads empty blocks (24.11 refuses them): zone a's one leaf is
	# padded to zone b's two, where Slurm would otherwise join leafa with
	# leafb and the job would wait for "No suitable topology unit".
	if [ "$(printf '%s\n' 26.05 "$SLURM_VERSION" | sort -V | head -n 1)" = 26.05 ]; then
		block_case "one leaf in zone a, two in zone b" leafa leafa leafb leafc \
			"BlockSizes=1,2 BlockName=leafa Nodes=n[1-2] BlockName=us-west-2a-empty1 BlockName=leafb Nodes=n3 BlockName=leafc Nodes=n4" \
			leafb,leafc
	fi
	sed -i 's|^TopologyPlugin=topology/block$|TopologyPlugin=topology/tree|' "$SLURM_CONF"
fi

# topology.yaml (25.05 and later; tested on 26.05): the tree and the blocks
# side by side, the tree the default, and a partition with Topology=block
# on the blocks. Where the file is, Slurm ignores topology.conf.
until_running() {	# until_running JOB: polls for up to 20 s
	local _
	for _ in $(seq 100); do
		[ "$(squeue -h -j "$1" -o %T)" = RUNNING ] && return 0
		sleep 0.2
	done
	return 1
}
if [ "$(printf '%s\n' 26.05 "${SLURM_VERSION:-0}" | sort -V | head -n 1)" = 26.05 ]; then
	slurm_yaml=$(dirname "$SLURM_CONF")/topology.yaml
	yaml_file=$topo_dir/topology.yaml
	set_features n1 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa"
	set_features n2 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafb"
	set_features n3 "az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-leafc"
	set_features n4 "az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-leafd"
	printf '%s\n' "$TOPOLOGY_DEFAULT" >"$topo_file"	# the blocks' is no tree
	reconfigure
	ln -sfn "$yaml_file" "$slurm_yaml"
	write_efa_conf "RestURL=unix:$SLURMRESTD_SOCKET" "Snapshot=$topo_dir/snapshot.json" \
		"Topology=tree" "TopologyFile=$yaml_file" "TopologyReload=true"
	chmod 644 "$EFA_CONF"
	run "$efa" sync --once --config "$EFA_CONF"
	like "$out" "topology: wrote $yaml_file as topology.yaml \(topologies tree and block, tree the default\)" \
		"TopologyFile=...topology.yaml: sync writes topology.yaml"
	is "$(python3 -c 'import sys, yaml
print(" ".join("%s:%s:%s" % (t["topology"], t["cluster_default"], "+".join(k for k in ("tree", "block") if k in t))
               for t in yaml.safe_load(open(sys.argv[1]))))' "$yaml_file" 2>&1)" \
		"tree:True:tree block:False:block" "  YAML with the tree (the default) and the blocks"
	echo "PartitionName=blk Nodes=n[1-4] MaxTime=INFINITE State=UP Topology=block" >>"$SLURM_CONF"
	reconfigure
	until_true sh -c 'scontrol show topology block | grep -q "^AggregatedBlock"'
	like "$(scontrol show topology)" "^SwitchName=us-west-2a Level=3 .*Nodes=n\[1-2\] Switches=core1" \
		"  slurmctld reads the tree as the default topology"
	like "$(scontrol show topology block)" "^AggregatedBlock=leafc,leafd .*Nodes=n\[3-4\]" \
		"  and the blocks as topology 'block'"
	like "$(scontrol show partition blk)" "Topology=block" "  which partition blk uses"
	wait_nodes_idle
	run sbatch -N3 -p gpu -o /dev/null --wrap true
	like "$out" "Requested node configuration is not available" \
		"a 3-node job in partition gpu (the tree: no switch holds 3 nodes of one zone) is refused"
	job=$(sbatch --parsable -N3 -p blk --exclusive -o /dev/null --wrap 'sleep 60')
	until_running "$job" || diag "job $job: $(job_state "$job")"
	is "$(squeue -h -j "$job" -o %T)" RUNNING "  in partition blk (the blocks) it runs across blocks"
	scancel "$job"
	wait_job "$job"
	hold=$(sbatch --parsable --exclusive -w n1 -o /dev/null --wrap 'sleep 60')
	job=$(sbatch --parsable -N2 -p blk --exclusive -o /dev/null --wrap 'sleep 60')
	until_running "$job" || diag "job $job: $(job_state "$job")"
	is "$(squeue -h -j "$job" -o '%T %N')" "RUNNING n[3-4]" \
		"  with n1 taken, a 2-node job in partition blk runs in zone b's joined block"
	scancel "$hold" "$job"
	wait_job "$hold"
	wait_job "$job"
	set_features n2 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa"
	reconfigure
	run "$efa" sync --once --config "$EFA_CONF"
	like "$out" "topology: wrote $yaml_file .*nodes moved: 1 \(n2: leafb -> leafa\)" \
		"  a node that changes leaves: topology.yaml is rewritten, the move logged"
	sed -i '/^PartitionName=blk /d' "$SLURM_CONF"
	rm "$slurm_yaml"
fi

# Features and topology in one round: WriteFeatures=yes with zones from
# Kubernetes, which puts n1 in us-west-2b and n3 in us-west-2a against
# slurm.conf's zones, and TopologyReload="scontrol reconfigure". The
# reconfigure sets the nodes' features back to slurm.conf's on every
# release (from 23.11 on it starts a new slurmctld), so one sync --once
# must leave the new tree loaded and every node with its zone from
# Kubernetes: sync writes the features after the reload. The layers are
# slurm.conf's, consistent with Kubernetes' zones.
features_of() {	# "NODE AVAILABLE ACTIVE" per node, as scontrol shows them
	scontrol -o show node | sed -n 's/^NodeName=\([^ ]*\) .*AvailableFeatures=\([^ ]*\) ActiveFeatures=\([^ ]*\).*/\1 \2 \3/p'
}
if kube_api_start "$topo_dir/kube"; then
	kube_api_pods "$topo_dir/kube" n1:kn-b n2:kn-a n3:kn-a n4:kn-b
	set_features n1 "az-us-west-2a,efa,nn1-core2,nn2-spine2,nn3-leafb"
	set_features n2 "az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa"
	set_features n3 "az-us-west-2b,efa,nn1-core1,nn2-spine1,nn3-leafa"
	set_features n4 "az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-leafb"
	printf '%s\n' "$TOPOLOGY_DEFAULT" >"$topo_file"
	reconfigure
	scontrol token username=root lifespan=900 >"$topo_dir/root.jwt"
	chmod 600 "$topo_dir/root.jwt"
	mapfile -t kube_lines < <(kube_conf_lines "$topo_dir/kube")
	write_efa_conf "RestURL=$SLURMRESTD_URL" "RestUser=root" "RestTokenFile=$topo_dir/root.jwt" \
		"Snapshot=$topo_dir/snapshot.json" "WriteFeatures=yes" "${kube_lines[@]}" \
		"Topology=tree" "TopologyFile=$topo_file" "TopologyReload=\"$reload\""
	chmod 644 "$EFA_CONF"
	run "$efa" sync --once --config "$EFA_CONF"
	is "$rc" 0 "WriteFeatures=yes and TopologyReload='$reload': sync --once exits 0"
	like "$out" "topology: TopologyReload '$reload' done" "  it ran the reload"
	sync_out=$out
	# Right after sync --once, with no polling: what one round left.
	run scontrol show topology
	like "$out" "^SwitchName=us-west-2a Level=3 LinkSpeed=1 Nodes=n\[2-3\] Switches=core1$" \
		"  scontrol show topology: zone a as Kubernetes has it (n2, n3)"
	like "$out" "^SwitchName=us-west-2b Level=3 LinkSpeed=1 Nodes=n\[1,4\] Switches=core2$" \
		"  zone b (n1, n4)"
	like "$out" "^SwitchName=leafb Level=0 LinkSpeed=1 Nodes=n\[1,4\]$" "  and the leaves under them"
	if [ "$SLURMRESTD_API" = v0.0.38 ]; then
		# 22.05's slurmrestd has no node update (v0.0.38 nodes.c binds
		# GET only): the features stay slurm.conf's, and sync says so.
		like "$sync_out" "features: cannot update node n1: slurmrestd's v0.0.38 cannot update nodes" \
			"  22.05: slurmrestd cannot update nodes, which sync says"
		is "$(features_of | awk '{print $1, $3}' | paste -sd ' ')" \
			"n1 az-us-west-2a,efa,nn1-core2,nn2-spine2,nn3-leafb n2 az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa n3 az-us-west-2b,efa,nn1-core1,nn2-spine1,nn3-leafa n4 az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-leafb" \
			"  and the nodes keep slurm.conf's features"
	else
		like "$sync_out" "features: updated 2 nodes through slurmrestd \(n1: az-us-west-2a,.* -> az-us-west-2b,.*, n3: az-us-west-2b,.* -> az-us-west-2a," \
			"  it wrote the two nodes' zones"
		is "$(features_of | paste -sd ' ')" \
			"n1 az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-leafb az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-leafb n2 az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa n3 az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa az-us-west-2a,efa,nn1-core1,nn2-spine1,nn3-leafa n4 az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-leafb az-us-west-2b,efa,nn1-core2,nn2-spine2,nn3-leafb" \
			"  scontrol show node: every node's available and active features have its zone from Kubernetes, after the reload"
		run "$efa" sync --once --config "$EFA_CONF"
		unlike "$out" "features: updated|TopologyReload" "  the next sync --once finds nothing to write or reload"
	fi
	bg_kill "$kube_pid" || true
	wait "$kube_pid" 2>/dev/null || true
else
	ok 1 "test/standins/fakekube is built and openssl makes a certificate (scripts/install-deps installs libssl-dev and openssl)"
fi

# Back to the cluster the other tests know.
set_features n1,n2 "az-us-west-2a,efa"
set_features n3,n4 "az-us-west-2b,efa"
rm "$slurm_topo"
printf '%s\n' "$TOPOLOGY_DEFAULT" >"$slurm_topo"
reconfigure
until_true sh -c 'scontrol show topology | grep -q "^SwitchName=all "'
is "$(scontrol show topology)" "SwitchName=all Level=0 LinkSpeed=1 Nodes=n[1-4]" "the one-switch topology is back"
is "$(sinfo -h -N -o '%N %b' | sort -u | tr '\n' ' ')" \
	"n1 az-us-west-2a,efa n2 az-us-west-2a,efa n3 az-us-west-2b,efa n4 az-us-west-2b,efa " \
	"  and the nodes' zones"
write_efa_conf
