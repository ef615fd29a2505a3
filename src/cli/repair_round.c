/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/strutil.h"
#include "common/cluster/scontrol.h"
#include "sources/kube.h"
#include "repair_round.h"

/* What Slurm keeps of a reason (node_mgr.c prints no limit; scontrol's
 * command line and the log lines stay readable). */
#define REPAIR_REASON_MAX 400

/* Where efa.conf says nodes are Kubernetes pods (Slinky). */
static bool nodes_are_pods(const struct efa_config *cfg)
{
	return cfg->zone_source == EFA_SOURCE_KUBERNETES ||
	       cfg->topology_source == EFA_SOURCE_KUBERNETES;
}

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
	bool pods = nodes_are_pods(cfg);
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
			.started = pods ? s->slurmd_start_time : s->boot_time,
		};
	}
	efa_repair_plan(cfg, view->in, n, view->verdict);
	return 0;
}

const char *repair_time_text(int64_t t, const char *none, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(buf, size, "%s", none);
	return buf;
}

/*
 * reboot: ASAP drains (it is drained already) and keeps the node out until
 * the reboot; with no nextstate it stays drained after it, under the
 * ladder's reason, which the health check lifts once its checks pass.
 * replace: POWER_DOWN_FORCE, as ParallelCluster replaces a node: Slurm
 * runs SuspendProgram for it and, when a job next needs the node,
 * ResumeProgram (power_save.c).
 */
static int scontrol_reboot(const struct efa_repair_node *node, const char *reason, char *answer,
			   size_t size)
{
	char reason_arg[REPAIR_REASON_MAX + 16];
	char *const argv[] = { "scontrol", "reboot", "ASAP", reason_arg, (char *)node->name, NULL };

	snprintf(reason_arg, sizeof(reason_arg), "reason=%s", reason);
	return efa_scontrol(argv, EFA_SCONTROL_TIMEOUT_MS, answer, size);
}

/* scontrol update NodeName=NODE State=STATE Reason=REASON */
static int scontrol_state(const struct efa_repair_node *node, const char *state, const char *reason,
			  char *answer, size_t size)
{
	char reason_arg[REPAIR_REASON_MAX + 16], node_arg[300], state_arg[64];
	char *const argv[] = { "scontrol", "update", node_arg, state_arg, reason_arg, NULL };

	snprintf(node_arg, sizeof(node_arg), "NodeName=%s", node->name);
	snprintf(state_arg, sizeof(state_arg), "State=%s", state);
	snprintf(reason_arg, sizeof(reason_arg), "Reason=%s", reason);
	return efa_scontrol(argv, EFA_SCONTROL_TIMEOUT_MS, answer, size);
}

/*
 * The ladder's reason on a node it replaces in Kubernetes: through
 * slurmrestd (a Slinky sidecar has no slurm.key for scontrol), through
 * scontrol where slurmrestd's version cannot update nodes. 0, or -1 with
 * why.
 */
static int mark_replacing(slurmrest_t *rest, const struct efa_repair_node *node,
			  const char *reason, char *why, size_t size)
{
	slurmrest_error err;

	if (!slurmrest_drain_node(rest, node->name, reason, &err))
		return 0;
	if (err.code == SLURMREST_E_VERSION)
		return scontrol_state(node, "DRAIN", reason, why, size);
	why[0] = '\0';
	efa_strlcatf(why, size, "slurmrestd: %s", err.message);
	return -1;
}

/*
 * Replace under Slinky: the ladder's reason first, so that a round that
 * stops half way leaves the node drained as being replaced (never a
 * fault a later round would replace again once the new pod is up); then
 * the Kubernetes node cordoned and the pod deleted. The old pod's checks
 * cannot undo the reason: its slurmd started before it (drain_rules.h).
 * *was_pod says whether the node was a pod.
 */
static int kube_rung(slurmrest_t *rest, const struct efa_config *cfg,
		     const struct efa_repair_node *node, const char *reason, bool *was_pod,
		     char *answer, size_t size)
{
	struct kube_options ko;
	struct kube_map map;
	const struct kube_placement *p;
	struct efa_error err;
	char why[EFA_ERROR_MAX / 2];
	int rc = -1;

	*was_pod = false;
	kube_options_from_config(cfg, 0, &ko);
	if (kube_read(&ko, &map, &err)) {
		snprintf(answer, size, "%s", err.msg);
		return -1;
	}
	if (!(p = kube_find(&map, node->name))) {
		kube_map_clear(&map);
		return 0;
	}
	*was_pod = true;
	snprintf(answer, size, "pod %s/%s on Kubernetes node %s", map.namespace, p->pod,
		 p->node ? p->node : "(unscheduled)");
	if (mark_replacing(rest, node, reason, why, sizeof(why))) {
		efa_strlcatf(answer, size, ": the node's reason cannot be set, nothing done: %s", why);
		goto out;
	}
	if (kube_replace(&ko, p, &err)) {
		efa_strlcatf(answer, size,
			     ": drained as being replaced, but %s; cordon the node and delete the pod by hand",
			     err.msg);
		goto out;
	}
	rc = 0;
out:
	kube_map_clear(&map);
	return rc;
}

/* Takes the rung due; says in answer what it did, or why it could not. */
static int take_rung(slurmrest_t *rest, const struct efa_config *cfg,
		     const struct efa_repair_node *node,
		     const struct efa_repair_verdict *v, const char **how, char *answer,
		     size_t size)
{
	char reason[REPAIR_REASON_MAX];
	bool was_pod = false;

	efa_repair_reason(v->stage, v->fault, reason, sizeof(reason));
	answer[0] = '\0';
	if (v->stage == EFA_REPAIR_DO_REBOOT) {
		*how = "reboot requested (scontrol reboot ASAP)";
		return scontrol_reboot(node, reason, answer, size);
	}
	if (nodes_are_pods(cfg)) {
		*how = "replaced: Kubernetes node cordoned, pod deleted for the NodeSet to recreate";
		if (kube_rung(rest, cfg, node, reason, &was_pod, answer, size))
			return -1;
		if (was_pod)
			return 0;
	}
	*how = "powered down by force for a new instance (State=POWER_DOWN_FORCE)";
	return scontrol_state(node, "POWER_DOWN_FORCE", reason, answer, size);
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
		char answer[EFA_ERROR_MAX], drained[32], booted[32];
		const char *how = "";

		if (v->stage != EFA_REPAIR_DO_REBOOT && v->stage != EFA_REPAIR_DO_REPLACE)
			continue;
		repair_time_text(node->reason_time, "unknown", drained, sizeof(drained));
		repair_time_text(node->started, "unknown", booted, sizeof(booted));
		if (take_rung(rest, cfg, node, v, &how, answer, sizeof(answer))) {
			say("repair: node %s: cannot %s it: %s%s", node->name,
			    v->stage == EFA_REPAIR_DO_REBOOT ? "reboot" : "replace", answer,
			    v->stage == EFA_REPAIR_DO_REBOOT ?
				    " (reboot needs RebootProgram= in slurm.conf)" :
			    nodes_are_pods(cfg) ?
				    " (replace under Slinky needs patch on nodes and delete on pods: deploy/slinky/rbac.yaml)" :
				    " (replace needs Slurm's power saving for the node: SuspendProgram, ResumeProgram, SuspendTime)");
			r->since = 0;
			continue;
		}
		say("repair: node %s: %s%s%s%s (%s; drained %s: \"%s\", up since %s)", node->name, how,
		    answer[0] ? " (" : "", answer, answer[0] ? ")" : "", v->why, drained, node->reason,
		    booted);
	}
	repair_view_clear(&view);
}
