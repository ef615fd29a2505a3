#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# libslurmrest's failures through slurm-efa, against misbehaving servers on
# 127.0.0.1 (test/standins/fakerest): each ends in time with the right error.
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

fake=$top_builddir/test/standins/fakerest
export SLURM_EFA_CONF=$tmp/efa.conf
echo "Snapshot=$tmp/snapshot.json" >"$SLURM_EFA_CONF"
# fakerest authenticates as slurmrestd does: every request carries a JWT.
printf 'SLURM_JWT=header.payload.signature\n' >"$tmp/jwt"
chmod 600 "$tmp/jwt"
auth=(--user alice --token-file "$tmp/jwt")

start_fake() {	# start_fake MODE -> $port
	start_server "$tmp/$1.port" "$fake" "$1" 60
}

start_fake hang
hang_pid=$server_pid
timed "$efa" zones "${auth[@]}" --url "http://127.0.0.1:$port" --timeout 1000
is "$rc" 1 "a server that never answers: exit 1"
like "$out" "no complete answer from slurmrestd at http://127\.0\.0\.1:$port .* within 1000 ms" "  a timeout, named"
ok $((ms > 4000)) "  within the limit (${ms} ms)"

start_fake garbage
run "$efa" zones "${auth[@]}" --url "http://127.0.0.1:$port"
is "$rc" 1 "a server that answers garbage: exit 1"
like "$out" "is not JSON .*is the URL a slurmrestd\?" "  a parse error that says what to check"

start_fake huge
timed "$efa" zones "${auth[@]}" --url "http://127.0.0.1:$port" --timeout 20000
is "$rc" 1 "a server that answers without end: exit 1"
like "$out" "larger than 67108864 bytes" "  stopped at the size cap"

start_fake status500
run "$efa" zones "${auth[@]}" --url "http://127.0.0.1:$port"
like "$out" "answered HTTP 500" "an HTTP 500 is reported as such"

bg_kill "$hang_pid"
wait "$hang_pid" 2>/dev/null || true
start_port=$(cat "$tmp/hang.port")
timed "$efa" zones "${auth[@]}" --url "http://127.0.0.1:$start_port" --timeout 3000
is "$rc" 1 "nothing listening: exit 1"
like "$out" "cannot connect to slurmrestd at http://127\.0\.0\.1:$start_port .*is it running" "  a connection error"
ok $((ms > 3000)) "  at once (${ms} ms)"

# https: the certificate is always verified; RestCAFile= names the CA.
if openssl req -x509 -newkey rsa:2048 -nodes -keyout "$tmp/key.pem" -out "$tmp/cert.pem" \
	-days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1; then
	openssl s_server -accept 127.0.0.1:0 -cert "$tmp/cert.pem" -key "$tmp/key.pem" -www \
		>"$tmp/tls.out" 2>&1 </dev/null &
	bg_track $!
	for _ in $(seq 50); do grep -q '^ACCEPT' "$tmp/tls.out" && break; sleep 0.1; done
	tls_url=https://127.0.0.1:$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$tmp/tls.out")
	run "$efa" zones --url "$tls_url"
	is "$rc" 1 "https to a server whose certificate the system does not trust: exit 1"
	like "$out" "has a certificate that cannot be verified .*RestCAFile=" "  saying what to set"
	printf '%s\n' "Snapshot=$tmp/snapshot.json" "RestCAFile=$tmp/cert.pem" >"$tmp/tls.conf"
	run "$efa" zones --config "$tmp/tls.conf" --url "$tls_url"
	like "$out" "is not JSON" "  with RestCAFile= naming its CA, the TLS handshake passes (the server is no slurmrestd)"
	printf '%s\n' "Snapshot=$tmp/snapshot.json" "RestCAFile=$tmp/efa.conf" >"$tmp/tls.conf"
	run "$efa" zones --config "$tmp/tls.conf" --url "$tls_url"
	like "$out" "cannot use the CA file $tmp/efa.conf .*PEM" "  a RestCAFile= that holds no certificate is named"
else
	ok 1 "openssl makes a test certificate (scripts/install-deps installs openssl)"
fi

run "$efa" zones --url "ftp://x"
is "$rc" 2 "a bad URL: a usage error (exit 2)"
like "$out" "use unix:/path/to/socket, http://host:port or https://host:port" "  with the forms that work"

printf 'secret-token-value\n' >"$tmp/token"
chmod 644 "$tmp/token"
run "$efa" zones --url "http://127.0.0.1:1" --user alice --token-file "$tmp/token"
like "$out" "readable by others \(mode 0644\): chmod 600" "a token file others can read is refused"
unlike "$out" "secret-token-value" "  and the token is not printed"

