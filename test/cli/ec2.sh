#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ZoneSource=ec2 and TopologySource=ec2: slurm-efa reads the Slurm nodes
# from a stand-in slurmrestd (answers recorded from 26.05, the nodes given
# the addresses 10.0.0.1 to 10.0.0.4) and each node's instance, zone and
# network layers from a stand-in EC2 API (test/standins/fakeec2) that checks
# the Signature Version 4 of every request with its own implementation.
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

fakerest=$top_builddir/test/standins/fakerest
fakeec2=$top_builddir/test/standins/fakeec2
fakeimds=$top_builddir/test/standins/fakeimds

if [ ! -x "$fakeec2" ]; then
	ok 1 "test/standins/fakeec2 is built (configure found no OpenSSL: install libssl-dev)"
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
bg_track "$daemon"
for _ in $(seq 50); do grep -q "wrote $tmp/snapshot.json" "$tmp/daemon.log" && break; sleep 0.1; done
echo "i-0bbbbbbbbbbbbbb05 10.0.0.5 us-west-2a p5.48xlarge nn-dddd4444,nn-eeee5555,nn-ffff6666" >>"$tmp/instances"
for f in "$tmp"/rest/v0.0.4*/nodes.json; do
	jq '.nodes[3].address = "10.0.0.5"' "$f" >"$f.new"
	mv "$f.new" "$f"
done
for _ in $(seq 50); do grep -q "n4: .* -> .*\|nodes moved" "$tmp/daemon.log" && break; sleep 0.1; done
sleep 1.5
bg_kill "$daemon"
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
like "$(tail -n 1 "$tmp/ec2t.log")" "^DescribeInstances 200 4 key=ASIAFAKEROLEKEY00001 " \
	"  signed with the role's key and its session token (the stand-in checks both)"

# Clusters of 1 to 250 nodes: every node gets its zone and layers. EC2
# takes at most 100 instance IDs a DescribeInstanceTopology and answers 20
# a page by default; slurm-efa asks in batches of 100.
scale_dir() {	# scale_dir N: a slurmrestd of N nodes n1..nN at 10.1.X.Y, and EC2's instances
	local n=$1 dir=$tmp/scale-$1
	cp -r "$fixtures/rest/26.05" "$dir"
	for f in "$dir"/v0.0.4*/nodes.json; do
		jq --argjson n "$n" '.nodes = [range($n) as $i | .nodes[0] |
			.name = "n\($i + 1)" | .address = "10.1.\($i / 200 | floor).\($i % 200 + 1)" |
			.features = ["efa"] | .active_features = ["efa"]]' "$f" >"$f.new"
		mv "$f.new" "$f"
	done
	for ((i = 0; i < n; i++)); do
		printf 'i-%017d 10.1.%d.%d us-west-2%s p5.48xlarge nn-%d,nn-%d-%d,nn-%d-%d-%d\n' \
			"$i" $((i / 200)) $((i % 200 + 1)) "$([ $((i % 2)) = 0 ] && echo a || echo b)" \
			$((i % 2)) $((i % 2)) $((i % 4)) $((i % 2)) $((i % 4)) $((i % 8))
	done >"$dir/instances"
}
for n in 1 10 64 100 250; do
	scale_dir "$n"
	start_server "$tmp/scale-$n/rest.port" "$fakerest" serve 60 "$tmp/scale-$n"
	scale_rest=http://127.0.0.1:$port
	start_server "$tmp/scale-$n/ec2.port" "$fakeec2" 60 us-west-2 "$tmp/credentials" \
		"$tmp/scale-$n/instances" 2>"$tmp/scale-$n/ec2.log"
	conf "ZoneSource=ec2" "TopologySource=ec2" "Topology=tree" "TopologyFile=$tmp/scale-$n/topology.conf"
	sed -i -e "s|^RestURL=.*|RestURL=$scale_rest|" -e "s|^Ec2Endpoint=.*|Ec2Endpoint=http://127.0.0.1:$port|" \
		"$tmp/efa.conf"
	run "$efa" sync --once --config "$tmp/efa.conf"
	batches=$(((n + 99) / 100))
	pages=0
	for ((b = 0; b < n; b += 100)); do
		in_batch=$((n - b < 100 ? n - b : 100))
		pages=$((pages + (in_batch + 19) / 20))
	done
	is "$rc:$(jq '[.nodes[] | select(.zone == "us-west-2a" or .zone == "us-west-2b")] | length' \
		"$tmp/snapshot.json" 2>&1)" "0:$n" "$n instances: sync --once gives every node its zone"
	[ "$rc" = 0 ] || diag "$out"
	is "$(grep -c '^DescribeInstances 200' "$tmp/scale-$n/ec2.log"):$(grep -c '^DescribeInstanceTopology 200' "$tmp/scale-$n/ec2.log"):$(grep -vc ' 200 ' "$tmp/scale-$n/ec2.log")" \
		"$batches:$pages:0" "  in $batches DescribeInstances and $pages DescribeInstanceTopology pages, every one signed right"
	like "$(grep -c '^SwitchName=nn-[01]-[0-3]-[0-7] Nodes=' "$tmp/scale-$n/topology.conf" 2>&1)" \
		"^$((n < 8 ? n : 8))$" "  each of its bottom layers is a switch of nodes"
