#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# ZoneSource=kubernetes and TopologySource=kubernetes: slurm-efa reads the
# Slurm nodes from a stand-in slurmrestd (answers recorded from 26.05) and
# where their pods run from a stand-in Kubernetes API over TLS
# (test/standins/fakekube: bearer token checked at every request, lists paged).
# Kubernetes says n1 is in us-west-2b and n3 in us-west-2a, where Slurm's
# features say the opposite; n4's pod is pending. The pods are named as
# Slinky's slurm-operator names them: n1's pod is slurm-worker-n-1, whose
# hostname (spec.hostname and the label
# nodeset.slinky.slurm.net/pod-hostname) is n1; n2's pod has only the
# label, n3's only its name; a pod named n1 is a login pod (hostname
# login-n1) on a us-west-2a node, and slurm-worker-m-1, a pod of another
# NodeSet with hostname n1, is being deleted there: a join by pod name, or
# to the pod on its way out, puts n1 in us-west-2a.
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

fakerest=$top_builddir/test/standins/fakerest
fakekube=$top_builddir/test/standins/fakekube

if [ ! -x "$fakekube" ]; then
	ok 1 "test/standins/fakekube is built (configure found no OpenSSL: install libssl-dev)"
	echo "1..$tap_n"
	exit 1
fi
if ! openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" -out "$tmp/ca.pem" \
	-days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1; then
	ok 1 "openssl makes a test certificate (scripts/install-deps installs openssl)"
	echo "1..$tap_n"
	exit 1
fi

printf 'SLURM_JWT=header.payload.signature\n' >"$tmp/jwt"
chmod 600 "$tmp/jwt"
printf 'service-account-token-1\n' >"$tmp/sa-token"
printf 'service-account-token-1\n' >"$tmp/kube-accepts"
start_server "$tmp/rest.port" "$fakerest" serve 120 "$fixtures/rest/26.05"
rest_url=http://127.0.0.1:$port
# Two items a page at most: every list takes several requests.
FAKEKUBE_PAGE=2 start_server "$tmp/kube.port" "$fakekube" 600 "$fixtures/kube" "$tmp/ca.pem" \
	"$tmp/key.pem" "$tmp/kube-accepts" 2>"$tmp/kube.log"
kube_url=https://127.0.0.1:$port

conf() {	# conf EXTRA-LINE...
	printf '%s\n' "RestURL=$rest_url" "RestUser=alice" "RestTokenFile=$tmp/jwt" \
		"Snapshot=$tmp/snapshot.json" "KubernetesURL=$kube_url" \
		"KubernetesTokenFile=$tmp/sa-token" "KubernetesCAFile=$tmp/ca.pem" \
		"KubernetesNamespace=slurm" "$@" >"$tmp/efa.conf"
}
zones_of() {	# the snapshot's "node=zone" pairs
	jq -r '[.nodes[] | "\(.name)=\(.zone // "-")"] | join(" ")' "$tmp/snapshot.json" 2>&1
}

conf "ZoneSource=kubernetes"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 0 "sync --once with ZoneSource=kubernetes: exit 0"
is "$(zones_of)" "n1=us-west-2b n2=us-west-2a n3=us-west-2a n4=us-west-2b" \
	"  each node's zone is its pod's Kubernetes node's zone label; n4, whose pod is pending, keeps its feature's"
like "$out" "kubernetes: 1 of 4 Slurm nodes have no pod in namespace slurm on a node with a zone label .*: their own features stand" \
	"  and is counted"
is "$(grep -c '^GET /api/v1/nodes' "$tmp/kube.log")" 2 "  the 4 Kubernetes nodes came in 2 pages"
is "$(grep -c '^GET /api/v1/namespaces/slurm/pods?limit=500&continue=[A-Za-z0-9_-]\{20,\}$' "$tmp/kube.log")" 3 \
	"  the 8 pods of namespace slurm in 4, each continued with the token the page before gave"

run "$efa" zones --config "$tmp/efa.conf"
like "$out" "^us-west-2a +az-us-west-2a +2 +" "zones: us-west-2a holds 2 nodes (n2, n3)"
like "$out" "^us-west-2b +az-us-west-2b +2 +" "  us-west-2b 2 (n1, n4)"

