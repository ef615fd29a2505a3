# SPDX-License-Identifier: Apache-2.0
# The EFA/NCCL environment from each node's (fixture) hardware: profiles,
# user-wins, ForceEnv, partition defaults, fail-fast on nodes without EFA.
# Nodes: n1 p5.48xlarge, n2 p4d.24xlarge, n3 cpu-only, n4 trn1.32xlarge.

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"

show='echo "$SLURMD_NODENAME profile=${SLURM_EFA_PROFILE-} mode=${SLURM_EFA_MODE-} ifname=${NCCL_SOCKET_IFNAME-} rdma=${FI_EFA_USE_DEVICE_RDMA-} memops=${FI_EFA_SET_CUDA_SYNC_MEMOPS-} provider=${FI_PROVIDER-} ld=${LD_LIBRARY_PATH-}"'
p5="n1 profile=p5 mode=required ifname=^docker,lo,veth rdma= memops= provider= ld=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu"
p4d="n2 profile=p4d mode=required ifname=^docker,lo,veth rdma=1 memops=0 provider= ld=/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib"

batch -N2 -w n1,n2 --ntasks-per-node=2 --efa "srun -l bash -c '$show' | sort"
is "$rc" 0 "sbatch --efa on a p5 and a p4d node runs"
is "$out" "0: $p5"$'\n'"1: $p5"$'\n'"2: $p4d"$'\n'"3: $p4d" \
	"every task of the 2-node step gets its node's profile (p5: current stack; p4d: libfabric < 1.18, installer < 1.29.1)"

# A batch script that changes a variable slurm-efa set in its own step, or
# unsets one: its srun steps keep them as the script left them, on every
# node, while what is still slurm-efa's follows each node.
batch -N2 -w n1,n2 --efa "export NCCL_SOCKET_IFNAME=ens5; srun -l bash -c '$show' | sort"
is "$out" "0: ${p5/ifname=^docker,lo,veth/ifname=ens5}"$'\n'"1: ${p4d/ifname=^docker,lo,veth/ifname=ens5}" \
	"a batch script's export NCCL_SOCKET_IFNAME=ens5 reaches its tasks on both nodes"
batch -N1 -w n2 --efa "unset FI_EFA_USE_DEVICE_RDMA; srun bash -c '$show'"
is "$out" "${p4d/rdma=1/rdma=}" "a batch script's unset FI_EFA_USE_DEVICE_RDMA stays unset in its step"

run env LD_LIBRARY_PATH=/usr/local/lib srun -N1 -w n1 --efa bash -c 'echo "$LD_LIBRARY_PATH"'
is "$out" "/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/usr/local/lib" \
	"LD_LIBRARY_PATH: the stack's directories first, the user's entries kept"

# A long library path is read whole, never taken for unset: the node's
# directories first, every entry of the job's kept after them.
for size in 12 64; do
	long=$(printf '/opt/app/lib%04d:' $(seq $((size * 1024 / 17))))
	long=${long%:}
	want=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:$long
	run env LD_LIBRARY_PATH="$long" srun -N1 -w n1 --efa bash -c 'echo "${#LD_LIBRARY_PATH} $(printf %s "$LD_LIBRARY_PATH" | md5sum)"'
	is "$out" "${#want} $(printf %s "$want" | md5sum)" \
		"a ${size} KiB LD_LIBRARY_PATH is read whole: the node's directories first, all of the job's after them"
done

# A job that brings its own aws-ofi-nccl (a container's or a conda
# environment's) keeps its library path: the node's would shadow it.
own_ofi=$SLURM_EFA_CLUSTER/own-ofi/lib
mkdir -p "$own_ofi"
: >"$own_ofi/libnccl-net-ofi.so"
chmod -R a+rX "$SLURM_EFA_CLUSTER/own-ofi"
run env LD_LIBRARY_PATH="$own_ofi:/usr/local/lib" srun -N1 -w n1 --efa \
	bash -c 'echo "$LD_LIBRARY_PATH [${SLURM_EFA_LIBDIRS-unset}] $SLURM_EFA_PROFILE"'
