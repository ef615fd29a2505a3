#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-efa check: whether a checkpoint directory is allowed and why, and
# the directory a job gets without one (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

conf=$tmp/efa.conf
cat >"$conf" <<EOC
PartitionName=gpu CheckpointRoot=/fsx/checkpoints/ CheckpointKeep=5
PartitionName=dev CheckpointRoot=/scratch CheckpointFS=any
PartitionName=cpu EFA=off
EOC
check() {
	run "$efa" check --config "$conf" "$@"
}

check --checkpoint-dir /fsx/checkpoints/alice/../alice//run1/ --partition gpu
is "$rc" 0 "a path under the partition's root is allowed (exit 0)"
is "$out" "allowed: /fsx/checkpoints/alice/run1
  root: /fsx/checkpoints
  why: it is under partition gpu's checkpoint root /fsx/checkpoints" "  shown normalized, with the root and why"

check --checkpoint-dir=/fsx/checkpoints/../../etc --partition=gpu
is "$rc" 1 "a path that climbs out of the root is refused (exit 1)"
like "$out" "^refused: /etc$" "  shown normalized"
like "$out" "why: /fsx/checkpoints/\.\./\.\./etc \(/etc once normalized\) is outside the checkpoint root /fsx/checkpoints: use a directory under /fsx/checkpoints" \
	"  naming the allowed root"

check --checkpoint-dir /fsx/checkpoints2/alice --partition gpu
is "$rc" 1 "a sibling of the root with the same prefix is refused"

check --checkpoint-dir run1 --partition gpu
is "$rc" 1 "a relative path is refused"
like "$out" "why: invalid --checkpoint-dir value 'run1': 'run1' is not an absolute path" "  as sbatch would say"

check --checkpoint-dir /home/alice/run1 --partition cpu
is "$rc" 0 "a partition without CheckpointRoot= allows any absolute path"
like "$out" "why: partition cpu has no CheckpointRoot= in efa.conf" "  and says so"

check --checkpoint-dir /home/alice/run1
is "$rc" 0 "without --partition only the path itself is checked"
like "$out" "restrict it to their root \(give --partition\): gpu=/fsx/checkpoints/, dev=/scratch$" \
	"  listing the partitions that have a root"

check --partition gpu --job-name train --user alice
is "$rc" 0 "the default directory of a job (exit 0)"
like "$out" "^default: /fsx/checkpoints/alice/train$" "  is <root>/<user>/<job name>"
check --partition gpu --job-name 'a/b' --user alice --job-id 42
like "$out" "^default: /fsx/checkpoints/alice/42$" "a job name that cannot be a directory gives <root>/<user>/<job id>"
like "$out" "the job name 'a/b' cannot be a directory name" "  and says why"
check --partition gpu --job-name '..' --user alice
like "$out" "^default: /fsx/checkpoints/alice/<job id>$" "  without --job-id the id is left as a placeholder"
check --partition gpu --job-name train
like "$out" "^default: /fsx/checkpoints/$(id -un)/train$" "--user defaults to the caller"
check --partition gpu --job-name sweep --user alice --array-task 3
like "$out" "^default: /fsx/checkpoints/alice/sweep_3$" "a task of a job array: <root>/<user>/<job name>_<task>"
like "$out" "each task of an array has its own" "  and says why"
check --partition gpu --job-name sweep --user alice --array-task 3x
is "$rc" 2 "  a bad --array-task exits 2"
check --partition cpu --job-name train
is "$rc" 0 "a partition without a root gives no default"
like "$out" "^none: \(no checkpoint directory\)$" "  and says so"

check --json --checkpoint-dir /scratch/x/ --partition dev
is "$(jq -r '.verdict, .path, .given, .partition, .root' <<<"$out" | tr '\n' ' ')" \
	"allowed /scratch/x /scratch/x/ dev /scratch " "--json: verdict, path, what was given, partition, root"
check --json --checkpoint-dir /etc --partition dev
is "$rc:$(jq -r .verdict <<<"$out")" "1:refused" "--json: a refusal exits 1"

