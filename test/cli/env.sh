#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# slurm-efa env on the fixtures: what a step would get, and why (TAP).
set -euo pipefail
# shellcheck source=preamble.sh
. "${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}/test/cli/preamble.sh"

conf=$tmp/efa.conf
echo "ProfileDir=$top_srcdir/etc/profiles" >"$conf"
unset NCCL_SOCKET_IFNAME LD_LIBRARY_PATH SLURM_EFA_LIBDIRS

run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge"
is "$rc" 0 "env on a p5 exits 0"
like "$out" "^node: p5\.48xlarge \(DMI\), 32 EFA devices \(32 usable\), 8 GPU, 0 Neuron$" "  node summary"
like "$out" "^profile: p5$" "  profile"
like "$out" "^  set +NCCL_SOCKET_IFNAME=\^docker,lo,veth$" "  a variable the profile sets"
like "$out" "^  skipped +FI_EFA_USE_DEVICE_RDMA$" "  a variable whose condition does not hold"
like "$out" "efa-cuda\.profile:[0-9]+: libfabric 2\.1\.0amzn5\.0 is not < 1\.18" "  with the reason"
# (before installation, libtool's wrapper adds its own .libs after ours)
like "$out" "^  prepended +LD_LIBRARY_PATH=/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu(:|$)" \
	"  the library path, the stack's directories first"

mkdir -p "$tmp/conda/lib"
: >"$tmp/conda/lib/libfabric.so.1"
run env LD_LIBRARY_PATH="$tmp/conda/lib" "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge"
# (libtool's wrapper puts its own .libs first)
like "$out" "^  user +LD_LIBRARY_PATH=([^ ]*:)?$tmp/conda/lib$" "a job with its own libfabric keeps its library path"
like "$out" "the job brings its own EFA libraries \($tmp/conda/lib\): the node's are not put first" "  saying why"

# Inside a job: a value slurm-efa recorded setting, changed since, is the job's.
run env NCCL_SOCKET_IFNAME=ens5 SLURM_EFA_SET=NCCL_SOCKET_IFNAME:210c92cf \
	"$efa" env --config "$conf" --root "$fixtures/p5.48xlarge"
like "$out" "^  user +NCCL_SOCKET_IFNAME=ens5$" "a value the job changed after slurm-efa set it is kept"
like "$out" "changed by the job after slurm-efa set it: the job's value wins" "  saying why"

run env NCCL_SOCKET_IFNAME=ens5 "$efa" env --config="$conf" --root="$fixtures/p5.48xlarge"
like "$out" "^  user +NCCL_SOCKET_IFNAME=ens5$" "a variable already set: the user's value wins"

