# SPDX-License-Identifier: Apache-2.0
# A Slinky-shaped part of the cluster, as slurm-operator runs it: slurmd
# started configless (--conf-server) as dynamic nodes that register their
# own features (slurmd -Z --conf "Features=p5,efa Gres=gpu:4 ..."), a
# partition over a NodeSet feature, auth/slurm, slurm-efa sync beside
# slurmctld with a token file, zones learned from a stand-in Kubernetes API
# and written into the nodes' features; the pods are named as the operator
# names them (pod slurm-worker-p5-1 runs Slurm node p5-1, its hostname).
# The NodeSet scales up and down:
# sync, the bridge and the plugin follow, and nothing is drained. A node
# slurm-efa drained is replaced as Slinky allows (RepairAction=replace):
# its Kubernetes node cordoned and its pod deleted, the reason set through
# slurmrestd; the NodeSet's new pod, on another Kubernetes node, registers
# and its checks return it, in its new zone. Slinky
# runs auth/slurm, which the 26.05 cluster of the matrix does.

[ "${SLURM_EFA_CLUSTER_AUTH:-munge}" = slurm ] || {
	echo "# t_slinky.sh: Slinky's shape runs on the auth/slurm cluster (Slurm 26.05 here)"
	return 0
}
slinky=$SLURM_EFA_CLUSTER/slinky
mkdir -p "$slinky/etc"
if ! kube_api_start "$slinky/kube"; then
	ok 1 "test/standins/fakekube is built and openssl makes a certificate (scripts/install-deps installs libssl-dev and openssl)"
	return 0
fi
ctld_port=$(sed -n 's/^SlurmctldPort=//p' "$SLURM_CONF")
cp "$SLURM_CONF" "$slinky/slurm.conf.orig"
# What the operator writes: configless, a NodeSet by feature, a partition
# over it, room for dynamic nodes.
printf '%s\n' "SlurmctldParameters=enable_configless" "MaxNodeCount=16" \
	"NodeSet=p5 Feature=p5" "PartitionName=p5 Nodes=p5 MaxTime=INFINITE State=UP" >>"$SLURM_CONF"
scontrol reconfigure || true
until_up 30 scontrol show partition p5 || diag "partition p5 did not appear after the reconfigure"
# The slurmd pods have only slurm.key (beside where slurm.conf would be);
# slurm.conf, gres.conf and plugstack.conf come from slurmctld.
cp "$(dirname "$SLURM_CONF")/slurm.key" "$slinky/etc/slurm.key"
chmod 600 "$slinky/etc/slurm.key"
nodeset_port=$((SLURM_EFA_CLUSTER_BASE_PORT + 20))

pod_start() {	# pod_start NAME INDEX: a NodeSet pod's slurmd, with p5 hardware
	set_root "$1" "$FIXTURES/p5.48xlarge"
	env -i PATH="$PATH" LANG=C SLURM_CONF="$slinky/etc/slurm.conf" \
		SLURM_EFA_CLUSTER_DAEMON="$SLURM_EFA_CLUSTER" \
		slurmd -Z --conf-server "127.0.0.1:$ctld_port" -N "$1" \
		--conf "Features=p5,efa CPUs=16 Boards=1 SocketsPerBoard=2 CoresPerSocket=8 ThreadsPerCore=1 RealMemory=4000 Gres=gpu:4 Port=$((nodeset_port + $2))" \
		</dev/null >>"$slinky/slurmd-$1.out" 2>&1 || diag "slurmd $1 did not start: $(tail -n 5 "$slinky/slurmd-$1.out")"
}
pod_up() {	# pod_up NAME INDEX: pod_start, and the node idle
	pod_start "$1" "$2"
	until_up 30 sh -c "sinfo -h -n '$1' -o %t | grep -q '^idle'" ||
		diag "node $1 is not idle: $(sinfo -h -n "$1" -o '%t %E' 2>&1); $(tail -n 5 "$SLURM_EFA_CLUSTER/log/slurmd-$1.log" 2>&1)"
}
pod_down() {	# pod_down NAME: the operator deletes the pod and the node
	local pid
	pid=$(pidfile_pid "$SLURM_EFA_CLUSTER/run/slurmd-$1.pid" || true)
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	until_up 15 sh -c "! kill -0 '$pid'" || true
	scontrol delete nodename="$1" || diag "scontrol delete nodename=$1 failed: $(scontrol show node "$1" 2>&1 | grep -o 'State=[^ ]*')"
}
snapshot_has() {	# snapshot_has JQ-FILTER: polls the snapshot until it holds
	until_up 20 sh -c "jq -e '$1' '$slinky/snapshot.json'"
}
p5_features() {
	sinfo -h -N -p p5 -o '%N %b' | sort -u | paste -sd ' '
}