run "$efa" sync --once --url "http://127.0.0.1:$start_port" --timeout 1000
is "$rc" 1 "sync --once without slurmrestd: exit 1"
ok "$([ ! -e "$tmp/snapshot.json" ]; echo $?)" "  and no snapshot is invented"

# The token goes out in one form: slurmrestd (23.02 and later) refuses a
# request with both X-SLURM-USER-TOKEN and "Authorization: Bearer", and so
# does fakerest, serving answers recorded from Slurm 26.05's slurmrestd.
fixtures=$top_builddir/test/fixtures/rest
start_server "$tmp/serve.port" "$fake" serve 60 "$fixtures/26.05"
served26=$port
run "$efa" zones --json "${auth[@]}" --url "http://127.0.0.1:$port"
is "$rc" 0 "zones over JWT against a strict server of v0.0.42 to v0.0.45: exit 0"
like "$out" '"zone": "us-west-2b"' "  the zones of the server's nodes"
run "$efa" zones --url "http://127.0.0.1:$port"
is "$rc" 1 "no token: exit 1"
like "$out" "refused the credentials \(HTTP 401\) .*it needs a JWT: set RestUser= and RestTokenFile=" \
	"  the refusal is named, with what to set"

# Version choice: the newest both speak, or the pinned one if served.
snap=$tmp/versions.json
run "$efa" sync --once "${auth[@]}" --url "http://127.0.0.1:$served26" --snapshot "$snap"
is "$(jq -r .api_version "$snap" 2>/dev/null)" v0.0.45 "26.05's answers: sync negotiates v0.0.45"
for v in v0.0.44 v0.0.43 v0.0.42; do
	run "$efa" sync --once "${auth[@]}" --url "http://127.0.0.1:$served26" --snapshot "$snap" --api-version "$v"
	is "$rc:$(jq -r '"\(.api_version) \(.nodes | length)"' "$snap" 2>/dev/null)" "0:$v 4" "  --api-version $v is used"
done
printf '%s\n' "Snapshot=$tmp/pinned.json" "RestAPIVersion=v0.0.43" >"$tmp/pinned.conf"
run "$efa" sync --once --config "$tmp/pinned.conf" "${auth[@]}" --url "http://127.0.0.1:$served26"
is "$(jq -r .api_version "$tmp/pinned.json" 2>/dev/null)" v0.0.43 "  RestAPIVersion= in efa.conf pins too"
run "$efa" sync --once --config "$tmp/pinned.conf" "${auth[@]}" --url "http://127.0.0.1:$served26" \
	--snapshot "$tmp/pinned2.json" --api-version v0.0.44
is "$(jq -r .api_version "$tmp/pinned2.json" 2>/dev/null)" v0.0.44 "  --api-version overrides it"

rm -f "$snap"
run "$efa" sync --once "${auth[@]}" --url "http://127.0.0.1:$served26" --snapshot "$snap" --api-version v0.0.38
is "$rc" 1 "a pinned version the server does not serve: exit 1"
like "$out" "does not serve the pinned API version v0\.0\.38: it serves v0\.0\.45, v0\.0\.44, v0\.0\.43, v0\.0\.42; libslurmrest speaks v0\.0\.38 to v0\.0\.45" \
	"  naming what the server serves and what slurm-efa speaks"
ok "$([ ! -e "$snap" ]; echo $?)" "  and writing nothing"
printf '#!/bin/sh\ntrue\n' >"$tmp/job.sh"
run "$efa" submit "${auth[@]}" --url "http://127.0.0.1:$served26" --api-version v0.0.40 "$tmp/job.sh"
like "$out" "job refused: .*does not serve the pinned API version v0\.0\.40" "  submit says the same"
run "$efa" zones "${auth[@]}" --url "http://127.0.0.1:$served26" --api-version v0.0.99
is "$rc" 2 "a version slurm-efa does not speak: a usage error (exit 2)"
like "$out" "v0\.0\.99 is not one libslurmrest speaks \(v0\.0\.38 to v0\.0\.45\)" "  saying which it speaks"
printf '%s\n' "RestAPIVersion=0.0.45" >"$tmp/badpin.conf"
run "$efa" zones --config "$tmp/badpin.conf" "${auth[@]}" --url "http://127.0.0.1:$served26"
like "$out" "badpin.conf:1: invalid RestAPIVersion=0\.0\.45: use a slurmrestd OpenAPI version, e.g. v0\.0\.45" \
	"  RestAPIVersion= of another form is refused with file and line"

