#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# deploy/slinky/values.yaml holds together offline (deploy/slinky/check-values
# without the chart's values): zones from Kubernetes with the RBAC for it,
# every path efa.conf names mounted where it is used, GRES consistent, the
# sync sidecar without /etc/slurm, and an efa.conf that slurm-efa loads.
# Each rule is also broken once, in a copy, to see it refuse.
# deploy/slinky/rbac.yaml grants exactly what sync asks a (stand-in)
# Kubernetes API for. The Containerfile's build stage cannot be run here (no
# container runtime, no registry): its package list is checked instead, by
# apt-cache and by dpkg-checkbuilddeps against debian/control, and against
# the libraries configure.ac requires; README.md's build commands too.
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

check=$top_srcdir/deploy/slinky/check-values
values=$top_srcdir/deploy/slinky/values.yaml
rbac=$top_srcdir/deploy/slinky/rbac.yaml
containerfile=$top_srcdir/deploy/slinky/Containerfile

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
	run "$check" --rbac "${broken_rbac:-$rbac}" "$tmp/broken.yaml"
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
	"no Role to list pods" "^not ok [0-9]+ -   which may list nodes and pods"
broken '[o for o in v["extraObjects"] if o["kind"] == "ClusterRole"][0]["rules"][0]["verbs"].append("watch")' \
	"a ClusterRole that may also watch nodes" "^not ok [0-9]+ -   and nothing more than sync asks for"
broken '[o for o in v["extraObjects"] if o["kind"] == "Role"][0]["rules"][0]["resources"].append("secrets")' \
	"a Role that may also list Secrets" "^not ok [0-9]+ -   and nothing more than sync asks for"
sed 's/verbs: \["list", "patch"\]/verbs: ["get", "list", "patch"]/' "$rbac" >"$tmp/rbac-wider.yaml"
broken_rbac=$tmp/rbac-wider.yaml broken 'pass' \
	"rbac.yaml with other rules than the values'" "^not ok [0-9]+ -   the same objects and rules as .*rbac-wider.yaml"
broken 'v["controller"]["podSpec"]["automountServiceAccountToken"] = True' \
	"a token mounted into every container of the controller pod" "^not ok [0-9]+ -   the controller pod keeps automountServiceAccountToken off"
broken 'v["controller"]["podSpec"]["initContainers"][0]["volumeMounts"] = [m for m in v["controller"]["podSpec"]["initContainers"][0]["volumeMounts"] if m["name"] != "slurm-efa-kube-api"]' \
	"the sidecar without the service account's token" "^not ok [0-9]+ -   a projected service account token is mounted into the sidecar alone"
broken 'v["controller"]["podSpec"]["initContainers"].append({"name": "other", "image": "x", "volumeMounts": [{"name": "slurm-efa-kube-api", "mountPath": "/sa"}]})' \
	"the token projected into another container too" "^not ok [0-9]+ -   a projected service account token is mounted into the sidecar alone"
broken 'del v["nodesets"]["p5"]["slurmd"]["resources"]["limits"]["hugepages-2Mi"]' \
	"EFA interfaces without huge pages" "^not ok [0-9]+ - NodeSet p5 asks for 2 MiB huge pages"
broken 'del v["nodesets"]["p5"]["slurmd"]["resources"]["requests"]' \
	"huge pages without a cpu or memory request" "^not ok [0-9]+ -   with a cpu or memory request or limit"
broken 'v["nodesets"]["p5"]["podSpec"]["initContainers"] = []' \
	"nothing makes the checkpoint root" "^not ok [0-9]+ - NodeSet p5: an init container makes CheckpointRoot=/fsx/checkpoints"
broken 'v["nodesets"]["p5"]["slurmd"]["image"]["tag"] = "26.05-ubuntu26.04-efa0.1.0"' \
	"a slurmd image on the series' floating tag" "^not ok [0-9]+ - every image's tag names one Slurm release"

