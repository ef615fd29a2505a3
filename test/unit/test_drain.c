/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node's health check in Slurm (drain_rules.h): drain on failure, return only
 * what slurm-efa drained after enough passing checks in a row, never touch
 * a node someone else took out of service.
 */
#include <stdio.h>
#include <string.h>

#include "common/health/drain_rules.h"
#include "common/config/efa_conf.h"
#include "common/health/slurmd_limits.h"
#include "tap.h"

static void test_parse(void)
{
	struct efa_node_state st;
	char buf[256];

	ok(efa_node_state_parse("NodeName=n2 Arch=x86_64 CoresPerSocket=8 State=IDLE ThreadsPerCore=1 Reason=(null)",
				&st, buf, sizeof(buf)), "an idle node's line is read");
	ok(!st.drained && !st.down && !st.reason, "  not drained, no reason");
	ok(efa_node_state_parse("NodeName=n2 State=IDLE+DRAIN ThreadsPerCore=1 Reason=efa: EFA device rdmap16s27: port 1 is 1: DOWN, not ACTIVE [root@2026-12-02T01:50:00] Comment=(null)",
				&st, buf, sizeof(buf)), "a drained node's line is read");
	ok(st.drained && !st.down, "  drained");
	is_str(st.reason, "efa: EFA device rdmap16s27: port 1 is 1: DOWN, not ACTIVE",
	       "  its reason whole, spaces and colons kept, Slurm's [user@time] dropped");
	ok(efa_drain_reason_ours(st.reason), "  and it is slurm-efa's");
	efa_node_state_parse("NodeName=n3 State=DOWN*+DRAIN Reason=admin: replacing a DIMM [alice@2026-12-01T10:00:00]",
			     &st, buf, sizeof(buf));
	ok(st.drained && st.down && !efa_drain_reason_ours(st.reason), "an admin's drain is not slurm-efa's");
	ok(!efa_node_state_parse("garbage", &st, buf, sizeof(buf)), "a line without State= is refused");
}

static void test_decide(void)
{
	struct efa_node_state idle = { 0 }, ours = { .drained = true, .reason = "efa: 3 of 4 EFA devices" };
	struct efa_node_state admins = { .drained = true, .reason = "admin: maintenance" };
	struct efa_node_state downed = { .down = true, .reason = "Not responding" };
	long passes = 0;

	is_int(efa_drain_decide(false, &idle, &passes, 3), EFA_DRAIN_DRAIN, "a failed check drains a node in service");
	is_int(efa_drain_decide(false, &ours, &passes, 3), EFA_DRAIN_NOTHING, "  once, not again while it is drained");
	is_int(efa_drain_decide(false, &admins, &passes, 3), EFA_DRAIN_NOTHING,
	       "a failed check leaves an admin's drain alone");
	is_int(efa_drain_decide(true, &ours, &passes, 3), EFA_DRAIN_NOTHING, "one passing check: not yet");
	is_int(passes, 1, "  counted");
	is_int(efa_drain_decide(false, &ours, &passes, 3), EFA_DRAIN_NOTHING, "a failure in between");
	is_int(passes, 0, "  starts the count again");
	efa_drain_decide(true, &ours, &passes, 3);
	efa_drain_decide(true, &ours, &passes, 3);
	is_int(efa_drain_decide(true, &ours, &passes, 3), EFA_DRAIN_RESUME,
	       "three passing checks in a row return slurm-efa's drained node");
	is_int(passes, 0, "  and the count starts over");
	passes = 5;
	is_int(efa_drain_decide(true, &admins, &passes, 3), EFA_DRAIN_NOTHING,
	       "passing checks never return an admin's drained node");
	is_int(efa_drain_decide(true, &downed, &passes, 3), EFA_DRAIN_NOTHING, "  nor a node Slurm took down");
	is_int(efa_drain_decide(true, &idle, &passes, 3), EFA_DRAIN_NOTHING, "a healthy node in service is left alone");
	passes = 100;
	is_int(efa_drain_decide(true, &ours, &passes, 0), EFA_DRAIN_NOTHING,
	       "HealthReturnPasses=0: slurm-efa never returns a node by itself");
}

/* slurmd's limit, as /proc/PID/limits shows it (fs/proc/base.c, proc_pid_limits). */
/* After the repair ladder's reboot (common/health/repair.h): the node is
 * drained with the ladder's reason until its checks pass. */
