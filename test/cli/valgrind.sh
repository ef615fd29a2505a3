#!/bin/bash
# slurm-efa and libslurmrest under valgrind memcheck: no invalid access and
# no definite or indirect leak on the fixtures and against broken servers
# (TAP). "Still reachable" memory of libcurl and OpenSSL's one-time set-up
# is not a leak and is not counted.
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# shellcheck source=../lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"

if ! command -v valgrind >/dev/null; then
	echo "1..0 # SKIP valgrind not installed (scripts/install-deps installs it)"
	exit 0
fi
tmp=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT
export SLURM_EFA_CONF=$tmp/efa.conf
printf '%s\n' "ProfileDir=$top_srcdir/etc/profiles" "Snapshot=$tmp/snapshot.json" \
	"PartitionName=gpu CheckpointRoot=/fsx/ckpt" >"$SLURM_EFA_CONF"
fixtures=$top_builddir/test/fixtures

memcheck() {	# memcheck DESCRIPTION ARGS...: runs slurm-efa ARGS under valgrind
	local desc=$1; shift
	set +e
	"$top_builddir/libtool" --mode=execute valgrind --quiet --error-exitcode=99 \
		--leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect "$top_builddir/slurm-efa" "$@" \
		>"$tmp/out" 2>"$tmp/valgrind"
	rc=$?
	set -e
	# 0, 1 and 2 are slurm-efa's own answers; 99 is valgrind's verdict.
	if [ "$rc" -le 2 ]; then
		ok 0 "$desc: clean under memcheck (exit $rc)"
	else
		ok 1 "$desc: clean under memcheck (exit $rc)"
		sed 's/^/# /' "$tmp/valgrind" | head -n 40
	fi
}

memcheck "env on a p5" env --root "$fixtures/p5.48xlarge"
memcheck "env --json on a trn1" env --json --root "$fixtures/trn1.32xlarge"
memcheck "env on a node without EFA" env --root "$fixtures/cpu-only"
memcheck "topo --json on a p5" topo --json --root "$fixtures/p5.48xlarge"
memcheck "check a checkpoint path" check --checkpoint-dir /fsx/ckpt/../x --partition gpu
memcheck "a bad option" env --root
memcheck "zones without slurmrestd" zones --url "unix:$tmp/none.sock"
memcheck "sync --once without slurmrestd" sync --once --url "unix:$tmp/none.sock"
"$top_builddir/test/rest/fakerest" garbage 60 >"$tmp/port" &
pids+=($!)
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
memcheck "zones against garbage" zones --url "http://127.0.0.1:$(cat "$tmp/port")"
printf '#!/bin/bash\ntrue\n' >"$tmp/job.sh"
memcheck "submit against garbage" submit --efa -N2 --url "http://127.0.0.1:$(cat "$tmp/port")" "$tmp/job.sh"
memcheck "submit with a bad option value" submit --efa=maybe "$tmp/job.sh"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
