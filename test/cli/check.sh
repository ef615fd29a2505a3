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
# complete or not by its framework's end-of-save mark; where a resumed
# job starts, and with --keep what retention would delete.
ck=$tmp/ckroot/alice/run1
mkdir -p "$ck/checkpoint-100" "$ck/checkpoint-200" "$ck/checkpoint-50" "$ck/step_3" \
	"$ck/global_step7" "$ck/llama--val_loss=1.95-step=199"
: >"$ck/checkpoint-100/training_args.bin"
printf '{\n  "global_step": 100\n}\n' >"$ck/checkpoint-100/trainer_state.json"
printf '{\n  "global_step": 50\n}\n' >"$ck/checkpoint-50/trainer_state.json"
# A partial save: the model begun, trainer_state.json never written.
: >"$ck/checkpoint-200/config.json"
head -c 1000 /dev/zero >"$ck/checkpoint-200/model.safetensors"
: >"$ck/checkpoint-200.log"
touch -d @1000 "$ck/checkpoint-100"
touch -d @500 "$ck/checkpoint-50"
touch -d @2000 "$ck/checkpoint-200"
touch -d @450 "$ck/step_3"
touch -d @400 "$ck/global_step7"
touch -d @300 "$ck/llama--val_loss=1.95-step=199"
echo "PartitionName=gpu CheckpointRoot=$tmp/ckroot" >"$tmp/ck.conf"
run "$efa" check --config "$tmp/ck.conf" --checkpoint-dir "$ck" --partition gpu
is "$(grep '^  checkpoint:' <<<"$out")" "  checkpoint: checkpoint-200 incomplete (a Hugging Face Trainer checkpoint without the trainer_state.json it writes last)
  checkpoint: checkpoint-100 complete (trainer_state.json, which the Hugging Face Trainer writes last, is in it whole)
  checkpoint: checkpoint-50 complete (trainer_state.json, which the Hugging Face Trainer writes last, is in it whole)
  checkpoint: step_3 unknown (no framework's end-of-save mark in it)
  checkpoint: global_step7 unknown (a DeepSpeed tag that no readable latest orders)
  checkpoint: llama--val_loss=1.95-step=199 complete (named as NeMo names them, and NeMo's -unfinished marker is not beside it)" \
	"--checkpoint-dir lists the checkpoints in it, newest first, complete or not and why"
like "$out" "  resume: checkpoint-100$" "  the newest complete one is where a resumed job starts, not the newer partial save"
run "$efa" check --json --config "$tmp/ck.conf" --checkpoint-dir "$ck" --partition gpu
is "$(jq -r '[.checkpoints[] | .name + "=" + .state] | join(" ")' <<<"$out")" \
	"checkpoint-200=incomplete checkpoint-100=complete checkpoint-50=complete step_3=unknown global_step7=unknown llama--val_loss=1.95-step=199=complete" \
	"  --json says the same"
is "$(jq -r '.resume' <<<"$out")" "checkpoint-100" "  with \"resume\""
is "$(jq -r '[.checkpoints[] | has("retention")] | any' <<<"$out")" "false" "  and no \"retention\" without --keep"
run "$efa" check --json --config "$tmp/ck.conf" --checkpoint-dir "$ck" --keep=1
is "$(jq -r '[.checkpoints[] | .name + "=" + .retention] | join(" ")' <<<"$out")" \
	"checkpoint-200=keep checkpoint-100=keep checkpoint-50=delete step_3=keep global_step7=keep llama--val_loss=1.95-step=199=delete" \
	"--keep 1: the newest complete one and the partial save are kept, older complete ones go, unknown ones stay"
run "$efa" check --config "$tmp/ck.conf" --checkpoint-dir "$ck" --keep 2
like "$out" "llama--val_loss=1.95-step=199 complete .*: retention would delete" \
	"--keep 2 (as --keep=2): said in the text too"
like "$out" "checkpoint-50 complete .*: retention would keep" "  and what stays"
echo "PartitionName=gpu CheckpointRoot=$tmp/ckroot CheckpointKeep=1" >"$tmp/ck1.conf"
run "$efa" check --json --config "$tmp/ck1.conf" --checkpoint-dir "$ck" --partition gpu
is "$(jq -r '.keep, ([.checkpoints[] | select(.retention == "delete") | .name] | join(" "))' <<<"$out")" \
	"1
checkpoint-50 llama--val_loss=1.95-step=199" "without --keep, the partition's CheckpointKeep= decides"
run "$efa" check --config "$tmp/ck.conf" --checkpoint-dir "$ck" --keep many
is "$rc" 2 "--keep that is not a number exits 2"
like "$out" "--keep: " "  saying so"
# DeepSpeed's latest orders its tags; a tracker cut off while rewritten
# (empty) orders nothing, and nothing is deleted then.
printf 'global_step7' >"$ck/latest"
mkdir "$ck/global_step9"
run "$efa" check --json --config "$tmp/ck.conf" --checkpoint-dir "$ck" --keep 1
is "$(jq -r '[.checkpoints[] | select(.name | startswith("global")) | .name + "=" + .state] | join(" ")' <<<"$out")" \
	"global_step9=incomplete global_step7=complete" "DeepSpeed: the tag latest names is complete, a later one is not"
: >"$ck/latest"
run "$efa" check --json --config "$tmp/ck.conf" --checkpoint-dir "$ck" --keep 1
is "$(jq -r '[.checkpoints[] | select(.name | startswith("global")) | .name + "=" + .state + "=" + .retention] | join(" ")' <<<"$out")" \
	"global_step9=unknown=keep global_step7=unknown=keep" "  an empty latest (cut off): both unknown, both kept"
# Bad input: a link as the directory, links and unreadable entries in it.
ln -s "$ck" "$tmp/ckroot/alice/link"
run "$efa" check --json --config "$tmp/ck.conf" --checkpoint-dir "$tmp/ckroot/alice/link" --keep 1
is "$(jq -r '.resume, (.checkpoints | length)' <<<"$out")" "null
0" "a checkpoint directory that is a link is not followed"
ln -s "$ck/checkpoint-100" "$ck/checkpoint-900"
mkdir "$ck/checkpoint-800" && chmod 000 "$ck/checkpoint-800"
run "$efa" check --json --config "$tmp/ck.conf" --checkpoint-dir "$ck" --keep 1
is "$(jq -r '.resume, ([.checkpoints[].name] | index("checkpoint-900"))' <<<"$out")" "checkpoint-100
null" "a link named like a checkpoint is neither listed nor resumed from"
chmod 700 "$ck/checkpoint-800"
rm -rf "$ck/checkpoint-800" "$ck/checkpoint-900"

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
# Without --config and --root, as slurmd runs the health check: the
# efa.conf and root= of spank_efa.so's own plugstack line, found through
# slurm.conf (SLURM_CONF here; the build's default or slurmd's configless
# cache under slurmd) and its PlugStackConfig=, %n as the node's name.
mkdir -p "$tmp/slurm/plugstack.conf.d"
printf 'ClusterName=c\nPlugStackConfig=%s\n' "$tmp/slurm/plugstack.conf" >"$tmp/slurm/slurm.conf"
echo "include $tmp/slurm/plugstack.conf.d/*.conf" >"$tmp/slurm/plugstack.conf"
echo "required /usr/lib/slurm/spank_efa.so config=$nconf root=$fixtures/%n" \
	>"$tmp/slurm/plugstack.conf.d/efa.conf"
run env -u SLURM_EFA_CONF SLURM_CONF="$tmp/slurm/slurm.conf" SLURMD_NODENAME=p4d-3nics "$efa" check --node
is "$rc" 1 "check --node alone reads the node where spank_efa.so's plugstack line says (root=.../%n)"
like "$out" "^unhealthy: this node has 3 of the 4 EFA devices a p4d.24xlarge has" "  with its efa.conf (config=)"
run env -u SLURM_EFA_CONF SLURM_CONF="$tmp/slurm/slurm.conf" SLURMD_NODENAME=p4d.24xlarge "$efa" check --node
is "$rc/$out" "0/healthy: 4 EFA devices, as profile p4d expects of p4d.24xlarge" "  another node's name, its own tree"
: >"$tmp/slurm/plugstack.conf.d/efa.conf"
run env -u SLURM_EFA_CONF SLURM_CONF="$tmp/slurm/slurm.conf" SLURMD_NODENAME=p4d-3nics "$efa" check --node --drain
is "$rc" 2 "a plugstack without spank_efa.so's line: exit 2, nothing judged or drained"
like "$out" "cannot find spank_efa.so's plugstack line: $tmp/slurm/plugstack.conf loads no spank_efa.so .*give --config and --root" \
	"  saying what is missing and what to do"
run env -u SLURM_EFA_CONF SLURM_CONF="$tmp/slurm/none.conf" SLURMD_NODENAME=p4d-3nics "$efa" check --node
is "$rc" 2 "a slurm.conf that cannot be read: exit 2"
like "$out" "cannot read $tmp/slurm/none.conf" "  saying which file"
# A checkpoint directory without --config and SLURM_EFA_CONF (the enroot
# hook): the plugin's efa.conf, through --slurm-conf (Slurm's default
# slurm.conf) when SLURM_CONF is unset; no line: the default efa.conf.
printf 'PartitionName=gpu CheckpointRoot=%s\n' "$tmp/ckroot-plugin" >"$tmp/plugin-efa.conf"
echo "required spank_efa.so config=$tmp/plugin-efa.conf" >"$tmp/slurm/plugstack.conf.d/efa.conf"
run env -u SLURM_EFA_CONF -u SLURM_CONF "$efa" check --slurm-conf "$tmp/slurm/slurm.conf" \
	--checkpoint-dir /elsewhere/x --partition gpu
is "$rc" 1 "check --checkpoint-dir --slurm-conf: judged by the efa.conf spank_efa.so's line names"
like "$out" "$tmp/ckroot-plugin" "  naming that efa.conf's root"
run env -u SLURM_EFA_CONF -u SLURM_CONF "$efa" check --slurm-conf "$tmp/slurm/slurm.conf" \
	--checkpoint-dir "$tmp/ckroot-plugin/alice" --partition gpu
is "$rc" 0 "  a directory under it is allowed"
run env -u SLURM_EFA_CONF SLURM_CONF="$tmp/slurm/slurm.conf" "$efa" check --config "$conf" \
	--checkpoint-dir "$tmp/ckroot-plugin/alice" --partition gpu
unlike "$rc/$out" "^0/" "  --config still wins over the line"
echo "required spank_efa.so root=$fixtures/%n bogus=1" >"$tmp/slurm/plugstack.conf.d/efa.conf"
run env -u SLURM_EFA_CONF SLURM_CONF="$tmp/slurm/slurm.conf" SLURMD_NODENAME=p4d-3nics "$efa" check --node
is "$rc" 2 "a plugstack line with an argument the plugin does not know: exit 2"
like "$out" "efa.conf:1: .*bogus" "  naming the file and line"

# One deadline over the whole check (HealthTimeout=, 50 s by default,
# below the 60 s slurmd gives it): a node still short of a device is
# counted again for EFADevicesWait= only while the deadline allows.
mkdir -p "$tmp/slowprof"
cp "$top_srcdir"/etc/profiles/*.profile "$tmp/slowprof/"
sed -i 's/^EFADevices=p4d.24xlarge:4$/&\nEFADevicesWait=120/' "$tmp/slowprof/p4d.profile"
printf '%s\n' "ProfileDir=$tmp/slowprof" "HealthTimeout=6" >"$tmp/slow.conf"
t0=$SECONDS
run "$efa" check --node --config "$tmp/slow.conf" --root "$fixtures/p4d-3nics"
is "$rc" 1 "EFADevicesWait=120 with HealthTimeout=6: the node still short of a device fails"
ok $((SECONDS - t0 > 12)) "  within the deadline ($((SECONDS - t0)) s), not after the wait's 120 s"
like "$out" "^unhealthy: this node has 3 of the 4 EFA devices" "  naming what it found"
printf "%s\n" "HealthTimeout=3601" >"$tmp/slow.conf"
run "$efa" check --node --config "$tmp/slow.conf" --root "$fixtures/p4d-3nics"
is "$rc" 2 "HealthTimeout= over an hour is refused"
like "$out" "slow.conf:1: invalid HealthTimeout=3601: at most 3600" "  naming file and line"

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
