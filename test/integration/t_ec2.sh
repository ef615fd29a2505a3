# SPDX-License-Identifier: Apache-2.0
# Zones and network layers from EC2 (ZoneSource=ec2, TopologySource=ec2),
# read by sync for the real slurmrestd's nodes and put into Slurm's node
# features (WriteFeatures=yes), so that the bridge's zone constraints
# follow where the instances are. Each node gets an address of its own
# (127.0.0.11 to 127.0.0.14: loopback, where its slurmd still answers), the
# private address of one instance of the stand-in EC2 API
# (test/standins/fakeec2, which checks every request's signature). EC2 puts
# n1 in us-west-2b and n3 in us-west-2a, the opposite of slurm.conf's
# features. 22.05's v0.0.38 cannot update nodes, which sync must say. The
# end puts the addresses and features back.

ec2_dir=$SLURM_EFA_CLUSTER/ec2
mkdir -p "$ec2_dir"
if [ ! -x "$top_builddir/test/standins/fakeec2" ]; then
	ok 1 "test/standins/fakeec2 is built (configure found no OpenSSL: install libssl-dev)"
	return 0
fi

node_addrs() {	# node_addrs N1-ADDR N2-ADDR N3-ADDR N4-ADDR: in slurm.conf, then reconfigure
	local i=1 a
	for a in "$@"; do
		sed -i "s/^\(NodeName=n$i .*NodeAddr=\)[0-9.]* /\1$a /" "$SLURM_CONF"
		i=$((i + 1))
	done
	scontrol reconfigure
	for _ in $(seq 100); do
		[ "$(sinfo -h -N -o '%N %o' | sort -u | paste -sd ' ')" = \
			"n1 $1 n2 $2 n3 $3 n4 $4" ] && break
		sleep 0.2
	done
	wait_nodes_idle
}
features_of() {	# "n1 FEATURES n2 FEATURES ..." as Slurm has them now
	sinfo -h -N -o '%N %b' | sort -u | paste -sd ' '
}

node_addrs 127.0.0.11 127.0.0.12 127.0.0.13 127.0.0.14
is "$(sinfo -h -N -o '%N %o %T' | sort -u | paste -sd ' ')" \
	"n1 127.0.0.11 idle n2 127.0.0.12 idle n3 127.0.0.13 idle n4 127.0.0.14 idle" \
	"each node at an address of its own, its slurmd answering there"

cat >"$ec2_dir/instances" <<-EOF
	i-0aaaaaaaaaaaaaa01 127.0.0.11 us-west-2b p5.48xlarge nn-aaaa1111,nn-bbbb2222,nn-cccc3333
	i-0aaaaaaaaaaaaaa02 127.0.0.12 us-west-2a p5.48xlarge nn-dddd4444,nn-eeee5555,nn-ffff6666
	i-0aaaaaaaaaaaaaa03 127.0.0.13 us-west-2a p5.48xlarge nn-dddd4444,nn-eeee5555,nn-ffff6666
	i-0aaaaaaaaaaaaaa04 127.0.0.14 us-west-2b c5.xlarge
EOF
echo "AKIAFAKEKEY000000001 fake+secret/key" >"$ec2_dir/credentials"
# Marked as the cluster's, so that its teardown stops it.
SLURM_EFA_CLUSTER_DAEMON=$SLURM_EFA_CLUSTER "$top_builddir/test/standins/fakeec2" 900 us-west-2 \
	"$ec2_dir/credentials" "$ec2_dir/instances" >"$ec2_dir/port" 2>"$ec2_dir/requests.log" &
ec2_pid=$!
bg_track "$ec2_pid"
for _ in $(seq 50); do [ -s "$ec2_dir/port" ] && break; sleep 0.1; done
scontrol token username=root lifespan=900 >"$ec2_dir/root.jwt"
chmod 600 "$ec2_dir/root.jwt"

