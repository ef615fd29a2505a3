# SPDX-License-Identifier: Apache-2.0
# Steps in containers: real pyxis ($SLURM_EFA_PYXIS, built against this
# Slurm) and enroot (installed in /usr by scripts/build-containers), images
# made here with mksquashfs from Debian's busybox-static and the fixtures'
# EFA installs. Nodes: n1 p5.48xlarge (libfabric 2.x, installer 1.43),
# n2 p4d.24xlarge (libfabric 1.16, installer 1.21).
#
# enroot is configured through a drop-in of its own in /etc/enroot (removed
# at the end): every node and user gets its own data and runtime
# directories, since several slurmd share this host. A test hook
# (enroot-test-devices.sh.in) gives each container a restricted /dev with
# the node's EFA devices, those of its fixture.

images=$SLURM_EFA_CLUSTER/images
enroot_dir=$SLURM_EFA_CLUSTER/enroot
ck_user=$SLURM_EFA_TEST_USER
# enroot keeps the first value a setting is given: this drop-in sorts first.
enroot_conf=/etc/enroot/enroot.conf.d/00-slurm-efa-test.conf
device_hook=/etc/enroot/hooks.d/90-slurm-efa-test-devices.sh
efa_hook=/etc/enroot/hooks.d/50-slurm-efa.sh
pyxis_line="required $SLURM_EFA_PYXIS runtime_path=$SLURM_EFA_CLUSTER/pyxis"
efa_line=$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")

container_cleanup() {
	rm -f "$enroot_conf" "$device_hook" "$efa_hook"
}
container_cleanup
# pyxis makes its runtime directory when slurmd starts, and this one started
# without pyxis.
mkdir -p "$images" "$enroot_dir" "$SLURM_EFA_CLUSTER/pyxis" /etc/enroot/enroot.conf.d /etc/enroot/hooks.d
chmod 1777 "$enroot_dir"
# enroot evaluates these in the job's environment, as the job's user.
# SLURMD_NODENAME is not there when pyxis creates and removes the container
# (user_init, exit); SLURM_TOPOLOGY_ADDR, which ends in the node's name, is.
# shellcheck disable=SC2016
printf '%s\n' \
	"ENROOT_RUNTIME_PATH $enroot_dir/\${SLURM_TOPOLOGY_ADDR}-\$(id -u)/run" \
	"ENROOT_DATA_PATH $enroot_dir/\${SLURM_TOPOLOGY_ADDR}-\$(id -u)/data" \
	"ENROOT_CACHE_PATH $enroot_dir/\${SLURM_TOPOLOGY_ADDR}-\$(id -u)/cache" >"$enroot_conf"
sed "s|@ROOTS[@]|$ROOTS|g" "$top_srcdir/test/integration/enroot-test-devices.sh.in" >"$device_hook"
chmod 755 "$device_hook"

