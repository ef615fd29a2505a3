# SPDX-License-Identifier: Apache-2.0
# The node health check in the real Slurm: slurm-efa check --node --drain
# (what HealthCheckProgram=slurm-efa-healthcheck runs) drains a node whose
# EFA port went down, with a reason that says so, returns it after
# HealthReturnPasses= passing checks in a row, and never touches a node an
# admin drained.

efa=$top_builddir/slurm-efa
health=$SLURM_EFA_CLUSTER/health
mkdir -p "$health"
hconf=$health/efa.conf
printf '%s\n' "ProfileDir=$top_srcdir/etc/profiles" "NodeCacheDir=$health/state" \
	"HealthReturnPasses=2" >"$hconf"
# n2's hardware, a p4d whose second EFA device's port can go down.
root=$health/n2-root
cp -a "$FIXTURES/p4d.24xlarge/." "$root"
dev=$(ls "$root/sys/class/infiniband" | sed -n 2p)
port=$root/sys/class/infiniband/$dev/ports/1/state
node_check() {	# node_check NODE: the check as slurmd would run it on NODE
	run env SLURMD_NODENAME="$1" "$efa" check --node --drain --config "$hconf" --root "$root"
}
state_of() {	# state_of NODE: "STATE REASON" as sinfo shows them
	sinfo -h -n "$1" -N -o '%T %E' | head -n 1
}
# (After State=RESUME, 24.11 and later show the old reason beside "idle"
# until slurmd registers again: a node in service is judged by its state.)
in_service() {	# in_service NODE: its state alone
	state_of "$1" | cut -d' ' -f1
}

node_check n2
is "$rc/$(state_of n2)" "0/idle none" "a healthy node is left in service"

echo "1: DOWN" >"$port"
node_check n2
is "$rc" 1 "an EFA port down: the check fails"
like "$out" "^drained node n2: efa: EFA device $dev: port 1 is 1: DOWN, not ACTIVE$" "  and drains the node"
like "$(state_of n2)" "^drain(ed|ing) efa: EFA device $dev: port 1 is 1: DOWN, not ACTIVE$" \
	"  Slurm shows it drained, the reason naming the device and the port"
run sbatch -w n2 --immediate=5 -o /dev/null --wrap true
ok $((rc == 0)) "  no job starts there"
node_check n2
is "$(state_of n2 | cut -d' ' -f2-)" "efa: EFA device $dev: port 1 is 1: DOWN, not ACTIVE" \
	"  a second failed check leaves it as it is"

echo "4: ACTIVE" >"$port"
node_check n2
is "$rc" 0 "the port back: the check passes"
like "$out" "^node n2: 1 of 2 passing checks before it returns to service$" \
	"  one passing check is not enough"
like "$(state_of n2)" "^drain" "  the node stays drained"
node_check n2
like "$out" "^returned node n2 to service: 2 checks in a row passed since slurm-efa drained it$" \
	"  two in a row return it"
for _ in $(seq 20); do [ "$(in_service n2)" = "idle" ] && break; sleep 0.5; done
is "$(in_service n2)" "idle" "  Slurm shows it idle again"

# An admin's drain is the admin's: never replaced, never returned.
scontrol update NodeName=n3 State=DRAIN Reason="admin: replacing a DIMM"
echo "1: DOWN" >"$port"
node_check n3
like "$out" "^node n3 is already out of service \(admin: replacing a DIMM\): left as it is$" \
	"a failed check on a node an admin drained leaves it alone"
echo "4: ACTIVE" >"$port"
node_check n3
node_check n3
node_check n3
is "$(state_of n3 | cut -d' ' -f2-)" "admin: replacing a DIMM" \
	"  passing checks never return it: its reason is still the admin's"
scontrol update NodeName=n3 State=RESUME

# Bad input is not a fault: a broken efa.conf drains nothing.
echo "HealthReturnPasses=many" >"$health/bad.conf"
run env SLURMD_NODENAME=n2 "$efa" check --node --drain --config "$health/bad.conf" --root "$root"
is "$rc" 2 "a bad efa.conf: a usage error"
is "$(in_service n2)" "idle" "  and the node is not drained for it"

# The node's name names a file in NodeCacheDir=: one that is not a name is refused.
run env SLURMD_NODENAME=../n2 "$efa" check --node --drain --config "$hconf" --root "$root"
is "$rc" 2 "SLURMD_NODENAME with a '/' in it: a usage error"
like "$out" "cannot tell this node's name: set SLURMD_NODENAME" "  which says what to set"