conf "ZoneSource=kubernetes" "TopologySource=kubernetes" "Topology=tree" "TopologyFile=$tmp/topology.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 0 "TopologySource=kubernetes: exit 0"
is "$(grep -v '^#' "$tmp/topology.conf" | paste -sd ' ')" \
	"SwitchName=us-west-2a Switches=nn-dddd4444 SwitchName=nn-dddd4444 Switches=nn-eeee5555 SwitchName=nn-eeee5555 Switches=nn-ffff6666 SwitchName=nn-ffff6666 Nodes=n[2-3] SwitchName=us-west-2b Switches=nn-aaaa1111,us-west-2b-nolayers SwitchName=us-west-2b-nolayers Nodes=n4 SwitchName=nn-aaaa1111 Switches=nn-bbbb2222 SwitchName=nn-bbbb2222 Switches=nn-cccc3333 SwitchName=nn-cccc3333 Nodes=n1" \
	"  topology.conf from the network-node-layer labels, under the zones (n4, without a pod, keeps its zone)"

conf "TopologySource=kubernetes" "Topology=tree" "TopologyFile=$tmp/topology.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$(zones_of)" "n1=us-west-2a n2=us-west-2a n3=us-west-2b n4=us-west-2b" \
	"ZoneSource=features with TopologySource=kubernetes: zones from the features"
like "$(cat "$tmp/topology.conf")" "^SwitchName=nn-cccc3333 Nodes=n1$" "  layers from Kubernetes"

# The token file is read again when it changes (a projected token is
# renewed in place), within one sync daemon.
conf "ZoneSource=kubernetes"
rm -f "$tmp/snapshot.json"
"$efa" sync --interval 1 --config "$tmp/efa.conf" 2>"$tmp/daemon.log" &
daemon=$!
bg_track "$daemon"
for _ in $(seq 50); do [ -s "$tmp/snapshot.json" ] && break; sleep 0.1; done
printf 'service-account-token-2\n' >"$tmp/kube-accepts"
sleep 1.5
like "$(cat "$tmp/daemon.log")" "answered HTTP 401 to GET /api/v1/nodes \(Unauthorized\): it does not accept the token in $tmp/sa-token \(expired, revoked or of another cluster\): check KubernetesTokenFile=" \
	"a token the API no longer accepts: refused, naming the token file and KubernetesTokenFile="
like "$(cat "$tmp/daemon.log")" "keeping the last good snapshot" "  the last good snapshot is kept"
printf 'service-account-token-2\n' >"$tmp/sa-token.new"
mv "$tmp/sa-token.new" "$tmp/sa-token"
# A cycle that began before the renewal may still answer 401: only the
# cycles after it count (under a loaded make -j, one took a second).
sleep 2
: >"$tmp/daemon.log"
sleep 2.5
bg_kill "$daemon"
wait "$daemon" 2>/dev/null || true
unlike "$(cat "$tmp/daemon.log")" "HTTP 401" "  the renewed token is read without a restart"
like "$(cat "$tmp/daemon.log")" "wrote $tmp/snapshot.json" "  and snapshots are written again"

conf "ZoneSource=kubernetes" "KubernetesCAFile=$tmp/jwt"
sed -i "/KubernetesCAFile=.*ca.pem/d" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 1 "a CA file that holds no certificate: exit 1"
like "$out" "cannot use the CA file $tmp/jwt .*is KubernetesCAFile= a PEM file" "  KubernetesCAFile= named"
sed -i "/KubernetesCAFile=/d" "$tmp/efa.conf"
echo "KubernetesCAFile=/etc/ssl/certs/ca-certificates.crt" >>"$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
like "$out" "the Kubernetes API at https://127\.0\.0\.1:[0-9]+ has a certificate that cannot be verified .*KubernetesCAFile=" \
	"a server certificate the CA did not sign: refused, KubernetesCAFile= named"

FAKEKUBE_PAGE=2 start_server "$tmp/kube403.port" "$fakekube" 600 "$fixtures/kube" "$tmp/ca.pem" \
	"$tmp/key.pem" "$tmp/kube-accepts" pods 2>/dev/null
conf "ZoneSource=kubernetes"
sed -i "s|^KubernetesURL=.*|KubernetesURL=https://127.0.0.1:$port|" "$tmp/efa.conf"
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 1 "a service account that may not list pods: exit 1"
like "$out" "answered HTTP 403 to GET /api/v1/namespaces/slurm/pods \(pods is forbidden: .*\): the service account may not list pods: add that rule to its role \\(deploy/slinky/rbac.yaml\\)" \
	"  the API's reason and the RBAC rule to add"

