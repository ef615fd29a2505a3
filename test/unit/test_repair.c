/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The repair ladder (common/health/repair.h): which node slurm-efa
 * drained is rebooted, which replaced, which waits and why, judged from
 * Slurm's node state alone.
 */
#include <stdio.h>
#include <string.h>

#include "common/config/efa_conf.h"
#include "common/health/repair.h"
#include "tap.h"

static const char *const gpu[] = { "gpu", NULL };
static const char *const gpu_cpu[] = { "gpu", "cpu", NULL };
static const char *const idle[] = { "idle", NULL };
static const char *const drained[] = { "idle", "drain", NULL };
static const char *const draining[] = { "mixed", "drain", NULL };
static const char *const reboot_requested[] = { "idle", "drain", "reboot_requested", NULL };
static const char *const reboot_issued[] = { "down", "drain", "reboot_issued", NULL };
static const char *const powering_down[] = { "idle", "powering_down", NULL };
static const char *const powered_down[] = { "idle", "powered_down", NULL };
static const char *const down[] = { "down", "drain", NULL };

static struct efa_config *conf(const char *text)
{
	struct efa_config *cfg = NULL;
	struct efa_error err;

	if (efa_config_parse(text, strlen(text), "efa.conf", &cfg, &err))
		fprintf(stderr, "# %s\n", err.msg);
	return cfg;
}

static struct efa_repair_node node(const char *name, const char *const *state,
				   const char *const *parts, const char *reason, int64_t reason_time,
				   int64_t started)
{
	return (struct efa_repair_node){ .name = name, .state = state, .partitions = parts,
					 .reason = reason, .reason_time = reason_time,
					 .started = started };
}

static enum efa_repair_stage one(const struct efa_config *cfg, struct efa_repair_node n,
				 struct efa_repair_verdict *v)
{
	/* Three healthy nodes beside it: the partition is never emptied. */
	struct efa_repair_node all[4] = { n, node("h1", idle, gpu, "", 0, 1),
					  node("h2", idle, gpu, "", 0, 1),
					  node("h3", idle, gpu, "", 0, 1) };
	struct efa_repair_verdict out[4];

	efa_repair_plan(cfg, all, 4, out);
	*v = out[0];
	return out[0].stage;
}

static void test_config(void)
{
	struct efa_config *cfg = conf("RepairAction=reboot,replace\nRepairWindow=10m\nRepairMax=2\n"
				      "PartitionName=gpu RepairAction=reboot RepairMax=1\n");
	struct efa_error err;
	struct efa_config *bad = NULL;

	ok(cfg, "RepairAction=, RepairWindow=, RepairMax= are read");
	if (!cfg)
		return;
	is_int(cfg->repair_action, EFA_REPAIR_REBOOT_REPLACE, "  reboot,replace");
	is_int(cfg->repair_window, 600, "  RepairWindow=10m is 600 s");
	is_int(cfg->repair_max, 2, "  RepairMax=2");
	is_int(efa_config_partition(cfg, "gpu")->repair_action, EFA_REPAIR_REBOOT, "  a partition's own");
	is_int(efa_repair_action_for(cfg, gpu_cpu), EFA_REPAIR_REBOOT,
	       "a node in two partitions gets what both allow (cpu: the global reboot,replace)");
	efa_config_free(cfg);
	cfg = conf("");
	is_int(cfg->repair_action, EFA_REPAIR_NONE, "no RepairAction=: none");
	is_int(cfg->repair_window, 3600, "  RepairWindow= an hour");
	is_int(cfg->repair_max, 1, "  RepairMax=1");
	efa_config_free(cfg);
	ok(efa_config_parse("RepairAction=reimage\n", 20, "efa.conf", &bad, &err), "RepairAction=reimage is refused");
	ok(strstr(err.msg, "efa.conf:1") && strstr(err.msg, "none|reboot|replace|reboot,replace"),
	   "  with the line and what to use (%s)", err.msg);
	ok(efa_config_parse("RepairMax=0\n", 12, "efa.conf", &bad, &err), "RepairMax=0 is refused");
	ok(strstr(err.msg, "RepairAction=none"), "  pointing at RepairAction=none (%s)", err.msg);
}

