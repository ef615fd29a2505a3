/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/health/drain_rules.h"
#include "common/health/repair.h"

static const char *const stage_names[] = {
	[EFA_REPAIR_NOT_OURS] = "none",
	[EFA_REPAIR_WAIT_JOBS] = "wait-jobs",
	[EFA_REPAIR_WAIT_TURN] = "wait-turn",
	[EFA_REPAIR_NO_ACTION] = "drained",
	[EFA_REPAIR_EXHAUSTED] = "needs-admin",
	[EFA_REPAIR_DO_REBOOT] = "reboot-due",
	[EFA_REPAIR_DO_REPLACE] = "replace-due",
	[EFA_REPAIR_REBOOTING] = "rebooting",
	[EFA_REPAIR_CHECKING] = "checking",
	[EFA_REPAIR_REPLACING] = "replacing",
	[EFA_REPAIR_REPLACED] = "replaced",
};

const char *efa_repair_stage_name(enum efa_repair_stage stage)
{
	if ((size_t)stage >= sizeof(stage_names) / sizeof(stage_names[0]))
		return "?";
	return stage_names[stage];
}

static bool has(const char *const *words, const char *word)
{
	for (size_t i = 0; words && words[i]; i++)
		if (!strcmp(words[i], word))
			return true;
	return false;
}

bool efa_repair_configured(const struct efa_config *cfg)
{
	if (cfg->repair_action != EFA_REPAIR_NONE)
		return true;
	for (size_t i = 0; i < cfg->npartitions; i++)
		if (cfg->partitions[i].repair_action > EFA_REPAIR_NONE)
			return true;
	return false;
}

enum efa_repair_action efa_repair_action_for(const struct efa_config *cfg,
					     const char *const *partitions)
{
	int allowed = EFA_REPAIR_REBOOT_REPLACE;
	bool named = false;

	for (size_t i = 0; partitions && partitions[i]; i++) {
		const struct efa_partition *p = efa_config_partition(cfg, partitions[i]);

		if (!p || p->repair_action == EFA_REPAIR_UNSET)
			continue;
		allowed &= p->repair_action;
		named = true;
	}
	return named ? (enum efa_repair_action)allowed : cfg->repair_action;
}

static long repair_max_of(const struct efa_config *cfg, const char *partition)
{
	const struct efa_partition *p = efa_config_partition(cfg, partition);

	return p && p->repair_max > 0 ? p->repair_max : cfg->repair_max;
}

/* "efa: repair reboot: FAULT": the rung's word, and the fault after it. */
static const char *repair_rung(const char *reason, const char **fault)
{
	const char *rest = reason + strlen(EFA_REPAIR_REASON_PREFIX);
	static const char *const words[] = { EFA_REPAIR_REBOOT_WORD, EFA_REPAIR_REPLACE_WORD };

	if (strncmp(reason, EFA_REPAIR_REASON_PREFIX, strlen(EFA_REPAIR_REASON_PREFIX)))
		return NULL;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t len = strlen(words[i]);

		if (!strncmp(rest, words[i], len) && rest[len] == ':') {
			*fault = rest + len + 1 + (rest[len + 1] == ' ');
			return words[i];
		}
	}
	return NULL;
}

/* The stage of a node whose reason is one the ladder set. */
static enum efa_repair_stage stage_under_repair(const struct efa_repair_node *node,
						const char *rung)
{
	const char *const *st = node->state;

	if (has(st, "reboot_requested") || has(st, "reboot_issued"))
		return EFA_REPAIR_REBOOTING;
	if (has(st, "power_down") || has(st, "powering_down") || has(st, "powering_up"))
		return EFA_REPAIR_REPLACING;
	if (has(st, "powered_down"))
		return EFA_REPAIR_REPLACED;
	if (!has(st, "drain") && !has(st, "down"))
		return EFA_REPAIR_NOT_OURS;	/* back in service: the reason is history */
	return !strcmp(rung, EFA_REPAIR_REBOOT_WORD) ? EFA_REPAIR_CHECKING : EFA_REPAIR_REPLACING;
}

/* The stage of a node drained with a fault of slurm-efa's. */
static enum efa_repair_stage stage_of_fault(const struct efa_config *cfg,
					    const struct efa_repair_node *node,
					    struct efa_repair_verdict *v)
{
	const char *const *st = node->state;
	enum efa_repair_action action;
	bool came_up_lately;

	if (!has(st, "drain") || has(st, "down"))
		return EFA_REPAIR_NOT_OURS;	/* in service, or Slurm's own DOWN */
	if (has(st, "reboot_requested") || has(st, "reboot_issued"))
		return EFA_REPAIR_REBOOTING;	/* an admin's reboot: the ladder waits */
	if (has(st, "power_down") || has(st, "powering_down") || has(st, "powering_up") ||
	    has(st, "powered_down"))
		return EFA_REPAIR_REPLACING;
	if (has(st, "allocated") || has(st, "mixed") || has(st, "completing")) {
		snprintf(v->why, sizeof(v->why), "jobs still run on it: drained, it is repaired when they end");
		return EFA_REPAIR_WAIT_JOBS;
	}
	action = efa_repair_action_for(cfg, node->partitions);
	if (action == EFA_REPAIR_NONE) {
		snprintf(v->why, sizeof(v->why), "RepairAction=none for its partitions: left to an admin");
		return EFA_REPAIR_NO_ACTION;
	}
	came_up_lately = node->started > 0 && node->reason_time >= node->started &&
			  node->reason_time - node->started < cfg->repair_window;
	if ((action & EFA_REPAIR_REBOOT) && !came_up_lately) {
		snprintf(v->why, sizeof(v->why), "first rung: a reboot");
		return EFA_REPAIR_DO_REBOOT;
	}
	if (action & EFA_REPAIR_REPLACE) {
		if (came_up_lately)
			snprintf(v->why, sizeof(v->why),
				 "the fault came back %lld s after the node came up (RepairWindow=%ld s): a new instance",
				 (long long)(node->reason_time - node->started), cfg->repair_window);
		else
			snprintf(v->why, sizeof(v->why), "RepairAction=replace: a new instance");
		return EFA_REPAIR_DO_REPLACE;
	}
	snprintf(v->why, sizeof(v->why),
		 "the fault came back %lld s after the node came up (RepairWindow=%ld s) and RepairAction= has no rung after reboot: left to an admin",
		 (long long)(node->reason_time - node->started), cfg->repair_window);
	return EFA_REPAIR_EXHAUSTED;
}

