/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cluster/scontrol.h"
#include "repair_round.h"

/* What Slurm keeps of a reason (node_mgr.c prints no limit; scontrol's
 * command line and the log lines stay readable). */
#define REPAIR_REASON_MAX 400

void repair_view_clear(struct repair_view *view)
{
	slurmrest_nodes_free(view->nodes);
	free(view->in);
	free(view->verdict);
	memset(view, 0, sizeof(*view));
}

int repair_view_read(slurmrest_t *rest, const struct efa_config *cfg, int64_t since,
		     struct repair_view *view, slurmrest_error *err)
{
	size_t n;

	memset(view, 0, sizeof(*view));
	if (slurmrest_get_nodes(rest, since, &view->nodes, err))
		return -1;
	if (view->nodes->not_modified)
		return 0;
	n = view->nodes->count;
	view->in = calloc(n ? n : 1, sizeof(*view->in));
	view->verdict = calloc(n ? n : 1, sizeof(*view->verdict));
	if (!view->in || !view->verdict) {
		repair_view_clear(view);
		snprintf(err->message, sizeof(err->message), "out of memory");
		err->code = SLURMREST_E_NOMEM;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const slurmrest_node *s = &view->nodes->nodes[i];

		view->in[i] = (struct efa_repair_node){
			.name = s->name,
			.state = (const char *const *)s->state,
			.partitions = (const char *const *)s->partitions,
			.reason = s->reason,
			.reason_time = s->reason_time,
			.boot_time = s->boot_time,
		};
	}
	efa_repair_plan(cfg, view->in, n, view->verdict);
	return 0;
}

static void stamp(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(buf, size, "unknown");
}

/*
 * reboot: ASAP drains (it is drained already) and keeps the node out until
 * the reboot; with no nextstate it stays drained after it, under the
 * ladder's reason, which the health check lifts once its checks pass.
 * replace: POWER_DOWN_FORCE, as ParallelCluster replaces a node: Slurm
 * runs SuspendProgram for it and, when a job next needs the node,
 * ResumeProgram (power_save.c).
 */
static int take_rung(const struct efa_repair_node *node, const struct efa_repair_verdict *v,
		     char *answer, size_t size)
{
	char reason[REPAIR_REASON_MAX], reason_arg[REPAIR_REASON_MAX + 16], node_arg[300];

	efa_repair_reason(v->stage, v->fault, reason, sizeof(reason));
	snprintf(reason_arg, sizeof(reason_arg), "reason=%s", reason);
	if (v->stage == EFA_REPAIR_DO_REBOOT) {
		char *const argv[] = { "scontrol", "reboot", "ASAP", reason_arg, (char *)node->name,
				       NULL };

		return efa_scontrol(argv, EFA_SCONTROL_TIMEOUT_MS, answer, size);
	}
	snprintf(node_arg, sizeof(node_arg), "NodeName=%s", node->name);
	{
		char *const argv[] = { "scontrol", "update", node_arg, "State=POWER_DOWN_FORCE",
				       reason_arg, NULL };

		return efa_scontrol(argv, EFA_SCONTROL_TIMEOUT_MS, answer, size);
	}
}

void repair_round(struct repair_runner *r, slurmrest_t *rest, const struct efa_config *cfg,
		  repair_say say)
{
	struct repair_view view;
	slurmrest_error err;

	if (repair_view_read(rest, cfg, r->since, &view, &err)) {
		if (!r->failing)
			say("repair: cannot read the nodes from slurmrestd (%s); no repair starts until it answers",
			    err.message);
		r->failing = true;
		r->since = 0;
		return;
	}
	r->failing = false;
	if (view.nodes->not_modified) {
		repair_view_clear(&view);
		return;
	}
	/* Only an answer in which nothing was left to do is a base for the
	 * next conditional one: a rung refused is tried again next round. */
	r->since = view.nodes->update_time;
	for (size_t i = 0; i < view.nodes->count; i++) {
		const struct efa_repair_node *node = &view.in[i];
		const struct efa_repair_verdict *v = &view.verdict[i];
		char answer[512], drained[32], booted[32];

		if (v->stage != EFA_REPAIR_DO_REBOOT && v->stage != EFA_REPAIR_DO_REPLACE)
			continue;
		stamp(node->reason_time, drained, sizeof(drained));
		stamp(node->boot_time, booted, sizeof(booted));
		if (take_rung(node, v, answer, sizeof(answer))) {
			say("repair: node %s: cannot %s it: %s%s", node->name,
			    v->stage == EFA_REPAIR_DO_REBOOT ? "reboot" : "power down",
			    answer,
			    v->stage == EFA_REPAIR_DO_REPLACE ?
				    " (replace needs Slurm's power saving for the node: SuspendProgram, ResumeProgram, SuspendTime)" :
				    " (reboot needs RebootProgram= in slurm.conf)");
			r->since = 0;
			continue;
		}
		say("repair: node %s: %s (%s; drained %s: \"%s\", booted %s)", node->name,
		    v->stage == EFA_REPAIR_DO_REBOOT ? "reboot requested (scontrol reboot ASAP)" :
						       "powered down by force for a new instance (State=POWER_DOWN_FORCE)",
		    v->why, drained, node->reason, booted);
	}
	repair_view_clear(&view);
}