# Servers whose paging does not end: sync gives up within seconds, naming
# the API, the list and the token, and a daemon keeps its last snapshot.
broken_kube() {	# broken_kube ENV=VALUE...: a stand-in with those settings; sets kube_broken
	# The last one's port and log would be read before this one truncates them.
	rm -f "$tmp/broken.port" "$tmp/broken.log"
	env "$@" "$fakekube" 600 "$fixtures/kube" "$tmp/ca.pem" "$tmp/key.pem" "$tmp/kube-accepts" \
		>"$tmp/broken.port" 2>"$tmp/broken.log" &
	bg_track $!
	for _ in $(seq 50); do [ -s "$tmp/broken.port" ] && break; sleep 0.1; done
	kube_broken=https://127.0.0.1:$(head -n 1 "$tmp/broken.port")
	conf "ZoneSource=kubernetes"
	sed -i "s|^KubernetesURL=.*|KubernetesURL=$kube_broken|" "$tmp/efa.conf"
}
printf 'service-account-token-2\n' >"$tmp/sa-token"
rm -f "$tmp/snapshot.json"
broken_kube FAKEKUBE_PAGE=2 FAKEKUBE_CONTINUE=same
SECONDS=0
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 1 "a server that answers a continue token with itself: exit 1"
ok $((SECONDS < 10 ? 0 : 1)) "  within seconds (${SECONDS} s)"
like "$out" "kubernetes: the Kubernetes API at $kube_broken answered page 2 of GET /api/v1/namespaces/slurm/pods with the continue token it was sent \(\"eyJ[A-Za-z0-9_-]{61}\.\.\.\"\): its paging does not advance; the list is abandoned" \
	"  naming the API, the list and the token (its first 64 characters)"
is "$(grep -c '^GET /api/v1/namespaces/slurm/pods' "$tmp/broken.log")" 2 "  after asking twice"
ok $([ ! -e "$tmp/snapshot.json" ] && echo 0 || echo 1) "  and writing no snapshot"

broken_kube FAKEKUBE_PAGE=2 FAKEKUBE_CONTINUE=new
SECONDS=0
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 1 "a server that gives the same page under new tokens for ever: exit 1"
ok $((SECONDS < 10 ? 0 : 1)) "  within seconds (${SECONDS} s)"
like "$out" "kubernetes: the Kubernetes API at $kube_broken asks for page 5 of GET /api/v1/namespaces/slurm/pods \(continue token \"eyJ[A-Za-z0-9_-]{61}\.\.\.\"\) after 8 objects, where the remainingItemCount it gave needs at most 4 pages: its paging does not end; the list is abandoned" \
	"  when more pages come than the objects it said remain need (6 after the first 2), naming the token"
is "$(grep -c '^GET /api/v1/namespaces/slurm/pods' "$tmp/broken.log")" 4 "  after asking 4 times"

broken_kube FAKEKUBE_PAGE=2 FAKEKUBE_COMPACT=1
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 1 "a continue token the API server has compacted away: exit 1"
like "$out" "answered HTTP 410 to GET /api/v1/nodes \(The provided continue parameter is too old to display a consistent list result\..*\): the list's continue token expired before its next page was asked for; the next sync lists again from the start" \
	"  the API's reason, and what happens next"

# A daemon with a good snapshot, then the cluster grows past one page of a
# server whose paging never advances: the snapshot stays.
mkdir -p "$tmp/grow"
cp "$fixtures/kube/nodes.json" "$fixtures/kube/pods.json" "$tmp/grow/"
FAKEKUBE_PAGE=9 FAKEKUBE_CONTINUE=same start_server "$tmp/grow.port" "$fakekube" 600 "$tmp/grow" \
	"$tmp/ca.pem" "$tmp/key.pem" "$tmp/kube-accepts" 2>/dev/null
conf "ZoneSource=kubernetes"
sed -i "s|^KubernetesURL=.*|KubernetesURL=https://127.0.0.1:$port|" "$tmp/efa.conf"
"$efa" sync --interval 1 --config "$tmp/efa.conf" 2>"$tmp/daemon.log" &
daemon=$!
bg_track "$daemon"
for _ in $(seq 50); do [ -s "$tmp/snapshot.json" ] && break; sleep 0.1; done
good=$(zones_of)
jq '.items += [range(5; 20) | {metadata: {name: "slurm-worker-n-\(.)", namespace: "slurm",
	labels: {"nodeset.slinky.slurm.net/pod-hostname": "n\(.)"}}, spec: {hostname: "n\(.)"}}]' \
	"$fixtures/kube/pods.json" >"$tmp/grow/pods.json.new"