# A site profile that sets what aws-ofi-nccl tunes per platform is warned about.
mkdir -p "$tmp/site"
cp "$top_srcdir"/etc/profiles/*.profile "$tmp/site/"
printf '%s\n' 'Match=p5.48xlarge' 'Include=efa-cuda' 'Env=NCCL_ALGO=Ring' >"$tmp/site/p5.profile"
printf '%s\n' "ProfileDir=$tmp/site" "ForceEnv=NCCL_BUFFSIZE" >"$tmp/site.conf"
run "$efa" env --config "$tmp/site.conf" --root "$fixtures/p5.48xlarge"
like "$out" "^warning: p5\.profile:3 sets NCCL_ALGO, which aws-ofi-nccl tunes per platform" \
	"a site profile setting NCCL_ALGO is warned about"
like "$out" "^warning: ForceEnv= forces NCCL_BUFFSIZE, which aws-ofi-nccl tunes per platform" \
	"  and ForceEnv= of NCCL_BUFFSIZE"
run "$efa" env --json --config "$tmp/site.conf" --root "$fixtures/p5.48xlarge"
is "$(jq -r '.warnings | length' <<<"$out")" 2 "  both in the JSON's warnings"
run "$efa" env --json --config "$conf" --root "$fixtures/p5.48xlarge"
is "$(jq -r '.warnings | length' <<<"$out")" 0 "the shipped profiles draw no warning"

run "$efa" env --json --config "$conf" --root "$fixtures/p4d.24xlarge"
is "$rc" 0 "env --json on a p4d exits 0"
is "$(jq -r '.profile' <<<"$out")" "p4d" "  JSON profile"
is "$(jq -r '.node.efa_devices, .node.gpus, .stack.libfabric' <<<"$out" | tr '\n' ' ')" \
	"4 8 1.16.1amzn3.0 " "  JSON node and stack"
is "$(jq -r '.env[] | select(.name == "FI_EFA_USE_DEVICE_RDMA") | .value + " " + .decision' <<<"$out")" \
	"1 set" "  JSON variable with its decision"

run "$efa" env --json --config "$conf" --root "$fixtures/trn1.32xlarge"
is "$(jq -r '.profile, .node.neuron_devices' <<<"$out" | tr '\n' ' ')" "trn1 16 " "trn1: Neuron profile and devices"
like "$(jq -r '.env[] | select(.name == "FI_EFA_FORK_SAFE") | .value + " " + .reason' <<<"$out")" \
	"^1 efa-neuron\.profile:[0-9]+, kernel 5\.10\.228-219\.884\.amzn2\.x86_64 is < 5\.15$" \
	"  FI_EFA_FORK_SAFE=1 on its Amazon Linux 2 kernel, saying why"
# The same node on a newer kernel (Amazon Linux 2023).
cp -a "$fixtures/trn1.32xlarge" "$tmp/trn1-al2023"
echo "6.1.119-129.201.amzn2023.x86_64" >"$tmp/trn1-al2023/proc/sys/kernel/osrelease"
run "$efa" env --config "$conf" --root "$tmp/trn1-al2023"
like "$out" "^  skipped +FI_EFA_FORK_SAFE$" "trn1 on kernel 6.1: no FI_EFA_FORK_SAFE"
like "$out" "kernel 6\.1\.119-129\.201\.amzn2023\.x86_64 is not < 5\.15" "  with the reason"
like "$out" "^  set +FI_PROVIDER=efa$" "  the other Neuron settings stay"

# aws-ofi-nccl 1.6.x wants GPUDirect RDMA asked for, whatever libfabric is.
cp -a "$fixtures/p5.48xlarge" "$tmp/p5-ofi16"
sed -i 's/libnccl-ofi_1\.16\.3-1_amd64/libnccl-ofi_1.6.0-1_amd64/' "$tmp/p5-ofi16/opt/amazon/efa_installed_packages"
run "$efa" env --config "$conf" --root "$tmp/p5-ofi16"
like "$out" "^  set +FI_EFA_USE_DEVICE_RDMA=1$" "p5 with aws-ofi-nccl 1.6.0: FI_EFA_USE_DEVICE_RDMA=1"
like "$out" "efa-cuda\.profile:[0-9]+, ofi-nccl 1\.6\.0 is < 1\.7\.0" "  because of the plugin's version"

run "$efa" env --config "$conf" --root "$fixtures/cpu-only"
is "$rc" 1 "env on a node without EFA exits 1"
like "$out" "EFA: not usable: no EFA device" "  and says why"

run "$efa" env --config "$conf" --root "$fixtures/p5-pod"
like "$out" "32 EFA devices \(16 usable\), 4 GPU" "a pod sees every device but can use a subset"

# A p4d that lost one of its four EFA devices: a step with --efa=required
# fails there (t_faults.sh), so env says so and exits 1; auto runs on the
# devices it has, with the variables shown.
run "$efa" env --config "$conf" --root "$fixtures/p4d-3nics"
is "$rc" 1 "env on a p4d with 3 of its 4 EFA devices exits 1"
like "$out" "^EFA: the node has 3 of the 4 EFA devices a p4d\.24xlarge has \(1 missing: PCI 0000:a0:1b\.0 without the efa driver\): it needs repair$" \
	"  naming the missing device"
like "$out" "^profile: p4d$" "  with what --efa=auto still gets"
run "$efa" env --json --config "$conf" --root "$fixtures/p4d-3nics"
is "$(jq -r '.usable, (.needs_repair | startswith("3 of the 4")), (.env | length > 0)' <<<"$out" | tr '\n' ' ')" \
	"true true true " "  in JSON: usable, needs_repair, the variables"
run "$efa" env --json --config "$conf" --root "$fixtures/p4d.24xlarge"
is "$(jq -r '.needs_repair' <<<"$out")" "null" "  a whole p4d needs no repair"

echo "SnapshotMaxAge=soon" >"$tmp/bad.conf"
run "$efa" env --config "$tmp/bad.conf"
is "$rc" 2 "a bad efa.conf exits 2"
like "$out" "slurm-efa: $tmp/bad.conf:1: invalid SnapshotMaxAge=soon" "  naming file and line"

run env SLURM_EFA_CONF="$conf" "$efa" env --root "$fixtures/p5en.48xlarge"
like "$out" "^profile: p5en$" "efa.conf found through \$SLURM_EFA_CONF"

# On NVIDIA GPUs a step with --efa pins NCCL to aws-ofi-nccl's network.
run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge"
like "$out" "^  set +NCCL_NET=AWS Libfabric$" "NCCL_NET is pinned on a p5, so NCCL fails instead of using sockets"
run "$efa" env --config "$conf" --root "$fixtures/trn1.32xlarge"
unlike "$out" "NCCL_NET" "  not on a trn1"

# --image: what a container step would get, the image's stack on the
# node's hardware; a directory or a squashfs file (mksquashfs, when this
# machine has it: scripts/install-deps installs squashfs-tools).
img=$tmp/image
mkdir -p "$img/etc" "$img/opt" "$img/usr/lib/app"
cp -a "$fixtures/p4d.24xlarge/opt/." "$img/opt/"
echo 'LD_LIBRARY_PATH=/usr/lib/app' >"$img/etc/environment"
run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge" --image "$img"
is "$rc" 0 "env --image DIR with an older stack than the p5's exits 0"
like "$out" "^image: $img: its own EFA software, this node's hardware$" "  naming the image"
like "$out" "^stack: installer 1\.21\.0, libfabric 1\.16\.1amzn3\.0" "  with the image's versions"
like "$out" "^  set +FI_EFA_USE_DEVICE_RDMA=1$" "  and the rule for the image's libfabric"
like "$out" "^  prepended +LD_LIBRARY_PATH=/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib:/usr/lib/app$" \
	"  the image's directories first, its own LD_LIBRARY_PATH kept"
run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge" --image "$img" --json
is "$(jq -r '.image, .stack.libfabric, (.env[] | select(.name == "FI_EFA_USE_DEVICE_RDMA") | .value)' <<<"$out" | paste -sd' ')" \
	"$img 1.16.1amzn3.0 1" "  --json says the same"
# Every install layout of the EFA software, as an image's own: its
# directories on the task's library path, aws-ofi-nccl's version from the
# installer's record or, where none has it, from the library itself.
while IFS='|' read -r layout dirs version; do
	run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge" --image "$fixtures/$layout"
	like "$out" "^stack: .*, aws-ofi-nccl ${version//./\\.}," "$layout: aws-ofi-nccl $version"
	like "$out" "^  prepended +LD_LIBRARY_PATH=$dirs(:|$)" "$layout: LD_LIBRARY_PATH=$dirs"
done <<'EOT'
stack-deb-arm64|/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib/aarch64-linux-gnu|1.16.3
stack-rpm-al2023|/opt/amazon/efa/lib64:/opt/amazon/ofi-nccl/lib64|1.16.3
stack-ngc-v1|/opt/amazon/efa/lib:/opt/amazon/aws-ofi-nccl/lib|1.14.0
stack-ngc-v2|/opt/amazon/efa/lib:/opt/amazon/aws-ofi-nccl/lib|1.16.3
stack-source-1.5|/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib|1.5.0aws
stack-source-1.11|/opt/amazon/efa/lib:/opt/aws-ofi-nccl/lib|1.11.0-aws
EOT
run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge" --image "$fixtures/stack-source-1.5" --json
is "$(jq -r .stack.ofi_nccl <<<"$out")" "1.5.0aws" "  --json: the version read from the library"

if command -v mksquashfs >/dev/null; then
	mksquashfs "$img" "$tmp/image.sqsh" -quiet -noappend >/dev/null
	# (In the background for its pid: its copy is /tmp/slurm-efa-image.PID.*,
	# whatever other tests run beside it.)
	"$efa" env --config "$conf" --root "$fixtures/p5.48xlarge" --image "$tmp/image.sqsh" \
		>"$tmp/env.out" 2>&1 &
	env_pid=$!
	wait "$env_pid" || true
	out=$(cat "$tmp/env.out")
	like "$out" "^  prepended +LD_LIBRARY_PATH=/opt/amazon/efa/lib64:/opt/aws-ofi-nccl/lib:/usr/lib/app$" \
		"env --image FILE.sqsh reads the squashfs image as the directory"
	is "$(find /tmp -maxdepth 1 -name "slurm-efa-image.$env_pid.*" | wc -l)" 0 \
		"  and leaves no unpacked copy behind"
	left=""
	for d in /tmp/slurm-efa-image.[0-9]*.*; do
		[ -e "$d" ] || continue
		p=${d#/tmp/slurm-efa-image.}
		kill -0 "${p%%.*}" 2>/dev/null || left="$left $d"
	done
	is "$left" "" "  nor does any run that has ended (a copy names its process)"
	head -c 4096 /dev/urandom >"$tmp/bad.sqsh"
	printf 'hsqs' | dd of="$tmp/bad.sqsh" conv=notrunc status=none
	run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge" --image "$tmp/bad.sqsh"
	is "$rc" 2 "a corrupt squashfs image exits 2"
	like "$out" "unsquashfs cannot read $tmp/bad.sqsh: a corrupt image\?" "  saying so"
else
	ok 1 "mksquashfs (squashfs-tools) is installed for env --image FILE.sqsh"
fi
mkdir -p "$tmp/bare/etc"
run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge" --image "$tmp/bare"
is "$rc" 1 "an image without EFA's libraries exits 1"
like "$out" "^EFA: not usable in this image: no libfabric .*; no aws-ofi-nccl" "  saying what it lacks"
# An image whose /opt is a link out of it, to the node's stack: not followed.
mkdir -p "$tmp/escape/etc"
ln -s "$fixtures/p4d.24xlarge/opt" "$tmp/escape/opt"
run "$efa" env --config "$conf" --root "$fixtures/p5.48xlarge" --image "$tmp/escape"
like "$out" "^stack: installer unknown, libfabric unknown" "an image's link out of it leads nowhere"
run "$efa" env --config "$conf" --image "$tmp/nothing-here"
is "$rc" 2 "a missing image exits 2"
: >"$tmp/not-an-image"
run "$efa" env --config "$conf" --image "$tmp/not-an-image"
like "$out" "is neither a squashfs image nor a directory" "a file that is not an image is refused"

run "$efa" --config "$conf" --root="$fixtures/p5.48xlarge" --json env
is "$rc" 0 "the common options before the command"
like "$out" '"instance_type": "p5\.48xlarge"' "  are the command's: --root's node, as JSON"
run "$efa" --root "$fixtures/p5.48xlarge" env --config "$conf"
like "$out" "^profile: p5$" "  and mix with those after it"
mkdir -p "$tmp/no-profiles"
echo "ProfileDir=$tmp/no-profiles" >"$tmp/no-profiles.conf"
run "$efa" env --config "$tmp/no-profiles.conf" --root "$fixtures/p5.48xlarge"
is "$rc" 2 "a ProfileDir= without profiles exits 2"
like "$out" "no \*\.profile files in ProfileDir=$tmp/no-profiles: install slurm-efa's profiles there, or set ProfileDir= in efa\.conf" \
	"  and says what to do"
run "$efa" --root
is "$rc" 2 "a common option without its value before the command exits 2"

# Options with a value, --opt=V and --opt V alike (cli_option_value).
run "$efa" sync --interval=0
is "$rc/$out" "2/slurm-efa sync: --interval takes whole seconds >= 1" "sync --interval=0 is judged as --interval 0"
run "$efa" sync --interval
is "$rc/$out" "2/slurm-efa: --interval needs a value" "  --interval without one: says so"

run "$efa" frobnicate
is "$rc" 2 "an unknown command exits 2"
like "$out" "unknown command 'frobnicate'" "  and says so"
run "$efa" env --root
is "$rc" 2 "an option without its value exits 2"
run "$efa" --version
like "$out" "^slurm-efa [0-9.]+ \(built for Slurm [0-9.]+\)$" "--version"

# Every command answers --help and -h, wherever they stand, and help
# COMMAND, with its own usage on stdout and exit 0.
commands=$(sed -n 's/^\t{ "\([a-z-]*\)", cmd_.*/\1/p' "$top_srcdir/src/cli/slurm-efa.c")
ok "$([ "$(wc -w <<<"$commands")" -ge 9 ]; echo $?)" "found the command table in src/cli/slurm-efa.c (its 9 commands or more)"
for c in $commands; do
	set +e
	help=$("$efa" "$c" --help 2>"$tmp/help.err")
	rc=$?
	set -e
	is "$rc:$(cat "$tmp/help.err")" "0:" "slurm-efa $c --help exits 0, nothing on stderr"
	like "$help" "^usage: slurm-efa $c( |\$)" "  prints $c's usage on stdout"
	like "$help" "slurm-efa\(1\) describes each option" "  and points to the man page"
	run "$efa" "$c" --json -h
	is "$rc:$out" "0:$help" "slurm-efa $c --json -h: the same, after another option"
	run "$efa" help "$c"
	is "$rc:$out" "0:$help" "slurm-efa help $c: the same"
done
run "$efa" help
is "$rc" 0 "slurm-efa help exits 0"
like "$out" "COMMAND --help" "  and says how to see a command's options"
run "$efa" help frobnicate
is "$rc" 2 "slurm-efa help of an unknown command exits 2"
like "$out" "unknown command 'frobnicate'" "  and names it"
run "$efa" stats x
is "$rc" 2 "a usage error of stats exits 2"
like "$out" "^slurm-efa stats: 'x' is not a job id" "  and its message names the command as every command's does"

echo "1..$tap_n"
[ "$tap_failed" -eq 0 ]