# rbac.yaml against what sync really asks: sync --once with zones and
# layers from the stand-in Kubernetes API (test/standins/fakekube) and the
# repair ladder's replace of a node slurm-efa drained (n3, drained in a copy
# of the recorded answers), each request it logged turned into the (scope,
# verb, resource) Kubernetes' RBAC checks (GET of a collection is list, of
# one object get, with watch=true watch; PATCH patch, DELETE delete).
fakerest=$top_builddir/test/standins/fakerest
fakekube=$top_builddir/test/standins/fakekube
if [ -x "$fakekube" ] && openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" \
	-out "$tmp/ca.pem" -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1; then
	printf 'SLURM_JWT=header.payload.signature\n' >"$tmp/jwt"
	chmod 600 "$tmp/jwt"
	printf 'service-account-token\n' >"$tmp/sa-token"
	cp "$tmp/sa-token" "$tmp/kube-accepts"
	# Slurm 22.05's answers: its v0.0.38 has no node update, so the
	# node's reason goes through scontrol (a fake one that says what it
	# was asked; t_slinky.sh sets it through a real slurmrestd).
	cp -r "$top_builddir/test/fixtures/rest/22.05" "$tmp/rest"
	cp -r "$top_builddir/test/fixtures/kube" "$tmp/kube"
	jq '(.nodes[] | select(.name == "n3")) |= (.state_flags = ["DRAIN"]
		| .reason = "efa: EFA device rdmap0: port 1 is 1: DOWN, not ACTIVE"
		| .reason_changed_at = .slurmd_start_time + 86400)' \
		"$tmp/rest/v0.0.38/nodes.json" >"$tmp/nodes.json" && mv "$tmp/nodes.json" "$tmp/rest/v0.0.38/nodes.json"
	mkdir -p "$tmp/bin"
	printf '#!/bin/sh\necho "$*" >>%s\n' "$tmp/scontrol.log" >"$tmp/bin/scontrol"
	chmod 755 "$tmp/bin/scontrol"
	start_server "$tmp/rest.port" "$fakerest" serve 60 "$tmp/rest"
	rest_port=$port
	start_server "$tmp/kube.port" "$fakekube" 60 "$tmp/kube" "$tmp/ca.pem" \
		"$tmp/key.pem" "$tmp/kube-accepts" 2>"$tmp/kube.log"
	printf '%s\n' "RestURL=http://127.0.0.1:$rest_port" "RestUser=slurm" "RestTokenFile=$tmp/jwt" \
		"Snapshot=$tmp/snapshot.json" "KubernetesURL=https://127.0.0.1:$port" \
		"KubernetesTokenFile=$tmp/sa-token" "KubernetesCAFile=$tmp/ca.pem" "KubernetesNamespace=slurm" \
		"ZoneSource=kubernetes" "TopologySource=kubernetes" "RepairAction=replace" >"$tmp/efa.conf"
	run env SLURM_EFA_SLURM_BINDIR="$tmp/bin" "$top_builddir/slurm-efa" sync --once --config "$tmp/efa.conf"
	is "$rc" 0 "sync --once against the stand-in Kubernetes API"
	like "$out" "repair: node n3: replaced: Kubernetes node cordoned, pod deleted for the NodeSet to recreate \(pod slurm/n3 on Kubernetes node ip-10-1-3-9" \
		"  the repair ladder replaces n3, drained by slurm-efa: its pod and Kubernetes node named"
	is "$(jq -r '.items[] | select(.metadata.name == "ip-10-1-3-9.us-west-2.compute.internal") | .spec.unschedulable' "$tmp/kube/nodes.json")" \
		"true" "  its Kubernetes node is cordoned (in the stand-in)"
	like "$(jq -r '.items[] | select(.metadata.name == "n3") | .metadata.deletionTimestamp' "$tmp/kube/pods.json")" \
		"^20[0-9-]+T" "  and its pod deleted"
	is "$(cat "$tmp/scontrol.log" 2>/dev/null)" "update NodeName=n3 State=DRAIN Reason=efa: repair replace: EFA device rdmap0: port 1 is 1: DOWN, not ACTIVE" \
		"  its reason says so, through scontrol where slurmrestd cannot update nodes (v0.0.38)"
	run python3 - "$check" "$rbac" "$tmp/kube.log" <<'PY'
import re, sys, yaml
from importlib.machinery import SourceFileLoader
cv = SourceFileLoader("check_values", sys.argv[1]).load_module()
kinds = {}
for o in yaml.safe_load_all(open(sys.argv[2])):
    if o:
        kinds.setdefault(o["kind"], []).append(o)
