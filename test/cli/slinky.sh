#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# deploy/slinky/values.yaml holds together offline (deploy/slinky/check-values
# without the chart's values): zones from Kubernetes with the RBAC for it,
# every path efa.conf names mounted where it is used, GRES consistent, the
# sync sidecar without /etc/slurm, and an efa.conf that slurm-efa loads.
# Each rule is also broken once, in a copy, to see it refuse.
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# shellcheck source=../lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"

check=$top_srcdir/deploy/slinky/check-values
values=$top_srcdir/deploy/slinky/values.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! python3 -c 'import yaml' 2>/dev/null; then
	ok 1 "python3 and python3-yaml are installed (scripts/install-deps installs them)"
	echo "1..$tap_n"
	exit 1
fi

run "$check" --slurm-efa "$top_builddir/slurm-efa" "$values"
is "$rc" 0 "check-values passes on deploy/slinky/values.yaml"
like "$out" "^ok [0-9]+ - efa.conf of configFiles loads \(slurm-efa check\)$" "  and slurm-efa loads its efa.conf"
like "$out" "^ok [0-9]+ - nodesets.p5.slurmd mounts CheckpointRoot=/fsx/checkpoints$" "  FSx is mounted where checkpoints go"

# broken EXPR WHAT REGEX: a copy changed by the Python expression (on v,
# the values) must fail with a line matching REGEX.
broken() {
	python3 - "$values" "$tmp/broken.yaml" "$1" <<'PY'
import sys, yaml
v = yaml.safe_load(open(sys.argv[1]))
exec(sys.argv[3])
yaml.safe_dump(v, open(sys.argv[2], "w"))
PY
	run "$check" "$tmp/broken.yaml"
	ok $((rc == 1 ? 0 : 1)) "$2: refused"
	like "$out" "$3" "  naming it"
}
broken 'v["nodesets"]["p5"]["slurmd"]["volumeMounts"] = [m for m in v["nodesets"]["p5"]["slurmd"]["volumeMounts"] if m["name"] != "fsx"]' \
	"no FSx mount on the slurmd pods" "^not ok [0-9]+ - nodesets.p5.slurmd mounts CheckpointRoot=/fsx/checkpoints"
broken 'v["controller"]["podSpec"]["initContainers"][0]["volumeMounts"].append({"name": "slurm-etc", "mountPath": "/etc/slurm"})' \
	"the sidecar mounting /etc/slurm" "^not ok [0-9]+ - the sidecar does not mount /etc/slurm"
broken 'v["nodesets"]["p5"]["extraConfMap"]["Gres"] = ["gpu:4"]' \
	"Gres=gpu:4 on pods limited to 8 GPUs" "^not ok [0-9]+ - NodeSet p5 registers Gres=gpu:4 for its nvidia.com/gpu limit 8"
broken 'v["extraObjects"] = [o for o in v["extraObjects"] if o["kind"] != "Role"]' \
	"no Role to list pods" "^not ok [0-9]+ -   which may get and list nodes and pods"
broken 'v["controller"]["podSpec"]["initContainers"][0]["volumeMounts"] = [m for m in v["controller"]["podSpec"]["initContainers"][0]["volumeMounts"] if m["name"] != "slurm-efa-token"]' \
	"the sidecar without its token" "^not ok [0-9]+ - the sidecar mounts RestTokenFile="

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
