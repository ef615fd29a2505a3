# SPDX-License-Identifier: Apache-2.0
# Faults and hostile input: slurmrestd dying under sync, a read-only
# snapshot directory, a burst of submissions through the bridge, and
# option values built to hurt.

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
efa=$top_builddir/slurm-efa
hard=$SLURM_EFA_CLUSTER/hardening
mkdir -p "$hard/rest"
chown "$SLURMRESTD_USER" "$hard" "$hard/rest"
as_rest=(runuser -u "$SLURMRESTD_USER" --)

# A slurmrestd of our own, to kill and restart (the cluster's stay up).
sock=$hard/rest/slurmrestd.sock
start_rest() {
	"${as_rest[@]}" env -i PATH="$PATH" SLURM_CONF="$SLURM_CONF" \
		SLURM_EFA_CLUSTER_DAEMON="$SLURM_EFA_CLUSTER" \
		slurmrestd -s "$SLURMRESTD_PLUGIN" -a rest_auth/local "unix:$sock" >>"$hard/slurmrestd.log" 2>&1 &
	rest_pid=$!
	bg_track "$rest_pid"
	for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
}
start_rest
printf '%s\n' "RestURL=unix:$sock" "Snapshot=$hard/snapshot.json" >"$hard/efa.conf"
chmod 644 "$hard/efa.conf"
"${as_rest[@]}" "$efa" sync --interval 1 --config "$hard/efa.conf" 2>"$hard/sync.log" &
sync_pid=$!
bg_track "$sync_pid"
for _ in $(seq 50); do [ -s "$hard/snapshot.json" ] && break; sleep 0.1; done

# A reader checking every 10 ms while slurmrestd dies and comes back.
(
	bad=0
	for _ in $(seq 500); do
		jq -e '.format == 1 and (.nodes | length) == 4' "$hard/snapshot.json" >/dev/null 2>&1 || bad=$((bad + 1))
		sleep 0.01
	done
	echo "$bad" >"$hard/reader.bad"
) &
reader_pid=$!
bg_track "$reader_pid"
sleep 1.5
bg_kill "$rest_pid"
wait "$rest_pid" 2>/dev/null || true
sleep 2.5
start_rest
for _ in $(seq 60); do
	[ "$(grep -c 'wrote' "$hard/sync.log")" -ge 2 ] && break
	sleep 0.5
done
wait "$reader_pid"
is "$(cat "$hard/reader.bad")" 0 "a reader checking every 10 ms never saw a partial or broken snapshot"
like "$(cat "$hard/sync.log")" "cannot connect to slurmrestd.*keeping the last good snapshot" \
	"sync says it keeps the last good snapshot while slurmrestd is down"
ok "$(bg_alive "$sync_pid"; echo $?)" "sync is still running (it needed no restart)"
ok "$([ "$(grep -c 'wrote' "$hard/sync.log")" -ge 2 ]; echo $?)" "  and writes again once slurmrestd is back"

# A snapshot directory sync cannot write: the old file stays, said once a
# minute. The copy to compare with is taken once sync has failed there: a
# write it had under way when the directory turned read-only has landed.
chmod 555 "$hard"
until_up 10 grep -q 'the previous snapshot stays in place' "$hard/sync.log" || true
cp "$hard/snapshot.json" "$hard/before.json"
sleep 3.5
chmod 755 "$hard"
ok "$(cmp -s "$hard/snapshot.json" "$hard/before.json"; echo $?)" \
	"a read-only snapshot directory leaves the previous snapshot in place"
is "$(grep -c 'the previous snapshot stays in place' "$hard/sync.log")" 1 "  and sync says so once, not every second"
chmod 555 "$hard"
run "${as_rest[@]}" "$efa" sync --once --config "$hard/efa.conf"
chmod 755 "$hard"
is "$rc" 1 "  sync --once exits 1 there"
bg_kill "$sync_pid"
wait "$sync_pid" 2>/dev/null || true