is "$out" "$own_ofi:/usr/local/lib [] p5" \
	"a job with its own aws-ofi-nccl on LD_LIBRARY_PATH keeps it first; the profile still applies"

run env NCCL_SOCKET_IFNAME=ens5 NCCL_ALGO=Tree srun -N1 -w n1 --efa \
	bash -c 'echo "$NCCL_SOCKET_IFNAME $NCCL_ALGO $SLURM_EFA_PROFILE"'
is "$out" "ens5 Tree p5" "the user's NCCL_SOCKET_IFNAME and NCCL_ALGO win over the profile"

write_efa_conf "ForceEnv=NCCL_SOCKET_IFNAME"
run env NCCL_SOCKET_IFNAME=ens5 srun -N1 -w n1 --efa printenv NCCL_SOCKET_IFNAME
is "$out" "^docker,lo,veth" "ForceEnv= in efa.conf sets a variable over the user's value"

# A site's own profile directory, with an edited p5 profile.
site_profiles=$SLURM_EFA_CLUSTER/site-profiles
mkdir -p "$site_profiles"
cp "$top_srcdir"/etc/profiles/*.profile "$site_profiles/"
printf '%s\n' 'Match=p5.48xlarge' 'Include=efa-cuda' 'Env=NCCL_ALGO=Ring' \
	'Env=NCCL_DEBUG=WARN If=installer>=1.40' 'Env=NCCL_DEBUG_SUBSYS=INIT If=installer<1.40' \
	>"$site_profiles/p5.profile"
PROFILE_DIR=$site_profiles write_efa_conf
run srun -N1 -w n1 --efa bash -c 'echo "${NCCL_ALGO-} ${NCCL_DEBUG-} [${NCCL_DEBUG_SUBSYS-}]"'
is "$out" "Ring WARN []" "a site-edited profile applies, with its conditions on the installer version"
run env NCCL_ALGO=Tree srun -N1 -w n1 --efa printenv NCCL_ALGO
is "$out" "Tree" "the user's NCCL_ALGO survives a profile that sets it"
sleep 1
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmd-n1.log")" "efa: node n1: p5\.profile:3 sets NCCL_ALGO, which aws-ofi-nccl tunes per platform" \
	"  and slurmd's log warns that it overrides aws-ofi-nccl's tuning"
printf '%s\n' 'Match=p5.48xlarge' 'Env=RDMAV_FORK_SAFE=1' >"$site_profiles/p5.profile"
run srun -N1 -w n1 --efa bash -c 'echo "$SLURM_EFA_PROFILE [${RDMAV_FORK_SAFE-}]"'
is "$out" "none []" "a profile that sets a deny-listed variable is refused: nothing from it is set"
sleep 1
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmd-n1.log")" "p5.profile:2: RDMAV_FORK_SAFE must never be set" \
	"  and the node's log names the file and line"
write_efa_conf

run srun -N1 -w n4 --efa bash -c 'echo "$SLURM_EFA_PROFILE $FI_PROVIDER $FI_EFA_USE_DEVICE_RDMA $FI_EFA_FORK_SAFE"'
is "$out" "trn1 efa 1 1" "a trn1 node gets the Neuron settings"

# Edited copies of the fixtures on n1 and n4 for one step, then back.
variant() {	# variant FIXTURE NAME -> the copy's path
	local d=$SLURM_EFA_CLUSTER/roots-new/$2
	mkdir -p "$d"
	cp -a "$FIXTURES/$1/." "$d"
	echo "$d"
}
srun_on_variants() {	# srun_on_variants N1_ROOT N4_ROOT COMMAND: sorted lines in $out
	set_root n1 "$1"
	set_root n4 "$2"
	run srun -N2 -w n1,n4 --efa -l bash -c "$3"
	out=$(sort <<<"$out")
	set_root n1 "$FIXTURES/p5.48xlarge"
	set_root n4 "$FIXTURES/trn1.32xlarge"
}

# Instance types no profile names: the node's accelerators choose the
# family (a p5's GPUs, a trn1's Neuron devices under new type names).
gpu_new=$(variant p5.48xlarge gpunew.48xlarge)
echo gpunew.48xlarge >"$gpu_new/sys/devices/virtual/dmi/id/product_name"
neuron_new=$(variant trn1.32xlarge accnew.32xlarge)
echo accnew.32xlarge >"$neuron_new/sys/devices/virtual/dmi/id/product_name"
srun_on_variants "$gpu_new" "$neuron_new" 'echo "$SLURM_EFA_PROFILE ${FI_PROVIDER-} ${NCCL_SOCKET_IFNAME-}"'
is "$out" $'0: nvidia  ^docker,lo,veth\n1: neuron efa ^docker,lo,veth' \
	"new instance types get the profile of their accelerators: NVIDIA GPUs the CUDA base, Neuron devices the Neuron base"

# The stack's versions decide: a p5 with aws-ofi-nccl 1.6.0 must ask for
# GPUDirect RDMA whatever libfabric is; a trn1 on kernel 6.1 needs no
# FI_EFA_FORK_SAFE (5.10 does: see the trn1 check above).
p5_ofi16=$(variant p5.48xlarge p5-ofi16)
sed -i 's/libnccl-ofi_[0-9.]*-1_amd64/libnccl-ofi_1.6.0-1_amd64/' "$p5_ofi16/opt/amazon/efa_installed_packages"
trn1_k61=$(variant trn1.32xlarge trn1-k61)
echo "6.1.119-129.201.amzn2023.x86_64" >"$trn1_k61/proc/sys/kernel/osrelease"
srun_on_variants "$p5_ofi16" "$trn1_k61" 'echo "$SLURM_EFA_PROFILE rdma=${FI_EFA_USE_DEVICE_RDMA-} fork=${FI_EFA_FORK_SAFE-}"'
is "$out" $'0: p5 rdma=1 fork=\n1: trn1 rdma=1 fork=' \
	"p5 with aws-ofi-nccl 1.6.0 gets FI_EFA_USE_DEVICE_RDMA=1; trn1 on kernel 6.1 gets no FI_EFA_FORK_SAFE"

# NCCL's socket fallback: on NVIDIA GPUs, --efa=required pins NCCL_NET to
# aws-ofi-nccl's network; without the plugin where the task's loader looks,
# required fails and auto warns without pinning.
run srun -N1 -w n1 --efa bash -c 'echo "$NCCL_NET"'
is "$out" "AWS Libfabric" "--efa=required on a p5 sets NCCL_NET=\"AWS Libfabric\": NCCL fails instead of using sockets"
run env NCCL_NET=Socket srun -N1 -w n1 --efa bash -c 'echo "$NCCL_NET"'
is "$out" "Socket" "  the job's own NCCL_NET wins"
run srun -N1 -w n4 --efa bash -c 'echo "[${NCCL_NET-}]"'
is "$out" "[]" "  not on a trn1 (no NVIDIA GPUs)"
p5_noplugin=$(variant p5.48xlarge p5-noplugin)
rm -rf "$p5_noplugin/opt/amazon/ofi-nccl"
srun_on_variants "$p5_noplugin" "$FIXTURES/trn1.32xlarge" 'echo "$SLURM_EFA_PROFILE"'
like "$out" "efa: --efa=required but node n1 cannot use EFA: no aws-ofi-nccl .*Install aws-ofi-nccl" \
	"--efa=required on a p5 whose aws-ofi-nccl is missing fails, naming the fix"
set_root n1 "$p5_noplugin"
run srun -N1 -w n1 --efa=auto bash -c 'echo "[${NCCL_NET-}] [${SLURM_EFA_PROFILE-}]"'
is "$out" "[] []" "  --efa=auto there sets nothing EFA-specific"
run env LD_LIBRARY_PATH="$own_ofi" srun -N1 -w n1 --efa bash -c 'echo "$NCCL_NET"'
is "$out" "AWS Libfabric" "  a job that brings its own aws-ofi-nccl on LD_LIBRARY_PATH runs there, pinned"
set_root n1 "$FIXTURES/p5.48xlarge"

# n3 has no EFA.
run srun -N1 -w n3 --efa=required true
ok $((rc == 0)) "srun --efa=required on a node without EFA fails"
like "$out" "efa: --efa=required but node n3 \(c6i\.4xlarge\) has no EFA device" \
	"  and the user sees which node and what is missing"
batch -N1 -w n3 --efa 'echo batch-ran'
ok $((rc == 0)) "sbatch --efa on a node without EFA fails its batch step"
like "$out" "node n3 \(c6i\.4xlarge\) has no EFA device" "  with the message in the job's output"
unlike "$out" "batch-ran" "  before the script runs"
run srun -N1 -w n3 --efa=auto bash -c 'echo "[${SLURM_EFA_PROFILE-unset}] [${NCCL_SOCKET_IFNAME-unset}]"'
is "$out" "[unset] [unset]" "--efa=auto on a node without EFA runs and sets nothing"
sleep 1
like "$(cat "$SLURM_EFA_CLUSTER/log/slurmd-n3.log")" "efa: node n3 has no EFA device .*--efa=auto sets nothing" \
	"  and says so in the node's log"
is "$(sinfo -h -n n3 -o %T)" "idle" "n3 is idle, not drained, after the failed steps"

# Partition defaults: EFA=required applies without --efa and refuses
# --efa=off at submission (the job_submit bridge); EFA=optional lets users
# opt out.
write_efa_conf "PartitionName=cpu EFA=required"
run srun -p cpu -N1 -w n2 printenv SLURM_EFA_PROFILE SLURM_EFA_MODE
is "$out" $'p4d\nrequired' "PartitionName=cpu EFA=required applies without --efa"
run srun -p cpu -N1 -w n2 --efa=off true
like "$out" "efa: partition cpu requires EFA \(EFA=required\): remove --efa=off" \
	"--efa=off in an EFA=required partition is refused at submission"
write_efa_conf "PartitionName=cpu EFA=optional"
run srun -p cpu -N1 -w n2 printenv SLURM_EFA_PROFILE SLURM_EFA_MODE
is "$out" $'p4d\nauto' "PartitionName=cpu EFA=optional: EFA where the node has it"
run srun -p cpu -N1 -w n2 --efa=off bash -c 'echo "[${SLURM_EFA_PROFILE-unset}]"'
is "$out" "[unset]" "--efa=off opts out where the partition allows it"
run srun -p gpu -N1 -w n2 bash -c 'echo "[${SLURM_EFA_PROFILE-unset}]"'
is "$out" "[unset]" "a partition without EFA= sets nothing unless asked"

# A broken efa.conf on the nodes fails the step, naming file and line,
# only when EFA was asked for. (The nodes' own: slurmctld's bridge, reading
# a broken one, refuses slurm-efa's jobs at submission: t_policy.)
broken=$SLURM_EFA_CLUSTER/broken-efa.conf
printf '%s\n' "ProfileDir=$top_srcdir/etc/profiles" "Bogus=1" >"$broken"
set_plugstack "$(plugin_line "config=$broken" "root=$ROOTS/%n")"
run srun -N1 -w n1 --efa true
ok $((rc == 0)) "--efa with a broken efa.conf fails the step"
like "$out" "efa: node n1 cannot use EFA: $broken:2: unknown key 'Bogus'" "  naming the file and line"
run srun -N1 -w n1 true
is "$rc" 0 "a step without --efa still runs with a broken efa.conf"
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"

# slurmrestd: the option in the job's environment, as sbatch carries it.
rest_out=$SLURM_EFA_CLUSTER/out/rest-env.out
script=$(printf '#!/bin/bash\nsrun -l bash -c %q | sort\n' "$show" | jq -Rs .)
cat >"$SLURM_EFA_CLUSTER/out/rest-env.json" <<JSON
{"script": $script,
 "job": {"name": "rest-efa", "nodes": 2, "partition": "cpu", "current_working_directory": "/tmp",
         "standard_output": "$rest_out",
         "environment": {"PATH": "$PATH", "SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa": "required"}}}
JSON
rest_submit "$SLURM_EFA_CLUSTER/out/rest-env.json"
job_id=$(sed -n 's/.*"job_id": *\([0-9]*\).*/\1/p' <<<"$out")
ok $((${job_id:-0} == 0)) "slurmrestd accepts a job with the --efa option in its environment"
[ -n "$job_id" ] || diag "$out"
wait_job "${job_id:-0}"
is "$(cat "$rest_out" 2>/dev/null)" "0: $p5"$'\n'"1: $p4d" \
	"the slurmrestd job's tasks get the same environment as sbatch --efa"

