#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-efa's enroot hook on every path it has, run as enroot runs it
# (ENROOT_ROOTFS, ENROOT_MOUNTS, the job's variables), under each shell a
# node may have: Debian's bash, and bash 4.2 (Amazon Linux 2, RHEL 7) when
# the test command built it ($SLURM_EFA_BASH42, scripts/build-bash). A
# hook that fails stops every container on the node, EFA or not (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

conf=$tmp/efa.conf
ckroot=$tmp/ckroot
echo "PartitionName=gpu CheckpointRoot=$ckroot" >"$conf"
# A job's own efa.conf that would allow anything: never the hook's.
echo "PartitionName=gpu CheckpointRoot=/" >"$tmp/permissive.conf"
# The node's slurm.conf where this build's Slurm has its default (the
# hook's @slurm_conf@), naming spank_efa.so with config=$conf; a job's own
# slurm.conf, whose plugin line names the permissive one.
mkdir -p "$tmp/slurm" "$tmp/job-slurm"
for d in slurm job-slurm; do
	printf 'ClusterName=c\nPlugStackConfig=%s\n' "$tmp/$d/plugstack.conf" >"$tmp/$d/slurm.conf"
done
echo "required spank_efa.so config=$conf" >"$tmp/slurm/plugstack.conf"
echo "required spank_efa.so config=$tmp/permissive.conf" >"$tmp/job-slurm/plugstack.conf"
hook=$tmp/50-slurm-efa.sh
sed -e "s|@bindir[@]|$top_builddir|g" -e "s|@slurm_conf[@]|$tmp/slurm/slurm.conf|g" \
	"$top_srcdir/etc/enroot/hooks.d/50-slurm-efa.sh.in" >"$hook"
mkdir -p "$ckroot/alice/run1" "$ckroot/alice/has space" "$tmp/plain-rootfs" \
	"$tmp/own-rootfs/opt/amazon/efa" "$tmp/node/efa/lib"
: >"$tmp/node/libnccl-net.so"

shells=(/bin/bash)
if [ -n "${SLURM_EFA_BASH42:-}" ]; then
	shells+=("$SLURM_EFA_BASH42")
	diag "bash 4.2: $("$SLURM_EFA_BASH42" -c 'echo "$BASH_VERSION"')"
else
	echo "# bash 4.2: not tested (no --bash-source given to the test command)"
fi

# hook_run SHELL ROOTFS VAR=VALUE...: the hook as enroot runs it, with only
# the variables given; $out, $rc and $mounts (what it asked enroot to mount).
hook_run() {
	local shell=$1 rootfs=$2
	shift 2
	: >"$tmp/mounts"
	run env -i PATH=/usr/bin:/bin ENROOT_ROOTFS="$rootfs" ENROOT_MOUNTS="$tmp/mounts" \
		ENROOT_ENVIRON="$tmp/environ" "$@" "$shell" "$hook"
	mounts=$(cat "$tmp/mounts")
}

# refused DESCRIPTION REGEX: the last run failed the container's start,
# with a line that matches.
refused() {
	is "$rc/$mounts" "1/" "$1"
	like "$out" "^efa: enroot hook: .*$2" "  saying so"
}

for sh in "${shells[@]}"; do
	v=$("$sh" -c 'echo "${BASH_VERSINFO[0]}.${BASH_VERSINFO[1]}"')
	hook_run "$sh" "$tmp/plain-rootfs"
	is "$rc/$mounts" "0/" "bash $v: a container with no slurm-efa variables starts, nothing mounted"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_HOST_MOUNTS=
	is "$rc/$mounts" "0/" "bash $v: an empty host library list mounts nothing"

	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_CHECKPOINT_DIR="$ckroot/alice/run1" \
		SLURM_JOB_PARTITION=gpu
	is "$rc/$mounts" "0/$ckroot/alice/run1 $ckroot/alice/run1 none x-create=dir,rbind,rw,nosuid,nodev" \
		"bash $v: the checkpoint directory is bound at its own path"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_CHECKPOINT_DIR="$ckroot/alice/run1"
	is "$rc/$mounts" "0/$ckroot/alice/run1 $ckroot/alice/run1 none x-create=dir,rbind,rw,nosuid,nodev" \
		"bash $v: so it is for a job without a partition"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_CHECKPOINT_DIR="$tmp" SLURM_JOB_PARTITION=gpu \
		SLURM_EFA_CONF="$tmp/permissive.conf"
	is "$rc/$mounts" "1/" "bash $v: a directory outside the partition's root is refused"
	like "$out" "efa: enroot hook: checkpoint directory '$tmp' is refused for partition gpu" \
		"  whatever efa.conf the job's SLURM_EFA_CONF names"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_CHECKPOINT_DIR="$tmp" SLURM_JOB_PARTITION=gpu \
		SLURM_CONF="$tmp/job-slurm/slurm.conf"
	is "$rc/$mounts" "1/" "bash $v: or whatever slurm.conf the job's SLURM_CONF names (its plugin line permissive)"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_CHECKPOINT_DIR=alice/run1
	is "$rc" 1 "bash $v: a relative checkpoint directory is refused"
	like "$out" "'alice/run1' is not an absolute path" "  saying so"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_CHECKPOINT_DIR="$ckroot/alice/../alice/run1"
	refused "bash $v: a path with '..' is refused" "has '\.', '\.\.' or '//' in it"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_CHECKPOINT_DIR="$ckroot/alice/has space"
	refused "bash $v: a path with white space is refused" "white space or control characters"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_CHECKPOINT_DIR="$ckroot/alice/gone" \
		SLURM_JOB_PARTITION=gpu
	refused "bash $v: a directory that is not there is refused" "'$ckroot/alice/gone' is not a directory on this node"

	hook_run "$sh" "$tmp/plain-rootfs" \
		SLURM_EFA_HOST_MOUNTS="$tmp/node/efa:/opt/amazon/efa,$tmp/node/libnccl-net.so:/opt/aws-ofi-nccl/lib/libnccl-net.so"
	is "$rc/$mounts" "0/$tmp/node/efa /opt/amazon/efa none x-create=dir,bind,ro,nosuid,nodev
$tmp/node/libnccl-net.so /opt/aws-ofi-nccl/lib/libnccl-net.so none x-create=file,bind,ro,nosuid,nodev" \
		"bash $v: the node's EFA libraries are bound read-only into an image without its own"
	hook_run "$sh" "$tmp/own-rootfs" SLURM_EFA_HOST_MOUNTS="$tmp/node/efa:/opt/amazon/efa"
	is "$rc/$mounts" "0/" "bash $v: an image with its own EFA software gets none of the node's"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_HOST_MOUNTS="$tmp/node/efa:/usr/lib"
	refused "bash $v: a library mounted anywhere else is refused" "'/usr/lib' is not where EFA's software lives"
	hook_run "$sh" "$tmp/plain-rootfs" SLURM_EFA_HOST_MOUNTS="$tmp/node/gone:/opt/amazon/efa"
	refused "bash $v: a library that is gone is refused" "the node's '$tmp/node/gone' is gone"
done

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
