#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ZoneSource=ec2 and TopologySource=ec2: slurm-efa reads the Slurm nodes
# from a stand-in slurmrestd (answers recorded from 26.05, the nodes given
# the addresses 10.0.0.1 to 10.0.0.4) and each node's instance, zone and
# network layers from a stand-in EC2 API (test/rest/fakeec2) that checks
# the Signature Version 4 of every request with its own implementation.
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# shellcheck source=../lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"

efa=$top_builddir/slurm-efa
fakerest=$top_builddir/test/rest/fakerest
fakeec2=$top_builddir/test/rest/fakeec2
fakeimds=$top_builddir/test/rest/fakeimds
fixtures=$top_builddir/test/fixtures
tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

if [ ! -x "$fakeec2" ]; then
	ok 1 "test/rest/fakeec2 is built (configure found no OpenSSL: install libssl-dev)"
	echo "1..$tap_n"
	exit 1
fi

# The recorded nodes, each at its own address; "features" gets the zones
# and layers EC2 has, as an admin would set them.
rest_dir() {	# rest_dir DIR WITH-EC2-FEATURES
	cp -r "$fixtures/rest/26.05" "$1"
	for f in "$1"/v0.0.4*/nodes.json; do
		jq --argjson feat "$2" '.nodes |= [to_entries[] | .value.address = "10.0.0.\(.key + 1)" |
			if $feat then .value.features = [["az-us-west-2b", "efa", "nn1-nn-aaaa1111", "nn2-nn-bbbb2222", "nn3-nn-cccc3333"],
				["az-us-west-2a", "efa", "nn1-nn-dddd4444", "nn2-nn-eeee5555", "nn3-nn-ffff6666"],
				["az-us-west-2a", "efa", "nn1-nn-dddd4444", "nn2-nn-eeee5555", "nn3-nn-ffff6666"],
				["az-us-west-2b", "efa"]][.key] | .value.active_features = .value.features
			else . end | .value]' "$f" >"$f.new"
		mv "$f.new" "$f"
	done
}
rest_dir "$tmp/rest" false
rest_dir "$tmp/rest-features" true
printf 'SLURM_JWT=header.payload.signature\n' >"$tmp/jwt"
chmod 600 "$tmp/jwt"
start_server "$tmp/rest.port" "$fakerest" serve 120 "$tmp/rest"
rest_url=http://127.0.0.1:$port
start_server "$tmp/restf.port" "$fakerest" serve 120 "$tmp/rest-features"
restf_url=http://127.0.0.1:$port

cp "$fixtures/ec2/instances" "$tmp/instances"
printf '%s\n' "AKIAFAKEKEY000000001 fake+secret/key" \
	"ASIAFAKEROLEKEY00001 fake/role+secret/key fake-role-session-token==" >"$tmp/credentials"
FAKEEC2_PAGE=2 start_server "$tmp/ec2.port" "$fakeec2" 120 us-west-2 "$tmp/credentials" \
	"$tmp/instances" 2>"$tmp/ec2.log"
ec2_url=http://127.0.0.1:$port
export AWS_ACCESS_KEY_ID=AKIAFAKEKEY000000001 AWS_SECRET_ACCESS_KEY=fake+secret/key
unset AWS_SESSION_TOKEN AWS_REGION AWS_DEFAULT_REGION
# Never the real metadata service.
export AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:1

conf() {	# conf EXTRA-LINE...
	printf '%s\n' "RestURL=$rest_url" "RestUser=alice" "RestTokenFile=$tmp/jwt" \
		"Snapshot=$tmp/snapshot.json" "Ec2Endpoint=$ec2_url" "Ec2Region=us-west-2" \
		"$@" >"$tmp/efa.conf"
}
zones_of() {	# the snapshot's "node=zone" pairs
	jq -r '[.nodes[] | "\(.name)=\(.zone // "-")"] | join(" ")' "$tmp/snapshot.json" 2>&1
}
body() { grep -v '^#' "$1" 2>&1 | paste -sd ' '; }

