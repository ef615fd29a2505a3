# SPDX-License-Identifier: Apache-2.0
# libslurmrest and slurm-efa zones/sync/submit against the cluster's real
# slurmrestd: the unix socket (local auth) and 127.0.0.1 with JWT.

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
efa=$top_builddir/slurm-efa
rest_home=$SLURM_EFA_CLUSTER/rest-client
rest_client_setup "$rest_home"
snapshot=$rest_home/snapshot.json

run "${as_rest[@]}" "$efa" zones --config "$rest_conf"
is "$rc" 0 "zones over the unix socket (local auth)"
like "$out" "^us-west-2a +az-us-west-2a +2 +2  cpu,gpu$" "  zone a: 2 nodes, 2 usable, partitions cpu and gpu"
like "$out" "^us-west-2b +az-us-west-2b +2 +2  gpu$" "  zone b: 2 nodes, 2 usable"

run "$efa" zones --config "$rest_conf" "${jwt[@]}" --json
is "$(jq -r '[.zones[] | "\(.zone)=\(.nodes)"] | join(" ")' <<<"$out")" "us-west-2a=2 us-west-2b=2" \
	"zones over TCP with a JWT, as JSON"
run "$efa" zones --config "$rest_conf" "${jwt[@]}" --partition cpu
unlike "$out" "us-west-2b" "zones --partition cpu shows only zone a"

echo "not-a-token" >"$rest_home/bad.jwt"
chmod 600 "$rest_home/bad.jwt"
run "$efa" zones --config "$rest_conf" --url "$SLURMRESTD_URL" --user root --token-file "$rest_home/bad.jwt"
is "$rc" 1 "a bad token is refused (exit 1)"
if [ "$SLURMRESTD_API" = v0.0.38 ]; then
	# Slurm 22.05's slurmrestd passes the token on and answers slurmctld's
	# refusal with HTTP 500.
	like "$out" "HTTP 500; with a JWT this usually means the token is expired or not root's: renew it with scontrol token username=root" \
		"  with a hint at the token (22.05 answers 500, not 401)"
else
	# 24.11 and 26.05 answer 511 (Network Authentication Required).
	like "$out" "refused the credentials \(HTTP 511\).*not root's: check RestUser= and renew it with scontrol token username=root" \
		"  with a hint at the token"
fi
unlike "$out" "not-a-token" "  without printing the token"

# A token renewed in its file is used from sync's next request.
install -m 600 "$rest_home/bad.jwt" "$rest_home/renewed.jwt"
"$efa" sync --interval 1 --config "$rest_conf" --url "$SLURMRESTD_URL" --user root \
	--token-file "$rest_home/renewed.jwt" --snapshot "$rest_home/renewed.json" 2>"$rest_home/renewed.log" &
renew_pid=$!
bg_track "$renew_pid"
sleep 2.5
ok "$([ ! -e "$rest_home/renewed.json" ]; echo $?)" "sync --interval 1 with a rejected token writes no snapshot"
like "$(cat "$rest_home/renewed.log")" "renew it with scontrol token username=root" "  and says to renew the token"
install -m 600 /dev/null "$rest_home/renewed.jwt.new"
scontrol token username=root lifespan=300 >"$rest_home/renewed.jwt.new"
mv "$rest_home/renewed.jwt.new" "$rest_home/renewed.jwt"
for _ in $(seq 50); do [ -s "$rest_home/renewed.json" ] && break; sleep 0.2; done
ok "$([ -s "$rest_home/renewed.json" ]; echo $?)" "  once the token is renewed in its file, sync writes it, with no restart"
ok "$(bg_alive "$renew_pid"; echo $?)" "  (the same sync process)"
bg_kill "$renew_pid"
wait "$renew_pid" 2>/dev/null || true
unlike "$(cat "$rest_home/renewed.log")" "not-a-token|$(cut -c1-40 "$rest_home/renewed.jwt" | sed 's/^SLURM_JWT=//')" \
	"  its log holds neither token"