# Two pods: in us-west-2a and us-west-2b.
kube_api_pods "$slinky/kube" p5-1:kn-a p5-2:kn-b
pod_up p5-1 1
pod_up p5-2 2
is "$(p5_features)" "p5-1 p5,efa p5-2 p5,efa" "two dynamic nodes joined configless, with the features they registered"

scontrol token username=root lifespan=900 >"$slinky/token"
chmod 600 "$slinky/token"
mapfile -t kube_lines < <(kube_conf_lines "$slinky/kube")
# The cluster runs topology/tree: a multi-node job needs its nodes under a
# switch, so sync keeps topology.conf current as nodes come and go (the
# reconfigure drops features set through slurmrestd; sync writes them
# after it).
slurm_topo=$(dirname "$SLURM_CONF")/topology.conf
write_efa_conf "RestURL=$SLURMRESTD_URL" "RestUser=root" "RestTokenFile=$slinky/token" \
	"Snapshot=$slinky/snapshot.json" "SnapshotMaxAge=60" "WriteFeatures=yes" "${kube_lines[@]}" \
	"Topology=tree" "TopologyFile=$slurm_topo" "TopologyReload=\"scontrol reconfigure\"" \
	"RepairAction=replace" "HealthReturnPasses=1" "NodeCacheDir=$slinky" \
	"PartitionName=p5 SingleZone=yes EFA=required"
chmod 644 "$EFA_CONF"
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
# Marked as the cluster's, so that its teardown stops it whatever happens.
SLURM_EFA_CLUSTER_DAEMON=$SLURM_EFA_CLUSTER "$top_builddir/slurm-efa" sync --interval 1 \
	--config "$EFA_CONF" >"$slinky/sync.log" 2>&1 &
sync_pid=$!
bg_track "$sync_pid"
until_up 20 sh -c "sinfo -h -n p5-2 -o %b | grep -q az-us-west-2b" || true
is "$(p5_features)" "p5-1 p5,efa,az-us-west-2a p5-2 p5,efa,az-us-west-2b" \
	"sync wrote each pod's zone from Kubernetes into its node's features"

batch -p p5 -N1 --efa -w p5-2 "srun printenv SLURM_EFA_PROFILE SLURM_EFA_MODE"
is "$out" $'p5\nrequired' "sbatch --efa on a new node: the step got the p5 profile"

# Scale up: two pods in us-west-2b.
kube_api_pods "$slinky/kube" p5-1:kn-a p5-2:kn-b p5-3:kn-b p5-4:kn-b
pod_up p5-3 3
pod_up p5-4 4
until_up 20 sh -c "sinfo -h -n p5-4 -o %b | grep -q az-us-west-2b" || true
snapshot_has '[.nodes[] | select(.zone == "us-west-2b")] | length == 3' || true
until_up 30 sh -c "scontrol show topology | grep -q 'Nodes=.*p5-\[2-4\]'" || true
until_up 20 sh -c "sinfo -h -n p5-4 -o %b | grep -q az-us-west-2b" || true
is "$(p5_features)" "p5-1 p5,efa,az-us-west-2a p5-2 p5,efa,az-us-west-2b p5-3 p5,efa,az-us-west-2b p5-4 p5,efa,az-us-west-2b" \
	"scaled up: sync gave the two new nodes their zone"