conf "ZoneSource=ec2" "TopologySource=ec2" "Topology=tree" "TopologyFile=$tmp/topology.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 0 "sync --once with ZoneSource=ec2 and TopologySource=ec2: exit 0"
is "$(zones_of)" "n1=us-west-2b n2=us-west-2a n3=us-west-2a n4=us-west-2b" \
	"  each node's zone is its instance's (by private IPv4 address), not its features'"
like "$out" "DescribeInstanceTopology gives no network layers for c5\.xlarge \(i-0aaaaaaaaaaaaaa04, 10\.0\.0\.4\)" \
	"  a type without topology is said"
is "$(grep -c '^DescribeInstances 200' "$tmp/ec2.log")" 2 "  DescribeInstances came in 2 pages (2 instances a page)"
is "$(grep -c '^DescribeInstanceTopology 200' "$tmp/ec2.log")" 2 "  DescribeInstanceTopology too"
is "$(grep -c ' 401 ' "$tmp/ec2.log")" 0 "  every request was signed, and signed right"
ec2_topology=$(body "$tmp/topology.conf")

conf "Topology=tree" "TopologyFile=$tmp/topology-features.conf"
sed -i "s|^RestURL=.*|RestURL=$restf_url|" "$tmp/efa.conf"
: >"$tmp/ec2.log"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$ec2_topology" "$(body "$tmp/topology-features.conf")" \
	"the same topology.conf as from features that say what EC2 says"
is "$(cat "$tmp/ec2.log")" "" "  (which ask EC2 nothing)"
like "$ec2_topology" "SwitchName=nn-cccc3333 Nodes=n1( |$)" "  n1 under its layers"
like "$ec2_topology" "SwitchName=us-west-2b-nolayers Nodes=n4" "  n4, without topology, under its zone"

# A sync daemon asks EC2 only about nodes it has not seen: an instance
# that replaces n4 (a new address) is asked about; the others are not.
conf "ZoneSource=ec2" "TopologySource=ec2" "Topology=tree" "TopologyFile=$tmp/topology.conf"
: >"$tmp/ec2.log"
"$efa" sync --interval 1 --config "$tmp/efa.conf" 2>"$tmp/daemon.log" &
daemon=$!
pids+=("$daemon")
for _ in $(seq 50); do grep -q "wrote $tmp/snapshot.json" "$tmp/daemon.log" && break; sleep 0.1; done
echo "i-0bbbbbbbbbbbbbb05 10.0.0.5 us-west-2a p5.48xlarge nn-dddd4444,nn-eeee5555,nn-ffff6666" >>"$tmp/instances"
for f in "$tmp"/rest/v0.0.4*/nodes.json; do
	jq '.nodes[3].address = "10.0.0.5"' "$f" >"$f.new"
	mv "$f.new" "$f"
done
for _ in $(seq 50); do grep -q "n4: .* -> .*\|nodes moved" "$tmp/daemon.log" && break; sleep 0.1; done
sleep 1.5
kill "$daemon"
wait "$daemon" 2>/dev/null || true
like "$(cat "$tmp/daemon.log")" "topology: wrote $tmp/topology\.conf.*nodes moved: 1 \(n4: us-west-2b-nolayers -> nn-ffff6666\)" \
	"a new instance for n4: sync moves it as EC2 says"
is "$(grep -c '^DescribeInstances 200' "$tmp/ec2.log")" 3 \
	"  asking about the new address only (2 pages for the first round, 1 after)"
is "$(grep -c ' 401 ' "$tmp/ec2.log")" 0 "  every request signed right"

# Throttling: EC2 answers 503 RequestLimitExceeded; the client waits and
# tries again.
FAKEEC2_THROTTLE=1 start_server "$tmp/ec2t.port" "$fakeec2" 60 us-west-2 "$tmp/credentials" \
	"$tmp/instances" 2>"$tmp/ec2t.log"
