/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slurm 26.05 names a job by slurm_step_id_t; its wrappers take the job id
 * every release before it takes. */
#define SLURM_BACKWARD_COMPAT
#include <slurm/slurm.h>

#include "common/base/strutil.h"
#include "common/topology/hostlist.h"
#include "common/cluster/resume.h"
#include "common/cluster/scontrol.h"
#include "checkpoint_step.h"
#include "resume_step.h"
#include "step_record.h"

/* At the start of a run (the batch step) or at its end (the epilog): a
 * slow controller delays the job, never holds it. */
#define REQUEUE_TIMEOUT_MS 10000

/*
 * How many of restarts (Slurm's count) were node failures, by the requeued
 * runs the job's AdminComment (comment) records. -1 with err when it
 * cannot be read (out of memory).
 */
static int node_failures(unsigned long restarts, const char *comment, unsigned long *failures,
			 struct efa_error *err)
{
	struct efa_record_requeue *requeues = NULL;
	size_t n = 0;

	if (efa_record_requeues(comment, &requeues, &n, err))
		return -1;
	*failures = efa_resume_node_failures(restarts, requeues, n);
	free(requeues);
	return 0;
}

/* scontrol with argv: 0, or -1 with Slurm's answer (one line) in answer. */
static int requeue_scontrol(char *const *argv, char *answer, size_t size)
{
	if (!efa_scontrol(argv, REQUEUE_TIMEOUT_MS, answer, size))
		return 0;
	answer[strcspn(answer, "\n")] = '\0';
	return -1;
}

/* The first run: requeue on, where neither the bridge nor the site's
 * JobRequeue=1 made it so (the plugin alone is enough for --efa-resume). */
static void requeue_on(uint32_t job_id, long limit)
{
	char job_arg[48], answer[1024];
	char *const argv[] = { "scontrol", "update", job_arg, "Requeue=1", NULL };

	snprintf(job_arg, sizeof(job_arg), "JobId=%u", (unsigned)job_id);
	if (requeue_scontrol(argv, answer, sizeof(answer)))
		slurm_error("efa: job %u asked to run again up to %ld times after a node failure, but its requeue could not be turned on (%s): it will not be resumed; tell your cluster admin",
			    (unsigned)job_id, limit, answer);
}

void efa_resume_prepare(struct efa_step *step, spank_t sp, const struct efa_options *opts)
{
	struct efa_step_resume *r = &step->resume;
	uint32_t job_id = 0, step_id = 0;
	long limit = efa_resume_limit(opts->v.resume, step->part);
	struct efa_error err;
	job_info_msg_t *msg;

	if (limit <= 0)
		return;
	if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS ||
	    step_id != SLURM_BATCH_SCRIPT || spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS)
		return;
	r->limit = limit;
	r->job_id = job_id;
	if (efa_job_load(job_id, &msg)) {
		snprintf(r->unread, sizeof(r->unread), "%s", slurm_strerror(errno));
		return;
	}
	r->restarts = msg->job_array[0].restart_cnt;
	r->requeue = msg->job_array[0].requeue;
	/* Unread, every restart counts: never more resumes than asked. */
	if (node_failures(r->restarts, msg->job_array[0].admin_comment, &r->node_failures, &err))
		r->node_failures = r->restarts;
	slurm_free_job_info_msg(msg);
}

/* "; CHECKPOINT_RESUME_DIR=..." or what there is not, for the messages. */
static void resume_point(const struct efa_step *step, char *buf, size_t size)
{
	const char *from = efa_ckpt_resume_dir(step);

	if (from)
		snprintf(buf, size, "; CHECKPOINT_RESUME_DIR=%s", from);
	else if (efa_ckpt_dir(step))
		snprintf(buf, size, "; no complete checkpoint in %s to resume from", efa_ckpt_dir(step));
	else
		buf[0] = '\0';
}

int efa_resume_task(struct efa_step *step)
{
	const struct efa_step_resume *r = &step->resume;
	char where[EFA_STEP_MESSAGE_MAX / 2];
	unsigned long others;

	if (!r->limit)
		return 0;
	if (r->unread[0]) {
		slurm_error("efa: job %u cannot be read from slurmctld (%s): whether this run may be resumed after a node failure is not known; tell your cluster admin",
			    (unsigned)r->job_id, r->unread);
		return 0;
	}
	if (!r->restarts) {
		if (!r->requeue)
			requeue_on(r->job_id, r->limit);
		return 0;
	}
	resume_point(step, where, sizeof(where));
	others = r->restarts - r->node_failures;
	/* Only slurm_error reaches the batch script's stderr from here. */
	switch (efa_resume_run(r->limit, r->node_failures)) {
	case EFA_RESUME_MORE:
		slurm_error("efa: job %u runs again (run %u): %lu node failure%s of the %ld it may be resumed after%s%s",
			    (unsigned)r->job_id, (unsigned)r->restarts, r->node_failures,
			    r->node_failures == 1 ? "" : "s", r->limit,
			    others ? " (a preemption or requeue does not count)" : "", where);
		return 0;
	case EFA_RESUME_LAST:
		slurm_error("efa: job %u runs again after a node failure, its last resume (%lu of %ld): if a node fails now the job ends%s",
			    (unsigned)r->job_id, r->node_failures, r->limit, where);
		return 0;
	case EFA_RESUME_OVER:
		break;
	}
	slurm_error("efa: job %u ends here: a node failed under its last resume (%lu node failures, --efa-resume=%ld allows %ld). Resubmit it to go on%s",
		    (unsigned)r->job_id, r->node_failures, r->limit, r->limit, where);
	return -1;
}

