# SPDX-License-Identifier: Apache-2.0
# The plugin's memory in the daemons that load it. Every step gets a
# slurmstepd of its own, so a leak there dies with the step: memcheck
# follows slurmd into the slurmstepd of a few steps and looks for any
# leak or error with a frame of spank_efa.so. slurmd itself loads the
# plugin once: its RSS must stay flat across 200 --efa steps.
# Node n1 is a p5.48xlarge. Run on 22.05 and 26.05, the releases that
# bound the plugin's compatibility code; 24.11 would add a minute to CI.

case $SLURM_RELEASE in
24.*)
	# Not a skip (scripts/test counts one as a failure): left out on
	# purpose, to keep the suite's time.
	echo "# t_leaks.sh: the plugin's memory in slurmd and slurmstepd is checked on 22.05 and 26.05, not on $SLURM_RELEASE"
	return 0
	;;
esac

user=$SLURM_EFA_TEST_USER
ckroot=$SLURM_EFA_CLUSTER/leaks-ckpt
mkdir -p "$ckroot"
chmod 1777 "$ckroot"
write_efa_conf "PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
slurmd_pidfile=$SLURM_EFA_CLUSTER/run/slurmd-n1.pid
slurmd_rss() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$(pidfile_pid "$slurmd_pidfile")/status"
}

steps() {	# steps N: N --efa steps with 4 tasks bound to GPUs and NICs, in one job
	run salloc -N1 -w n1 -n4 --gpus-per-node=4 bash -c \
		"for i in \$(seq $1); do srun --efa --efa-bind=closest true || exit 1; done"
}
steps 20
is "$rc" 0 "20 --efa steps to warm slurmd up"
before=$(slurmd_rss)
steps 200
is "$rc" 0 "200 more --efa steps, each with 4 bound tasks"
after=$(slurmd_rss)
ok "$([ $((after - before)) -lt 1024 ]; echo $?)" \
	"  slurmd's RSS stays flat across them (${before} KiB -> ${after} KiB)"

# slurmd (and every slurmstepd it starts) under memcheck. Slurm's own
# leaks are many and not ours: only records with a frame in one of the
# plugin's source files count. --keep-debuginfo names those frames even
# after slurmstepd has unloaded the plugin.
# Read whole first: grep -q leaves at its match, and readelf, still
# writing into the pipe, dies of SIGPIPE (141 under pipefail).
sections=$(readelf -S "$SPANK_EFA_SO")
ok "$(grep -q '\.debug_line' <<<"$sections"; echo $?)" \
	"spank_efa.so carries line tables (-g): memcheck can name its frames"
vg=$SLURM_EFA_CLUSTER/memcheck-slurmd
mkdir -p "$vg"
chmod 1777 "$vg"	# a task's valgrind writes its log as the job's user
daemon_save "$slurmd_pidfile" "$vg/slurmd-as-it-was"
restart_daemon "$slurmd_pidfile" valgrind --keep-debuginfo=yes --num-callers=40 \
	--trace-children=yes --trace-children-skip='/bin/*,/usr/bin/*,*/slurm_script' \
	--leak-check=full --show-leak-kinds=definite,indirect --log-file="$vg/%p.log"
wait_nodes_idle
ok $? "slurmd on n1 runs under valgrind"
run srun -w n1 -n4 --gpus-per-node=4 --efa --efa-bind=closest -l printenv NCCL_SOCKET_IFNAME
is "$rc/$(sort -u <<<"${out//[0-3]: /}")" "0/^docker,lo,veth" "  a --efa step with 4 bound tasks runs there"
BATCH_USER=$user batch -w n1 --efa --checkpoint-dir="$ckroot/$user/leaks" --checkpoint-keep=1 \
	-D "$SLURM_EFA_CLUSTER/out" 'mkdir -p "$CHECKPOINT_DIR/a" "$CHECKPOINT_DIR/b"; echo "$CHECKPOINT_DIR"'
is "$rc/$out" "0/$ckroot/$user/leaks" "  a batch job with a checkpoint directory and retention"
if [ "$rc" -ne 0 ]; then
	# A batch task that died under valgrind before slurmstepd released it
	# ("write to unblock task 0 failed", seen once in CI): what valgrind
	# last wrote for the newest processes.
	for l in $(ls -t "$vg"/*.log | head -n 4); do
		diag "$l: $(tail -n 12 "$l")"
	done
fi
run srun -w n1 --efa --checkpoint-dir=/elsewhere true
ok "$([ "$rc" -ne 0 ]; echo $?)" "  a step refused for a checkpoint directory outside the root"
RESTART_FROM=$vg/slurmd-as-it-was restart_daemon "$slurmd_pidfile"
wait_nodes_idle
is "$?/$(cat "/proc/$(pidfile_pid "$slurmd_pidfile")/comm" 2>&1)" "0/slurmd" "  slurmd back without valgrind"
ours=$(cd "$top_srcdir/src" && find spank common -name '*.c' | xargs -n1 basename | sed 's/\.c$//' | paste -sd'|')
found=$(awk -v ours="\\((${ours})\\.c:[0-9]+\\)" '
	/^==[0-9]+== $/ { if (block ~ ours) print block; block = ""; next }
	{ block = block "\n" $0 }
	END { if (block ~ ours) print block }' "$vg"/*.log)
is "$found" "" "memcheck found no leak and no error of the plugin in slurmd and the steps' slurmstepd"
is "$(grep -lE 'Command: [^ ]*/slurmstepd' "$vg"/*.log | wc -l | awk '$1 >= 3 { print "3+" }')" "3+" \
	"  (it followed slurmd into the slurmstepd of the steps)"