done

# Depths mix: n1 and n2 are one UltraServer (4 layers, one capacity
# block), n3 has 3 layers, n4 1 (a capacity reservation's); a type with 5
# layers keeps the top 4 and is said once.
mkdir -p "$tmp/deep"
cat >"$tmp/deep/instances" <<'EOF2'
i-0ccccccccccccccc1 10.0.0.1 us-west-2a p6e-gb200.36xlarge nn-t1,nn-s1,nn-l1,nn-x1 cb-us0001
i-0ccccccccccccccc2 10.0.0.2 us-west-2a p6e-gb200.36xlarge nn-t1,nn-s1,nn-l1,nn-x2 cb-us0001
i-0ccccccccccccccc3 10.0.0.3 us-west-2a p5.48xlarge nn-t1,nn-s1,nn-l1
i-0ccccccccccccccc4 10.0.0.5 us-west-2a p5en.48xlarge nn-t1
EOF2
start_server "$tmp/deep/ec2.port" "$fakeec2" 60 us-west-2 "$tmp/credentials" "$tmp/deep/instances" \
	2>"$tmp/deep/ec2.log"
deep_ec2=http://127.0.0.1:$port
conf "ZoneSource=ec2" "TopologySource=ec2" "Topology=tree" "TopologyFile=$tmp/deep/tree.conf"
sed -i "s|^Ec2Endpoint=.*|Ec2Endpoint=$deep_ec2|" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc:$(body "$tmp/deep/tree.conf")" \
	"0:SwitchName=us-west-2a Switches=nn-t1 SwitchName=nn-t1 Switches=nn-s1,nn-t1-nolayers SwitchName=nn-t1-nolayers Nodes=n4 SwitchName=nn-s1 Switches=nn-l1 SwitchName=nn-l1 Switches=nn-l1-nolayers,nn-x[1-2] SwitchName=nn-l1-nolayers Nodes=n3 SwitchName=nn-x1 Nodes=n1 SwitchName=nn-x2 Nodes=n2" \
	"4, 3 and 1 layers from EC2: each node under its deepest, the default prefixes keep all 4"
is "$(jq -c '[.nodes[] | [.name, (.layers | map(select(. != null)) | length), .block]]' "$tmp/snapshot.json")" \
	'[["n1",4,"cb-us0001"],["n2",4,"cb-us0001"],["n3",3,null],["n4",1,null]]' \
	"  the snapshot records each node's layers and capacity block"
sed -i "s|^Topology=.*|Topology=block|; s|^TopologyFile=.*|TopologyFile=$tmp/deep/block.conf|" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
like "$(body "$tmp/deep/block.conf")" "^BlockSizes=1,2,4 BlockName=cb-us0001 Nodes=n\[1-2\] BlockName=nn-t1-nolayers Nodes=n4 BlockName=nn-l1-nolayers Nodes=n3 BlockName=us-west-2a-empty1$" \
	"  Topology=block: the UltraServer's capacity block is one block"
printf '%s\n' "i-0ccccccccccccccc1 10.0.0.1 us-west-2a p6e-gb200.36xlarge nn-t1,nn-s1,nn-l1,nn-x1,nn-y1 cb-us0001" \
	"i-0ccccccccccccccc2 10.0.0.2 us-west-2a p6e-gb200.36xlarge nn-t1,nn-s1,nn-l1,nn-x1,nn-y2 cb-us0001" \
	>"$tmp/deep/instances"