asked = set()
for line in open(sys.argv[3]):
    m = re.match(r"^(\w+) /api/v1/(namespaces/[^/?]+/)?([a-z]+)(/[^/?]+)?(\?\S*)?$", line.strip())
    if not m:
        continue
    verb = {"GET": "watch" if re.search(r"[?&]watch=(1|true)", m.group(5) or "") else
           ("get" if m.group(4) else "list")}.get(m.group(1), m.group(1).lower())
    asked.add(("namespace" if m.group(2) else "cluster", verb, m.group(3)))
granted = cv.grants(kinds, "slurm-efa-sync")
print("asked: %s" % sorted(asked))
print("granted: %s" % sorted(granted))
sys.exit(0 if asked and asked == granted else 1)
PY
	is "$rc" 0 "rbac.yaml grants exactly the requests sync made"
	[ "$rc" -eq 0 ] || diag "$out"
	like "$out" "asked: .*'cluster', 'list', 'nodes'.*'cluster', 'patch', 'nodes'.*'namespace', 'delete', 'pods'.*'namespace', 'list', 'pods'" \
		"  (list nodes, list pods in the namespace; patch a node, delete a pod)"
else
	ok 1 "test/standins/fakekube is built and openssl makes a certificate (scripts/install-deps installs libssl-dev and openssl)"
fi