static bool under_repair(enum efa_repair_stage s)
{
	return s == EFA_REPAIR_REBOOTING || s == EFA_REPAIR_CHECKING || s == EFA_REPAIR_REPLACING;
}

/* Partition names and, per name, how many nodes it has and how many of
 * them are under repair. */
struct partition_count {
	const char *name;
	size_t nodes, repairing;
};

static struct partition_count *count_of(struct partition_count *pc, size_t *npc, const char *name)
{
	for (size_t i = 0; i < *npc; i++)
		if (!strcmp(pc[i].name, name))
			return &pc[i];
	pc[*npc] = (struct partition_count){ .name = name };
	return &pc[(*npc)++];
}

/* Whether a due node may start now: every partition it is in has a turn
 * free and keeps a node out of repair. Says which does not in v->why. */
static bool turn_free(const struct efa_config *cfg, struct partition_count *pc, size_t npc,
		      const struct efa_repair_node *node, struct efa_repair_verdict *v)
{
	for (size_t i = 0; node->partitions && node->partitions[i]; i++) {
		struct partition_count *c = count_of(pc, &npc, node->partitions[i]);
		long max = repair_max_of(cfg, c->name);

		if ((long)c->repairing >= max) {
			snprintf(v->why, sizeof(v->why), "partition %s has %zu node%s under repair (RepairMax=%ld)",
				 c->name, c->repairing, c->repairing == 1 ? "" : "s", max);
			return false;
		}
		if (c->repairing + 1 >= c->nodes) {
			snprintf(v->why, sizeof(v->why), "partition %s would have all of its %zu node%s under repair",
				 c->name, c->nodes, c->nodes == 1 ? "" : "s");
			return false;
		}
	}
	return true;
}

void efa_repair_plan(const struct efa_config *cfg, const struct efa_repair_node *nodes,
		     size_t n, struct efa_repair_verdict *out)
{
	struct partition_count *pc;
	size_t npc = 0, slots = 0;

	for (size_t i = 0; i < n; i++) {
		struct efa_repair_verdict *v = &out[i];
		const char *reason = nodes[i].reason, *rung, *fault = NULL;

		memset(v, 0, sizeof(*v));
		for (size_t j = 0; nodes[i].partitions && nodes[i].partitions[j]; j++)
			slots++;
		if (!efa_drain_reason_ours(reason))
			continue;
		if ((rung = repair_rung(reason, &fault))) {
			v->fault = fault;
			v->stage = stage_under_repair(&nodes[i], rung);
			continue;
		}
		fault = reason + strlen(EFA_DRAIN_REASON_PREFIX);
		v->fault = fault + strspn(fault, " ");
		v->stage = stage_of_fault(cfg, &nodes[i], v);
	}
	/* Room for every partition name a node lists: no partition has more
	 * distinct names than that. */
	pc = calloc(slots ? slots : 1, sizeof(*pc));
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; nodes[i].partitions && nodes[i].partitions[j]; j++) {
			struct partition_count *c;

			if (!pc)
				break;
			c = count_of(pc, &npc, nodes[i].partitions[j]);
			c->nodes++;
			c->repairing += under_repair(out[i].stage);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct efa_repair_verdict *v = &out[i];

		if (v->stage != EFA_REPAIR_DO_REBOOT && v->stage != EFA_REPAIR_DO_REPLACE)
			continue;
		/* Without memory to count, nothing starts: a repair is never
		 * worth a partition emptied by mistake. */
		if (!pc) {
			snprintf(v->why, sizeof(v->why), "out of memory counting the partitions' repairs");
			v->stage = EFA_REPAIR_WAIT_TURN;
			continue;
		}
		if (!turn_free(cfg, pc, npc, &nodes[i], v)) {
			v->stage = EFA_REPAIR_WAIT_TURN;
			continue;
		}
		for (size_t j = 0; nodes[i].partitions && nodes[i].partitions[j]; j++)
			count_of(pc, &npc, nodes[i].partitions[j])->repairing++;
	}
	free(pc);
}

const char *efa_repair_reason(enum efa_repair_stage due, const char *fault, char *buf,
			      size_t size)
{
	snprintf(buf, size, "%s%s: %s", EFA_REPAIR_REASON_PREFIX,
		 due == EFA_REPAIR_DO_REBOOT ? EFA_REPAIR_REBOOT_WORD : EFA_REPAIR_REPLACE_WORD,
		 fault ? fault : "");
	return buf;
}
