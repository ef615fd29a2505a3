# SPDX-License-Identifier: Apache-2.0
# --efa-bind=closest: per-task GPUs and EFA NICs from each node's fixture
# topology, and the distributed-launch variables. n1 is a p5.48xlarge, n2 a
# p4d.24xlarge, n4 a trn1.32xlarge (a trn2.48xlarge for its cases); each
# node has 4 (fake) GPUs in Slurm.

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"

task='echo "$SLURMD_NODENAME rank=${RANK-} local=${LOCAL_RANK-} world=${WORLD_SIZE-} lworld=${LOCAL_WORLD_SIZE-} master=${MASTER_ADDR-}:${MASTER_PORT-} cvd=${CUDA_VISIBLE_DEVICES-} iface=${FI_EFA_IFACE-}"'
port_of() {	# port_of JOB STEP
	echo $((29500 + ($1 + $2) % 500))
}

batch -N2 -w n1,n2 --ntasks-per-node=4 --gpus-per-node=4 --efa --efa-bind=closest \
	"echo \"batch rank=[\${RANK-}] iface=[\${FI_EFA_IFACE-}] job=\$SLURM_JOB_ID\"; srun -l bash -c '$task' | sort"
is "$rc" 0 "sbatch --efa --efa-bind=closest with 4 tasks and 4 GPUs per node runs"
job=$(sed -n 's/^batch .*job=\([0-9]*\)$/\1/p' <<<"$out")
like "$out" '^batch rank=\[\] iface=\[\] job=' "the batch script itself gets no rank or NIC binding"
# MASTER_ADDR is n1 as Slurm reaches it (NodeAddr=127.0.0.1): the test
# cluster's node names resolve nowhere, as on many cloud clusters.
m="127.0.0.1:$(port_of "${job:-0}" 0)"
want=$(cat <<EOT
0: n1 rank=0 local=0 world=8 lworld=4 master=$m cvd=0 iface=rdmap79s0,rdmap80s0,rdmap81s0,rdmap82s0
1: n1 rank=1 local=1 world=8 lworld=4 master=$m cvd=1 iface=rdmap96s0,rdmap97s0,rdmap98s0,rdmap99s0
2: n1 rank=2 local=2 world=8 lworld=4 master=$m cvd=2 iface=rdmap113s0,rdmap114s0,rdmap115s0,rdmap116s0
3: n1 rank=3 local=3 world=8 lworld=4 master=$m cvd=3 iface=rdmap130s0,rdmap131s0,rdmap132s0,rdmap133s0
4: n2 rank=4 local=0 world=8 lworld=4 master=$m cvd=0 iface=rdmap16s27
5: n2 rank=5 local=1 world=8 lworld=4 master=$m cvd=1 iface=rdmap16s27
6: n2 rank=6 local=2 world=8 lworld=4 master=$m cvd=2 iface=rdmap32s27
7: n2 rank=7 local=3 world=8 lworld=4 master=$m cvd=3 iface=rdmap32s27
EOT
)
is "$(grep '^[0-9]' <<<"$out")" "$want" \
	"each rank gets its GPU and the NICs behind it (p5: 4 per GPU; p4d: one per GPU pair), ranks and master consistent"

run srun -N2 -w n1,n2 --ntasks-per-node=2 --gpus-per-node=4 --efa --efa-bind=closest -l \
	bash -c 'echo "$CUDA_VISIBLE_DEVICES $FI_EFA_IFACE"'
is "$(sort <<<"$out")" "0: 0,1 rdmap79s0,rdmap80s0,rdmap81s0,rdmap82s0,rdmap96s0,rdmap97s0,rdmap98s0,rdmap99s0
1: 2,3 rdmap113s0,rdmap114s0,rdmap115s0,rdmap116s0,rdmap130s0,rdmap131s0,rdmap132s0,rdmap133s0
2: 0,1 rdmap16s27
3: 2,3 rdmap32s27" "2 tasks over 4 GPUs: two GPUs each, with their NICs"

run srun -N2 -w n1,n2 --ntasks-per-node=2 --gpus-per-node=4 --efa --efa-bind=none -l \
	bash -c 'echo "$CUDA_VISIBLE_DEVICES [${FI_EFA_IFACE-}] ${RANK-}"'
is "$(sort <<<"$out")" $'0: 0,1,2,3 [] 0\n1: 0,1,2,3 [] 1\n2: 0,1,2,3 [] 2\n3: 0,1,2,3 [] 3' \
	"--efa-bind=none: no per-task device variables (NCCL sees every NIC), ranks still set"