start_server "$tmp/serve22.port" "$fake" serve 60 "$fixtures/22.05"
served22=$port
run "$efa" sync --once "${auth[@]}" --url "http://127.0.0.1:$port" --snapshot "$snap"
is "$(jq -r '"\(.api_version) \(.nodes | length)"' "$snap" 2>/dev/null)" "v0.0.38 4" "22.05's answers: v0.0.38"

# A slurmrestd newer than slurm-efa (26.11 and on drop v0.0.42).
mkdir -p "$tmp/future/v0.0.46" "$tmp/future/v0.0.47"
cp "$fixtures/26.05/v0.0.45/"*.json "$tmp/future/v0.0.46/"
rm -f "$snap"
start_server "$tmp/future.port" "$fake" serve 60 "$tmp/future"
run "$efa" sync --once "${auth[@]}" --url "http://127.0.0.1:$port" --snapshot "$snap"
is "$rc" 1 "a server with no version in common: exit 1"
like "$out" "serves v0\.0\.47, v0\.0\.46; libslurmrest speaks v0\.0\.38 to v0\.0\.45: no version in common" \
	"  naming both sides"
ok "$([ ! -e "$snap" ]; echo $?)" "  and writing nothing"

# topology.yaml is read from Slurm 25.05 on: the format follows the file's
# name, else the Slurm sync sees.
printf '%s\n' "Snapshot=$tmp/topo.json" "Topology=tree" "TopologyFile=$tmp/topology.yaml" >"$tmp/yaml.conf"
run "$efa" sync --once --config "$tmp/yaml.conf" "${auth[@]}" --url "http://127.0.0.1:$served22"
like "$out" "topology: Slurm 22\.05\.[0-9]+ reads no topology\.yaml \(25\.05 and later do\): set TopologyFormat=conf and point TopologyFile= at topology\.conf" \
	"TopologyFile=...topology.yaml for Slurm 22.05: said, with what to do"
ok "$([ ! -e "$tmp/topology.yaml" ]; echo $?)" "  and not written"
printf '%s\n' "Snapshot=$tmp/topo.json" "Topology=block" "TopologyFile=$tmp/topology" >"$tmp/auto.conf"
run "$efa" sync --once --config "$tmp/auto.conf" "${auth[@]}" --url "http://127.0.0.1:$served26"
is "$(grep -c '^- topology: ' "$tmp/topology" 2>&1)" 2 "a TopologyFile= named neither .yaml nor .conf, Slurm 26.05: topology.yaml"
like "$out" "as topology\.yaml \(topologies tree and block, block the default\)" "  Topology=block the default"
rm -f "$tmp/topology"
run "$efa" sync --once --config "$tmp/auto.conf" "${auth[@]}" --url "http://127.0.0.1:$served22"
like "$(cat "$tmp/topology" 2>&1)" "^BlockSizes=" "  Slurm 22.05: topology.conf"

# A loaded slurmrestd may drop a connection: a GET, which changes nothing,
# is sent again; a submission never is.
export FAKEREST_LOG=$tmp/flaky.log
start_server "$tmp/flaky.port" "$fake" flaky 60 "$fixtures/26.05"
run "$efa" sync --once "${auth[@]}" --url "http://127.0.0.1:$port" --snapshot "$tmp/flaky.json"
is "$rc:$(jq -r '.nodes | length' "$tmp/flaky.json" 2>/dev/null)" 0:4 \
	"a server that drops each request's first connection: sync --once still succeeds"
is "$(grep -c '^GET /slurm/v0\.0\.45/nodes' "$tmp/flaky.log")" 2 "  asking for the nodes a second time"
run "$efa" submit "${auth[@]}" --url "http://127.0.0.1:$port" "$tmp/job.sh"
is "$rc" 1 "  a submission whose connection drops: exit 1"
like "$out" "job refused: .*POST /slurm/v0\.0\.45/job/submit\): Server returned nothing" "  with the transport error"
is "$(grep -c '^POST ' "$tmp/flaky.log")" 1 "  and it was sent once, not again"

: >"$FAKEREST_LOG"
start_server "$tmp/busy.port" "$fake" busy 60 "$fixtures/26.05"
timed "$efa" zones --json "${auth[@]}" --url "http://127.0.0.1:$port"
is "$rc" 0 "a server that answers 503 (Retry-After: 1) once per request: zones succeeds"
ok $((ms < 1000)) "  after waiting the Retry-After it asked for (${ms} ms)"

start_server "$tmp/drop.port" "$fake" drop 60
run "$efa" zones "${auth[@]}" --url "http://127.0.0.1:$port"
is "$rc" 1 "a server that drops every connection: exit 1"
like "$out" "Server returned nothing .*; tried 3 times" "  after three tries, said"
unset FAKEREST_LOG

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