like "$(scontrol show topology)" "^SwitchName=us-west-2b .*Nodes=n\[3-4\],p5-\[2-4\]" \
	"  and put them under their zone's switch in topology.conf"
like "$(cat "$slinky/sync.log")" "features: updated [12] nodes? through slurmrestd \(.*p5-4: p5,efa -> p5,efa,az-us-west-2b" \
	"  and said so"
batch -p p5 -N2 --efa "echo nodes=\$SLURM_JOB_NODELIST"
like "$(sed -n 's/^nodes=//p' <<<"$out")" '^p5-\[(2-3|2,4|3-4)\]$' \
	"  a 2-node --efa job stays in one zone: us-west-2b, where 3 of the 4 nodes are"
[ "$rc" = 0 ] || diag "sbatch: exit $rc: $out; $(sinfo -h -N -p p5 -o '%N %t %b' | paste -sd ';'); $(grep -i 'p5\|feature\|efa' "$SLURM_EFA_CLUSTER/log/slurmctld.log" | tail -n 8)"
batch -p p5 -N3 --efa "echo nodes=\$SLURM_JOB_NODELIST"
is "$(sed -n 's/^nodes=//p' <<<"$out")" "p5-[2-4]" "  a 3-node --efa job lands in us-west-2b, the zone with 3 nodes"
[ "$rc" = 0 ] || diag "sbatch: exit $rc: $out; $(sinfo -h -N -p p5 -o '%N %t %b' | paste -sd ';')"

# Ranks in topology order on configless nodes: their slurmstepd reads the
# topology.conf that slurmd keeps in its configuration cache.
batch -p p5 -N3 -w 'p5-[2-4]' --efa --efa-rank-order=topology \
	"srun bash -c 'echo \"\$SLURMD_NODENAME node=\${NODE_RANK-}\"'"
is "$rc" 0 "configless nodes, --efa-rank-order=topology: the job runs"
unlike "$out" "efa-rank-order" "  without a warning: each node read the topology.conf in slurmd's cache"
is "$(sed -n 's/^p5-[2-4] node=//p' <<<"$out" | sort | paste -sd ' ')" "0 1 2" \
	"  and each node's task has its own NODE_RANK"

# A node slurm-efa drained (as its health check drains one whose EFA port
# went down) is replaced: sync's ladder cordons its Kubernetes node and
# deletes its pod in the stand-in, and sets the reason through slurmrestd.
scontrol update NodeName=p5-4 State=DRAIN Reason="efa: EFA device rdmap16s27: port 1 is 1: DOWN, not ACTIVE"
until_up 20 sh -c "jq -e '.items[] | select(.metadata.name == \"slurm-worker-p5-4\") | .metadata.deletionTimestamp' '$slinky/kube/api/pods.json'" || true
like "$(grep 'repair: node p5-4' "$slinky/sync.log")" "replaced: Kubernetes node cordoned, pod deleted for the NodeSet to recreate \(pod slurm/slurm-worker-p5-4 on Kubernetes node kn-b\)" \
	"a node slurm-efa drained is replaced: sync names its pod and Kubernetes node"
is "$(jq -r '.items[] | select(.metadata.name == "kn-b") | .spec.unschedulable' "$slinky/kube/api/nodes.json")" "true" \
	"  its Kubernetes node is cordoned (in the stand-in)"
like "$(jq -r '.items[] | select(.metadata.name == "slurm-worker-p5-4") | .metadata.deletionTimestamp' "$slinky/kube/api/pods.json")" \
	"^20[0-9-]+T" "  and its pod deleted"
like "$(sinfo -h -n p5-4 -o '%t %E')" "^drain efa: repair replace: EFA device rdmap16s27" \
	"  Slurm's reason says so (set through slurmrestd), drained meanwhile"