static void test_rungs(void)
{
	struct efa_config *cfg = conf("RepairAction=reboot,replace\nRepairWindow=600\n");
	struct efa_repair_verdict v;
	const char *fault = "efa: EFA device rdmap0: port 1 is 1: DOWN, not ACTIVE";
	char buf[256];

	if (!cfg)
		return;
	is_int(one(cfg, node("n2", drained, gpu, fault, 100000, 1000), &v), EFA_REPAIR_DO_REBOOT,
	       "drained by slurm-efa, idle, long after its boot: reboot");
	is_str(v.fault, "EFA device rdmap0: port 1 is 1: DOWN, not ACTIVE", "  the fault named");
	is_str(efa_repair_reason(v.stage, v.fault, buf, sizeof(buf)),
	       "efa: repair reboot: EFA device rdmap0: port 1 is 1: DOWN, not ACTIVE", "  the reason it sets");
	is_int(one(cfg, node("n2", drained, gpu, fault, 1000 + 30, 1000), &v), EFA_REPAIR_DO_REPLACE,
	       "the fault back 30 s after a boot: replace");
	ok(strstr(v.why, "30 s after the node came up"), "  saying so (%s)", v.why);
	is_int(one(cfg, node("n2", drained, gpu, fault, 1000 + 600, 1000), &v), EFA_REPAIR_DO_REBOOT,
	       "back RepairWindow= after the boot: a reboot again");
	is_int(one(cfg, node("n2", drained, gpu, fault, 900, 1000), &v), EFA_REPAIR_DO_REBOOT,
	       "drained before its last boot: a reboot");
	is_int(one(cfg, node("n2", drained, gpu, fault, 1000, 0), &v), EFA_REPAIR_DO_REBOOT,
	       "boot time unknown: a reboot");
	is_int(one(cfg, node("n2", draining, gpu, fault, 100000, 1000), &v), EFA_REPAIR_WAIT_JOBS,
	       "jobs still on it: waits");
	is_int(one(cfg, node("n2", drained, gpu, "admin: bad DIMM", 100000, 1000), &v), EFA_REPAIR_NOT_OURS,
	       "an admin's drain is never touched");
	is_int(one(cfg, node("n2", down, gpu, fault, 100000, 1000), &v), EFA_REPAIR_NOT_OURS,
	       "a node Slurm set DOWN is Slurm's");
	is_int(one(cfg, node("n2", idle, gpu, fault, 100000, 1000), &v), EFA_REPAIR_NOT_OURS,
	       "a reason left on a node in service is history");
	is_int(one(cfg, node("n2", reboot_requested, gpu, "efa: repair reboot: port down", 100000, 1000), &v),
	       EFA_REPAIR_REBOOTING, "the ladder's reboot requested: rebooting");
	is_str(v.fault, "port down", "  its fault read back from the reason");
	is_int(one(cfg, node("n2", reboot_issued, gpu, "efa: repair reboot: port down", 100000, 1000), &v),
	       EFA_REPAIR_REBOOTING, "  and issued");
	is_int(one(cfg, node("n2", drained, gpu, "efa: repair reboot: port down", 100000, 200000), &v),
	       EFA_REPAIR_CHECKING, "rebooted, drained until its checks pass: checking");
	is_int(one(cfg, node("n2", powering_down, gpu, "efa: repair replace: port down", 100000, 1000), &v),
	       EFA_REPAIR_REPLACING, "powering down: replacing");
	is_int(one(cfg, node("n2", powered_down, gpu, "efa: repair replace: port down", 100000, 1000), &v),
	       EFA_REPAIR_REPLACED, "powered down: replaced, a new instance when Slurm needs one");
	is_int(one(cfg, node("n2", reboot_requested, gpu, fault, 100000, 1000), &v), EFA_REPAIR_REBOOTING,
	       "an admin's reboot of a node slurm-efa drained: waited for, not doubled");
	efa_config_free(cfg);

	cfg = conf("RepairAction=reboot\n");
	is_int(one(cfg, node("n2", drained, gpu, fault, 1000 + 30, 1000), &v), EFA_REPAIR_EXHAUSTED,
	       "RepairAction=reboot, the fault back after the reboot: left to an admin");
	ok(strstr(v.why, "admin"), "  saying so (%s)", v.why);
	efa_config_free(cfg);
	cfg = conf("RepairAction=replace\n");
	is_int(one(cfg, node("n2", drained, gpu, fault, 100000, 1000), &v), EFA_REPAIR_DO_REPLACE,
	       "RepairAction=replace: replaced at once");
	efa_config_free(cfg);
	cfg = conf("RepairAction=reboot\nPartitionName=gpu RepairAction=none\n");
	is_int(one(cfg, node("n2", drained, gpu, fault, 100000, 1000), &v), EFA_REPAIR_NO_ACTION,
	       "a partition's RepairAction=none: left drained");
	efa_config_free(cfg);
	cfg = conf("");
	is_int(one(cfg, node("n2", drained, gpu, fault, 100000, 1000), &v), EFA_REPAIR_NO_ACTION,
	       "no RepairAction=: left drained");
	efa_config_free(cfg);
}

