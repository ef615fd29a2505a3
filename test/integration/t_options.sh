# SPDX-License-Identifier: Apache-2.0
# The SPANK options reach every task of every kind of job, and bad values
# are refused where the user typed them.

# Every node looks like a p5 here; t_env.sh covers the hardware.
write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$FIXTURES/p5.48xlarge")"

run grep -h 'efa: spank_efa' "$SLURM_EFA_CLUSTER"/log/slurmd-n1.log
like "$out" "efa: spank_efa [0-9.]+ \(built for Slurm ${SLURM_VERSION//./\\.}\) loaded, config=\(default\) root=/" \
	"slurmd logs the plugin's version line at start"

batch -N2 --efa 'srun -l printenv SLURM_EFA_MODE | sort'
is "$rc" 0 "sbatch --efa job runs"
is "$out" $'0: required\n1: required' "sbatch --efa: both tasks on two nodes see SLURM_EFA_MODE=required"

run srun -N2 -l --efa=auto --efa-bind=closest sh -c 'echo "$SLURMD_NODENAME $SLURM_EFA_MODE $SLURM_EFA_BIND"'
is "$rc" 0 "srun --efa=auto runs"
is "$(sort <<<"$out")" $'0: n1 auto closest\n1: n2 auto closest' \
	"srun --efa=auto --efa-bind=closest reaches both remote tasks"

run salloc -N1 --efa=off srun printenv SLURM_EFA_MODE
is "$rc" 0 "salloc --efa=off runs its srun"
like "$out" '^off$' "salloc --efa=off reaches the step started inside the allocation"

run srun -N1 sh -c 'echo "[${SLURM_EFA_MODE-unset}]"'
is "$out" "[unset]" "without --efa the plugin sets nothing"

run sbatch --efa=maybe --wrap true
ok $((rc == 0)) "sbatch --efa=maybe is refused"
like "$out" "efa: invalid --efa value 'maybe': use --efa, --efa=auto, --efa=required or --efa=off" \
	"sbatch prints what is wrong and what works"

run srun -N1 --efa-bind=near true
ok $((rc == 0)) "srun --efa-bind=near is refused"
like "$out" "invalid --efa-bind value 'near'" "srun prints the bad --efa-bind value"

set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$FIXTURES/p5.48xlarge" bogus=1)"
run srun -N1 -w n1 --efa printenv SLURM_EFA_MODE
is "$out" "required" "an unknown plugstack argument does not break steps"
sleep 1
run grep -h "ignoring argument 'bogus=1'" "$SLURM_EFA_CLUSTER"/log/slurmd-n1.log
ok $((rc != 0)) "the unknown plugstack argument is logged by slurmstepd"
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$FIXTURES/p5.48xlarge")"
is "$(node_states | awk '{print $2}' | sort -u)" "idle" "every node is still idle"