conf "ZoneSource=ec2"
sed -i "s|^Ec2Endpoint=.*|Ec2Endpoint=http://127.0.0.1:$port|" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 0 "EC2 throttling (503 RequestLimitExceeded): sync still succeeds"
is "$(grep -c '503 throttled' "$tmp/ec2t.log"):$(grep -c '^DescribeInstances 200' "$tmp/ec2t.log")" 1:1 \
	"  after backing off once"

# Credentials EC2 does not take; none at all; the instance role's.
AWS_SECRET_ACCESS_KEY=not-the-secret run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 1 "a wrong secret key: exit 1"
like "$out" "ec2: EC2 did not accept the credentials for DescribeInstances \(AuthFailure: .*\): check the access key, its secret and the region \(us-west-2\)" \
	"  said, with what to check"
like "$(tail -n 1 "$tmp/ec2t.log")" "401 refused: signature mismatch" "  the stand-in saw a wrong signature"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$efa" sync --once --config "$tmp/efa.conf" >"$tmp/out" 2>&1 &&
	rc=0 || rc=$?
is "$rc" 1 "no credentials and no metadata service: exit 1"
like "$(cat "$tmp/out")" "no AWS credentials: none in the environment \(AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY\) and the instance metadata service cannot be had" \
	"  said"
AWS_EC2_METADATA_DISABLED=true env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
	"$efa" sync --once --config "$tmp/efa.conf" >"$tmp/out" 2>&1 && rc=0 || rc=$?
like "$rc:$(cat "$tmp/out")" "^1:.*the instance metadata service is off \(AWS_EC2_METADATA_DISABLED=true\)" \
	"  AWS_EC2_METADATA_DISABLED=true: the metadata service is not asked, and sync says so"
start_server "$tmp/imds.port" "$fakeimds" ok 60 us-west-2c p5.48xlarge 2>/dev/null
sed -i "/^Ec2Region=/d" "$tmp/efa.conf"
AWS_EC2_METADATA_SERVICE_ENDPOINT=http://127.0.0.1:$port \
	env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$efa" sync --once --config "$tmp/efa.conf" \
	>"$tmp/out" 2>&1 && rc=0 || rc=$?
is "$rc" 0 "no credentials in the environment: the instance role's, and the region, from IMDSv2"
[ "$rc" = 0 ] || diag "$(cat "$tmp/out")"
like "$(tail -n 1 "$tmp/ec2t.log")" "^DescribeInstances 200 4 key=ASIAFAKEROLEKEY00001$" \
	"  signed with the role's key and its session token (the stand-in checks both)"

conf "ZoneSource=ec2"
sed -i "s|^Ec2Endpoint=.*|Ec2Endpoint=http://127.0.0.1:1|" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
like "$out" "ec2: cannot connect to EC2 at http://127\.0\.0\.1:1 .*is Ec2Endpoint= right\?" \
	"an unreachable endpoint: Ec2Endpoint= named"
like "$out" "keeping the last good snapshot|no snapshot written" "  and no snapshot invented from it"

if command -v valgrind >/dev/null; then
	# shellcheck source=../lib/memcheck.sh
	. "$top_srcdir/test/lib/memcheck.sh"
	conf "ZoneSource=ec2" "TopologySource=ec2" "Topology=block" "TopologyFile=$tmp/blocks.conf"
	memcheck "sync --once from EC2, paged" "$efa" sync --once --config "$tmp/efa.conf"
	like "$(cat "$tmp/blocks.conf" 2>&1)" "BlockName=nn-ffff6666 Nodes=n\[2-4\]" "  and writes the blocks (n4 on its new instance)"
	AWS_SECRET_ACCESS_KEY=not-the-secret memcheck "sync --once refused by EC2" \
		"$efa" sync --once --config "$tmp/efa.conf"
fi

echo "1..$tap_n"