run "${as_rest[@]}" "$efa" sync --once --config "$rest_conf"
is "$rc" 0 "sync --once writes the snapshot"
is "$(jq -r '[.format, (.nodes | length), (.zones | length), .api_version] | join(" ")' "$snapshot")" \
	"1 4 2 $REST_CLIENT_API" "  format, 4 nodes, 2 zones, the API version used"
is "$(jq -r .slurm_version "$snapshot")" "$SLURM_RELEASE" "  Slurm's version"
is "$(jq -r '.nodes[] | select(.name == "n3") | "\(.zone) \(.feature) \(.state) \(.usable)"' "$snapshot")" \
	"us-west-2b az-us-west-2b idle true" "  a node's zone, feature, state"
is "$(stat -c %a "$snapshot")" "644" "  readable by slurmctld"

scontrol update nodename=n4 state=drain reason="slurm-efa test"
run "${as_rest[@]}" "$efa" sync --once --config "$rest_conf"
is "$(jq -r '.zones[] | select(.name == "us-west-2b") | "\(.nodes) \(.usable)"' "$snapshot")" "2 1" \
	"a drained node is not usable in the next snapshot"
is "$(jq -r '.nodes[] | select(.name == "n4") | .state' "$snapshot")" "idle+drain" "  its state says why"
scontrol update nodename=n4 state=resume

# The daemon: conditional refresh, and the last good snapshot kept.
before=$(jq .generated "$snapshot")
"${as_rest[@]}" "$efa" sync --interval 1 --config "$rest_conf" 2>"$rest_home/sync.log" &
sync_pid=$!
bg_track "$sync_pid"
# Until the node resumed above is quiet: while Slurm still updates it,
# 22.05's v0.0.38 fails a conditional request (the nodes changed, the
# partitions did not: nodes.c then errs on slurm_load_partitions' "no
# change") and sync asks for everything each second.
until_up 30 grep -q "conditional request answered 304" "$rest_home/sync.log"
# (a round more: the snapshot that round refreshed is written after its log line)
sleep 1.5
bg_kill "$sync_pid"
wait "$sync_pid" 2>/dev/null || true
like "$(cat "$rest_home/sync.log")" "nodes unchanged since [0-9]+ \(conditional request answered 304\)" \
	"sync --interval 1 uses conditional requests on an idle cluster"
like "$(cat "$rest_home/sync.log")" "stopping" "  and stops cleanly on SIGTERM"
ok $(($(jq .generated "$snapshot") > before ? 0 : 1)) "  while keeping the snapshot's time fresh"
cp "$snapshot" "$rest_home/good.json"
run "${as_rest[@]}" "$efa" sync --once --config "$rest_conf" --url "unix:$SLURM_EFA_CLUSTER/no-such.sock"
is "$rc" 1 "sync without slurmrestd fails"
like "$out" "keeping the last good snapshot|no snapshot written yet" "  and says it keeps the snapshot"
cmp -s "$snapshot" "$rest_home/good.json"
ok $? "  the last good snapshot is untouched"

# Submissions.
cat >"$rest_home/job.sh" <<'JOB'
#!/bin/bash
srun -l bash -c 'echo "$SLURMD_NODENAME $SLURM_EFA_PROFILE $SLURM_EFA_BIND $CUDA_VISIBLE_DEVICES"' | sort
JOB
chmod 755 "$rest_home/job.sh"
out_file=$SLURM_EFA_CLUSTER/out/submit-jwt.out
run "$efa" submit --config "$rest_conf" "${jwt[@]}" --efa --efa-bind=closest -p cpu -N2 \
	--gpus-per-node=2 -J rest-efa -o "$out_file" "$rest_home/job.sh"