check
is "$rc" 2 "nothing to check is a usage error (exit 2)"
like "$out" "give --checkpoint-dir, or --partition and --job-name" "  saying what to give"
check --partition gpu
is "$rc" 2 "a default without --job-name is a usage error"
check --checkpoint-dir
is "$rc" 2 "an option without its value is a usage error"
check --bogus
is "$rc" 2 "an unknown option is a usage error"
like "$out" "bad or incomplete option '--bogus'" "  naming it"
check --checkpoint-dir /x extra
is "$rc" 2 "an extra argument is a usage error"
check --partition gpu --job-name train --job-id abc
is "$rc" 2 "a bad --job-id is a usage error"
echo "PartitionName=gpu CheckpointKeep=many" >"$tmp/bad.conf"
run "$efa" check --config "$tmp/bad.conf" --checkpoint-dir /x
is "$rc" 2 "a bad efa.conf exits 2"
like "$out" "bad.conf:1: invalid CheckpointKeep=many" "  naming file and line"

# The checkpoints already in an allowed directory, newest first, each
# complete or not by its framework's end-of-save mark.
ck=$tmp/ckroot/alice/run1
mkdir -p "$ck/checkpoint-100" "$ck/checkpoint-200" "$ck/step_3"
: >"$ck/checkpoint-100/training_args.bin"
: >"$ck/checkpoint-100/trainer_state.json"
: >"$ck/checkpoint-200/training_args.bin"
: >"$ck/checkpoint-200.log"
touch -d @1000 "$ck/checkpoint-100"
touch -d @2000 "$ck/checkpoint-200"
touch -d @500 "$ck/step_3"
echo "PartitionName=gpu CheckpointRoot=$tmp/ckroot" >"$tmp/ck.conf"
run "$efa" check --config "$tmp/ck.conf" --checkpoint-dir "$ck" --partition gpu
is "$(grep '^  checkpoint:' <<<"$out")" "  checkpoint: checkpoint-200 incomplete (the Hugging Face Trainer's training_args.bin without the trainer_state.json it writes last)
  checkpoint: checkpoint-100 complete (trainer_state.json, which the Hugging Face Trainer writes last, is in it)
  checkpoint: step_3 unknown (no framework's end-of-save mark in it)" \
	"--checkpoint-dir lists the checkpoints in it, newest first, complete or not and why"
run "$efa" check --json --config "$tmp/ck.conf" --checkpoint-dir "$ck" --partition gpu
is "$(jq -r '[.checkpoints[] | .name + "=" + .state] | join(" ")' <<<"$out")" \
	"checkpoint-200=incomplete checkpoint-100=complete step_3=unknown" "  --json says the same"

# --node: a health check of this node's EFA devices against its profile's
# EFADevices= (the shipped profiles).
nconf=$tmp/node.conf
echo "ProfileDir=$top_srcdir/etc/profiles" >"$nconf"
run "$efa" check --node --config "$nconf" --root "$fixtures/p4d-3nics"
is "$rc" 1 "check --node on a p4d showing 3 of its 4 EFA devices exits 1"
is "$out" "unhealthy: this node has 3 of the 4 EFA devices a p4d.24xlarge has (1 missing: PCI 0000:a0:1b.0 without the efa driver)" \
	"  naming how many are expected and which is missing"
run "$efa" check --node --json --config "$nconf" --root "$fixtures/p4d-3nics"
is "$(jq -r '[.expected_efa_devices, .efa_devices, .healthy] | join(" ")' <<<"$out")" "4 3 false" "  --json says the same"
# A port that went down under a running node: the device is there, it
# carries nothing.
cp -a "$fixtures/p4d.24xlarge" "$tmp/p4d-down"
down=$(ls "$tmp/p4d-down/sys/class/infiniband" | sed -n 2p)
chmod u+w "$tmp/p4d-down/sys/class/infiniband/$down/ports/1/state" 2>/dev/null || true
echo "1: DOWN" >"$tmp/p4d-down/sys/class/infiniband/$down/ports/1/state"
run "$efa" check --node --config "$nconf" --root "$tmp/p4d-down"
is "$rc" 1 "check --node on a p4d with an EFA port down exits 1"
is "$out" "unhealthy: EFA device $down: port 1 is 1: DOWN, not ACTIVE" \
	"  naming the device and the port's state"
run "$efa" check --node --json --config "$nconf" --root "$tmp/p4d-down"
is "$(jq -r '[.efa_devices, .healthy, .problem] | join(" ")' <<<"$out")" \
	"4 false EFA device $down: port 1 is 1: DOWN, not ACTIVE" "  --json says the same"
while read -r fixture want; do
	run "$efa" check --node --config "$nconf" --root "$fixtures/$fixture"
	is "$rc $(cut -d' ' -f1-2 <<<"$out")" "0 healthy: $want" "check --node on $fixture: healthy, exit 0"
done <<'EOT'
p4d.24xlarge 4
p5.48xlarge 32
p5en.48xlarge 16
p5-pod 32
trn2.48xlarge 16
cpu-only 0
EOT

# --node: a checkpoint file system that stops answering (test/standins/hangfs:
# while its gate file exists, every request waits) fails the check after
# CheckpointTimeout=; one that answers, or a root that is not there, does not.
hangfs=$top_builddir/test/standins/hangfs
if [ -x "$hangfs" ] && [ "$(id -u)" = 0 ] && [ -c /dev/fuse ] && command -v fusermount3 >/dev/null; then
	mkdir -p "$tmp/fsx"
	"$hangfs" "$tmp/fsx" "$tmp/hang.gate" 2>/dev/null &
	hang_pid=$!
	bg_track "$hang_pid"
	for _ in $(seq 50); do [ -d "$tmp/fsx/ckpt" ] && break; sleep 0.1; done
	cat >"$tmp/fs.conf" <<EOC
ProfileDir=$top_srcdir/etc/profiles
CheckpointTimeout=1
PartitionName=gpu CheckpointRoot=$tmp/fsx/ckpt CheckpointFS=any
PartitionName=big CheckpointRoot=$tmp/fsx/ckpt CheckpointFS=any
PartitionName=gone CheckpointRoot=$tmp/no/such/root
PartitionName=cpu EFA=off
EOC
	run "$efa" check --node --config "$tmp/fs.conf" --root "$fixtures/p4d.24xlarge"
	is "$rc $out" "0 healthy: 4 EFA devices, as profile p4d expects of p4d.24xlarge" \
		"check --node: a checkpoint file system that answers, and a root that is not there, are healthy"
	touch "$tmp/hang.gate"
	t0=$SECONDS
	run "$efa" check --node --config "$tmp/fs.conf" --root "$fixtures/p4d.24xlarge"
	is "$rc" 1 "check --node: a checkpoint file system that hangs exits 1"
	is "$out" "unhealthy: checkpoint file system $tmp/fsx/ckpt (CheckpointRoot= of partition gpu) did not answer within 1 s (CheckpointTimeout=)" \
		"  naming the root, its partition and the limit (once for the two partitions that share it)"
	ok $((SECONDS - t0 > 5)) "  bounded: it took $((SECONDS - t0)) s (1 s, and 2 s at most to reap its child)"
	run "$efa" check --node --partition cpu --config "$tmp/fs.conf" --root "$fixtures/p4d.24xlarge"
	is "$rc" 0 "  --partition cpu, whose jobs save nowhere: healthy"
	run "$efa" check --node --json --partition big --config "$tmp/fs.conf" --root "$fixtures/p4d.24xlarge"
	is "$(jq -r '[.healthy, .problem] | join(" ")' <<<"$out")" \
		"false checkpoint file system $tmp/fsx/ckpt (CheckpointRoot= of partition big) did not answer within 1 s (CheckpointTimeout=)" \
		"  --partition big --json: its root, in the JSON"
	rm -f "$tmp/hang.gate"
	fusermount3 -u "$tmp/fsx" 2>/dev/null || umount -l "$tmp/fsx" 2>/dev/null || true
	# (Unmounted, it ends on its own: its pid may be another's by now.)
	bg_kill "$hang_pid" || true
	wait "$hang_pid" 2>/dev/null || true
else
	tap_n=$((tap_n + 1))
	echo "ok $tap_n # SKIP check --node with a hung file system: needs root, /dev/fuse, fusermount3 and test/standins/hangfs"
fi

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
