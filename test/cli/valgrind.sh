#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-efa and libslurmrest under valgrind memcheck: no invalid access and
# no definite or indirect leak on the fixtures and against broken servers
# (TAP). The memcheck helper (test/lib/memcheck.sh) says what clean means;
# test/integration/t_memcheck.sh does the same against the real slurmrestd.
set -euo pipefail
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
top_builddir=${top_builddir:-$top_srcdir}
# shellcheck source=../lib/tap.sh
. "$top_srcdir/test/lib/tap.sh"
# shellcheck source=../lib/memcheck.sh
. "$top_srcdir/test/lib/memcheck.sh"

if ! command -v valgrind >/dev/null; then
	echo "1..0 # SKIP valgrind not installed (scripts/install-deps installs it)"
	exit 0
fi
tmp=$(mktemp -d)
trap 'bg_kill_all; rm -rf "$tmp"' EXIT
export SLURM_EFA_CONF=$tmp/efa.conf
printf '%s\n' "ProfileDir=$top_srcdir/etc/profiles" "Snapshot=$tmp/snapshot.json" \
	"PartitionName=gpu CheckpointRoot=/fsx/ckpt" >"$SLURM_EFA_CONF"
fixtures=$top_builddir/test/fixtures
efa=$top_builddir/slurm-efa

memcheck "env on a p5" "$efa" env --root "$fixtures/p5.48xlarge"
memcheck "env --json on a trn1" "$efa" env --json --root "$fixtures/trn1.32xlarge"
memcheck "env on a node without EFA" "$efa" env --root "$fixtures/cpu-only"
memcheck "env on a node that needs repair" "$efa" env --json --root "$fixtures/p4d-3nics"
memcheck "env --image, an image directory with p4d's stack, on a p5" "$efa" env --root "$fixtures/p5.48xlarge" \
	--image "$fixtures/p4d.24xlarge"
memcheck "topo --json on a p5" "$efa" topo --json --root "$fixtures/p5.48xlarge"
memcheck "check a checkpoint path" "$efa" check --checkpoint-dir /fsx/ckpt/../x --partition gpu
memcheck "a bad option" "$efa" env --root
memcheck "zones without slurmrestd" "$efa" zones --url "unix:$tmp/none.sock"
memcheck "sync --once without slurmrestd" "$efa" sync --once --url "unix:$tmp/none.sock"
"$top_builddir/test/standins/fakerest" garbage 60 >"$tmp/port" &
bg_track $!
for _ in $(seq 50); do [ -s "$tmp/port" ] && break; sleep 0.1; done
memcheck "zones against garbage" "$efa" zones --url "http://127.0.0.1:$(cat "$tmp/port")"
printf '#!/bin/bash\ntrue\n' >"$tmp/job.sh"
memcheck "submit against garbage" "$efa" submit --efa -N2 --url "http://127.0.0.1:$(cat "$tmp/port")" "$tmp/job.sh"
memcheck "submit with a bad option value" "$efa" submit --efa=maybe "$tmp/job.sh"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
