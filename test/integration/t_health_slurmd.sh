# SPDX-License-Identifier: Apache-2.0
# The health check as slurmd runs it: HealthCheckProgram= is the installed
# slurm-efa-healthcheck (etc/slurm-efa-healthcheck.in, pointed at this
# build), run by the real slurmd every HealthCheckInterval= with the
# environment slurmd gives it: SLURMD_NODENAME alone, no PATH, no
# SLURM_CONF (run_script_health_check, slurmd.c). slurm.conf sits where
# this Slurm's commands find it without SLURM_CONF, as ParallelCluster
# installs Slurm: PREFIX/etc/slurm.conf for a Slurm under its own prefix
# (Debian's 22.05 scontrol stays in /usr/bin, on the default PATH, as a
# second Slurm would); for Debian's own Slurm, slurmd's configless cache
# /run/slurm/conf/slurm.conf. The check finds efa.conf and the node's tree
# through spank_efa.so's plugstack line (config=, root=$ROOTS/%n). A node
# that loses an EFA port is drained by slurmd's own run, comes back after
# HealthReturnPasses= passes once repaired, and an admin's drain is never
# touched.

hs=$SLURM_EFA_CLUSTER/health-slurmd
mkdir -p "$hs/state"
hsconf=$hs/efa.conf
printf '%s\n' "ProfileDir=$top_srcdir/etc/profiles" "NodeCacheDir=$hs/state" \
	"HealthReturnPasses=2" >"$hsconf"
sed -e "s|@bindir@|$top_builddir|g" "$top_srcdir/etc/slurm-efa-healthcheck.in" >"$hs/slurm-efa-healthcheck"
chmod 755 "$hs/slurm-efa-healthcheck"
cp -a "$FIXTURES/p4d.24xlarge/." "$hs/n2"
hs_dev=$(ls "$hs/n2/sys/class/infiniband" | sed -n 2p)
hs_port=$hs/n2/sys/class/infiniband/$hs_dev/ports/1/state

# Where this Slurm's commands find slurm.conf with no SLURM_CONF.
if [ "$SLURM_EFA_TEST_LAYOUT" = pcluster ]; then
	is "$(realpath "$SLURM_PREFIX/etc/slurm.conf")" "$(realpath "$SLURM_CONF")" \
		"layout pcluster: slurm.conf is at $SLURM_PREFIX/etc, where this Slurm looks without SLURM_CONF"
	like "$(tr '\0' '\n' </proc/"$(cat "$SLURM_EFA_CLUSTER/run/slurmd-n2.pid")"/environ)" "^PATH=/usr/sbin:/usr/bin:/sbin:/bin$" \
		"  slurmd runs without $SLURM_PREFIX/bin on its PATH"
	# (slurmd sets SLURM_CONF itself, to the file it read, which a
	# reconfigure's re-exec then shows: slurmd.c.)
	hs_conf=$(tr '\0' '\n' </proc/"$(cat "$SLURM_EFA_CLUSTER/run/slurmd-n2.pid")"/environ | grep -a '^SLURM_CONF=' || true)
	ok "$([ -z "$hs_conf" ] || [ "$hs_conf" = "SLURM_CONF=$SLURM_PREFIX/etc/slurm.conf" ]; echo $?)" \
		"  it was given no SLURM_CONF (${hs_conf:-none})"
	unlike "$(tr '\0' ' ' </proc/"$(cat "$SLURM_EFA_CLUSTER/run/slurmd-n2.pid")"/cmdline)" " -f " \
		"  (no -f on its command line)"
fi
hs_placed=0
place_slurm_conf && hs_placed=1
ok "$((!hs_placed))" "slurm.conf is where this Slurm's commands look without SLURM_CONF (${conf_placed:-there already}; not placed: a slurm.conf of another cluster is there)"
if ((hs_placed)); then
	cp "$SLURM_CONF" "$hs/slurm.conf.before"
	set_plugstack "$(plugin_line "config=$hsconf" "root=$ROOTS/%n")"
	set_root n2 "$hs/n2"
	printf '%s\n' "HealthCheckProgram=$hs/slurm-efa-healthcheck" "HealthCheckInterval=3" \
		"HealthCheckNodeState=ANY" >>"$SLURM_CONF"
	scontrol reconfigure || true
	wait_nodes_idle || diag "nodes not idle after the reconfigure: $(node_states | paste -sd ' ')"

	sleep 7
	is "$(node_line n2 | cut -d' ' -f1)" "idle" "slurmd's own health checks leave a healthy node in service"

	echo "1: DOWN" >"$hs_port"
	t0=$SECONDS
	until_up 30 node_drained_for n2 "efa:"
	like "$(node_line n2)" "^drain(ed|ing) efa: EFA device $hs_dev: port 1 is 1: DOWN, not ACTIVE$" \
		"a port goes down: slurmd's run of HealthCheckProgram drains n2, the reason naming the device (in $((SECONDS - t0)) s)"
	unlike "$(grep -a "health_check failed" "$SLURM_EFA_CLUSTER/log/slurmd-n2.log" | grep -v "port 1 is" | tail -n 3 || true)" \
		"scontrol|configuration|efa.conf" "  slurmd's log shows no check that could not reach Slurm or find its configuration"

	echo "4: ACTIVE" >"$hs_port"
	t0=$SECONDS
	until_up 40 node_idle n2
	is "$(node_line n2 | cut -d' ' -f1)" "idle" \
		"repaired, n2 comes back by itself after HealthReturnPasses=2 passes (in $((SECONDS - t0)) s)"

	scontrol update NodeName=n3 State=DRAIN Reason="admin: new DIMM"
	sleep 8
	like "$(node_line n3)" "^drain(ed|ing) admin: new DIMM$" "an admin's drain is never touched by the health checks"
	scontrol update NodeName=n3 State=RESUME || true

	# Back as it was: no health check, slurm.conf where the other tests want it.
	cp "$hs/slurm.conf.before" "$SLURM_CONF"
	scontrol reconfigure || true
	unplace_slurm_conf
	set_root n2 "$FIXTURES/p4d.24xlarge"
	[ "$(node_line n2 | cut -d' ' -f1)" = idle ] || scontrol update NodeName=n2 State=RESUME || true
	wait_nodes_idle || diag "nodes not idle after t_health_slurmd.sh: $(node_states | paste -sd ' ')"
fi