is "$rc" 0 "slurm-efa submit --efa over JWT"
like "$out" "^Submitted batch job [0-9]+$" "  prints the job id"
wait_job "$(grep -o '[0-9]*$' <<<"$out")"
is "$(cat "$out_file" 2>/dev/null)" $'0: n1 p5 closest 0,1\n1: n2 p4d closest 0,1' \
	"  its tasks get the EFA environment and bindings of their nodes"

out_file=$SLURM_EFA_CLUSTER/out/submit-local.out
run "${as_rest[@]}" "$efa" submit --config "$rest_conf" --json --efa=auto -p cpu -N1 \
	-o "$out_file" "$rest_home/job.sh"
job=$(jq -r .job_id <<<"$out" 2>/dev/null || true)
ok $((${job:-0} > 0 ? 0 : 1)) "submit over the unix socket, --json"
wait_job "${job:-0}"
like "$(cat "$out_file" 2>/dev/null)" "^0: n[12] p(5|4d) +$" "  the job ran in the partition it asked for"

# The batch step of a job from slurmrestd: its options are only in the job's
# environment (Slurm applies them to srun steps, the plugin to the batch step).
rest_ckpt=$SLURM_EFA_CLUSTER/rest-ckpt
mkdir -p "$rest_ckpt/run"
# Three whole Trainer saves (only complete checkpoints count for retention).
for n in 1 2 3; do
	mkdir -p "$rest_ckpt/run/checkpoint-$n"
	printf '{\n  "global_step": %s\n}\n' "$n" >"$rest_ckpt/run/checkpoint-$n/trainer_state.json"
	touch -d "-$((10 - n)) min" "$rest_ckpt/run/checkpoint-$n"
done
cat >"$rest_home/batch.sh" <<'JOB'
#!/bin/bash
echo "batch: $SLURM_EFA_MODE $NCCL_SOCKET_IFNAME $CHECKPOINT_DIR"
JOB
out_file=$SLURM_EFA_CLUSTER/out/submit-batch.out
run "$efa" submit --config "$rest_conf" "${jwt[@]}" --efa --checkpoint-dir="$rest_ckpt/run" \
	--checkpoint-keep=1 -p gpu -N1 -o "$out_file" "$rest_home/batch.sh"
wait_job "$(grep -o '[0-9]*$' <<<"$out")"
like "$(cat "$out_file" 2>/dev/null)" "^batch: required \^docker,lo,veth $rest_ckpt/run$" \
	"slurm-efa submit --efa --checkpoint-dir: the batch script itself gets the EFA environment and CHECKPOINT_DIR"
is "$(ls "$rest_ckpt/run")" "checkpoint-3" "  and --checkpoint-keep=1 trims the directory when the batch step ends"

# Every job option the plugin registers (one table, job_options.h) goes
# through submit, --opt=V and --opt V alike, checked as the plugin takes it.
cat >"$rest_home/opts.sh" <<'JOB'
#!/bin/bash
echo "resume=$SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa_resume order=$SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa_rank_order"
JOB
out_file=$SLURM_EFA_CLUSTER/out/submit-opts.out
run "$efa" submit --config "$rest_conf" "${jwt[@]}" --efa-resume 2 --efa-rank-order=topology -p cpu -N1 \
	-o "$out_file" "$rest_home/opts.sh"
is "$rc" 0 "slurm-efa submit --efa-resume 2 --efa-rank-order=topology is accepted"
wait_job "$(grep -o '[0-9]*$' <<<"$out")"
is "$(cat "$out_file" 2>/dev/null)" "resume=2 order=topology" "  and both reach the job as sbatch's do"
run "$efa" submit --config "$rest_conf" "${jwt[@]}" --efa-resume=lots -p cpu -N1 "$rest_home/opts.sh"
is "$rc" 2 "  --efa-resume=lots is refused before anything is sent"
like "$out" "slurm-efa submit: efa: .*--efa-resume" "  with the plugin's own message"