# The Containerfile's build stage: its packages exist, and with the Slurm
# packages of Slinky's slurmd image (slurm-smd, slurm-smd-dev) they satisfy
# debian/control's Build-Depends (without the nocheck profile's), as
# dpkg-checkbuilddeps decides on a package database that holds only them.
# This machine's apt sources (Debian) stand in for Ubuntu 26.04's, whose
# package names are the same for these: not checked here.
build_stage() {	# the build stage's text, continuation lines joined
	sed -n '/^FROM .* AS build$/,/^FROM /p' "$containerfile" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta'
}
stage_packages() {	# the packages the build stage's apt-get install lines name
	build_stage | grep -o 'apt-get install [^&]*' | sed 's/apt-get install//' | tr ' ' '\n' |
		grep -v -e '^-' -e '^$' -e '^"\$dev"$' | sort -u
}
lua_packages() {	# the build stage's Lua dev package for each Lua version
	local v
	for v in 5.1 5.2 5.3 5.4; do
		lua=$v bash -c "$(build_stage | grep -o 'case "\${lua:-5.1}" in .* esac')"'; echo "$dev"'
	done
}
mapfile -t pkgs < <(stage_packages)
ok $((${#pkgs[@]} > 5 ? 0 : 1)) "Containerfile: the build stage installs ${#pkgs[@]} packages: ${pkgs[*]}"
is "$(lua_packages | paste -sd ' ')" "liblua5.1-0-dev liblua5.2-dev liblua5.3-dev liblua5.4-dev" \
	"  and the Lua dev package of the Lua job_submit_lua.so links, named as configure.ac names it"
missing=()
for p in "${pkgs[@]}" $(lua_packages); do
	apt-cache show --no-all-versions "$p" >/dev/null 2>&1 || missing+=("$p")
done
is "${missing[*]}" "" "  apt-cache show knows every one"
# configure.ac's required libraries: each AC_MSG_ERROR names its Debian
# package; Slurm's headers are the image's slurm-smd-dev, Lua's the case.
mapfile -t required < <(grep -o 'install [a-z0-9.+-]* (Debian)' "$top_srcdir/configure.ac" |
	awk '{print $2}' | grep -v -x -e libslurm-dev | sort -u)
uncovered=()
for p in "${required[@]}"; do
	[[ " ${pkgs[*]} " == *" $p "* ]] || uncovered+=("$p")
done
ok $((${#required[@]} >= 3 ? 0 : 1)) "configure.ac requires ${required[*]} (and Slurm's and Lua's headers)"
is "${uncovered[*]}" "" "  the build stage installs each"
ok "$(grep -q 'lua_pkg=liblua5.1-0-dev.*lua_pkg=liblua$with_lua-dev' "$top_srcdir/configure.ac"; echo $?)" \
	"  configure.ac's Lua package names follow the same rule (5.1: liblua5.1-0-dev, else liblua<V>-dev)"

# satisfies LABEL PACKAGE...: dpkg-checkbuilddeps, with the nocheck profile,
# on a database of these packages at apt's candidate versions; slurm-smd and
# slurm-smd-dev, which Slinky's slurmd image holds and Debian's archive does
# not, go in as they are named (SchedMD's packaging, version 26.05.3-1).
# Sets out and rc.
satisfies() {
	local adm p
	adm=$(mktemp -d "$tmp/adm.XXXXXX")
	mkdir -p "$adm/updates" "$adm/info"
	for p in "$@"; do
		case $p in
		slurm-smd | slurm-smd-dev)
			printf 'Package: %s\nVersion: 26.05.3-1\nArchitecture: amd64\n' "$p" ;;
		*)
			apt-cache show --no-all-versions "$p" 2>/dev/null |
				grep -E '^(Package|Version|Architecture|Multi-Arch|Provides):' || continue ;;
		esac
		printf 'Status: install ok installed\n\n'
	done >"$adm/status"
	run dpkg-checkbuilddeps -Pnocheck --admindir="$adm" "$top_srcdir/debian/control"
}
# Slurm 26.05's own debian/control builds job_submit_lua.so against Lua 5.3.
satisfies "${pkgs[@]}" liblua5.3-dev slurm-smd slurm-smd-dev
is "$rc $out" "0 " "  with the image's slurm-smd and slurm-smd-dev, dpkg-checkbuilddeps finds debian/control's Build-Depends met"
satisfies $(printf '%s\n' "${pkgs[@]}" | grep -v -x libexpat1-dev) liblua5.3-dev slurm-smd slurm-smd-dev
like "$out" "Unmet build dependencies: libexpat1-dev" "  (and without libexpat1-dev it finds them unmet)"

# Its build command is the one README.md documents for the .debs, whose
# package list meets debian/control the same way (with Debian's Slurm).
readme_cmd=$(grep -o '^DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage [^#]*' "$top_srcdir/README.md" | sed 's/ *$//')
stage_cmd=$(build_stage | sed -n 's/^RUN \(DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage .*\)$/\1/p')
ok $([ -n "$readme_cmd" ] && [ "$readme_cmd" = "$stage_cmd" ]; echo $?) \
	"  its build command is README.md's: $stage_cmd"
mapfile -t readme_pkgs < <(sed -n '/^### Debian and Ubuntu/,/^###/p' "$top_srcdir/README.md" |
	sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | grep -o '^apt-get install [^#]*' | head -n 1 |
	sed 's/apt-get install//' | tr ' ' '\n' | grep -v '^$')
satisfies "${readme_pkgs[@]}"
is "$rc $out" "0 " "README.md's apt-get install line (${#readme_pkgs[@]} packages) meets debian/control's Build-Depends"
# The image names in the Containerfile's header and in values.yaml: one
# Slurm release, the one the build stage starts from.
slurm_tag=$(sed -n 's/^ARG SLURM_TAG=//p' "$containerfile")
like "$slurm_tag" '^[0-9]+\.[0-9]+\.[0-9]+-' "Containerfile: SLURM_TAG names a Slurm release ($slurm_tag)"
is "$(grep -ho 'efa:[0-9][^ ]*' "$containerfile" "$values" | sed 's/^efa://' | sort -u | paste -sd ' ')" \
	"$slurm_tag-efa0.1.0" "  the images it makes and values.yaml use carry it"
is "$(grep -o 'tag: [^ ]*' "$values" | sed 's/tag: //' | sort -u | paste -sd ' ')" "$slurm_tag-efa0.1.0" \
	"  (every tag: of values.yaml)"
like "$(sed -n 's/^ARG EFA_INSTALLER_VERSION=//p' "$containerfile")" '^[0-9]+\.[0-9]+\.[0-9]+$' \
	"Containerfile: the EFA installer is pinned to a release, not latest"

# Every file of deploy/ carries its licence, and every deploy/ path the
# program's messages name exists.
for f in "$top_srcdir"/deploy/slinky/*; do
	ok "$(grep -q 'SPDX-License-Identifier: Apache-2.0' "$f"; echo $?)" \
		"$(basename "$f") has an SPDX-License-Identifier line"
done
for path in $(grep -rhoE 'deploy/[A-Za-z0-9_./-]+[A-Za-z0-9]' "$top_srcdir/src" | sort -u); do
	ok "$([ -e "$top_srcdir/$path" ]; echo $?)" "$path, which a message of src/ names, exists"
done

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
