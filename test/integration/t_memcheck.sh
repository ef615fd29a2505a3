# SPDX-License-Identifier: Apache-2.0
# slurm-efa and libslurmrest (examples/nodes) under valgrind memcheck
# against the cluster's real slurmrestd, over the unix socket (local auth)
# and 127.0.0.1 with a JWT: test/cli/valgrind.sh does the same on fixtures
# and stand-in servers, this follows every request, answer and error of a
# real 22.05 through zones, sync (with topology.conf), submit and topo
# --cluster. slurm-efa env and check never talk to slurmrestd: valgrind.sh
# covers them. Each run is also checked for having done its work, so a
# clean run that never reached slurmrestd does not pass.

# shellcheck source=../lib/memcheck.sh
. "$top_srcdir/test/lib/memcheck.sh"

if ! command -v valgrind >/dev/null; then
	ok 1 "valgrind is installed (scripts/install-deps installs it)"
	return 0
fi

write_efa_conf
set_plugstack "$(plugin_line "config=$EFA_CONF" "root=$ROOTS/%n")"
efa=$top_builddir/slurm-efa
mc=$SLURM_EFA_CLUSTER/memcheck
rest_client_setup "$mc"
mc_conf=$rest_conf
mc_token=$mc/root.jwt

memcheck_prefix=("${as_rest[@]}")
memcheck "zones over the unix socket" "$efa" zones --config "$mc_conf"
like "$out" "^us-west-2a +az-us-west-2a +2 +2  cpu,gpu$" "  lists the zones"
memcheck_prefix=()
memcheck "zones --json over JWT" "$efa" zones --config "$mc_conf" "${jwt[@]}" --json
is "$(jq -r '[.zones[] | .zone] | join(" ")' <<<"$out" 2>&1)" "us-west-2a us-west-2b" "  lists the zones"

memcheck_prefix=("${as_rest[@]}")
memcheck "sync --once over the unix socket" "$efa" sync --once --config "$mc_conf"
is "$(jq '.nodes | length' "$mc/snapshot.json" 2>&1)" 4 "  writes a snapshot of the 4 nodes"
# topology.conf of our own (the cluster's is t_topology.sh's), and a
# reload command, which sync runs in a child.
printf '%s\n' "RestURL=unix:$SLURMRESTD_SOCKET" "Snapshot=$mc/snapshot-jwt.json" \
	"Topology=tree" "TopologyFile=$mc/topology.conf" "TopologyReload=\"echo reloaded\"" \
	>"$mc/topology-efa.conf"
memcheck_prefix=()
memcheck "sync --once over JWT, with topology.conf" "$efa" sync --once --config "$mc/topology-efa.conf" "${jwt[@]}"
like "$out" "TopologyReload 'echo reloaded' done: reloaded" "  writes topology.conf and runs the reload"
like "$(cat "$mc/topology.conf" 2>&1)" "^SwitchName=us-west-2b " "  with the zones as switches"
# The daemon: the first answer, conditional requests answered 304, SIGTERM.
memcheck_prefix=(timeout --preserve-status -s TERM 8)
memcheck "sync --interval 1 over JWT, stopped by SIGTERM" "$efa" sync --interval 1 --config "$mc_conf" \
	"${jwt[@]}" --snapshot "$mc/daemon.json"
like "$out" "conditional request answered 304" "  polls with conditional requests"
like "$out" "stopping" "  and stops on SIGTERM"

memcheck_prefix=("${as_rest[@]}")
memcheck "topo --cluster over the unix socket" "$efa" topo --cluster --config "$mc_conf"
like "$out" "^zone us-west-2a: 2 nodes, 2 usable$" "  shows the tree"
memcheck_prefix=()
memcheck "topo --cluster --json over JWT" "$efa" topo --cluster --json --config "$mc_conf" "${jwt[@]}"
is "$(jq .nodes <<<"$out" 2>&1)" 4 "  shows the tree's 4 nodes"

