/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Slurm 26.05 names a job by slurm_step_id_t; its wrappers take the job id
 * every release before it takes. */
#define SLURM_BACKWARD_COMPAT
#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "common/usage/job_record.h"
#include "step_record.h"

/* Reads after a write until the part is seen: a node whose part another
 * node's write dropped adds it again. */
#define RECORD_TRIES 5
/* The pause before reading again, times the try: long past the moment
 * between another node's reading and its write (two RPCs to slurmctld). */
#define RECORD_PAUSE_MS 100
#define RECORD_JITTER_MS 200

int efa_job_load(uint32_t job, job_info_msg_t **msg)
{
	*msg = NULL;
	if (slurm_load_job(msg, job, SHOW_DETAIL) != SLURM_SUCCESS)
		return -1;
	if (!*msg || (*msg)->record_count < 1) {
		slurm_free_job_info_msg(*msg);
		*msg = NULL;
		errno = ESLURM_INVALID_JOB_ID;
		return -1;
	}
	return 0;
}

int efa_job_comment(uint32_t job, char **comment)
{
	job_info_msg_t *msg;
	int rc = 0;

	*comment = NULL;
	if (efa_job_load(job, &msg))
		return -1;
	if (msg->job_array[0].admin_comment) {
		*comment = strdup(msg->job_array[0].admin_comment);
		if (!*comment) {
			errno = ENOMEM;
			rc = -1;
		}
	}
	slurm_free_job_info_msg(msg);
	return rc;
}

int efa_job_set_comment(uint32_t job, const char *comment)
{
	job_array_resp_msg_t *resp = NULL;
	job_desc_msg_t desc;
	char id[16];
	int rc;

	slurm_init_job_desc_msg(&desc);
	snprintf(id, sizeof(id), "%" PRIu32, job);
	desc.job_id_str = id;
	desc.admin_comment = (char *)comment;
	/* slurm_update_job2, as scontrol: slurm_update_job with a job id
	 * string logs, to the step's stderr, that this one is better (and a
	 * line there would count as the job's output for hang detection). */
	rc = slurm_update_job2(&desc, &resp);
	slurm_free_job_array_resp(resp);
	return rc;
}

static void part_of(const struct efa_step *step, const struct efa_step_usage *used,
		    const struct efa_step_verdict *v, struct efa_record_step *p)
{
	const struct efa_step_counters *sc = &step->counters;

	memset(p, 0, sizeof(*p));
	p->step_id = sc->step_id;
	snprintf(p->nodes, sizeof(p->nodes), "%.*s", (int)sizeof(p->nodes) - 1, sc->nodes);
	p->node_count = sc->nnodes;
	p->node_index = sc->nodeid;
	p->seconds = v->seconds;
	p->fallback = v->fallback;
	p->shared = used->shared;
	p->bytes = v->moved;
	efa_hw_sum(&used->delta, EFA_HW_TX_BYTES, &p->tx_bytes);
	efa_hw_sum(&used->delta, EFA_HW_RX_BYTES, &p->rx_bytes);
	efa_hw_sum(&used->delta, EFA_HW_RETRANS_PKTS, &p->retransmitted_packets);
	efa_hw_sum(&used->delta, EFA_HW_RETRANS_TIMEOUT_EVENTS, &p->retransmit_timeouts);
	efa_hw_sum(&used->delta, EFA_HW_UNRESPONSIVE_REMOTE_EVENTS, &p->unresponsive_remotes);
	efa_hw_sum(&used->delta, EFA_HW_IMPAIRED_REMOTE_CONN_EVENTS, &p->impaired_connections);
}

uint32_t efa_step_record_counters(void)
{
	return efa_step_moved_counters() | 1u << EFA_HW_TX_BYTES | 1u << EFA_HW_RX_BYTES |
	       1u << EFA_HW_RETRANS_PKTS | 1u << EFA_HW_RETRANS_TIMEOUT_EVENTS |
	       1u << EFA_HW_UNRESPONSIVE_REMOTE_EVENTS | 1u << EFA_HW_IMPAIRED_REMOTE_CONN_EVENTS;
}

void efa_step_record_update(const struct efa_step *step, uint32_t job, const char *what_text,
			    efa_record_adder add, const void *what)
{
	unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL) ^ step->counters.nodeid;
	struct efa_error err;
	char *comment, *next;

	for (int try = 1;; try++) {
		if (efa_job_comment(job, &comment)) {
			slurm_info("efa: node %s: %s: not recorded: job %" PRIu32 " cannot be read from slurmctld: %s",
				   step->node_name, what_text, job, slurm_strerror(errno));
			return;
		}
		if (add(comment, what, &next, &err)) {
			slurm_info("efa: node %s: %s: not recorded: %s", step->node_name, what_text,
				   err.msg);
			free(comment);
			return;
		}
		free(comment);
		if (!next)
			return;		/* it is there */
		if (try > RECORD_TRIES) {
			slurm_info("efa: node %s: %s: not recorded: other nodes' writes dropped it %d times",
				   step->node_name, what_text, RECORD_TRIES);
			free(next);
			return;
		}
		if (efa_job_set_comment(job, next) != SLURM_SUCCESS) {
			slurm_info("efa: node %s: %s: not recorded: job %" PRIu32 "'s AdminComment cannot be set: %s",
				   step->node_name, what_text, job, slurm_strerror(errno));
			free(next);
			return;
		}
		free(next);
		usleep((useconds_t)(RECORD_PAUSE_MS + rand_r(&seed) % RECORD_JITTER_MS) * 1000 *
		       (useconds_t)try);
	}
}

static int add_step_part(const char *comment, const void *what, char **next,
			 struct efa_error *err)
{
	return efa_record_add(comment, what, next, err);
}

static int add_requeue(const char *comment, const void *what, char **next, struct efa_error *err)
{
	return efa_record_add_requeue(comment, what, next, err);
}

void efa_step_record(const struct efa_step *step, const struct efa_step_usage *used,
		     const struct efa_step_verdict *v)
{
	const struct efa_step_counters *sc = &step->counters;
	struct efa_record_step part;
	char what[64];

	part_of(step, used, v, &part);
	snprintf(what, sizeof(what), "step %" PRIu32 ".%" PRIu32, sc->job_id, sc->step_id);
	efa_step_record_update(step, sc->job_id, what, add_step_part, &part);
}

void efa_step_record_requeue(const struct efa_step *step, uint32_t job,
			     const struct efa_record_requeue *rq)
{
	char what[96];

	snprintf(what, sizeof(what), "job %" PRIu32 "'s run %" PRIu32 " requeued by %s", job,
		 rq->run, efa_requeue_cause_name(rq->cause));
	efa_step_record_update(step, job, what, add_requeue, rq);
}
