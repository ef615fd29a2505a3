/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLURM_BACKWARD_COMPAT
#include <slurm/slurm.h>

#include "common/health/drain_rules.h"
#include "common/health/hang_probe.h"
#include "common/usage/job_record.h"
#include "link_step.h"
#include "step_counters.h"
#include "step_record.h"

/* Samples in a row a node must stand out: its peers' rates reach the
 * record within one interval of passing the floor, so a fabric that
 * slows every node at once is seen as such before anyone is named. */
#define STANDING_OUT_SAMPLES 2

/* This node's rate in the record, and everyone's as the record has them
 * then (rates[nnodes]). -1 when the record cannot be read or written. */
static int publish(const struct efa_step *step, uint32_t run, double rate, double *rates)
{
	const struct efa_step_counters *sc = &step->counters;
	char *comment = NULL, *next = NULL;
	struct efa_error err;
	int rc = -1;

	if (efa_job_comment(sc->job_id, &comment)) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 ": sick links: the job cannot be read from slurmctld: %s",
			   step->node_name, sc->job_id, sc->step_id, slurm_strerror(errno));
		return -1;
	}
	if (efa_record_set_link(comment, run, sc->step_id, sc->nnodes, sc->nodeid, rate, &next,
				&err)) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 ": sick links: %s", step->node_name,
			   sc->job_id, sc->step_id, err.msg);
		goto out;
	}
	if (next && efa_job_set_comment(sc->job_id, next) != SLURM_SUCCESS) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 ": sick links: the job's AdminComment cannot be set: %s",
			   step->node_name, sc->job_id, sc->step_id, slurm_strerror(errno));
		goto out;
	}
	rc = efa_record_links(next ? next : comment, run, sc->step_id, sc->nnodes, rates);
out:
	free(next);
	free(comment);
	return rc;
}

/* Drains this node with reason, through Slurm's API, unless it is drained
 * or down already (drain_rules.h: someone else's reason is never
 * replaced). false with why when it was not drained. */
static bool drain(const struct efa_step *step, const char *reason, char *why, size_t size)
{
	struct efa_node_state st = { 0 };
	node_info_msg_t *nodes = NULL;
	update_node_msg_t update;
	long passes = 0;
	bool act;

	if (slurm_load_node_single(&nodes, (char *)step->node_name, SHOW_ALL) != SLURM_SUCCESS ||
	    !nodes || nodes->record_count < 1) {
		snprintf(why, size, "not drained: the node cannot be read from slurmctld: %s",
			 slurm_strerror(errno));
		slurm_free_node_info_msg(nodes);
		return false;
	}
	st.drained = nodes->node_array[0].node_state & NODE_STATE_DRAIN;
	st.down = (nodes->node_array[0].node_state & NODE_STATE_BASE) == NODE_STATE_DOWN;
	st.reason = nodes->node_array[0].reason;
	act = efa_drain_decide(false, &st, &passes, 0) == EFA_DRAIN_DRAIN;
	if (!act)
		snprintf(why, size, "not drained: it is drained or down already (%s)",
			 st.reason ? st.reason : "no reason");
	slurm_free_node_info_msg(nodes);
	if (!act)
		return false;
	slurm_init_update_node_msg(&update);
	update.node_names = (char *)step->node_name;
	update.node_state = NODE_STATE_DRAIN;
	update.reason = (char *)reason;
	if (slurm_update_node(&update) != SLURM_SUCCESS) {
		snprintf(why, size, "not drained: Slurm refused it: %s", slurm_strerror(errno));
		return false;
	}
	snprintf(why, size, "drained: no new job lands on it; this job goes on");
	return true;
}

static int add_sick(const char *comment, const void *what, char **next, struct efa_error *err)
{
	return efa_record_add_sick(comment, what, next, err);
}

static void name(struct efa_step *step, uint32_t run, double rate, double peers)
{
	const struct efa_step_counters *sc = &step->counters;
	struct efa_record_sick rec = { .run = run, .step = sc->step_id, .rate = rate, .peers = peers };
	char reason[256], did[256], label[64];

	snprintf(rec.node, sizeof(rec.node), "%s", step->node_name);
	snprintf(reason, sizeof(reason),
		 "efa: sick link: %.3g retransmits per packet sent in job %" PRIu32 ", its peers %.3g",
		 rate, sc->job_id, peers);
	if (step->cfg->sick_link_drain == EFA_YES)
		rec.drained = drain(step, reason, did, sizeof(did));
	else
		snprintf(did, sizeof(did), "not drained (SickLinkDrain=no): tell your cluster admin");
	snprintf(label, sizeof(label), "job %" PRIu32 "'s sick link", sc->job_id);
	efa_step_record_update(step, sc->job_id, label, add_sick, &rec);
	slurm_error("efa: job %" PRIu32 " step %" PRIu32 ": sick link on node %s: %.3g retransmitted packets and timeouts per packet sent since the step started, over %ld times its %" PRIu32 " peers' median (%.3g, SickLinkFloor=%g): its collectives wait for it; %s",
		    sc->job_id, sc->step_id, step->node_name, rate, step->cfg->sick_link_factor,
		    sc->nnodes - 1, peers, step->cfg->sick_link_floor, did);
	slurm_info("efa: node %s: job %" PRIu32 " step %" PRIu32 ": sick link named (rate %g, peers %g), %s",
		   step->node_name, sc->job_id, sc->step_id, rate, peers,
		   rec.drained ? "drained" : "not drained");
	efa_counters_job_event(step, EFA_USAGE_SICK_LINK, "sick link");
}

void efa_link_check(struct efa_step *step, uint32_t run, const struct efa_hang_sample *s,
		    struct efa_link_watch *lw)
{
	const struct efa_step_counters *sc = &step->counters;
	const double floor = step->cfg->sick_link_floor;
	double rate, peers, *rates;

	if (lw->named || !s->link_known)
		return;
	rate = (double)s->link_errors / (double)(s->link_sent ? s->link_sent : 1);
	if (rate <= floor) {
		lw->standing_out = 0;
		return;
	}
	rates = calloc(sc->nnodes, sizeof(*rates));
	if (!rates || publish(step, run, rate, rates)) {
		free(rates);
		return;
	}
	for (uint32_t i = 0; i < sc->nnodes; i++)
		if (rates[i] < 0)
			rates[i] = floor;	/* under the floor, or not sampled yet */
	rates[sc->nodeid] = rate;
	if (efa_sick_link(rates, sc->nnodes, sc->nodeid, floor, (double)step->cfg->sick_link_factor,
			  &peers) == 1) {
		if (++lw->standing_out >= STANDING_OUT_SAMPLES) {
			name(step, run, rate, peers);
			lw->named = true;
		}
	} else {
		lw->standing_out = 0;
	}
	free(rates);
}