# Locked memory: a login shell at 64 KiB propagates 64 KiB to every task
# (PropagateResourceLimits defaults to ALL), which EFA cannot run with. An
# --efa task keeps slurmd's limit and slurmd's log says why, once per
# step; a step without EFA gets what the shell had, as Slurm does.
write_efa_conf
slurmd_kib=$(awk '/^Max locked memory/ { print ($4 == "unlimited") ? $4 : $4 / 1024 }' \
	"/proc/$(pidfile_pid "$SLURM_EFA_CLUSTER/run/slurmd-n1.pid")/limits")
memlock_job() {	# memlock_job SBATCH-OPTIONS...: "rc out" under ulimit -l 64
	(ulimit -S -l 64 && batch "$@" "srun bash -c 'ulimit -l'" && echo "$rc $out")
}
log_before=$(wc -l <"$SLURM_EFA_CLUSTER/log/slurmd-n1.log")
is "$(memlock_job -N1 -w n1 --efa)" "0 $slurmd_kib" \
	"an --efa task submitted under ulimit -l 64 keeps slurmd's locked-memory limit ($slurmd_kib)"
memlog=$(tail -n +"$((log_before + 1))" "$SLURM_EFA_CLUSTER/log/slurmd-n1.log" |
	grep -c "locked-memory limit (64 KiB).*PropagateResourceLimitsExcept=MEMLOCK" || true)
