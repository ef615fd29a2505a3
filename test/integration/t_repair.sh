# SPDX-License-Identifier: Apache-2.0
# The repair ladder (common/health/repair.h, cli/repair_round.c) on the real
# cluster, every program where Slurm runs it: slurmd runs the health check
# (HealthCheckProgram=, as t_health_slurmd.sh) and RebootProgram=,
# slurmctld runs SuspendProgram= and ResumeProgram= (power saving). The
# test's programs act as the machines would (test/cluster/machine): a
# reboot kills the node's slurmd and starts it again with -b, a new boot to
# slurmctld, leaving the fixture's broken port as it was unless
# machine/heal-on-reboot exists; SuspendProgram ends the "instance" (kills
# its slurmd), ResumeProgram brings up a new one, healthy, in its place. Each
# round of the ladder is a new `slurm-efa sync --once`, so every decision
# is read back from Slurm's state, as after a restart of sync. Run on
# 22.05 (which returns a rebooted node whatever drained it) and 26.05
# (which keeps a drained node drained through a reboot, as 24.11 does:
# proc_req.c); 24.11 would add half a minute to CI for the same answers.

case $SLURM_RELEASE in
24.*)
	# Not a skip (scripts/test counts one as a failure): left out on
	# purpose, to keep the suite's time.
	echo "# t_repair.sh: the repair ladder is tested on 22.05 and 26.05, not on $SLURM_RELEASE"
	return 0
	;;
esac

rp=$SLURM_EFA_CLUSTER/repair
mkdir -p "$rp/state"
rest_client_setup "$rp/client"
rpconf=$rp/efa.conf
printf '%s\n' "ProfileDir=$top_srcdir/etc/profiles" "NodeCacheDir=$rp/state" "HealthReturnPasses=2" \
	"RestURL=$SLURMRESTD_URL" "Snapshot=$rp/snapshot.json" \
	"RepairAction=reboot,replace" "RepairWindow=300" "RepairMax=1" >"$rpconf"
chmod 644 "$rpconf"
sed -e "s|@bindir@|$top_builddir|g" "$top_srcdir/etc/slurm-efa-healthcheck.in" >"$rp/slurm-efa-healthcheck"
chmod 755 "$rp/slurm-efa-healthcheck"
cp -a "$FIXTURES/p4d.24xlarge/." "$rp/n2"
cp -a "$FIXTURES/trn1.32xlarge/." "$rp/n4"

# The programs Slurm runs, acting as the machines would (test/cluster/machine).
"$top_srcdir/test/cluster/machine" "$SLURM_EFA_CLUSTER" programs "$rp"
mc=$SLURM_EFA_CLUSTER/machine
rm -f "$mc/reboots" "$mc/power.log" "$mc/heal-on-reboot" "$mc/hold-boot"