sed -i "s|^Topology=.*|Topology=tree|; s|^TopologyFile=.*|TopologyFile=$tmp/deep/five.conf|" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$(grep -c 'gives 5 network layers for p6e-gb200.36xlarge (i-0ccccccccccccccc1), TopologyFeaturePrefixes= names 4: the bottom 1 are left out' <<<"$out")" 1 \
	"a type with more layers than prefixes: said once, the top 4 kept"
like "$(body "$tmp/deep/five.conf")" "SwitchName=nn-x1 Nodes=n\[1-2\]" "  (n1 and n2 under their 4th layer)"

# What EC2 said is asked again after Ec2MaxAge=: an instance stopped and
# started has new network nodes.
cat >"$tmp/deep/instances" <<'EOF2'
i-0ccccccccccccccc1 10.0.0.1 us-west-2a p5.48xlarge nn-t1,nn-s1,nn-l1
EOF2
conf "ZoneSource=ec2" "TopologySource=ec2" "Topology=tree" "TopologyFile=$tmp/deep/age.conf" "Ec2MaxAge=2"
sed -i "s|^Ec2Endpoint=.*|Ec2Endpoint=$deep_ec2|" "$tmp/efa.conf"
: >"$tmp/deep/ec2.log"
: >"$tmp/deep/daemon.log"
"$efa" sync --interval 1 --config "$tmp/efa.conf" 2>"$tmp/deep/daemon.log" &
daemon=$!
bg_track "$daemon"
for _ in $(seq 50); do grep -q "topology: wrote" "$tmp/deep/daemon.log" && break; sleep 0.1; done
echo "i-0ccccccccccccccc1 10.0.0.1 us-west-2a p5.48xlarge nn-t1,nn-s2,nn-l2" >"$tmp/deep/instances"
for _ in $(seq 80); do grep -q "nodes moved" "$tmp/deep/daemon.log" && break; sleep 0.1; done
bg_kill "$daemon"
wait "$daemon" 2>/dev/null || true
like "$(cat "$tmp/deep/daemon.log")" "nodes moved: 1 \(n1: nn-l1 -> nn-l2\)" \
	"Ec2MaxAge=2: the instance is asked about again, and its new layers move n1"
is "$(grep -c '^DescribeInstances 200 1 ' "$tmp/deep/ec2.log")" 2 \
	"  after 2 s, not every round (the addresses of no instance are asked each round)"

# The signing rule the stand-in checks is AWS's, not ours: its check
# accepts AWS's own published example ("Create a signed AWS API request",
# IAM's ListUsers at 20150830T123600Z), and a query signed here by a
# reference signer in shell only when it sorts by name, then by value.
printf 'AKIDEXAMPLE wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY\n' >"$tmp/example-credentials"
example_request() {	# example_request QUERY SIGNATURE
	printf 'GET /?%s HTTP/1.1\r\nHost: iam.amazonaws.com\r\nContent-Type: application/x-www-form-urlencoded; charset=utf-8\r\nX-Amz-Date: 20150830T123600Z\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=%s\r\n\r\n' "$1" "$2"
}
verify() { FAKEEC2_NOW=20150830T123600Z "$fakeec2" verify us-east-1 iam "$tmp/example-credentials"; }
is "$(example_request 'Action=ListUsers&Version=2010-05-08' \
	5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7 | verify)" ok \
	"the stand-in's signature check takes AWS's published example"
like "$(example_request 'Action=ListUsers&Version=2010-05-09' \
	5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7 | verify)" "^refused: signature mismatch" \
	"  and refuses it with one parameter changed"