# image NAME ENVIRONMENT [FIXTURE-OPT-DIR...]: a busybox image with the
# given /etc/environment and the /opt of the fixtures named.
image() {
	local name=$1 environment=$2 d=$images/$1 c
	shift 2
	rm -rf "$d"
	mkdir -p "$d/bin" "$d/etc" "$d/tmp" "$d/usr/local/lib" "$d/usr/lib/app"
	cp /bin/busybox "$d/bin/"
	for c in sh env cat ls printenv echo touch mkdir; do ln -s busybox "$d/bin/$c"; done
	printf '%s\n' "$environment" >"$d/etc/environment"
	for c in "$@"; do
		mkdir -p "$d/$(dirname "${c#*/}")"
		cp -a "$FIXTURES/$c" "$d/${c#*/}"
	done
	chmod -R a+rX "$d"
	mksquashfs "$d" "$images/$name.sqsh" -noappend -quiet -all-root >/dev/null
	chmod 644 "$images/$name.sqsh"
}
image bare 'LD_LIBRARY_PATH=/usr/local/lib'
# A stack older than n1's: p4d's (installer 1.21, libfabric 1.16, aws-ofi-nccl
# from source in /opt/aws-ofi-nccl).
image older 'LD_LIBRARY_PATH=/usr/local/lib' p4d.24xlarge/opt/amazon p4d.24xlarge/opt/aws-ofi-nccl
# A stack newer than n2's: p5's, in the Debian installer's layout.
image newer 'LD_LIBRARY_PATH=/usr/local/lib' p5.48xlarge/opt/amazon
# A current stack (p5en's layout, /opt/amazon/ofi-nccl/lib) that the image's
# own LD_LIBRARY_PATH does not name.
image hidden 'LD_LIBRARY_PATH=/usr/lib/app' p5en.48xlarge/opt/amazon
# An image whose LD_LIBRARY_PATH already names its stack, and which sets
# variables of its own.
image own 'LD_LIBRARY_PATH=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:/usr/lib/app
NCCL_SOCKET_IFNAME=eth9
NCCL_NET=Socket' p5en.48xlarge/opt/amazon

# log_has NODE REGEX DESCRIPTION: slurmd's log on NODE has a matching line.
log_has() {
	local log=$SLURM_EFA_CLUSTER/log/slurmd-$1.log
	sleep 1
	if grep -aEq -- "$2" "$log"; then
		ok 0 "$3"
	else
		ok 1 "$3"
		diag "no line of $log matches /$2/; its last efa: lines:"$'\n'"$(grep -a 'efa:' "$log" | tail -n 5)"
	fi
}

show='echo "$SLURMD_NODENAME profile=${SLURM_EFA_PROFILE-} rdma=${FI_EFA_USE_DEVICE_RDMA-} memops=${FI_EFA_SET_CUDA_SYNC_MEMOPS-} net=${NCCL_NET-} ifname=${NCCL_SOCKET_IFNAME-} ld=${LD_LIBRARY_PATH-}"'
in_image() {	# in_image IMAGE SRUN-OPTION... : runs $show in IMAGE
	local img=$images/$1.sqsh
	shift
	run srun --container-image="$img" "$@" sh -c "$show"
}

write_efa_conf
set_plugstack "$pyxis_line" "$efa_line"

in_image older -N2 -w n1,n2 --ntasks-per-node=1 --efa -l
is "$(sort <<<"$out")" "0: n1 profile=p5 rdma=1 memops=0 net=AWS Libfabric ifname=^docker,lo,veth ld=/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib:/usr/local/lib
1: n2 profile=p4d rdma=1 memops=0 net=AWS Libfabric ifname=^docker,lo,veth ld=/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib:/usr/local/lib" \
	"an image with a stack older than n1's: each node's profile, the image's versions (libfabric 1.16: FI_EFA_USE_DEVICE_RDMA=1) and the image's directories"

run srun -N1 -w n2 --efa sh -c "$show"
is "$out" "n2 profile=p4d rdma=1 memops=0 net=AWS Libfabric ifname=^docker,lo,veth ld=/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib" \
	"n2 outside a container: its own old stack asks for FI_EFA_USE_DEVICE_RDMA"
in_image newer -N1 -w n2 --efa
is "$out" "n2 profile=p4d rdma= memops= net=AWS Libfabric ifname=^docker,lo,veth ld=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/usr/local/lib" \
	"an image with a stack newer than n2's: no FI_EFA_USE_DEVICE_RDMA, the image's Debian-layout directories first"

in_image hidden -N1 -w n1 --efa
is "$out" "n1 profile=p5 rdma= memops= net=AWS Libfabric ifname=^docker,lo,veth ld=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:/usr/lib/app" \
	"an image whose LD_LIBRARY_PATH hides its stack: the image's stack directories are put first, its own entries kept"

in_image own -N1 -w n1 --efa
is "$out" "n1 profile=p5 rdma= memops= net=Socket ifname=eth9 ld=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:/usr/lib/app" \
	"an image that names its stack and sets NCCL_NET and NCCL_SOCKET_IFNAME keeps them: the image's variables are the job's own"
log_has n1 "efa: node n1, image $images/own.sqsh: NCCL_SOCKET_IFNAME kept as the image or the job set it" \
	"  and slurmd's log names what the image kept"
write_efa_conf "ForceEnv=NCCL_SOCKET_IFNAME"
in_image own -N1 -w n1 --efa
like "$out" " ifname=\^docker,lo,veth " "ForceEnv= wins over the image's own value"
write_efa_conf

run env NCCL_NET=IB srun --container-image="$images/newer.sqsh" -N1 -w n1 --efa sh -c 'echo "$NCCL_NET"'
is "$out" "IB" "the job's own NCCL_NET is kept in a container"

# No EFA user space in the image: --efa=required fails before the program,
# naming the image, what is missing and the fixes; auto runs without EFA.
in_image bare -N1 -w n1 --efa
ok $((rc == 0)) "--efa=required with an image without EFA's libraries fails the step"
like "$out" "efa: --efa=required but container image $images/bare.sqsh on node n1 cannot use EFA: no libfabric .*; no aws-ofi-nccl .*EFA installer with --skip-kmod" \
	"  naming the image, the missing libfabric and aws-ofi-nccl and the fix"
unlike "$out" "n1 profile=" "  before the program runs"
in_image bare -N1 -w n1 --efa=auto
is "$out" "n1 profile= rdma= memops= net= ifname= ld=/usr/local/lib" \
	"--efa=auto in that image sets nothing EFA-specific and keeps the image's library path"
log_has n1 "efa: node n1, container image $images/bare.sqsh has no libfabric.*--efa=auto sets nothing EFA-specific" \
	"  and says so in slurmd's log"

# The node's EFA devices hidden from the container (ENROOT_RESTRICT_DEV=y
# without a device hook).
run env SLURM_EFA_TEST_HIDE_DEVICES=1 srun --container-image="$images/newer.sqsh" -N1 -w n1 --efa sh -c "$show"
ok $((rc == 0)) "--efa=required in a container that does not see the node's EFA devices fails"
like "$out" "none of the node's 32 EFA devices in its /dev/infiniband \(enroot's ENROOT_RESTRICT_DEV=y hides them\)" \
	"  saying why"
run env SLURM_EFA_TEST_HIDE_DEVICES=1 srun --container-image="$images/newer.sqsh" -N1 -w n1 --efa=auto sh -c "$show"
is "$out" "n1 profile= rdma= memops= net= ifname= ld=/usr/local/lib" "--efa=auto there sets nothing EFA-specific"

# A missing image: pyxis's own message, the node stays up.
run srun --container-image="$images/missing.sqsh" -N1 -w n1 --efa true
ok $((rc == 0)) "a missing image fails the step"
like "$out" "pyxis: .*$images/missing.sqsh" "  with pyxis's message passed through"
head -c 65536 /dev/urandom >"$images/corrupt.sqsh"
printf 'hsqs' | dd of="$images/corrupt.sqsh" conv=notrunc status=none
chmod 644 "$images/corrupt.sqsh"
run srun --container-image="$images/corrupt.sqsh" -N1 -w n2 --efa true
ok $((rc == 0)) "a corrupt image fails the step"
like "$out" "pyxis: .*$images/corrupt.sqsh" "  with pyxis's message passed through"
is "$(node_states | grep -c drain || true)" 0 "  and no node is drained"

# Checkpoints: the directory spank_efa creates must be the node's inside
# the container, never one in the container's own layer.
fsx=$SLURM_EFA_CLUSTER/fsx-container
ckroot=$fsx/checkpoints
mkdir -p "$ckroot"
chmod 0755 "$fsx"
chmod 1777 "$ckroot"
write_efa_conf "PartitionName=gpu CheckpointRoot=$ckroot CheckpointFS=any"
as_user=(runuser -u "$ck_user" -- env SLURM_CONF="$SLURM_CONF" SLURM_EFA_CONF="$EFA_CONF")
# shellcheck disable=SC2016
write_ckpt='echo "$CHECKPOINT_DIR" && echo saved >"$CHECKPOINT_DIR/step-1"'
run "${as_user[@]}" srun -D /tmp -N1 -w n1 -J ck-nohook --container-image="$images/newer.sqsh" sh -c "$write_ckpt"
ok $((rc == 0)) "without the enroot hook, a container step with a checkpoint directory fails"
like "$out" "checkpoint directory $ckroot/$ck_user/ck-nohook on node n1 is not the node's inside container image .*50-slurm-efa.sh.*--container-mounts=$ckroot/$ck_user/ck-nohook" \
	"  naming the hook and --container-mounts"
run "${as_user[@]}" srun -D /tmp -N1 -w n1 -J ck-mounts --container-mounts="$ckroot/$ck_user/ck-mounts:$ckroot/$ck_user/ck-mounts" \
	--container-image="$images/newer.sqsh" sh -c "$write_ckpt"
is "$out" "$ckroot/$ck_user/ck-mounts" "with --container-mounts of the directory the step runs"
is "$(cat "$ckroot/$ck_user/ck-mounts/step-1" 2>&1)" saved "  and what it wrote is on the node"

# The hook reads spank_efa.so's efa.conf (its plugstack line's config=),
# through the slurm.conf this build's Slurm reads without SLURM_CONF (here
# the cluster's, as @slurm_conf@), whatever the job's environment says
# (test/cli/hook.sh: a job's SLURM_CONF and SLURM_EFA_CONF).
sed -e "s|@bindir[@]|$top_builddir|g" -e "s|@slurm_conf[@]|$SLURM_CONF|g" \
	"$top_srcdir/etc/enroot/hooks.d/50-slurm-efa.sh.in" >"$efa_hook"
chmod 755 "$efa_hook"
run "${as_user[@]}" srun -D /tmp -N2 -w n1,n2 -J ck-hook --container-image="$images/newer.sqsh" sh -c "$write_ckpt"
is "$out" "$ckroot/$ck_user/ck-hook"$'\n'"$ckroot/$ck_user/ck-hook" "with slurm-efa's enroot hook a 2-node container step gets its checkpoint directory"
is "$(cat "$ckroot/$ck_user/ck-hook/step-1" 2>&1)" saved "  and a checkpoint written in the container lands on the node"
run "${as_user[@]}" srun -D /tmp -N1 -w n1 --container-image="$images/newer.sqsh" sh -c 'echo "${CHECKPOINT_DIR-none}"'
is "$out" "$ckroot/$ck_user/sh" "  (the default directory, <root>/<user>/<job name>, too)"
# What the job's environment says is not what the hook mounts.
forged=$SLURM_EFA_CLUSTER/forged
mkdir -p "$forged"
echo host >"$forged/marker"
chmod -R a+rX "$forged"
run "${as_user[@]}" env SLURM_EFA_CHECKPOINT_DIR="$forged" srun -D /tmp -N1 -w n1 -p cpu \
	--container-image="$images/newer.sqsh" sh -c "cat $forged/marker 2>/dev/null || echo absent"
is "$out" "absent" "a job without checkpoints gets nothing mounted, whatever SLURM_EFA_CHECKPOINT_DIR it sets"
run "${as_user[@]}" env SLURM_EFA_CHECKPOINT_DIR="$forged" srun -D /tmp -N1 -w n1 \
	--checkpoint-dir="$ckroot/$ck_user/x/../forged" --container-image="$images/newer.sqsh" \
	sh -c "echo \$CHECKPOINT_DIR; cat $forged/marker 2>/dev/null || echo absent"
is "$out" "$ckroot/$ck_user/forged"$'\n'"absent" "a job with checkpoints gets the directory spank_efa created mounted, not the one its environment named"

# ContainerHostLibraries=yes: the hook mounts the node's EFA libraries into
# an image that has none; an image's own always wins.
write_efa_conf "ContainerHostLibraries=yes"
in_image bare -N2 -w n1,n2 --efa -l
is "$(sort <<<"$out")" "0: n1 profile=p5 rdma= memops= net=AWS Libfabric ifname=^docker,lo,veth ld=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/usr/local/lib
1: n2 profile=p4d rdma=1 memops=0 net=AWS Libfabric ifname=^docker,lo,veth ld=/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib:/usr/local/lib" \
	"ContainerHostLibraries=yes: an image without EFA's software runs with each node's, versions and all"
in_image newer -N1 -w n2 --efa
is "$out" "n2 profile=p4d rdma= memops= net=AWS Libfabric ifname=^docker,lo,veth ld=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu:/usr/local/lib" \
	"  an image with its own keeps it"
rm -f "$efa_hook"
in_image bare -N1 -w n1 --efa
like "$out" "container image $images/bare.sqsh on node n1 cannot use EFA: no libfabric" \
	"  without the hook, nothing is mounted and the step fails as before"
write_efa_conf

# Through slurmrestd: slurm-efa submit carries pyxis's options as the
# PYXIS_* variables pyxis reads, and the batch script runs in the image
# with the image's EFA environment.
rest_client_setup "$SLURM_EFA_CLUSTER/rest-container"
mkdir -p "$SLURM_EFA_CLUSTER/data"
echo "from the node" >"$SLURM_EFA_CLUSTER/data/marker"
cat >"$SLURM_EFA_CLUSTER/rest-container/job.sh" <<'JOB'
#!/bin/sh
echo "batch: $SLURM_EFA_PROFILE rdma=${FI_EFA_USE_DEVICE_RDMA-} net=${NCCL_NET-} ld=$LD_LIBRARY_PATH"
cat /data/marker
JOB
chmod 755 "$SLURM_EFA_CLUSTER/rest-container/job.sh"
out_file=$SLURM_EFA_CLUSTER/out/submit-container.out
run "$top_builddir/slurm-efa" submit --config "$rest_conf" "${jwt[@]}" --efa -p cpu -N1 \
	--container-image="$images/older.sqsh" --container-mounts="$SLURM_EFA_CLUSTER/data:/data" \
	-o "$out_file" "$SLURM_EFA_CLUSTER/rest-container/job.sh"
is "$rc" 0 "slurm-efa submit --container-image --container-mounts through slurmrestd"
wait_job "$(grep -o '[0-9]*$' <<<"$out")"
like "$(cat "$out_file" 2>&1)" "^batch: (p5|p4d) rdma=1 net=AWS Libfabric ld=/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib:/usr/local/lib$" \
	"  the batch script runs in the image, with the environment of the image's stack"
like "$(cat "$out_file" 2>&1)" "^from the node$" "  and the mount pyxis was asked for"
run "$top_builddir/slurm-efa" submit --config "$rest_conf" "${jwt[@]}" --container-image= \
	"$SLURM_EFA_CLUSTER/rest-container/job.sh"
is "$rc" 2 "an empty --container-image is refused before submitting"

# The other order: spank_efa before pyxis. The image's variables win over
# slurm-efa's (pyxis imports them after), and the node's log says how to
# fix the order.
set_plugstack "$efa_line" "$pyxis_line"
in_image older -N1 -w n1 --efa
is "$out" "n1 profile=p5 rdma= memops= net=AWS Libfabric ifname=^docker,lo,veth ld=/usr/local/lib" \
	"spank_efa listed before pyxis: the task gets the node's settings and the image's LD_LIBRARY_PATH"
log_has n1 "efa: node n1: spank_efa runs before pyxis in plugstack.conf, so container image $images/older.sqsh .*list spank_efa after pyxis" \
	"  and slurmd's log names the fix"
set_plugstack "$efa_line"
container_cleanup