rp_boot() {	# rp_boot NODE: its BootTime= as slurmctld has it
	scontrol -o show node "$1" | grep -o ' BootTime=[^ ]*'
}
rp_round() {	# one round of the ladder, a new process each time: its log in $out
	run "$top_builddir/slurm-efa" sync --once --config "$rpconf" "${jwt[@]}"
}
rp_stage() {	# rp_stage NODE: its stage in repair --status --json
	"$top_builddir/slurm-efa" repair --status --json --config "$rpconf" "${jwt[@]}" |
		jq -r --arg n "$1" '.nodes[] | select(.node == $n) | .stage'
}
port_down() {	# port_down NODE
	local f
	for f in "$rp/$1"/sys/class/infiniband/*/ports/1/state; do echo "1: DOWN" >"$f"; break; done
}

rp_placed=0
place_slurm_conf && rp_placed=1
ok "$((!rp_placed))" "slurm.conf is where the programs Slurm runs find it (${conf_placed:-there already})"
if ((rp_placed)); then
	cp "$SLURM_CONF" "$rp/slurm.conf.before"
	set_plugstack "$(plugin_line "config=$rpconf" "root=$ROOTS/%n")"
	set_root n2 "$rp/n2"
	set_root n4 "$rp/n4"
	# SuspendTime= far away: power saving on (it needs all three), no
	# idle node of the tests suspended by it. slurmctld's power saving
	# thread (which in 26.05 also sends the reboots) looks every
	# power_save_interval= (10 s by default, power_save.c): 1 s here.
	printf '%s\n' "HealthCheckProgram=$rp/slurm-efa-healthcheck" "HealthCheckInterval=3" \
		"HealthCheckNodeState=ANY" "RebootProgram=$mc/reboot" "ResumeTimeout=60" \
		"SuspendProgram=$mc/suspend" "ResumeProgram=$mc/resume" "SuspendTime=3600" \
		"SuspendTimeout=5" >>"$SLURM_CONF"
	if grep -q '^SlurmctldParameters=' "$SLURM_CONF"; then
		sed -i 's/^SlurmctldParameters=.*/&,power_save_interval=1/' "$SLURM_CONF"
	else
		echo "SlurmctldParameters=power_save_interval=1" >>"$SLURM_CONF"
	fi
	scontrol reconfigure || true
	wait_nodes_idle || diag "nodes not idle after the reconfigure: $(node_states | paste -sd ' ')"

	# A job on n2; then n2 and n4 each lose an EFA port, and an admin
	# drains n3.
	job=$(sbatch --parsable -N1 -w n2 -o /dev/null --wrap 'sleep 300')
	until_up 30 sh -c "squeue -h -j $job -o %T | grep -q RUNNING" || true
	n2_boot=$(rp_boot n2)
	n4_boot=$(rp_boot n4)
	scontrol update NodeName=n3 State=DRAIN Reason="admin: new DIMM"
	port_down n2
	port_down n4
	until_up 30 node_drained_for n2 "efa:" || true
	until_up 30 node_drained_for n4 "efa:" || true
	like "$(node_line n2)" "^draining efa: EFA device" "n2 with a job is draining by its health check"
	like "$(node_line n4)" "^drained efa: EFA device" "  n4, idle, drained"

	is "$(rp_stage n2)/$(rp_stage n4)/$(rp_stage n3)" "wait-jobs/reboot-due/" \
		"repair --status: n2 waits for its job, n4 is due a reboot, n3 (an admin's) is not listed"
	touch "$mc/hold-boot"
	rp_round
	is "$rc" 0 "a round of the ladder (sync --once) succeeds"
	like "$out" "repair: node n4: reboot requested \\(scontrol reboot ASAP\\) \\(first rung" \
		"  n4 is rebooted, said with its evidence"
	unlike "$out" "node n[23]:" "  n2 (its job runs) and n3 (an admin's drain) are not touched"
	until_up 20 sh -c "grep -q '^n4 ' '$mc/reboots'" || true
	like "$(cat "$mc/reboots")" "^n4 [0-9]+$" "  slurmd runs RebootProgram on n4"
	is "$(rp_stage n4)" "rebooting" "  repair --status: n4 rebooting"

	scancel "$job"
	until_up 30 node_settled n2 || true
	rp_round
	unlike "$out" "node n2: reboot" "n2's job ended while n4 reboots: n2 waits (RepairMax=1)"
	is "$(rp_stage n2)" "wait-turn" "  repair --status: n2 wait-turn"
	"$top_builddir/slurm-efa" repair --status --config "$rpconf" "${jwt[@]}" >"$rp/status.txt" 2>&1 || true
	like "$(cat "$rp/status.txt")" "n2 +wait-turn +reboot,replace .* -- partition gpu has 1 node under repair \\(RepairMax=1\\)" \
		"  the table says why"

	# n4's reboot clears its fault: back by itself after its checks.
	is "$(rp_stage n4)" "rebooting" "n4 is still rebooting while its machine is down ($(scontrol -o show node n4 | grep -o ' State=[^ ]*'))"
	touch "$mc/heal-on-reboot"
	rm -f "$mc/hold-boot"
	t0=$SECONDS
	until_up 60 node_idle n4 || true
	is "$(node_line n4 | cut -d' ' -f1)" "idle" \
		"n4, rebooted and healthy, is back in service by itself (in $((SECONDS - t0)) s)"
	unlike "$(rp_boot n4)" "^$n4_boot$" "  slurmctld saw a new boot (was$n4_boot, now$(rp_boot n4))"

	# n2: the reboot does not clear it; the ladder's next rung replaces it.
	rm -f "$mc/heal-on-reboot"
	rp_round
	like "$out" "repair: node n2: reboot requested" "n4 back: n2's turn, a reboot"
	until_up 20 sh -c "grep -q '^n2 ' '$mc/reboots'" || true
	until_up 60 node_drained_for n2 "efa: EFA device" || true
	like "$(node_line n2)" "^drained efa: EFA device" \
		"  rebooted, its fault still there: the health check drains it again with the fault"
	unlike "$(rp_boot n2)" "^$n2_boot$" "  after a new boot (was$n2_boot, now$(rp_boot n2))"
	is "$(rp_stage n2)" "replace-due" "  repair --status: replace due"
	rp_round
	like "$out" "repair: node n2: powered down by force for a new instance \\(State=POWER_DOWN_FORCE\\) \\(the fault came back [0-9]+ s after the node came up" \
		"  a new round (a new process) replaces it, from Slurm's state alone"
	until_up 30 sh -c "grep -qx 'suspend n2' '$mc/power.log'" || true
	like "$(cat "$mc/power.log" 2>/dev/null)" "^suspend n2$" "  slurmctld runs SuspendProgram for n2"
	like "$(scontrol -o show node n2 | grep -o ' State=[^ ]*')" "POWER" "  n2 is powering down"
	like "$(rp_stage n2)" "^(replacing|replaced)$" "  repair --status: $(rp_stage n2)"

	# Slurm brings it back when a job needs it: a new, healthy instance.
	until_up 30 sh -c "scontrol -o show node n2 | grep -q POWERED_DOWN" || true
	batch -N1 -w n2 "printenv SLURMD_NODENAME"
	is "$rc/$out" "0/n2" "a job asking for n2 runs"
	like "$(cat "$mc/power.log")" "resume n2" "  on the new instance ResumeProgram brought up"
	until_up 20 node_idle n2 || true
	is "$(node_line n2 | cut -d' ' -f1)" "idle" "  and n2 is in service, healthy"
	is "$(rp_stage n2)" "" "  repair --status lists it no more"

	like "$(node_line n3)" "^drained admin: new DIMM$" "an admin's drain is never touched"
	unlike "$(cat "$mc/reboots")" "^n3 " "  n3 was never rebooted"

	# Back as it was.
	scontrol update NodeName=n3 State=RESUME || true
	cp "$rp/slurm.conf.before" "$SLURM_CONF"
	scontrol reconfigure || true
	unplace_slurm_conf
	set_root n2 "$FIXTURES/p4d.24xlarge"
	set_root n4 "$FIXTURES/trn1.32xlarge"
	for n in n2 n4; do [ "$(node_line $n | cut -d' ' -f1)" = idle ] || scontrol update NodeName=$n State=RESUME || true; done
	wait_nodes_idle || diag "nodes not idle after t_repair.sh: $(node_states | paste -sd ' ')"
fi