# The NodeSet's controller: the old pod ends, a new one runs on kn-a.
pod_down_keep() {	# the pod's slurmd ends; the Slurm node stays (the NodeSet's pod comes back)
	local pid
	pid=$(pidfile_pid "$SLURM_EFA_CLUSTER/run/slurmd-$1.pid" || true)
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	until_up 15 sh -c "! kill -0 '$pid'" || true
}
pod_down_keep p5-4
kube_api_pods "$slinky/kube" p5-1:kn-a p5-2:kn-b p5-3:kn-b p5-4:kn-a
pod_start p5-4 4	# (drained: not waited for idle)
until_up 30 sh -c "sinfo -h -n p5-4 -o %b | grep -q az-us-west-2a" || true
like "$(sinfo -h -n p5-4 -o '%b')" "az-us-west-2a" "the NodeSet's new pod registers on kn-a: sync moves the node's zone feature to us-west-2a"
is "$("$top_builddir/slurm-efa" repair --status --json --config "$EFA_CONF" | jq -r '.nodes[] | select(.node == "p5-4") | .stage')" \
	"replacing" "  repair --status: replacing, until its checks pass"
until_up 30 sh -c "sinfo -h -n p5-4 -o %t | grep -qx drain" || true	# registered, responding
run env SLURMD_NODENAME=p5-4 "$top_builddir/slurm-efa" check --node --drain --config "$EFA_CONF" --root "$FIXTURES/p5.48xlarge"
until_up 20 sh -c "sinfo -h -n p5-4 -o %t | grep -qx idle" || true
is "$(sinfo -h -n p5-4 -o %t)" "idle" "  its health check passes on the new pod: back in service ($out)"
until_up 30 sh -c "scontrol show topology | grep -q 'SwitchName=us-west-2a .*Nodes=.*p5-\[1,4\]'" || true
like "$(scontrol show topology)" "^SwitchName=us-west-2a .*Nodes=.*p5-\[1,4\]" "  and under its new zone's switch in topology.conf"
unlike "$(grep 'repair: node' "$slinky/sync.log" | grep -v 'p5-4: replaced' || true)" "." \
	"  one replace, nothing else: the new pod is not replaced again"

# Scale down: p5-3 and p5-4 go away, and the zone is too small again.
kube_api_pods "$slinky/kube" p5-1:kn-a p5-2:kn-b
pod_down p5-3
pod_down p5-4
snapshot_has '[.nodes[] | select(.name | startswith("p5-"))] | length == 2' || true
is "$(jq -r '[.nodes[].name | select(startswith("p5-"))] | join(" ")' "$slinky/snapshot.json")" "p5-1 p5-2" \
	"scaled down: the snapshot follows"
run sbatch -p p5 -N3 --efa --wrap true
like "$out" "efa: no Availability Zone in partition p5 has 3 usable nodes" \
	"  and the bridge refuses a 3-node --efa job at submission"
is "$(sinfo -h -t drain,down,fail -o %N | paste -sd ' ')" "" "no node was drained or set down on the way (but the one replaced)"

bg_kill "$sync_pid" || true
wait "$sync_pid" 2>/dev/null || true
pod_down p5-1
pod_down p5-2
bg_kill "$kube_pid" || true
wait "$kube_pid" 2>/dev/null || true
cp "$slinky/slurm.conf.orig" "$SLURM_CONF"
printf '%s\n' "$TOPOLOGY_DEFAULT" >"$slurm_topo"
scontrol reconfigure || true
until_up 30 sh -c "! scontrol show partition p5" || true
is "$(sinfo -h -N -o %N | sort -u | paste -sd ' ')" "n1 n2 n3 n4" "the cluster is back to its four static nodes"
# The reconfigure started a new slurmctld: the next test needs every node
# idle and responding again.
wait_nodes_idle || diag "nodes not idle after the reconfigure: $(node_states | paste -sd ' ')"
write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