# A full disk: a small tmpfs holding the snapshot, filled up behind sync.
full=$hard/full
mkdir -p "$full"
if mount -t tmpfs -o size=64k,mode=0755 tmpfs "$full"; then
	chown "$SLURMRESTD_USER" "$full"
	printf '%s\n' "RestURL=unix:$sock" "Snapshot=$full/snapshot.json" >"$hard/full.conf"
	"${as_rest[@]}" "$efa" sync --interval 1 --config "$hard/full.conf" 2>"$hard/full.log" &
	sync_pid=$!
	bg_track "$sync_pid"
	for _ in $(seq 50); do [ -s "$full/snapshot.json" ] && break; sleep 0.1; done
	dd if=/dev/zero of="$full/filler" bs=4k 2>/dev/null || true
	# Compared from its first failure on, as above.
	until_up 10 grep -q 'No space left on device' "$hard/full.log" || true
	cp "$full/snapshot.json" "$hard/full-before.json"
	sleep 3.5
	ok "$(cmp -s "$full/snapshot.json" "$hard/full-before.json"; echo $?)" \
		"a full disk leaves the previous snapshot in place"
	is "$(grep -c 'No space left on device.*the previous snapshot stays in place' "$hard/full.log")" 1 \
		"  sync says why, once"
	is "$(find "$full" -name '*.tmp.*' | wc -l)" 0 "  and leaves no temporary file behind"
	run "${as_rest[@]}" "$efa" sync --once --config "$hard/full.conf"
	is "$rc" 1 "  sync --once exits 1 there"
	rm -f "$full/filler"
	for _ in $(seq 30); do cmp -s "$full/snapshot.json" "$hard/full-before.json" || break; sleep 0.2; done
	ok "$(cmp -s "$full/snapshot.json" "$hard/full-before.json"; [ $? -eq 1 ]; echo $?)" \
		"  once there is room, sync writes again by itself"
	bg_kill "$sync_pid"
	wait "$sync_pid" 2>/dev/null || true
	umount "$full"
else
	ok 1 "a tmpfs for the full-disk test can be mounted (needs root with CAP_SYS_ADMIN)"
fi
bg_kill "$rest_pid"
wait "$rest_pid" 2>/dev/null || true

# A burst of submissions through the bridge; slurmctld stays responsive.
write_efa_conf "Snapshot=$hard/snapshot.json" "SnapshotMaxAge=3600" "PartitionName=gpu SingleZone=yes"
run "${as_rest[@]}" "$efa" sync --once --config "$hard/efa.conf" --url "unix:$SLURMRESTD_SOCKET"
is "$rc" 0 "a fresh snapshot for the burst"
(
	slow=0
	for _ in $(seq 100); do
		timeout 5 scontrol ping >/dev/null 2>&1 || slow=$((slow + 1))
		sleep 0.1
	done
	echo "$slow" >"$hard/ping.slow"
) &
ping_pid=$!
bg_track "$ping_pid"
accepted=0
refused=0
for i in $(seq 200); do
	nodes=$((i % 4 == 0 ? 3 : 2))
	if sbatch --hold -N"$nodes" -J burst --wrap true >/dev/null 2>&1; then
		accepted=$((accepted + 1))
	else
		refused=$((refused + 1))
	fi
done
wait "$ping_pid"
is "$accepted/$refused" "150/50" "200 submissions in a burst: the 150 that fit one zone accepted, the 50 that do not refused"
is "$(cat "$hard/ping.slow")" 0 "  and slurmctld answered every scontrol ping throughout (none left 5 s unanswered)"
scancel -n burst
write_efa_conf

# Option values built to hurt. The kernel passes no single argument or
# environment string over 128 KiB, so the longest value a command line
# can carry is just under that.
long=$(head -c 131000 /dev/zero | tr '\0' 'x')
run sbatch --efa="$long" --wrap true
ok $((rc == 0)) "a 128 KiB --efa value is refused"
ours=$(grep 'efa: invalid --efa value' <<<"$out")
ok "$([ -n "$ours" ] && [ "${#ours}" -lt 300 ]; echo $?)" \
	"  with a short message of ours (${#ours} bytes; Slurm's own line echoes the value)"
run sbatch --checkpoint-keep=-1 --wrap true
like "$out" "invalid --checkpoint-keep value '-1'" "a negative --checkpoint-keep is refused"
run sbatch --checkpoint-keep=99999999999999999999 --wrap true
like "$out" "invalid --checkpoint-keep value" "a huge --checkpoint-keep is refused"
run sbatch --checkpoint-dir="/fsx/a
b" --wrap true
like "$out" "control character" "a --checkpoint-dir with a newline is refused"
run sbatch --checkpoint-dir="/$long" --wrap true
like "$out" "longer than" "a 128 KiB --checkpoint-dir is refused"
# Only slurmrestd takes a bigger one, in a job's environment. 22.05 drops
# a 1 MiB variable before the job starts, so no step sees it; 24.11 and
# 26.05 pass it on, and the batch step fails on the plugin's limit.
head -c 1048576 /dev/zero | tr '\0' 'x' >"$hard/1mib"
jq -n --rawfile v "$hard/1mib" --arg path "$PATH" --arg out "$SLURM_EFA_CLUSTER/out/1mib.out" '{
	script: "#!/bin/bash\nsrun -w n1 bash -c \"echo mode=[${SLURM_EFA_MODE-}]\"",
	job: {name: "1mib", nodes: "1", partition: "gpu", current_working_directory: "/tmp",
		standard_output: $out, environment: {PATH: $path,
		SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa: $v, SLURM_SPANK__SLURM_SPANK_OPTION_efa_checkpoint_dir: $v}}}' \
	>"$hard/1mib.json"