# Real submissions, waited for so that later tests find the nodes idle.
# The profile is set in the tasks of steps, not in the batch script.
cat >"$mc/job.sh" <<'JOB'
#!/bin/bash
srun bash -c 'echo "$SLURM_EFA_PROFILE"'
JOB
chmod 755 "$mc/job.sh"
memcheck "submit --efa over JWT" "$efa" submit --config "$mc_conf" "${jwt[@]}" --efa -p cpu -N1 \
	-J memcheck -o "$mc/jwt.out" "$mc/job.sh"
like "$out" "^Submitted batch job [0-9]+$" "  submits the job"
jwt_job=$(grep -o '[0-9]*$' <<<"$out" || true)
memcheck_prefix=("${as_rest[@]}")
memcheck "submit --json over the unix socket" "$efa" submit --config "$mc_conf" --json --efa=auto \
	-p cpu -N1 -J memcheck -o "$mc/local.out" "$mc/job.sh"
local_job=$(jq -r .job_id <<<"$out" 2>/dev/null || true)
ok $((${local_job:-0} > 0 ? 0 : 1)) "  submits the job"
memcheck "a refused submission over the unix socket" "$efa" submit --config "$mc_conf" -p nosuch "$mc/job.sh"
like "$out" "job refused: Slurm: .*Invalid partition name specified" "  says Slurm's reason"
wait_job "${jwt_job:-0}"
wait_job "${local_job:-0}"
for job in "jwt:${jwt_job:-0}" "local:${local_job:-0}"; do
	failed_before=$tap_failed
	like "$(cat "$mc/${job%%:*}.out" 2>&1)" "^p(5|4d)$" \
		"  the job submitted over ${job%%:*} ran with its node's EFA profile"
	[ "$tap_failed" -eq "$failed_before" ] ||
		{ diag "job ${job#*:}: $(job_state "${job#*:}")"; diag "$(job_log "${job#*:}")"; }
done

# The library's example, both ways.
nodes=$top_builddir/examples/nodes
memcheck "examples/nodes over the unix socket" "$nodes" "unix:$SLURMRESTD_SOCKET"
like "$out" "^n3 idle az-us-west-2b,efa$" "  lists the nodes"
memcheck_prefix=()
# The token travels in the environment, never on a command line.
SLURM_JWT=$(sed -n 's/^SLURM_JWT=//p' "$mc_token") \
	memcheck "examples/nodes over JWT" "$nodes" "$SLURMRESTD_URL" root
like "$out" "^Slurm ${SLURM_RELEASE//./\\.}, API ${REST_CLIENT_API//./\\.}\$" "  reaches slurmrestd"
# The token as "Authorization: Bearer" (auth_bearer), no user named: the
# user is the token's own. slurmrestd reads that header from 23.11 on.
SLURM_JWT=$(sed -n 's/^SLURM_JWT=//p' "$mc_token") \
	memcheck "examples/nodes over JWT as a Bearer token" "$nodes" "$SLURMRESTD_URL" --bearer
case $SLURM_RELEASE in
2[0-2].* | 23.0[0-5].*)
	like "$rc $out" "^1 .*refused the credentials \(HTTP 401\)" \
		"  is refused by Slurm $SLURM_RELEASE, which reads no Bearer token (HTTP 401)" ;;
*)
	like "$out" "^n3 idle az-us-west-2b,efa$" "  lists the nodes" ;;
esac

# Failures from the real server: 22.05 answers a bad JWT with HTTP 500.
echo "not-a-token" >"$mc/bad.jwt"
chmod 600 "$mc/bad.jwt"
memcheck "zones with a bad JWT" "$efa" zones --config "$mc_conf" --url "$SLURMRESTD_URL" --user root \
	--token-file "$mc/bad.jwt"
is "$rc" 1 "  is refused (exit 1)"
SLURM_JWT=not-a-token memcheck "examples/nodes with a bad JWT" "$nodes" "$SLURMRESTD_URL" root
is "$rc" 1 "  is refused (exit 1)"
