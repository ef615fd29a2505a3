#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-efa node-features on the fixtures, against an IMDSv2 stand-in on
# 127.0.0.1 (test/standins/fakeimds) and without one (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

fake=$top_builddir/test/standins/fakeimds
export SLURM_EFA_CONF=$tmp/efa.conf
: >"$SLURM_EFA_CONF"
unset AWS_EC2_METADATA_SERVICE_ENDPOINT AWS_EC2_METADATA_DISABLED

start_fake() {	# start_fake MODE ZONE TYPE -> $url; requests logged in $tmp/MODE.log
	start_server "$tmp/$1.port" "$fake" "$1" 60 "$2" "$3" 2>"$tmp/$1.log"
	url=http://127.0.0.1:$port
}

start_fake ok us-west-2a p5.48xlarge
ok_url=$url
ok_pid=$server_pid
run "$efa" node-features --imds "$ok_url" --root "$fixtures/p5.48xlarge"
is "$rc" 0 "p5 with the metadata service: exit 0"
is "$out" "az-us-west-2a,efa,p5.48xlarge" "  zone, efa and instance type, comma-separated"
like "$(cat "$tmp/ok.log")" "^PUT /latest/api/token token=no" "  asks for an IMDSv2 session token first"
like "$(cat "$tmp/ok.log")" "GET /latest/meta-data/placement/availability-zone token=yes" "  and sends it with every GET"

run "$efa" node-features --imds="$ok_url/" --root "$fixtures/cpu-only"
is "$out" "az-us-west-2a,p5.48xlarge" "a node without EFA devices gets no efa feature"

start_fake notype us-west-2b unused
run "$efa" node-features --imds "$url" --root "$fixtures/cpu-only"
is "$out" "az-us-west-2b,c6i.4xlarge" "cpu-only: the instance type from DMI when IMDS names none"
is "$rc" 0 "  exit 0"

run "$efa" node-features --imds "$url" --root "$fixtures/p5-pod"
is "$out" "az-us-west-2b,efa,p5.48xlarge" "a pod that can use some of its EFA devices gets efa (ml. stripped)"

run "$efa" node-features --json --imds "$ok_url" --root "$fixtures/p5.48xlarge"
is "$(jq -r '.features | join(" ")' <<<"$out")" "az-us-west-2a efa p5.48xlarge" "--json: the features"
is "$(jq -r '[.zone, .instance_type_source, .efa, .efa_devices, .usable_efa_devices] | map(tostring) | join(" ")' <<<"$out")" \
	"us-west-2a imds true 32 32" "  zone, sources and EFA counts"
run "$efa" node-features --json --imds "$ok_url" --root "$fixtures/cpu-only"
like "$(jq -r '.efa_problem' <<<"$out")" "no EFA device" "--json says why a node has no efa"

printf 'ZoneFeaturePrefix=k8s-az-\nInstanceType=p5e.48xlarge\n' >"$tmp/prefix.conf"
run "$efa" node-features --config "$tmp/prefix.conf" --imds "$ok_url" --root "$fixtures/p5.48xlarge"
is "$out" "k8s-az-us-west-2a,efa,p5e.48xlarge" "ZoneFeaturePrefix= and InstanceType= from efa.conf"

# Nothing listening: what the node has, and stderr says what is missing.
port=${ok_url##*:}
bg_kill "$ok_pid"
wait "$ok_pid" 2>/dev/null || true
timed "$efa" node-features --imds "http://127.0.0.1:$port" --root "$fixtures/p5.48xlarge"
is "$rc" 1 "no metadata service: exit 1"
like "$out" "^efa,p5\.48xlarge$" "  still prints efa and the DMI instance type"
like "$out" "no availability zone feature: cannot connect to the metadata service at http://127\.0\.0\.1:$port" \
	"  and says on stderr what it could not get"
ok $((ms > 3000)) "  at once (${ms} ms)"

start_fake hang us-west-2a p5.48xlarge
timed "$efa" node-features --imds "$url" --timeout 500 --root "$fixtures/p5.48xlarge"
is "$rc" 1 "a metadata service that never answers: exit 1"
like "$out" "no complete answer from the metadata service at http://127\.0\.0\.1:[0-9]+ to PUT /latest/api/token within 500 ms" "  a timeout, named"
ok $((ms > 3000)) "  within the limit (${ms} ms)"

start_fake v1only us-west-2a p5.48xlarge
run "$efa" node-features --imds "$url" --root "$fixtures/p5.48xlarge"
like "$out" "HTTP 403 to the IMDSv2 token request" "IMDSv2 refused: the token request's answer is named"

run env AWS_EC2_METADATA_DISABLED=true "$efa" node-features --root "$fixtures/p5.48xlarge"
like "$out" "not asked \(AWS_EC2_METADATA_DISABLED=true\)" "AWS_EC2_METADATA_DISABLED=true: IMDS is not asked"
run env AWS_EC2_METADATA_SERVICE_ENDPOINT="$ok_url" "$efa" node-features --no-imds --root "$fixtures/cpu-only"
is "$out"$'\n' "c6i.4xlarge"$'\n'"slurm-efa node-features: no availability zone feature: the metadata service was not asked (--no-imds). On EC2, check that the metadata service is enabled (in a container, its hop limit must be 2 or more); elsewhere, give the zone feature yourself"$'\n' \
	"--no-imds: only what the node shows"

start_fake ok us-west-2c trn1.32xlarge
run env AWS_EC2_METADATA_SERVICE_ENDPOINT="$url" "$efa" node-features --root "$fixtures/trn1.32xlarge"
is "$out" "az-us-west-2c,efa,trn1.32xlarge" "AWS_EC2_METADATA_SERVICE_ENDPOINT names the service"

start_fake ok 'us-west-2a,evil' p5.48xlarge
run "$efa" node-features --imds "$url" --root "$fixtures/cpu-only"
like "$out" "cannot be a Slurm feature" "an answer that cannot be a feature is refused"
features=$("$efa" node-features --imds "$url" --root "$fixtures/cpu-only" 2>/dev/null || true)
is "$features" "p5.48xlarge" "  and left out of the features"

run "$efa" node-features --imds ftp://x
is "$rc" 2 "a bad URL: a usage error (exit 2)"
like "$out" "metadata service URL ftp://x: use http://host:port or https://host:port, e.g. http://169\.254\.169\.254" "  with the forms that work"
run "$efa" node-features --timeout soon
is "$rc" 2 "a bad --timeout: exit 2"
run "$efa" node-features --frobnicate
is "$rc" 2 "an unknown option: exit 2"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
