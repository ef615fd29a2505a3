# SPDX-License-Identifier: Apache-2.0
# Checkpoint directories: created on every node as the job's user, never
# through a planted link, exported to every task, trimmed to the newest N
# when the batch script ends. Jobs run as the unprivileged $SLURM_EFA_TEST_USER.
#
# The layout mirrors an FSx for Lustre mount: $fsx (root's, 0755) is the
# mount point, the CheckpointRoot under it is root's with mode 1777, so
# users create their own <root>/<user> and the sticky bit keeps them from
# replacing each other's. CheckpointFS=any: this machine has no Lustre.

user=$SLURM_EFA_TEST_USER
as_user=(runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF")
fsx=$SLURM_EFA_CLUSTER/fsx
ckroot=$fsx/checkpoints
mkdir -p "$ckroot"
chmod 0755 "$fsx"
chmod 1777 "$ckroot"
# Where each job's commands run: every user can enter it.
cd_opt=(-D "$SLURM_EFA_CLUSTER/out")

# step_fails WHAT REGEX SBATCH-OPTION...: a job of the user whose batch
# step fails, with a message matching REGEX, before its script runs.
step_fails() {
	local what=$1 re=$2
	shift 2
	BATCH_USER=$user batch "$@" "${cd_opt[@]}" 'echo batch-ran'
	ok $((rc == 0)) "$what fails the step"
	like "$out" "$re" "  with a message naming the node and the path"
	unlike "$out" "batch-ran" "  before the script runs"
}

write_efa_conf "PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"

show='echo "$(id -un) $SLURMD_NODENAME ${CHECKPOINT_DIR-unset} ${SLURM_EFA_CHECKPOINT_DIR-unset}"'
dir=$ckroot/$user/ckpt-train
BATCH_USER=$user batch -N2 -w n1,n2 --ntasks-per-node=2 -J ckpt-train "${cd_opt[@]}" \
	"$show; srun -l bash -c '$show' | sort"
is "$rc" 0 "a 2-node job of $user on a partition with CheckpointRoot= runs"
is "$out" "$user n1 $dir $dir
0: $user n1 $dir $dir
1: $user n1 $dir $dir
2: $user n2 $dir $dir
3: $user n2 $dir $dir" \
	"the batch script and every task on both nodes run as $user with CHECKPOINT_DIR=<root>/<user>/<job name>"
is "$(stat -c '%U %a' "$ckroot/$user" "$dir" | tr '\n' ' ')" "$user 700 $user 700 " \
	"<root>/<user> and the job's directory are the user's, mode 0700"

BATCH_USER=$user batch -N1 -w n3 -J ckpt-own --export=ALL,CHECKPOINT_DIR=/my/own "${cd_opt[@]}" \
	'srun printenv CHECKPOINT_DIR SLURM_EFA_CHECKPOINT_DIR'
is "$out" "/my/own"$'\n'"$ckroot/$user/ckpt-own" \
	"the user's own CHECKPOINT_DIR wins; SLURM_EFA_CHECKPOINT_DIR is always the directory"

write_efa_conf "CheckpointEnv=CKPT_PATH CheckpointMode=0750" \
	"PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"
run "${as_user[@]}" srun -N1 -w n4 -J ckpt-conf "${cd_opt[@]}" bash -c 'echo "${CKPT_PATH-} [${CHECKPOINT_DIR-}]"'
is "$out" "$ckroot/$user/ckpt-conf []" "CheckpointEnv= names the variable (srun as $user)"
is "$(stat -c %a "$ckroot/$user/ckpt-conf")" "750" "CheckpointMode= sets the directory's mode"
write_efa_conf "PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"

BATCH_USER=$user batch -N1 -w n1 --efa --checkpoint-dir="$ckroot/$user/custom//run1/" "${cd_opt[@]}" \
	'srun bash -c "echo \$SLURM_EFA_PROFILE \$CHECKPOINT_DIR"'
is "$out" "p5 $ckroot/$user/custom/run1" "--checkpoint-dir under the root, normalized, together with --efa"
is "$(stat -c %U "$ckroot/$user/custom/run1")" "$user" "  created as $user"

# Names POSIX allows though they look odd: made exactly there, nothing else.
for odd in "lr=3e-4,bs=512" $'caf\xc3\xa9-run' $'raw\xff\xfebytes'; do
	run "${as_user[@]}" srun -N1 -w n1 "${cd_opt[@]}" --checkpoint-dir="$ckroot/$user/odd/$odd" \
		bash -c 'printf "%s" "$CHECKPOINT_DIR"'
	is "$rc/$out" "0/$ckroot/$user/odd/$odd" "--checkpoint-dir .../$(printf '%q' "$odd"): CHECKPOINT_DIR is the path as given"
	is "$(stat -c %U "$ckroot/$user/odd/$odd" 2>&1)" "$user" "  created there, as $user"
done
is "$(find "$ckroot/$user/odd" -mindepth 1 | wc -l)" 3 "  and nothing else was made beside them"

own=$SLURM_EFA_CLUSTER/out/$user-own/run1
BATCH_USER=$user batch -N1 -w n2 -p cpu --checkpoint-dir="$own" "${cd_opt[@]}" 'echo "$CHECKPOINT_DIR"'
is "$out" "$own" "--checkpoint-dir on a partition without CheckpointRoot= (and without --efa)"
is "$(stat -c '%U %a' "$own")" "$user 700" "  created as $user, mode 0700"

run "${as_user[@]}" srun -N1 -w n1 -p cpu "${cd_opt[@]}" bash -c 'echo "[${CHECKPOINT_DIR-unset}] [${SLURM_EFA_SET-unset}]"'
is "$out" "[unset] [unset]" "no --checkpoint-dir and no CheckpointRoot=: nothing is set"

# Outside the root: the job_submit bridge refuses such a job; a step in a
# running job is not submitted, so the plugin refuses it too.
elsewhere=$SLURM_EFA_CLUSTER/out/elsewhere
BATCH_USER=$user batch -N1 -w n1 "${cd_opt[@]}" \
	"srun --checkpoint-dir='$ckroot/../../out/elsewhere' echo step-ran; echo srun-rc=\$?"
like "$out" "srun-rc=[1-9]" "a step with a --checkpoint-dir outside the partition's root fails"
like "$out" "efa: node n1 refuses the checkpoint directory: $elsewhere is outside the checkpoint root $ckroot: use a directory under" \
	"  with a message naming the node, the path and the allowed root"
unlike "$out" "step-ran" "  before its program runs"
ok "$([ ! -e "$elsewhere" ]; echo $?)" "  and creates nothing"
# Values srun and sbatch refuse themselves.
run "${as_user[@]}" sbatch --checkpoint-dir=relative/run1 --wrap true
ok $((rc == 0)) "sbatch --checkpoint-dir=relative/run1 is refused"
like "$out" "efa: invalid --checkpoint-dir value 'relative/run1': 'relative/run1' is not an absolute path" \
	"  with what is wrong and what works"
run "${as_user[@]}" srun --checkpoint-keep=few true
ok $((rc == 0)) "srun --checkpoint-keep=few is refused"
like "$out" "invalid --checkpoint-keep value 'few': use a whole number" "  and says so"

# A link planted by another user where <root>/<user> will be.
planted_root=$fsx/planted
target=$SLURM_EFA_CLUSTER/out/target
mkdir -p "$planted_root" "$target"
chmod 1777 "$planted_root" "$target"
runuser -u nobody -- ln -s "$target" "$planted_root/$user"
write_efa_conf "PartitionName=gpu CheckpointRoot=$planted_root CheckpointFS=any"
step_fails "a symbolic link planted by another user at <root>/<user>" \
	"efa: node n2 cannot create checkpoint directory $planted_root/$user/planted: $planted_root/$user is a symbolic link" \
	-N1 -w n2 -J planted
run "${as_user[@]}" srun -N1 -w n3 --checkpoint-dir="$planted_root/$user/run2" "${cd_opt[@]}" true
ok $((rc == 0)) "  also for srun with --checkpoint-dir through the link"
like "$out" "$(stepd_error n3) efa: node n3 cannot create checkpoint directory $planted_root/$user/run2: .* is a symbolic link" \
	"  and the user sees it"
is "$(ls -A "$target")" "" "nothing was created at the link's target"

# Concurrency: 8 jobs of one user, same job name, same new root, at once.
conc_root=$fsx/concurrent
mkdir -p "$conc_root"
chmod 1777 "$conc_root"
write_efa_conf "PartitionName=gpu CheckpointRoot=$conc_root CheckpointFS=any"
conc=$SLURM_EFA_CLUSTER/out/concurrent
mkdir -p "$conc"
for i in $(seq 8); do
	(
		BATCH_USER=$user batch -N2 --ntasks-per-node=1 -J together "${cd_opt[@]}" \
			'srun bash -c "test -d \"\$CHECKPOINT_DIR\" && echo ok"'
		echo "$rc $(tr '\n' ' ' <<<"$out")" >"$conc/$i"
	) &
done
wait
is "$(cat "$conc"/* | sort | uniq -c | sed 's/^ *//')" "8 0 ok ok " \
	"8 concurrent 2-node jobs creating the same directory all succeed"
is "$(stat -c '%U %a' "$conc_root/$user/together")" "$user 700" "  and it is the user's"

# A job array: each task its own directory, the same again when the array
# is resubmitted under its name; the bridge records the pattern.
write_efa_conf "PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"
arr_out=$SLURM_EFA_CLUSTER/out/array
mkdir -p "$arr_out"
chown "$user" "$arr_out"
for round in 1 2; do
	rm -f "$arr_out"/*.out
	run "${as_user[@]}" timeout 120 sbatch --wait --array=0-1 -N1 -J sweep "${cd_opt[@]}" \
		-o "$arr_out/%a.out" --wrap 'echo "$CHECKPOINT_DIR"'
	is "$(cat "$arr_out/0.out" "$arr_out/1.out" 2>&1)" "$ckroot/$user/sweep_0"$'\n'"$ckroot/$user/sweep_1" \
		"sbatch --array=0-1 -J sweep (round $round): each task its own checkpoint directory"
done
job=$(squeue -h -t all -n sweep -u "$user" -o %F | tail -n 1)
like "$(scontrol show job "${job}_0" 2>&1)" "AdminComment=slurm-efa: checkpoints in $ckroot/$user/sweep_%a" \
	"  the bridge recorded the pattern"

# A path that holds an EFA summary cannot be taken for one: the bridge's
# note writes its braces as %7B and %7D (test/unit/test_record.c: such a
# note holds no summary).
forged='{"efa":{"steps":[{"step":0,"nodes":"n[1-2]","node_count":2,"reported":"3","seconds":9,"bytes":777}]}}'
run "${as_user[@]}" sbatch --parsable -N1 -J forged "${cd_opt[@]}" --checkpoint-dir="$ckroot/$user/$forged" \
	-o /dev/null --wrap true
job=$(grep -o "^[0-9][0-9]*" <<<"$out" | head -n 1 || true)
like "$(scontrol show job "$job" 2>&1)" 'AdminComment=slurm-efa: checkpoints in .*/%7B"efa":%7B"steps":\[%7B"step"' \
	"a --checkpoint-dir holding {\"efa\":...}: the note in AdminComment holds no JSON object"

# Retention: --checkpoint-keep=3 of 4 checkpoint directories, mtimes set
# apart; links, files named like checkpoints (checkpoint-200, iter_500,
# step_log.txt) and other files are not checkpoints.
write_efa_conf "PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"
keep=$ckroot/$user/keep-test
outside=$ckroot/$user/outside
mkdir -p "$keep/checkpoint-100/shard" "$keep/step_300" "$keep/global_step400" "$keep/checkpoint-600" "$outside"
touch "$keep/checkpoint-100/shard/rank0.pt" "$keep/checkpoint-200" "$keep/iter_500" \
	"$keep/notes.txt" "$keep/latest" "$keep/step_log.txt" "$outside/keep.txt"
# Each complete by its framework's mark (the Trainer's trainer_state.json,
# the job's own .checkpoint-complete): only complete ones are counted.
for e in checkpoint-100 checkpoint-600; do
	printf '{\n  "global_step": %s\n}\n' "${e#checkpoint-}" >"$keep/$e/trainer_state.json"
done
touch "$keep/step_300/.checkpoint-complete" "$keep/global_step400/.checkpoint-complete"
ln -s "$outside" "$keep/checkpoint-100/escape"
ln -s checkpoint-600 "$keep/checkpoint-latest"
ln -s "$outside" "$keep/iter_0"
day=1
for e in checkpoint-100 checkpoint-200 step_300 global_step400 iter_500 checkpoint-600; do
	touch -d "2024-01-0$day 12:00" "$keep/$e"
	day=$((day + 1))
done
touch -h -d "2023-01-01" "$keep/checkpoint-latest" "$keep/iter_0" "$keep/notes.txt" "$keep/latest" \
	"$keep/step_log.txt"
chown -R -h "$user:" "$keep" "$outside"
# slurmstepd runs the plugin's exit before it reports the batch script
# done (seen), so sbatch --wait returns after retention.
BATCH_USER=$user batch -N1 -w n2 -J keep-test --checkpoint-keep=3 "${cd_opt[@]}" 'true'
is "$rc" 0 "a job with --checkpoint-keep=3 runs"
is "$(ls "$keep" | tr '\n' ' ')" "checkpoint-200 checkpoint-600 checkpoint-latest global_step400 iter_0 iter_500 latest notes.txt step_300 step_log.txt " \
	"when it ends, the 3 newest checkpoint directories are left, with links and files, those named like checkpoints too"
ok "$([ -f "$outside/keep.txt" ]; echo $?)" "  a link inside a deleted checkpoint was not followed"
log_n2=$(cat "$SLURM_EFA_CLUSTER/log/slurmd-n2.log")
like "$log_n2" "efa: checkpoint retention in $keep \(keeping the 3 newest\): removed checkpoint-100" \
	"  the node's log says what was removed"

# Retention runs as the user: what only root could delete stays, and the
# job still succeeds.
mkdir -p "$keep/checkpoint-1/by-root"
touch "$keep/checkpoint-1/by-root/file" "$keep/checkpoint-1/.checkpoint-complete"
chown "$user:" "$keep/checkpoint-1"
touch -d "2023-06-01" "$keep/checkpoint-1"
BATCH_USER=$user batch -N1 -w n2 -J keep-test --checkpoint-keep=3 "${cd_opt[@]}" 'true'
is "$rc" 0 "retention that cannot delete something does not fail the job"
ok "$([ -f "$keep/checkpoint-1/by-root/file" ]; echo $?)" "  it runs as the user: root's file is still there"
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmd-n2.log")" \
	"efa: checkpoint retention in $keep: checkpoint-1 not removed: cannot delete file: Permission denied" \
	"  and the log says why"

# Retention at the batch step's end while a rank on another node is still
# writing a save (a Trainer cut off between the model and
# trainer_state.json): the partial save is not complete, so the complete
# checkpoint-100 is still the newest one kept, and the save is not
# touched.
part=$ckroot/$user/still-saving
mkdir -p "$part/checkpoint-100"
printf '{\n  "global_step": 100\n}\n' >"$part/checkpoint-100/trainer_state.json"
touch -d '-5 min' "$part/checkpoint-100"
chown -R "$user:" "$part"
BATCH_USER=$user batch -N2 -w n2,n3 -J still-saving --checkpoint-keep=1 "${cd_opt[@]}" "
srun -N1 -n1 -w n3 bash -c 'mkdir $part/checkpoint-200 && echo {} >$part/checkpoint-200/config.json &&
	head -c 100000 /dev/zero >$part/checkpoint-200/model.safetensors && touch $part/saving && sleep 60' &
until [ -e $part/saving ]; do sleep 0.2; done
echo batch-ends"
is "$rc" 0 "a two-node job whose batch step ends while n3 is still saving runs"
is "$(ls "$part" | tr '\n' ' ')" "checkpoint-100 checkpoint-200 saving " \
	"  retention (--checkpoint-keep=1) kept the complete checkpoint-100 and the save n3 was writing"
unlike "$(grep -a "checkpoint retention in $part" "$SLURM_EFA_CLUSTER/log/slurmd-n2.log" || true)" "removed" \
	"  and removed nothing"
run "$top_builddir/slurm-efa" check --config "$EFA_CONF" --json --checkpoint-dir "$part" --keep 1
is "$(jq -r '.resume, ([.checkpoints[] | .name + "=" + .state + "=" + .retention] | join(" "))' <<<"$out")" "checkpoint-100
checkpoint-200=incomplete=keep checkpoint-100=complete=keep" \
	"  slurm-efa check --checkpoint-dir says the same: resume from checkpoint-100"

# CheckpointFS=lustre (the default with a root) on this non-Lustre machine.
write_efa_conf "PartitionName=gpu CheckpointRoot=$ckroot"
step_fails "CheckpointFS=lustre on a root that is not Lustre" \
	"efa: node n3 cannot hold checkpoints: checkpoint root $ckroot is on [^,]+, not Lustre \(CheckpointFS=lustre\): is FSx for Lustre mounted there\?" \
	-N1 -w n3 -J lustre
ok "$([ ! -e "$ckroot/$user/lustre" ]; echo $?)" "  and creates nothing"
run "${as_user[@]}" srun -N1 -w n3 "${cd_opt[@]}" true
like "$out" "$(stepd_error n3) efa: node n3 cannot hold checkpoints" "  srun shows the message"
# The failed step's node may still be completing for a moment; it must
# come back idle, never drained.
wait_nodes_idle || true
is "$(sinfo -h -n n3 -o %T)" "idle" "  and n3 stays idle"

# A checkpoint file system that stops answering: test/standins/hangfs stands for
# a hung FSx for Lustre mount (its requests wait while the gate file
# exists). Creating the directory fails the step after CheckpointTimeout=,
# naming the path, and retention at the job's end is stopped after twice
# that; the node stays up either way.
gate=$HANGFS_GATE
if hangfs_usable; then
	hung=$SLURM_EFA_CLUSTER/hung
	hangfs_mount "$hung"
	write_efa_conf "CheckpointTimeout=2" "PartitionName=gpu CheckpointRoot=$hung/ckpt CheckpointFS=any"
	touch "$gate"
	t0=$SECONDS
	run "${as_user[@]}" srun -N1 -w n1 "${cd_opt[@]}" -J hung echo step-ran
	ok $((rc == 0)) "a step whose checkpoint file system hangs fails (CheckpointTimeout=2)"
	# (The child left behind in the file system holds none of the task's
	# output: slurmstepd would wait a minute for it to close.)
	ok $((SECONDS - t0 > 30)) "  in $((SECONDS - t0)) s, not after slurmstepd's minute of waiting for the task's output"
	like "$out" "efa: node n1 cannot create checkpoint directory $hung/ckpt/$user/hung: its file system did not answer within 2 s \(CheckpointTimeout=\)" \
		"  naming the path and the limit"
	unlike "$out" "step-ran" "  before the program runs"
	wait_nodes_idle || true
	is "$(sinfo -h -n n1 -o %T)" "idle" "  and n1 stays up"
	hangfs_umount "$hung"

	# Retention: the oldest checkpoint is a mount of the hung file system.
	write_efa_conf "CheckpointTimeout=2" "PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"
	rdir=$ckroot/$user/ret-hang
	mkdir -p "$rdir/checkpoint-2" "$rdir/checkpoint-3"
	chown -R "$user:" "$rdir"
	hangfs_mount "$rdir/checkpoint-1"
	touch "$gate"
	BATCH_USER=$user batch -N1 -w n2 -J ret-hang --checkpoint-keep=1 "${cd_opt[@]}" 'echo batch-ran'
	is "$rc" 0 "a job whose retention hangs in its checkpoint file system still ends"
	like "$out" "^batch-ran$" "  having run its script"
	log_has_n2=$(grep -a "checkpoint retention in $rdir took more than 4 s: stopped" "$SLURM_EFA_CLUSTER/log/slurmd-n2.log" || true)
	ok $([ -n "$log_has_n2" ]; echo $?) "  retention is stopped after 4 s (twice CheckpointTimeout=) and the log says so"
	wait_nodes_idle || true
	is "$(sinfo -h -n n2 -o %T)" "idle" "  and n2 stays up"
	hangfs_umount "$rdir/checkpoint-1"
else
	ok 1 "test/standins/hangfs and fusermount3 are there (scripts/install-deps installs fuse3 and libfuse3-dev)"
fi

# ---- Time to save before the time limit: CheckpointSignal= -----------------
# sbatch's cli_filter (lua/cli_filter.lua, CliFilterPlugins=cli_filter/lua)
# gives EFA batch jobs without a --signal their partition's. Each script
# says which signal reached it; Slurm sends the warning from its periodic
# pass (every 30 s) once the limit is nearer than the warning time plus
# 30 s, so with 110 s before a 2-minute limit it comes with the first pass
# after the start, to every job in that window, and a slurmctld slowed
# down on a loaded machine has 90 s before the limit's TERM (with 50 s
# before 1 minute, 30 s were not always enough). The jobs that must get
# none start first: once the others have theirs, a pass has gone by them
# too, and they are cancelled (TERM).
write_efa_conf "PartitionName=gpu CheckpointSignal=USR1@110" \
	"PartitionName=cpu EFA=optional CheckpointSignal=USR2@110"
sigout=$SLURM_EFA_CLUSTER/out/signal
mkdir -p "$sigout"
cat >"$sigout/job.sh" <<'SCRIPT'
#!/bin/bash
for sig in USR1 USR2 TERM; do
	trap "echo got $sig; exit 0" "$sig"
done
echo "started $(date +%s.%N)"
for i in $(seq 180); do sleep 1; done
SCRIPT
sig_jobs=()
declare -A sig_id
sig_submit() {	# sig_submit NAME SBATCH-OPTION...: the job's id in $jobid
	local name=$1
	shift
	jobid=$(SLURM_EFA_CONF=$EFA_CONF sbatch --parsable -t 2 -N1 -J "sig-$name" \
		-o "$sigout/$name.out" "$@" "$sigout/job.sh" 2>"$sigout/$name.err") || true
	sig_jobs+=("$jobid")
	sig_id[$name]=$jobid
}
# What slurmctld knew of a job that had no signal: its times and warning.
sig_diag() {	# sig_diag NAME
	diag "sig-$1: no signal: $(tail -n 3 "$sigout/$1.out" 2>&1)"
	diag "  $(scontrol -o show job "${sig_id[$1]}" 2>&1 | grep -oE '(JobState|StartTime|EndTime|TimeLimit)=[^ ]*' | paste -sd ' ')"
	grep -aE "JobId=${sig_id[$1]}([^0-9]|$)" "$SLURM_EFA_CLUSTER/log/slurmctld.log" | tail -n 5 | while read -r l; do diag "  slurmctld: $l"; done
	grep -aiE "(StepId|JobId)=${sig_id[$1]}([^0-9]|$).*signal|signal.*(StepId|JobId)=${sig_id[$1]}([^0-9]|$)" \
		"$SLURM_EFA_CLUSTER"/log/slurmd-*.log | tail -n 5 | while read -r l; do diag "  slurmd: $l"; done
}
sig_submit plain -p gpu
sig_submit off -p cpu --efa=off
sig_started() { sed -n 's/^started //p' "$sigout/$1.out" 2>/dev/null; }
until_up 60 sh -c "grep -q ^started '$sigout/plain.out' && grep -q ^started '$sigout/off.out'" ||
	diag "the jobs to get no signal did not start: $(squeue -h -o '%i %T %R' 2>&1 | paste -sd ';')"
sig_submit efa -p gpu --efa=auto
sig_submit own -p gpu --efa=auto --signal=B:USR2@110
sig_submit default -v --efa=auto
sig_submit cpu -p cpu
# A job that got TERM instead reached its time limit without its warning:
# the log then says what slurmctld knew of it.
for name in efa own default cpu; do
	until_up 150 grep -q '^got' "$sigout/$name.out" || true
	grep -qE '^got (USR1|USR2)' "$sigout/$name.out" || sig_diag "$name"
done
# (Started after plain and off: the pass that signalled them passed those.)
ok "$(awk -v a="$(sig_started plain)" -v b="$(sig_started off)" -v c="$(sig_started efa)" \
	'BEGIN { print (a != "" && b != "" && c != "" && a <= c && b <= c) ? 0 : 1 }')" \
	"the jobs that must get no signal started before the others"
scancel "${sig_jobs[0]}" "${sig_jobs[1]}" 2>/dev/null || true
for jobid in "${sig_jobs[@]}"; do
	[ -n "$jobid" ] && wait_job "$jobid"
done
# The script's own lines (slurmstepd adds its messages).
sig_got() { grep -E '^(started|got)' "$sigout/$1.out" 2>/dev/null | sed 's/^started .*/started/' | tr '\n' ' '; }
is "$(sig_got efa)" "started got USR1 " \
	"an --efa batch job in a partition with CheckpointSignal=USR1@110 gets USR1 before its time limit"
is "$(sig_got own)" "started got USR2 " "  a job's own --signal=B:USR2@110 is kept"
is "$(sig_got plain)" "started got TERM " "  a job without --efa in a partition without EFA= gets none (TERM when cancelled)"
is "$(sig_got default)" "started got USR1 " "  a job naming no partition gets its default partition's (asked of slurmctld)"
like "$(cat "$sigout/default.err")" "efa: --signal=B:USR1@110 \\(the partition's CheckpointSignal= in efa.conf\\)" \
	"  and sbatch -v says so"
is "$(sig_got cpu)" "started got USR2 " "  a job without --efa in an EFA=optional partition gets that partition's USR2"
is "$(sig_got off)" "started got TERM " "  one with --efa=off gets none"
is "$(cat "$sigout/efa.err" "$sigout/own.err" "$sigout/plain.err" "$sigout/cpu.err" "$sigout/off.err")" "" \
	"  sbatch prints nothing else"

# The bridge gone from the submit host's Lua path: a job with --efa still
# goes (a default, not a policy), and sbatch says why it has no signal.
jobid=$(SLURM_EFA_CONF=$EFA_CONF LUA_PATH="$sigout/?.lua" sbatch --parsable -t 1 -N1 -p gpu --efa=auto \
	-J sig-nobridge -o /dev/null "$sigout/job.sh" 2>"$sigout/nobridge.err") || true
ok $([ -n "$jobid" ]; echo $?) "sbatch --efa without the bridge on its Lua path still submits"
like "$(cat "$sigout/nobridge.err")" "efa: cannot load slurm_efa_bridge .*: no checkpoint signal set for this job" \
	"  and says why no checkpoint signal is set"
[ -n "$jobid" ] && scancel "$jobid" && wait_job "$jobid"

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