# A partition's CheckpointSignal=: a job through slurmrestd does not pass
# sbatch's cli_filter, so slurm-efa submit adds the --signal itself; a
# job's own --signal is kept. Each script says which signal reached it
# before its 1-minute limit (slurmctld sends it from a pass every 30 s).
cp "$rest_conf" "$rest_home/efa.conf.plain"
echo "PartitionName=cpu CheckpointSignal=USR1@50" >>"$rest_conf"
cat >"$rest_home/sig.sh" <<'JOB'
#!/bin/bash
for sig in USR1 USR2 TERM; do trap "echo got $sig; exit 0" "$sig"; done
for i in $(seq 90); do sleep 1; done
JOB
if [ "$SLURMRESTD_API" = v0.0.38 ]; then
	# Slurm 22.05's slurmrestd refuses B: (the batch script alone).
	run "$efa" submit --config "$rest_conf" "${jwt[@]}" --efa=auto -p cpu -N1 -t 1 -o /dev/null "$rest_home/sig.sh"
	is "$rc" 0 "slurm-efa submit --efa=auto -p cpu on 22.05's v0.0.38: the job goes"
	like "$out" "efa: no checkpoint signal set for this job: slurmrestd v0\.0\.38 \(Slurm 22\.05\) cannot signal the batch script alone \(B:USR1@50\)" \
		"  without the partition's signal, saying why"
	scancel "$(grep -o '[0-9]*$' <<<"$out" || echo 0)" 2>/dev/null || true
	run "$efa" submit --config "$rest_conf" "${jwt[@]}" --signal=B:USR2@50 -p cpu -N1 -t 1 -o /dev/null "$rest_home/sig.sh"
	is "$rc" 1 "  --signal=B:USR2@50 there is refused before it is sent"
	like "$out" "v0\.0\.38 \(Slurm 22\.05\) takes no B: or R:" "  saying why"
else
	sig_jobs=()
	for how in default own; do
		opts=()
		[ "$how" = own ] && opts=(--signal=B:USR2@50)
		run "$efa" submit --config "$rest_conf" "${jwt[@]}" --efa=auto -p cpu -N1 -t 1 "${opts[@]}" \
			-o "$SLURM_EFA_CLUSTER/out/sig-$how.out" "$rest_home/sig.sh"
		is "$rc/$(grep -c 'slurmrestd warns' <<<"$out")" "0/0" \
			"slurm-efa submit --efa=auto -p cpu ${opts[*]}: accepted, no field unknown to $SLURMRESTD_API"
		sig_jobs+=("$(grep -o '[0-9]*$' <<<"$out" || echo 0)")
	done
	for job in "${sig_jobs[@]}"; do wait_job "$job"; done
	is "$(grep -E '^got' "$SLURM_EFA_CLUSTER/out/sig-default.out" 2>/dev/null)" "got USR1" \
		"  the partition's CheckpointSignal=USR1@50 reaches the batch script before its time limit"
	is "$(grep -E '^got' "$SLURM_EFA_CLUSTER/out/sig-own.out" 2>/dev/null)" "got USR2" \
		"  a job's own --signal=B:USR2@50 is kept"
fi
run "$efa" submit --config "$rest_conf" "${jwt[@]}" --signal=B:USR1@99999 -p cpu "$rest_home/sig.sh"
is "$rc" 1 "--signal=B:USR1@99999 is refused"
like "$out" "signal: use sbatch's --signal form, \[B:\]SIG\[@SECONDS\]" "  saying the form"
cp "$rest_home/efa.conf.plain" "$rest_conf"

run "$efa" submit --config "$rest_conf" "${jwt[@]}" -p nosuch "$rest_home/job.sh"
is "$rc" 1 "a refused submission exits 1"
# 26.05: "Batch job submission failed (Invalid partition name specified, error 2000)".
like "$out" "job refused: Slurm: (Batch job submission failed \()?Invalid partition name specified,? \(?error 2000\)" \
	"  with Slurm's reason"