is "$memlog" 1 "  slurmd's log says so once (the batch step; its srun step propagates the limit the script now has), naming PropagateResourceLimitsExcept=MEMLOCK"
is "$(memlock_job -N1 -w n1)" "0 64" "a task without --efa gets the submitting shell's 64 KiB, as Slurm propagates it"
is "$(memlock_job -N1 -w n3 --efa=auto)" "0 64" "  so does an --efa=auto task on a node without EFA"

# slurm-efa env says what a step gets, from the same code (common/env's
# explain): for every node fixture, the variables an --efa step's task
# gets on a node of that hardware are those `slurm-efa env` prints for it,
# run where the job was submitted; where it says EFA is not usable or the
# node needs repair, --efa=required fails the step for the same reason.
# One allocation on n1 (its prolog on n1's own p5), its root swapped per
# fixture between steps, as t_faults.sh does.
write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
salloc --no-shell -w n1 -J env-agree >/dev/null 2>&1
agree_alloc=$(squeue -h -n env-agree -o %i | head -n 1)
run srun --jobid="$agree_alloc" -w n1 true
agree_expected() {	# agree_expected JSON: NAME=VALUE or "NAME unset" per variable env decides
	local name decision value
	jq -r '.env[] | [.name, .decision, (.value // "")] | @tsv' <<<"$1" |
		while IFS=$'\t' read -r name decision value; do
			case $decision in
			set | forced | prepended) echo "$name=$value" ;;
			removed) echo "$name unset" ;;
			*)	# left as the job has it (user, skipped)
				if value=$(printenv "$name"); then echo "$name=$value"; else echo "$name unset"; fi ;;
			esac
		done
	echo "launch: $(agree_launch "$1")"
}
# The task's SLURM_EFA_SET also records its launch variables, which are
# per task (env shows one task of no step): those are named apart, with
# Neuron's root communicator on a node of Neuron devices.
agree_launch() {	# agree_launch JSON
	local names="LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT"
	[ "$(jq '.node.neuron_devices' <<<"$1")" -eq 0 ] || names+=" NEURON_RT_ROOT_COMM_ID"
	echo "$names NODE_RANK RANK WORLD_SIZE "
}
agree_actual() {	# agree_actual JSON TASK-ENV-FILE: the task's values of the same names
	local name line names records=() launch=() r
	local -A task=()
	while IFS= read -r -d '' line; do task[${line%%=*}]=${line#*=}; done <"$2"
	names=" $(jq -r '.env[].name' <<<"$1" | tr '\n' ' ')"
	for name in $names; do
		line="$name unset"
		[ -z "${task[$name]+set}" ] || line=$name=${task[$name]}
		if [ "$name" = SLURM_EFA_SET ] && [ "$line" != "$name unset" ]; then
			IFS=, read -ra records <<<"${line#*=}"
			line=$name=
			for r in "${records[@]}"; do
				if [[ $names == *" ${r%%:*} "* ]]; then line+=$r,; else launch+=("${r%%:*}"); fi
			done
			line=${line%,}
		fi
		echo "$line"
	done
	echo "launch: $(printf '%s\n' "${launch[@]}" | sort | tr '\n' ' ')"
}
agree_fixtures=0
for fixture in "$FIXTURES"/*/; do
	fixture=${fixture%/}
	[ -d "$fixture/sys" ] || continue
	f=$(basename "$fixture")
	agree_fixtures=$((agree_fixtures + 1))
	json=$("$top_builddir/slurm-efa" env --json --config "$EFA_CONF" --root "$fixture") || true
	# The tool is libtool's wrapper, which puts the build's .libs on the
	# library path it hands on: the job's path is the one the tool read.
	job_ld=$(jq -r '(.env[] | select(.name == "SLURM_EFA_LIBDIRS") | .value) as $d |
		.env[] | select(.name == "LD_LIBRARY_PATH") |
		if .decision == "prepended" then .value | ltrimstr($d + ":") else .value end' <<<"$json")
	set_root n1 "$fixture"
	task_env=$SLURM_EFA_CLUSTER/out/agree-$f.env
	run env LD_LIBRARY_PATH="${job_ld:-${LD_LIBRARY_PATH:-}}" \
		srun --jobid="$agree_alloc" -w n1 --efa bash -c "env -0 >$task_env"
	problem=$(jq -r '.problem // .needs_repair // ""' <<<"$json")
	if [ -n "$problem" ]; then
		ok $((rc == 0)) "$f: slurm-efa env says a step with --efa=required fails, and it does"
		like "$out" "efa: --efa=required but node n1 .*$(sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"${problem%% (*}")" \
			"  for the reason env gives: ${problem%% (*}"
		continue
	fi
	ok "$rc" "$f: an --efa step runs where slurm-efa env says EFA is usable (profile $(jq -r '.profile // "none"' <<<"$json"))"
	[ "$rc" -eq 0 ] || diag "$out"
	is "$(LD_LIBRARY_PATH=$job_ld agree_actual "$json" "$task_env")" \
		"$(LD_LIBRARY_PATH=$job_ld agree_expected "$json")" \
		"  its task gets every variable as slurm-efa env prints it ($(jq '.env | length' <<<"$json") variables)"
done
ok $((agree_fixtures < 10)) "every node fixture was compared ($agree_fixtures)"
set_root n1 "$FIXTURES/p5.48xlarge"
scancel "$agree_alloc"
wait_job "$agree_alloc"
is "$(node_states | grep '^n1 ')" "n1 idle" "  n1 is back on its own p5, in service"
