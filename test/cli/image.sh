#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-efa env --image reading a user's image as root: unpacked without
# privilege and without xattrs, device nodes and FIFOs looked at but never
# opened, a name starting with '-' never an option, and the second
# unsquashfs pass (an image's LD_LIBRARY_PATH) given only live arguments.
# Also run by the sanitizer build, where a freed argument aborts (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

chmod 755 "$tmp"
conf=$tmp/efa.conf
echo "ProfileDir=$top_srcdir/etc/profiles" >"$conf"
unset NCCL_SOCKET_IFNAME LD_LIBRARY_PATH SLURM_EFA_LIBDIRS
node=$fixtures/p5.48xlarge

# An image whose LD_LIBRARY_PATH names one directory (the usual case),
# holding EFA's libraries: read in a second unsquashfs pass.
img=$tmp/img
mkdir -p "$img/etc" "$img/usr/lib/efa"
echo 'LD_LIBRARY_PATH=/usr/lib/efa' >"$img/etc/environment"
cp "$node/opt/amazon/efa/lib/libfabric.so.1" "$img/usr/lib/efa/"
mksquashfs "$img" "$tmp/one-dir.sqsh" -quiet -noappend >/dev/null
run "$efa" env --config "$conf" --root "$node" --image "$tmp/one-dir.sqsh"
is "$rc" 1 "an image with one LD_LIBRARY_PATH directory is read (it lacks aws-ofi-nccl: exit 1)"
like "$out" "^EFA: not usable in this image: no aws-ofi-nccl" "  its libfabric found in that directory by the second pass"
unlike "$out" "no libfabric" "  (only aws-ofi-nccl is missing)"

# The second pass names those two patterns and nothing else: never the
# first pass's freed ones after them.
if command -v strace >/dev/null; then
	strace -f -qq -e trace=execve -s 300 -o "$tmp/exec.trace" \
		"$efa" env --config "$conf" --root "$node" --image "$tmp/one-dir.sqsh" >/dev/null 2>&1 || true
	second=$(grep 'execve(".*unsquashfs".* = 0$' "$tmp/exec.trace" | tail -n 1 |
		sed -e 's/^.*one-dir\.sqsh", //' -e 's/\], 0x.*$//')
	is "$second" '"usr/lib/efa/libfabric.so*", "usr/lib/efa/libnccl-net*"' \
		"  the second unsquashfs gets that directory's two patterns, nothing freed after them"
else
	ok 1 "strace is installed to see unsquashfs's arguments"
fi

# A name that starts with '-': a file to unsquashfs, never an option.
cp "$tmp/one-dir.sqsh" "$tmp/-d.sqsh"
run sh -c "cd '$tmp' && exec '$efa' env --config '$conf' --root '$node' --image -d.sqsh"
is "$rc" 1 "an image named '-d.sqsh' is read as an image, not taken for an option"
like "$out" "^EFA: not usable in this image: no aws-ofi-nccl" "  with what it holds"

# What follows is root reading a user's image: only root makes device
# nodes (a package build as a user says so and stops here).
if [ "$(id -u)" -ne 0 ]; then
	echo "ok $((tap_n + 1)) # SKIP not root: root reading a user's image with device nodes"
	echo "1..$((tap_n + 1))"
	[ "$tap_failed" -eq 0 ]
	exit
fi

# A user's image with a device node where /etc/environment should be,
# read by root: unsquashfs runs as the image's owner, who cannot make one.
dev=$tmp/dev
mkdir -p "$dev/etc"
mknod "$dev/etc/environment" c 1 3
mksquashfs "$dev" "$tmp/dev.sqsh" -quiet -noappend -all-root >/dev/null
chown nobody "$tmp/dev.sqsh"
run "$efa" env --config "$conf" --root "$node" --image "$tmp/dev.sqsh"
is "$rc" 2 "root reading a user's image with a device node in it fails"
like "$out" "unsquashfs cannot read $tmp/dev.sqsh: .*character device" "  unsquashfs, as the image's owner, could not make it"
is "$(find /tmp -maxdepth 3 -path '/tmp/slurm-efa-image.*' -type c 2>/dev/null | wc -l)" 0 \
	"  and no device node was made on this host"

# A directory image with a device node and a FIFO where files are read:
# looked at (O_PATH), never opened.
mkdir -p "$tmp/nodes/etc"
mknod "$tmp/nodes/etc/environment" c 1 3
mkfifo "$tmp/nodes/etc/ld.so.cache"
if command -v strace >/dev/null; then
	strace -f -qq -e trace=open,openat,openat2 -o "$tmp/trace" \
		"$efa" env --config "$conf" --root "$node" --image "$tmp/nodes" >/dev/null 2>&1 || true
	looked=$(grep -cE 'openat2\([0-9]+, "etc/(environment|ld\.so\.cache)".*O_PATH' "$tmp/trace" || true)
	opened=$(grep -E 'openat2?\([0-9A-Z_]+, "[^"]*etc/(environment|ld\.so\.cache)"' "$tmp/trace" |
		grep -v O_PATH | grep -v '"/etc/ld\.so\.cache"' || true)
	ok $((looked < 2)) "the image's /etc/environment and loader cache are looked at"
	is "$opened" "" "  a device node and a FIFO there are never opened"
else
	ok 1 "strace is installed to see what the image reader opens"
fi
run timeout 20 "$efa" env --config "$conf" --root "$node" --image "$tmp/nodes"
like "$out" "^image: $tmp/nodes: " "  and the image is still described"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