# Every API version this slurmrestd serves, pinned, over the unix socket
# and over JWT; a job submitted in each gets its SPANK options in the batch
# step and in its srun steps.
run "${as_rest[@]}" "$efa" sync --once --config "$rest_conf"
is "$(jq -r .api_version "$snapshot")" "$REST_CLIENT_API" "unpinned, sync negotiates $REST_CLIENT_API, the newest both speak"
cat >"$rest_home/versions.sh" <<'JOB'
#!/bin/bash
echo "batch: $SLURM_EFA_MODE $CHECKPOINT_DIR"
srun -l bash -c 'echo "$SLURMD_NODENAME $SLURM_EFA_PROFILE $SLURM_EFA_BIND $CUDA_VISIBLE_DEVICES $CHECKPOINT_DIR"' | sort
JOB
chmod 755 "$rest_home/versions.sh"
is "$SLURMRESTD_APIS" "$SLURMRESTD_APIS_INSTALLED" \
	"slurmrestd answers in every API version whose plugin this Slurm installs (test/cluster/up leaves out one that does not)"
for api in $SLURMRESTD_APIS; do
	for via in unix jwt; do
		if [ "$via" = unix ]; then as=("${as_rest[@]}") creds=(); else as=() creds=("${jwt[@]}"); fi
		run "${as[@]}" "$efa" zones --config "$rest_conf" "${creds[@]}" --api-version "$api"
		like "$out" "^us-west-2b +az-us-west-2b +2 +2  gpu$" "$api pinned, $via: zones"
		run "${as[@]}" "$efa" topo --cluster --config "$rest_conf" "${creds[@]}" --api-version "$api"
		like "$out" "^ +n3 +idle$" "  topo --cluster shows the cluster's nodes"
	done
	run "$efa" sync --once --config "$rest_conf" "${jwt[@]}" --api-version "$api" --snapshot "$rest_home/pinned.json"
	is "$rc:$(jq -r '"\(.api_version) \(.nodes | length) \(.zones | length)"' "$rest_home/pinned.json" 2>/dev/null)" \
		"0:$api 4 2" "  sync --once over JWT writes its snapshot with it"
	rm -f "$rest_home/pinned.json"
	"${as_rest[@]}" "$efa" sync --interval 1 --config "$rest_conf" --api-version "$api" \
		--snapshot "$rest_home/pinned.json" 2>"$rest_home/pinned.log" &
	pinned_pid=$!
	bg_track "$pinned_pid"
	# Nodes settle a few seconds after a job ends; then answers are 304.
	for _ in $(seq 50); do
		grep -q "answered 304" "$rest_home/pinned.log" && break
		sleep 0.2
	done
	bg_kill "$pinned_pid"
	wait "$pinned_pid" 2>/dev/null || true
	is "$(jq -r .api_version "$rest_home/pinned.json" 2>/dev/null)" "$api" "  sync --interval over the unix socket too"
	like "$(cat "$rest_home/pinned.log")" "nodes unchanged since [0-9]+ \(conditional request answered 304\)" \
		"  with conditional requests"
	ckpt=$rest_ckpt/$api
	out_file=$SLURM_EFA_CLUSTER/out/submit-$api.out
	# A signal for the batch script, in the fields of the version.
	sig_opt=()
	[ "$api" = v0.0.38 ] || sig_opt=(--signal=B:USR2@60)
	run "$efa" submit --config "$rest_conf" "${jwt[@]}" --api-version "$api" --efa --efa-bind=closest \
		--checkpoint-dir="$ckpt" -p cpu -N2 --gpus-per-node=2 -t 0:05:00 --exclusive \
		"${sig_opt[@]}" -J "rest-$api" -o "$out_file" "$rest_home/versions.sh"
	is "$rc" 0 "  submit over JWT"
	unlike "$out" "slurmrestd warns" "  every field is one the version knows"
	job=$(grep -o '[0-9]*$' <<<"$out" || true)
	wait_job "${job:-0}"
	is "$(cat "$out_file" 2>/dev/null)" \
		"batch: required $ckpt"$'\n'"0: n1 p5 closest 0,1 $ckpt"$'\n'"1: n2 p4d closest 0,1 $ckpt" \
		"  --efa, --efa-bind and --checkpoint-dir reach the batch step and each srun task"
	show=$(scontrol show job "${job:-0}" 2>/dev/null)
	like "$show" "TimeLimit=00:05:00" "  -t 0:05:00 is the job's time limit"
	# --exclusive: the job holds all 16 CPUs of each of its 2 nodes.
	like "$show" "NumCPUs=32 " "  --exclusive gives it its nodes whole"
	out_file=$SLURM_EFA_CLUSTER/out/submit-unix-$api.out
	# Over the socket the job is slurmrestd's user's, whose directory this is.
	install -d -o "$SLURMRESTD_USER" -m 700 "$ckpt-unix"
	run "${as_rest[@]}" "$efa" submit --config "$rest_conf" --api-version "$api" --efa=auto \
		--checkpoint-dir="$ckpt-unix" -p cpu -N1 -o "$out_file" "$rest_home/versions.sh"
	is "$rc" 0 "  submit over the unix socket"
	wait_job "$(grep -o '[0-9]*$' <<<"$out" || echo 0)"
	# (Its two lines joined: grep takes a newline in a pattern for "or".)
	like "$(paste -sd '|' "$out_file" 2>/dev/null)" "^batch: auto $ckpt-unix\|0: n[12] p(5|4d) +$ckpt-unix\$" \
		"  its job too gets --efa=auto and --checkpoint-dir in both steps"