# EFA error counters: a port whose retransmit timeouts rose by more than
# HealthRetransTimeouts= since the last check fails it; a slow rise does not.
echo "HealthRetransTimeouts=100" >>"$hconf"
counter=$root/sys/class/infiniband/$dev/ports/1/hw_counters/retrans_timeout_events
mkdir -p "$(dirname "$counter")"
echo 1000 >"$counter"
node_check n2
is "$rc/$(in_service n2)" "0/idle" "EFA counters: a first check keeps them, judges nothing"
echo 1050 >"$counter"
node_check n2
is "$rc/$(in_service n2)" "0/idle" "  retransmit timeouts up by 50 (HealthRetransTimeouts=100): the check passes"
echo 1600 >"$counter"
node_check n2
is "$rc" 1 "  up by 550: the check fails"
like "$out" "^drained node n2: efa: EFA device $dev: port 1: retrans_timeout_events rose by 550 since the last check \(HealthRetransTimeouts=100\)$" \
	"  and drains the node, the reason naming the device, the counter and the limit"
node_check n2
node_check n2
like "$out" "^returned node n2 to service" "  two checks with no rise return it"
for _ in $(seq 20); do [ "$(in_service n2)" = "idle" ] && break; sleep 0.5; done

# Impaired connections count what n2's peers did (a dead peer raises them
# on every healthy node that talked to it): over their limit they are said,
# never a reason to drain n2.
echo "HealthImpairedConnections=10" >>"$hconf"
peers=$root/sys/class/infiniband/$dev/ports/1/hw_counters/impaired_remote_conn_events
echo 7 >"$peers"
node_check n2
echo 900 >"$peers"
node_check n2
is "$rc/$(in_service n2)" "0/idle" "impaired connections up by 893 (HealthImpairedConnections=10): what peers did, n2 stays in service"
like "$out" "warning: EFA device $dev: port 1: impaired_remote_conn_events rose by 893 since the last check \(HealthImpairedConnections=10\): what its peers did, not this node's link; not drained" \
	"  with a warning that says so"

# GPUs against the node's GRES (HealthGres=yes): n2's Gres=gpu:4 in Slurm,
# its p4d hardware shows 8; five of them losing their driver leaves 3.
echo "HealthGres=yes" >>"$hconf"
node_check n2
is "$rc/$(in_service n2)" "0/idle" "HealthGres=yes: 8 GPUs for Slurm's Gres=gpu:4, the check passes"
stash=$health/unbound
mkdir -p "$stash"
gpus=$(ls "$root/proc/driver/nvidia/gpus" | head -n 5)
for g in $gpus; do
	mkdir -p "$stash/$g"
	mv "$root/sys/bus/pci/drivers/nvidia/$g" "$stash/$g/bound"
	mv "$root/sys/bus/pci/devices/$g/driver" "$stash/$g/driver"
	mv "$root/proc/driver/nvidia/gpus/$g" "$stash/$g/proc"
done
first=$(head -n 1 <<<"$gpus")
node_check n2
is "$rc" 1 "  five GPUs lose their driver: the check fails"
like "$out" "^drained node n2: efa: 3/4 GPUs \(Gres=gpu:4\); $first has no nvidia driver;" \
	"  and drains the node, naming how many GPUs it has of its GRES and which lost the driver"
like "$(state_of n2)" "^drain(ed|ing) efa: 3/4 GPUs \(Gres=gpu:4\)" "  Slurm shows the reason"
run env SLURMD_NODENAME=n2 "$efa" check --node --config "$hconf" --root "$root" --gres gpu:3
is "$rc" 0 "  judged by --gres gpu:3 instead, the same node passes"
for g in $gpus; do
	mv "$stash/$g/bound" "$root/sys/bus/pci/drivers/nvidia/$g"
	mv "$stash/$g/driver" "$root/sys/bus/pci/devices/$g/driver"
	mv "$stash/$g/proc" "$root/proc/driver/nvidia/gpus/$g"
done
node_check n2
node_check n2
like "$out" "^returned node n2 to service" "  the GPUs back, two passing checks return it"
for _ in $(seq 20); do [ "$(in_service n2)" = "idle" ] && break; sleep 0.5; done
is "$(in_service n2)" "idle" "  Slurm shows it idle again"