rest_submit "$hard/1mib.json"
job=$(jq -r .job_id <<<"$out" 2>/dev/null || true)
ok $((${job:-0} > 0 ? 0 : 1)) "a job whose environment holds 1 MiB --efa and --checkpoint-dir values is accepted by slurmrestd"
wait_job "${job:-0}"
case $SLURM_RELEASE in
22.*)
	is "$(cat "$SLURM_EFA_CLUSTER/out/1mib.out" 2>/dev/null)" "mode=[]" "  and runs as if they were not there" ;;
*)
	like "$(cat "$SLURM_EFA_CLUSTER/out/1mib.out" 2>/dev/null)" \
		"efa: --efa in the job's environment is longer than [0-9]+ bytes" \
		"  and its batch step fails on the value's length, saying so" ;;
esac
is "$(node_states | awk '{print $2}' | sort -u)" "idle" "  no node drained"
# A value no srun or sbatch would pass, straight to the batch step.
jq -n --arg path "$PATH" --arg out "$SLURM_EFA_CLUSTER/out/forged.out" '{
	script: "#!/bin/bash\necho batch-ran",
	job: {name: "forged", nodes: "1", partition: "gpu", current_working_directory: "/tmp",
		standard_output: $out, environment: {PATH: $path,
		SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa_bind: "everywhere"}}}' >"$hard/forged.json"
rest_submit "$hard/forged.json"
job=$(jq -r .job_id <<<"$out" 2>/dev/null || true)
wait_job "${job:-0}"
forged=$(cat "$SLURM_EFA_CLUSTER/out/forged.out" 2>/dev/null)
like "$forged" "efa: invalid --efa-bind value 'everywhere'.*\(in the job's environment\)" \
	"an invalid option value in a slurmrestd job's environment fails its batch step, saying why"
unlike "$forged" "batch-ran" "  before the script runs"
is "$(node_states | awk '{print $2}' | sort -u)" "idle" "  and drains no node"
# An embedded NUL only JSON can carry: C sees the path end there.
nul_root=$hard/nul-ckpt
mkdir -p "$nul_root"
chmod 1777 "$nul_root"
write_efa_conf "PartitionName=gpu CheckpointRoot=$nul_root CheckpointFS=any"
printf '{"script": "#!/bin/bash\\necho \\"dir=[$CHECKPOINT_DIR]\\"", "job": {"name": "nul", "nodes": "1",
	"partition": "gpu", "current_working_directory": "/tmp", "standard_output": "%s",
	"environment": {"PATH": "%s",
	"SLURM_SPANK__SLURM_SPANK_OPTION_efa_checkpoint_dir": "%s/a\\u0000/../../../../../../../tmp/nul-escaped"}}}' \
	"$SLURM_EFA_CLUSTER/out/nul.out" "$PATH" "$nul_root/$SLURMRESTD_USER" >"$hard/nul.json"
rm -rf /tmp/nul-escaped
rest_submit "$hard/nul.json"
job=$(jq -r .job_id <<<"$out" 2>/dev/null || true)
wait_job "${job:-0}"
is "$(cat "$SLURM_EFA_CLUSTER/out/nul.out" 2>/dev/null)" "dir=[$nul_root/$SLURMRESTD_USER/a]" \
	"a checkpoint path with an embedded NUL (from slurmrestd's JSON) ends at the NUL"
ok "$([ ! -e /tmp/nul-escaped ]; echo $?)" "  and nothing after it is made"
write_efa_conf
run env SLURM_EFA_SET=PATH,LD_PRELOAD LD_PRELOAD= srun -N1 -w n1 --efa bash -c 'echo "${PATH:+path} [${LD_PRELOAD-unset}]"'
is "$out" "path []" "a forged SLURM_EFA_SET cannot make slurm-efa remove PATH or LD_PRELOAD"
# root=$ROOTS/%n is built as root from the node's name: a job's own
# SLURM_TOPOLOGY_ADDR must not lead it to another node's files.
for addr in ../roots/n2 n1/../n2 ..; do
	run env SLURM_TOPOLOGY_ADDR="$addr" SLURM_TOPOLOGY_ADDR_PATTERN=node \
		srun -N1 -w n1 --efa bash -c 'echo "${SLURM_EFA_PROFILE-none}"'
	is "$out" "p5" "a job whose SLURM_TOPOLOGY_ADDR is '$addr' still gets node n1's own profile"
done