done
wrong=""
for api in v0.0.45 v0.0.44 v0.0.43 v0.0.42 v0.0.41 v0.0.40 v0.0.38; do
	[[ " $SLURMRESTD_APIS " == *" $api "* ]] || { wrong=$api; break; }
done
cp "$snapshot" "$rest_home/good.json"
run "${as_rest[@]}" "$efa" sync --once --config "$rest_conf" --api-version "$wrong"
is "$rc" 1 "pinned to $wrong, which this slurmrestd does not serve: sync fails"
like "$out" "does not serve the pinned API version ${wrong//./\\.}: it serves ${SLURMRESTD_APIS// /, }; libslurmrest speaks v0\\.0\\.38 to v0\\.0\\.45" \
	"  naming what it serves and what slurm-efa speaks"
cmp -s "$snapshot" "$rest_home/good.json"
ok $? "  and writes nothing"

# The installed library and its pkg-config file build the example.
inst=$SLURM_EFA_CLUSTER/install
make -s -C "$top_builddir" install DESTDIR="$inst" >/dev/null 2>&1
pc=$(find "$inst" -name slurmrest.pc | head -n 1)
ok $([ -n "$pc" ]; echo $?) "make install puts slurmrest.pc in place"
run env PKG_CONFIG_SYSROOT_DIR="$inst" PKG_CONFIG_PATH="$(dirname "$pc")" \
	sh -c "cc -o '$rest_home/nodes' '$top_srcdir/examples/nodes.c' \$(pkg-config --cflags --libs slurmrest)"
is "$rc" 0 "examples/nodes.c builds with pkg-config --cflags --libs slurmrest"
run "${as_rest[@]}" env LD_LIBRARY_PATH="$(dirname "$(dirname "$pc")")" "$rest_home/nodes" "unix:$SLURMRESTD_SOCKET"
like "$out" "^Slurm ${SLURM_RELEASE//./\\.}, API ${REST_CLIENT_API//./\\.}\$" "  and lists the cluster's nodes"
like "$out" "^n3 idle az-us-west-2b,efa$" "  with state and features"