hmac() { openssl dgst -sha256 -mac HMAC -macopt "$1" | sed 's/^.*= //'; }
sign() {	# sign CANONICAL-QUERY: the example's signature over that canonical query
	local creq key h
	creq=$(printf 'GET\n/\n%s\ncontent-type:application/x-www-form-urlencoded; charset=utf-8\nhost:iam.amazonaws.com\nx-amz-date:20150830T123600Z\n\ncontent-type;host;x-amz-date\n%s' \
		"$1" "$(printf '' | sha256sum | cut -d' ' -f1)")
	key=$(printf %s 20150830 | hmac "key:AWS4wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
	for h in us-east-1 iam aws4_request; do key=$(printf %s "$h" | hmac "hexkey:$key"); done
	printf 'AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/iam/aws4_request\n%s' \
		"$(printf %s "$creq" | sha256sum | cut -d' ' -f1)" | hmac "hexkey:$key"
}
query=$(for i in 1 2 10 11; do printf 'Filter.1.Value.%s=10.0.0.%s\n' "$i" "$i"; done
	printf 'Action=DescribeInstances\nParam=b\nParam=a\n')
by_name_then_value=$(printf '%s\n' "$query" | LC_ALL=C sort -t= -k1,1 -k2 | paste -sd '&')
as_whole_pairs=$(printf '%s\n' "$query" | LC_ALL=C sort | paste -sd '&')
sent=$(printf '%s\n' "$query" | paste -sd '&')
is "$(example_request "$sent" "$(sign "$by_name_then_value")" | verify)" ok \
	"a query signed sorted by name, then by value (Filter.1.Value.1 before Filter.1.Value.10): taken"
like "$(example_request "$sent" "$(sign "$as_whole_pairs")" | verify)" "^refused: signature mismatch" \
	"  signed sorted as whole name=value strings, as libcurl 8.3 sorts it: refused"

# Paging that never ends: the same NextToken again, or a new one at
# every page. sync stops within seconds, names EC2 and the token, and
# keeps the last good snapshot.
conf "ZoneSource=ec2"
sed -i "s|^RestURL=.*|RestURL=$rest_url|" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
cp "$tmp/snapshot.json" "$tmp/snapshot.good"
for mode in same new; do
	FAKEEC2_TOKEN=$mode start_server "$tmp/ec2-$mode.port" "$fakeec2" 60 us-west-2 "$tmp/credentials" \
		"$tmp/instances" 2>"$tmp/ec2-$mode.log"
	sed -i "s|^Ec2Endpoint=.*|Ec2Endpoint=http://127.0.0.1:$port|" "$tmp/efa.conf"
	t0=$SECONDS
	run "$efa" sync --once --config "$tmp/efa.conf"
	case $mode in
	same) want='EC2 gave the NextToken "pg/0\+same" twice for DescribeInstances' ;;
	new) want='EC2 did not end DescribeInstances after 24 pages for 4 items \(the last NextToken "pg/0\+new24"\)' ;;
	esac
	like "$rc:$out" "^1:.*$want" "NextToken $mode at every page: sync fails, naming EC2 and the token"
	is "$((SECONDS - t0 < 10)):$(grep -c '^DescribeInstances 200' "$tmp/ec2-$mode.log")" \
		"1:$([ $mode = same ] && echo 2 || echo 24)" "  within seconds, after $([ $mode = same ] && echo 2 || echo 24) pages"
	cmp -s "$tmp/snapshot.json" "$tmp/snapshot.good" && kept=yes || kept=no
	is "$kept" yes "  the last good snapshot stays"
done

# A page that does not parse, and a session token past its expiry: each
# said, naming EC2, and the last good snapshot kept.
printf '%s\n' "ASIAEXPIREDKEY000001 expired/secret expired-session-token 1" >>"$tmp/credentials"
FAKEEC2_BROKEN=1 start_server "$tmp/ec2-broken.port" "$fakeec2" 60 us-west-2 "$tmp/credentials" \
	"$tmp/instances" 2>/dev/null
sed -i "s|^Ec2Endpoint=.*|Ec2Endpoint=http://127.0.0.1:$port|" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
like "$rc:$out" "^1:.*ec2: the answer of EC2 is not the XML expected" "a page of EC2 that does not parse: said"
cmp -s "$tmp/snapshot.json" "$tmp/snapshot.good" && kept=yes || kept=no
is "$kept" yes "  the last good snapshot stays"
start_server "$tmp/ec2-expired.port" "$fakeec2" 60 us-west-2 "$tmp/credentials" "$tmp/instances" 2>/dev/null
sed -i "s|^Ec2Endpoint=.*|Ec2Endpoint=http://127.0.0.1:$port|" "$tmp/efa.conf"
AWS_ACCESS_KEY_ID=ASIAEXPIREDKEY000001 AWS_SECRET_ACCESS_KEY=expired/secret \
	AWS_SESSION_TOKEN=expired-session-token run "$efa" sync --once --config "$tmp/efa.conf"
like "$rc:$out" "^1:.*EC2 refused DescribeInstances as expired \(RequestExpired: Request has expired\.\): the session token \(AWS_SESSION_TOKEN, or the instance role's\) has expired" \
	"an expired session token: said, naming which credential"
cmp -s "$tmp/snapshot.json" "$tmp/snapshot.good" && kept=yes || kept=no
is "$kept" yes "  the last good snapshot stays"

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