static void test_after_reboot(void)
{
	struct efa_node_state st;
	char buf[256];
	long passes = 0;

	efa_node_state_parse("NodeName=n2 State=IDLE+DRAIN+REBOOT_REQUESTED Reason=efa: repair reboot: EFA device rdmap0: port 1 is 1: DOWN, not ACTIVE [root@2026-12-07T05:00:00]",
			     &st, buf, sizeof(buf));
	ok(st.drained && st.repairing && !st.down, "a node waiting for its reboot: drained, repairing");
	is_int(efa_drain_decide(false, &st, &passes, 2), EFA_DRAIN_NOTHING,
	       "  a failing check before the reboot leaves the ladder's reason");
	efa_drain_decide(true, &st, &passes, 2);
	is_int(efa_drain_decide(true, &st, &passes, 2), EFA_DRAIN_NOTHING,
	       "  passing checks before it do not return the node through its reboot");
	efa_node_state_parse("NodeName=n2 State=DOWN+DRAIN+REBOOT_ISSUED Reason=efa: repair reboot: EFA device rdmap0: port 1 is 1: DOWN, not ACTIVE [root@2026-12-07T05:00:00]",
			     &st, buf, sizeof(buf));
	is_int(efa_drain_decide(false, &st, &passes, 2), EFA_DRAIN_NOTHING,
	       "  as does one while the reboot is under way (slurmd's check at its start)");
	efa_node_state_parse("NodeName=n2 State=IDLE+DRAIN Reason=efa: repair reboot: EFA device rdmap0: port 1 is 1: DOWN, not ACTIVE [root@2026-12-07T05:00:00]",
			     &st, buf, sizeof(buf));
	ok(st.drained && !st.repairing, "rebooted: drained, no reboot under way");
	is_int(efa_drain_decide(false, &st, &passes, 2), EFA_DRAIN_DRAIN,
	       "  a failing check drains it again with the fault as it is now (the ladder's next rung reads its time)");
	is_int(efa_drain_decide(true, &st, &passes, 2), EFA_DRAIN_NOTHING, "  a passing one counts");
	is_int(efa_drain_decide(true, &st, &passes, 2), EFA_DRAIN_RESUME,
	       "  and HealthReturnPasses= of them return it: the reboot cleared the fault");
	efa_node_state_parse("NodeName=n2 State=IDLE+DRAIN BootTime=2026-11-01T10:00:00 SlurmdStartTime=2026-12-01T10:00:05 Reason=efa: repair replace: port down [root@2026-12-07T05:00:00]",
			     &st, buf, sizeof(buf));
	ok(st.slurmd_start > 0 && st.reason_time - st.slurmd_start == 6 * 86400 - 5 * 3600 - 5,
	   "SlurmdStartTime= and the reason's time are read (%lld, %lld)", (long long)st.slurmd_start,
	   (long long)st.reason_time);
	is_int(efa_drain_decide(false, &st, &passes, 2), EFA_DRAIN_NOTHING,
	       "the old machine's slurmd, started before the ladder acted (a pod being deleted): its failing check leaves the reason");
	efa_node_state_parse("NodeName=n2 State=IDLE+DRAIN BootTime=2026-11-01T10:00:00 SlurmdStartTime=2026-12-07T05:01:00 Reason=efa: repair replace: port down [root@2026-12-07T05:00:00]",
			     &st, buf, sizeof(buf));
	is_int(efa_drain_decide(false, &st, &passes, 2), EFA_DRAIN_DRAIN,
	       "  a new one (a new pod on the same long-running machine): its failing check writes the fault again");
	efa_node_state_parse("NodeName=n2 State=IDLE+DRAIN Reason=admin: repair reboot: mine [alice@2026-12-07T05:00:00]",
			     &st, buf, sizeof(buf));
	is_int(efa_drain_decide(false, &st, &passes, 2), EFA_DRAIN_NOTHING,
	       "an admin's reason that reads alike is not the ladder's");
}

static void test_memlock(void)
{
	static const char head[] =
		"Limit                     Soft Limit           Hard Limit           Units     \n"
		"Max cpu time              unlimited            unlimited            seconds   \n"
		"Max open files            20000                20000                files     \n";
	char text[1024];
	rlim_t soft = 0;

	snprintf(text, sizeof(text), "%sMax locked memory         65536                65536                bytes     \n", head);
	ok(efa_limits_memlock(text, &soft) && soft == 65536, "a limited slurmd: its soft limit is read");
	snprintf(text, sizeof(text), "%sMax locked memory         unlimited            unlimited            bytes     \n", head);
	ok(efa_limits_memlock(text, &soft) && soft == RLIM_INFINITY, "unlimited is read as unlimited");
	snprintf(text, sizeof(text), "%sMax locked memory         8388608              unlimited            bytes     \n", head);
	ok(efa_limits_memlock(text, &soft) && soft == 8388608, "the soft limit, not the hard one");
	ok(!efa_limits_memlock(head, &soft), "no such line: not read");
	snprintf(text, sizeof(text), "%sMax locked memory         lots                 lots                 bytes     \n", head);
	ok(!efa_limits_memlock(text, &soft), "a value that is not a number: not read");
	/* This test does not run under slurmd: nothing to judge. */
	text[0] = '\0';
	ok(!efa_slurmd_memlock_problem(EFA_BYTES_UNLIMITED, text, sizeof(text)) && !text[0],
	   "not run under slurmd: no problem said");
}

int main(void)
{
	test_parse();
	test_decide();
	test_after_reboot();
	test_memlock();
	return done_testing();
}