/* Whether a node of names is down, drained, failing or not responding. */
static bool any_node_broken(char *const *names, size_t n)
{
	node_info_msg_t *nodes = NULL;
	bool broken = false;

	if (slurm_load_node(0, &nodes, SHOW_ALL) != SLURM_SUCCESS)
		return true;	/* unknown: counted as a node failure */
	for (uint32_t i = 0; i < nodes->record_count && !broken; i++) {
		const node_info_t *ni = &nodes->node_array[i];
		uint32_t base = ni->node_state & NODE_STATE_BASE;

		if (!ni->name)
			continue;
		for (size_t k = 0; k < n; k++) {
			if (strcmp(ni->name, names[k]))
				continue;
			broken = base == NODE_STATE_DOWN || base == NODE_STATE_ERROR ||
				 (ni->node_state & (NODE_STATE_DRAIN | NODE_STATE_FAIL |
						    NODE_STATE_NO_RESPOND));
			break;
		}
	}
	slurm_free_node_info_msg(nodes);
	return broken;
}

void efa_resume_exit(const struct efa_step *step, spank_t sp)
{
	const struct efa_step_resume *r = &step->resume;
	struct efa_record_requeue rq = { .run = r->restarts };
	char nodelist[4096], **names = NULL;
	const slurm_job_info_t *job;
	job_info_msg_t *msg;
	struct efa_error err;
	size_t n = 0;

	if (!r->limit || r->unread[0] || efa_job_load(r->job_id, &msg))
		return;
	job = &msg->job_array[0];
	/* Not requeued while this run went on: it ended, or its epilog
	 * requeues it for a broken node (a node failure). */
	if (job->restart_cnt <= r->restarts)
		goto done;
#ifdef HAVE_SLURM_JOB_INFO_T_FAILED_NODE
	/* Requeued for a node's failure (slurmctld names it until the
	 * requeue completes, after this step's end): a node set DOWN whose
	 * slurmd answers is back in service within milliseconds under
	 * ReturnToService=2, before the nodes' states below are read. */
	if (job->failed_node && job->failed_node[0])
		goto done;
#endif
	/* Requeued for a hang (hang_step.c records it first): it uses a
	 * resume, as a node failure does. */
	if (efa_record_hung(job->admin_comment, r->restarts, EFA_RECORD_ANY_STEP, EFA_HANG_REQUEUE))
		goto done;
	if (!efa_step_job_env(sp, "SLURM_JOB_NODELIST", nodelist, sizeof(nodelist)) ||
	    efa_hostlist_expand(nodelist, &names, &n, &err) || any_node_broken(names, n))
		goto done;
	rq.cause = job->preempt_time ? EFA_REQUEUE_PREEMPTION : EFA_REQUEUE_REQUEST;
	efa_step_record_requeue(step, r->job_id, &rq);
done:
	efa_strv_free(names);
	slurm_free_job_info_msg(msg);
}

int efa_resume_requeue(const char *job, char *answer, size_t size)
{
	char *const argv[] = { "scontrol", "requeue", (char *)job, NULL };

	return requeue_scontrol(argv, answer, size);
}

/* scontrol show job's text: room for an AdminComment slurmdbd keeps. */
#define SHOW_JOB_MAX (EFA_RECORD_COMMENT_MAX + 16384)

int efa_resume_ended_run(const char *job, long limit, enum efa_resume_run *run, char *why,
			 size_t size)
{
	char *const argv[] = { "scontrol", "show", "job", (char *)job, NULL };
	char *text = malloc(SHOW_JOB_MAX), *comment = NULL;
	unsigned long restarts = 0, failures;
	struct efa_error err;
	int rc = -1;

	if (!text) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	if (efa_scontrol(argv, REQUEUE_TIMEOUT_MS, text, SHOW_JOB_MAX)) {
		snprintf(why, size, "%s", text);
		why[strcspn(why, "\n")] = '\0';
		goto out;
	}
	if (efa_resume_shown_job(text, &restarts, &comment)) {
		snprintf(why, size, "scontrol show job %s printed no restart count", job);
		goto out;
	}
	if (node_failures(restarts, comment, &failures, &err)) {
		snprintf(why, size, "%s", err.msg);
		goto out;
	}
	*run = efa_resume_run(limit, failures);
	rc = 0;
out:
	free(comment);
	free(text);
	return rc;
}