mv "$tmp/grow/pods.json.new" "$tmp/grow/pods.json"
for _ in $(seq 50); do grep -q "paging does not advance" "$tmp/daemon.log" && break; sleep 0.1; done
sleep 1.2
bg_kill "$daemon"
wait "$daemon" 2>/dev/null || true
is "$good" "n1=us-west-2b n2=us-west-2a n3=us-west-2a n4=us-west-2b" "a daemon wrote a snapshot while the pods fit one page"
like "$(cat "$tmp/daemon.log")" "GET /api/v1/namespaces/slurm/pods with the continue token it was sent .*: its paging does not advance; the list is abandoned; keeping the last good snapshot $tmp/snapshot.json" \
	"  once they do not, the endless paging is refused and the last good snapshot kept"
is "$(zones_of)" "$good" "  and the snapshot is the last good one"

# Throttling (HTTP 429 with Retry-After): asked again after the wait the
# server gives, a bounded number of times.
broken_kube FAKEKUBE_THROTTLE=2
SECONDS=0
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 0 "two answers of HTTP 429, then the list: sync succeeds"
ok $((SECONDS >= 2 ? 0 : 1)) "  after waiting the 1 s Retry-After twice (${SECONDS} s)"
is "$(grep -c '^GET /api/v1/nodes' "$tmp/broken.log")" 3 "  asking 3 times"
broken_kube FAKEKUBE_THROTTLE=1000
SECONDS=0
run "$efa" sync --once --config "$tmp/efa.conf"
is "$rc" 1 "a server that throttles every request: exit 1"
ok $((SECONDS < 10 ? 0 : 1)) "  within seconds (${SECONDS} s)"
is "$(grep -c '^GET /api/v1/nodes' "$tmp/broken.log")" 4 "  after asking 4 times"
like "$out" "answered HTTP 429 to GET /api/v1/nodes \(Too many requests, please try again later\.\): the API server is throttling this client \(asked 4 times, waiting as Retry-After said\); the next sync asks again" \
	"  saying so"
sed -i "s|^KubernetesURL=.*|KubernetesURL=https://127.0.0.1:$(head -n 1 "$tmp/kube403.port")|" "$tmp/efa.conf"

# Every request, answer, page and error path under valgrind too.
if command -v valgrind >/dev/null; then
	# shellcheck source=../lib/memcheck.sh
	. "$top_srcdir/test/lib/memcheck.sh"
	memcheck "sync --once refused by RBAC" "$efa" sync --once --config "$tmp/efa.conf"
	like "$out" "answered HTTP 403" "  and refused"
	sed -i "s|^KubernetesURL=.*|KubernetesURL=$kube_url|" "$tmp/efa.conf"
	printf '%s\n' "TopologySource=kubernetes" "Topology=tree" "TopologyFile=$tmp/topology.conf" >>"$tmp/efa.conf"
	rm -f "$tmp/topology.conf"
	memcheck "sync --once from Kubernetes, paged" "$efa" sync --once --config "$tmp/efa.conf"
	like "$(cat "$tmp/topology.conf" 2>&1)" "^SwitchName=nn-ffff6666 Nodes=n\[2-3\]$" "  and writes the topology"
	broken_kube FAKEKUBE_PAGE=2 FAKEKUBE_CONTINUE=new
	memcheck "sync --once against paging that does not end" "$efa" sync --once --config "$tmp/efa.conf"
	like "$out" "its paging does not end" "  and refused"
fi

printf '%s\n' "RestURL=$rest_url" "Snapshot=$tmp/wf.json" "WriteFeatures=yes" >"$tmp/wf.conf"
run "$efa" sync --once --config "$tmp/wf.conf"
is "$rc" 2 "WriteFeatures=yes with both sources =features: a usage error"
like "$out" "with both =features there is nothing to write: set one to kubernetes or ec2, or drop WriteFeatures=" \
	"  saying why and what to do"

printf '%s\n' "ZoneSource=aws" >"$tmp/bad.conf"
run "$efa" zones --config "$tmp/bad.conf"
is "$rc" 2 "ZoneSource=aws: a usage error"
like "$out" "bad.conf:1: invalid ZoneSource=aws: use features\|kubernetes\|ec2" "  naming the file, line, key and the values it takes"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