run env MASTER_PORT=12345 srun -N1 -w n1 -n2 --gpus-per-node=2 --efa --efa-bind=closest -l printenv MASTER_PORT
is "$(sort <<<"$out")" $'0: 12345\n1: 12345' "a user-set MASTER_PORT survives"

run srun -N1 -w n1 -n2 --gpus-per-task=1 --gpu-bind=single:1 --efa --efa-bind=closest -l \
	bash -c 'echo "$CUDA_VISIBLE_DEVICES $FI_EFA_IFACE"'
is "$(sort <<<"$out")" "0: 0 rdmap79s0,rdmap80s0,rdmap81s0,rdmap82s0
1: 1 rdmap96s0,rdmap97s0,rdmap98s0,rdmap99s0" "GPUs Slurm bound per task are kept; NICs follow them"

# Slurm replaces a hand-set CUDA_VISIBLE_DEVICES when GPUs are GRES (as
# here), so the "user's own list" case is covered by the unit tests only.
run srun -N1 -w n1 -n2 --efa --efa-bind=closest -l bash -c 'echo "[${CUDA_VISIBLE_DEVICES-}] $FI_EFA_IFACE"'
is "$(sort <<<"$out" | sed 's/,.*//')" $'0: [] rdmap79s0\n1: [] rdmap147s0' \
	"a step without GPUs: its tasks split the node's NICs (16 each)"

run srun -N1 -w n1 -n8 --gpus-per-node=4 --efa --efa-bind=closest -l \
	bash -c 'echo "$CUDA_VISIBLE_DEVICES $FI_EFA_IFACE"'
is "$(sort -n <<<"$out" | sed -n '1p;2p')" "0: 0 rdmap79s0,rdmap80s0
1: 0 rdmap81s0,rdmap82s0" "8 tasks on 4 GPUs: two tasks per GPU split its NICs"
sleep 1
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmd-n1.log")" "efa: 8 tasks share the step's GPUs on node n1" \
	"  and the node's log says so"

run srun -N1 -w n4 -n4 --efa --efa-bind=closest -l \
	bash -c 'echo "$NEURON_RT_VISIBLE_CORES $FI_EFA_IFACE ${NEURON_RT_ROOT_COMM_ID%:*}"'
is "$(sort <<<"$out")" "0: 0-7 rdmap16s25,rdmap16s26 127.0.0.1
1: 8-15 rdmap32s25,rdmap32s26 127.0.0.1
2: 16-23 rdmap144s25,rdmap144s26 127.0.0.1
3: 24-31 rdmap160s25,rdmap160s26 127.0.0.1" "trn1: NeuronCore ranges, NICs spread evenly, the collectives root at n4's address"

# trn2: NEURON_RT_VISIBLE_CORES counts the runtime's logical cores (two
# physical per logical by default on Trainium2: 64 on a trn2.48xlarge).
set_root n4 "$FIXTURES/trn2.48xlarge"
run srun -N1 -w n4 -n16 --efa --efa-bind=closest -l bash -c 'echo "$NEURON_RT_VISIBLE_CORES $FI_EFA_IFACE"'
is "$(sed 's/^ *//' <<<"$out" | sort -n | sed -n '1p;16p')" "0: 0-3 rdmap86s0
15: 60-63 rdmap246s0" "trn2, 16 tasks: 4 logical NeuronCores each, the last ending at 63 (not 127); one NIC each"
run env NEURON_LOGICAL_NC_CONFIG=1 srun -N1 -w n4 -n16 --efa --efa-bind=closest -l \
	bash -c 'echo "$NEURON_RT_VISIBLE_CORES"'
is "$(sed 's/^ *//' <<<"$out" | sort -n | sed -n '16p')" "15: 120-127" "trn2 with the job's NEURON_LOGICAL_NC_CONFIG=1: 128 cores"
run env NEURON_LOGICAL_NC_CONFIG=3 srun -N1 -w n4 -n2 --efa --efa-bind=closest -l \
	bash -c 'echo "$NEURON_RT_VISIBLE_CORES"'
is "$(grep -E '^[0-9]+: [0-9]' <<<"$out" | sort -n)" $'0: 0-31\n1: 32-63' "trn2 with NEURON_LOGICAL_NC_CONFIG=3: the default's numbering"
like "$out" "NEURON_LOGICAL_NC_CONFIG=3 is not 1 or 2" "  and the job is told why"
set_root n4 "$FIXTURES/trn1.32xlarge"

write_efa_conf "DistributedEnv=no"
run srun -N1 -w n1 -n1 --efa bash -c 'echo "[${RANK-}] [${MASTER_ADDR-}]"'
is "$out" "[] []" "DistributedEnv=no sets no launch variables"
write_efa_conf
