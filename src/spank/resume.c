/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "common/cluster/resume.h"
#include "common/cluster/scontrol.h"
#include "checkpoint_step.h"
#include "resume.h"

/* At the start of a run (the batch step) or at its end (the epilog): a
 * slow controller delays the job, never holds it. */
#define REQUEUE_TIMEOUT_MS 10000

static uint32_t restart_count(spank_t sp)
{
	char text[32], *end;
	uint32_t n = 0;
	unsigned long v;

	if (spank_get_item(sp, S_SLURM_RESTART_COUNT, &n) == ESPANK_SUCCESS && n)
		return n;
	/* 22.05's item is 0 in a batch step; the task's environment has
	 * Slurm's count by task_init. */
	if (!efa_step_job_env(sp, "SLURM_RESTART_COUNT", text, sizeof(text)))
		return 0;
	v = strtoul(text, &end, 10);
	return *end || v > UINT32_MAX ? 0 : (uint32_t)v;
}

/* scontrol with argv: 0, or -1 with Slurm's answer (one line) in answer. */
static int requeue_scontrol(char *const *argv, char *answer, size_t size)
{
	if (!efa_scontrol(argv, REQUEUE_TIMEOUT_MS, answer, size))
		return 0;
	answer[strcspn(answer, "\n")] = '\0';
	return -1;
}

/* scontrol update JobId=job_id Requeue=on. */
static int set_requeue(uint32_t job_id, bool on, char *answer, size_t size)
{
	char job_arg[48];
	char *const argv[] = { "scontrol", "update", job_arg, on ? "Requeue=1" : "Requeue=0", NULL };

	snprintf(job_arg, sizeof(job_arg), "JobId=%u", (unsigned)job_id);
	return requeue_scontrol(argv, answer, size);
}

/* Slurm requeues a batch job whose node fails while its requeue is on:
 * off, the next failure ends the job. */
static void requeue_off(struct efa_step *step, uint32_t job_id)
{
	char answer[1024];

	if (!set_requeue(job_id, false, answer, sizeof(answer))) {
		step->resume.requeue_off = true;
		return;
	}
	slurm_error("efa: job %u has used its %ld resumes, but its requeue could not be turned off: %s",
		    (unsigned)job_id, step->resume.limit, answer);
	snprintf(step->resume.problem, sizeof(step->resume.problem), "%.*s",
		 (int)sizeof(step->resume.problem) - 1, answer);
}

/* The first run: requeue on, where neither the bridge nor the site's
 * JobRequeue=1 made it so (the plugin alone is enough for --efa-resume). */
static void requeue_on(uint32_t job_id, long limit)
{
	char answer[1024];

	if (set_requeue(job_id, true, answer, sizeof(answer)))
		slurm_error("efa: job %u asked to run again up to %ld times after a node failure, but its requeue could not be turned on (%s): it will not be resumed; tell your cluster admin",
			    (unsigned)job_id, limit, answer);
}

void efa_resume_prepare(struct efa_step *step, spank_t sp, const struct efa_options *opts)
{
	uint32_t job_id = 0, step_id = 0;
	long limit = efa_resume_limit(opts->v.resume, step->part);

	if (limit <= 0)
		return;
	if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS ||
	    step_id != SLURM_BATCH_SCRIPT || spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS)
		return;
	step->resume.limit = limit;
	step->resume.job_id = job_id;
}

void efa_resume_task(struct efa_step *step, spank_t sp)
{
	struct efa_step_resume *r = &step->resume;
	const char *from = efa_ckpt_resume_dir(step);
	char where[EFA_STEP_MESSAGE_MAX / 2];

	if (!r->limit)
		return;
	r->restarts = restart_count(sp);
	if (!r->restarts) {
		requeue_on(r->job_id, r->limit);
		return;
	}
	if (efa_resume_last_run(r->limit, r->restarts))
		requeue_off(step, r->job_id);
	if (from)
		snprintf(where, sizeof(where), "; CHECKPOINT_RESUME_DIR=%s", from);
	else if (efa_ckpt_dir(step))
		snprintf(where, sizeof(where), "; no complete checkpoint in %s to resume from",
			 efa_ckpt_dir(step));
	else
		where[0] = '\0';
	/* Only slurm_error reaches the batch script's stderr from here. */
	if (!efa_resume_last_run(r->limit, r->restarts))
		slurm_error("efa: job %u runs again after a node failure (resumed %u of at most %ld times)%s",
			    (unsigned)r->job_id, (unsigned)r->restarts, r->limit, where);
	else if (r->requeue_off)
		slurm_error("efa: job %u runs again after a node failure, its last resume (%u of %ld): if a node fails now the job ends%s",
			    (unsigned)r->job_id, (unsigned)r->restarts, r->limit, where);
	else
		slurm_error("efa: job %u runs again after a node failure, its last resume (%u of %ld), but Slurm could not be told to stop requeueing it (%s): tell your cluster admin%s",
			    (unsigned)r->job_id, (unsigned)r->restarts, r->limit, r->problem, where);
}

int efa_resume_requeue(const char *job, char *answer, size_t size)
{
	char *const argv[] = { "scontrol", "requeue", (char *)job, NULL };

	return requeue_scontrol(argv, answer, size);
}