# slurmrestd acts as root (a JWT over TCP): updating nodes needs an admin.
write_efa_conf "RestURL=$SLURMRESTD_URL" "RestUser=root" "RestTokenFile=$ec2_dir/root.jwt" \
	"Snapshot=$ec2_dir/snapshot.json" "SnapshotMaxAge=60" "WriteFeatures=yes" \
	"ZoneSource=ec2" "TopologySource=ec2" "Ec2Endpoint=http://127.0.0.1:$(cat "$ec2_dir/port")" \
	"Ec2Region=us-west-2" "Topology=tree" "TopologyFile=$ec2_dir/topology.conf" \
	"PartitionName=gpu SingleZone=yes"
chmod 644 "$EFA_CONF"
ec2_sync() {
	run env AWS_ACCESS_KEY_ID=AKIAFAKEKEY000000001 AWS_SECRET_ACCESS_KEY=fake+secret/key \
		AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:1 \
		"$top_builddir/slurm-efa" sync --once --config "$EFA_CONF"
}

ec2_sync
is "$rc" 0 "sync --once with ZoneSource=ec2 and TopologySource=ec2: exit 0"
is "$(jq -r '[.nodes[] | "\(.name)=\(.zone)"] | join(" ")' "$ec2_dir/snapshot.json" 2>&1)" \
	"n1=us-west-2b n2=us-west-2a n3=us-west-2a n4=us-west-2b" "  the snapshot has the instances' zones"
is "$(grep -v '^#' "$ec2_dir/topology.conf" 2>&1 | paste -sd ' ')" \
	"SwitchName=us-west-2a Switches=nn-dddd4444 SwitchName=nn-dddd4444 Switches=nn-eeee5555 SwitchName=nn-eeee5555 Switches=nn-ffff6666 SwitchName=nn-ffff6666 Nodes=n[2-3] SwitchName=us-west-2b Switches=nn-aaaa1111,us-west-2b-nolayers SwitchName=us-west-2b-nolayers Nodes=n4 SwitchName=nn-aaaa1111 Switches=nn-bbbb2222 SwitchName=nn-bbbb2222 Switches=nn-cccc3333 SwitchName=nn-cccc3333 Nodes=n1" \
	"  topology.conf from DescribeInstanceTopology, n4 (c5.xlarge, no topology) under its zone"
is "$(grep -c ' 401 ' "$ec2_dir/requests.log")" 0 "  every request to EC2 signed right"
like "$(cat "$ec2_dir/requests.log")" "^DescribeInstanceTopology 200 4 key=AKIAFAKEKEY000000001" \
	"  (it asked for the topology of the 4 instances)"
if [ "$SLURMRESTD_API" = v0.0.38 ]; then
	like "$out" "features: cannot update node n1: slurmrestd's v0.0.38 cannot update nodes: that needs v0.0.40 or later" \
		"  22.05's slurmrestd cannot update nodes: said, node by node"
else
	is "$(features_of)" "n1 az-us-west-2b,efa,nn1-nn-aaaa1111,nn2-nn-bbbb2222,nn3-nn-cccc3333 n2 az-us-west-2a,efa,nn1-nn-dddd4444,nn2-nn-eeee5555,nn3-nn-ffff6666 n3 az-us-west-2a,efa,nn1-nn-dddd4444,nn2-nn-eeee5555,nn3-nn-ffff6666 n4 az-us-west-2b,efa" \
		"  Slurm's nodes carry the instances' zones and layers now"
	batch -N2 --efa=auto -J ec2-zone "echo nodes=\$SLURM_JOB_NODELIST"
	like "$(sed -n 's/^nodes=//p' <<<"$out")" '^n\[(2-3|1,4)\]$' \
		"an --efa job of 2 nodes lands in one zone as EC2 places the instances"
	ec2_sync
	unlike "$out" "features: updated" "the next sync finds nothing to update"
fi

bg_kill "$ec2_pid" || true
wait "$ec2_pid" 2>/dev/null || true
node_addrs 127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1
is "$(features_of)" "n1 az-us-west-2a,efa n2 az-us-west-2a,efa n3 az-us-west-2b,efa n4 az-us-west-2b,efa" \
	"the nodes' addresses and features of slurm.conf are back"
write_efa_conf