static void test_turns(void)
{
	struct efa_config *cfg = conf("RepairAction=reboot,replace\nPartitionName=cpu RepairMax=2\n");
	const char *fault = "efa: port down";
	struct efa_repair_node nodes[6] = {
		node("n1", drained, gpu, fault, 100000, 10), node("n2", drained, gpu, fault, 100000, 10),
		node("n3", idle, gpu, "", 0, 10), node("n4", idle, gpu, "", 0, 10),
		node("c1", drained, (const char *const[]){ "cpu", NULL }, fault, 100000, 10),
		node("c2", idle, (const char *const[]){ "cpu", NULL }, "", 0, 10),
	};
	struct efa_repair_verdict v[6];

	if (!cfg)
		return;
	efa_repair_plan(cfg, nodes, 6, v);
	is_int(v[0].stage, EFA_REPAIR_DO_REBOOT, "RepairMax=1, two broken nodes: the first is rebooted");
	is_int(v[1].stage, EFA_REPAIR_WAIT_TURN, "  the second waits its turn");
	ok(strstr(v[1].why, "RepairMax=1"), "  saying why (%s)", v[1].why);
	is_int(v[4].stage, EFA_REPAIR_DO_REBOOT, "a node of another partition has its own turn");
	nodes[0] = node("n1", reboot_issued, gpu, "efa: repair reboot: port down", 100000, 10);
	efa_repair_plan(cfg, nodes, 6, v);
	is_int(v[1].stage, EFA_REPAIR_WAIT_TURN, "while the first reboots, the second still waits");
	nodes[0] = node("n1", idle, gpu, "efa: repair reboot: port down", 100000, 200000);
	efa_repair_plan(cfg, nodes, 6, v);
	is_int(v[1].stage, EFA_REPAIR_DO_REBOOT, "the first back in service: the second's turn");
	nodes[5] = node("c2", drained, (const char *const[]){ "cpu", NULL }, fault, 100000, 10);
	efa_repair_plan(cfg, nodes, 6, v);
	is_int(v[4].stage, EFA_REPAIR_DO_REBOOT, "both nodes of a two-node partition broken (RepairMax=2): one");
	is_int(v[5].stage, EFA_REPAIR_WAIT_TURN, "  never the whole partition");
	ok(strstr(v[5].why, "all of its 2 nodes"), "  saying so (%s)", v[5].why);
	efa_config_free(cfg);
}

int main(void)
{
	test_config();
	test_rungs();
	test_turns();
	return done_testing();
}
