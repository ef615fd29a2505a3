/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The plugin's part of auto-resume (common/cluster/resume.h): the first
 * run turns Slurm's requeue on for the job, the run that uses up its
 * --efa-resume (or its partition's Resume=) turns it off, so that the next
 * node failure ends it; a resumed run tells the job which run it is and
 * where it resumes from; the epilog of a node that broke under the job
 * requeues it.
 */
#ifndef SPANK_EFA_RESUME_H
#define SPANK_EFA_RESUME_H

#include <slurm/spank.h>

#include "options.h"
#include "step.h"

/* init_post_opt: whether this batch step's job is one slurm-efa resumes. */
void efa_resume_prepare(struct efa_step *step, spank_t sp, const struct efa_options *opts);

/*
 * task_init of the batch script, where Slurm's restart count is in its
 * environment (as the job's user, who may change the job's requeue): on
 * a resumed run, requeue off when it is the last one the limit allows,
 * and the script's stderr told which run it is and where it resumes
 * from.
 */
void efa_resume_task(struct efa_step *step, spank_t sp);

/*
 * The job epilog found the node broken, under a resumable job whose
 * requeue is not Slurm 26.05's expedited one (which the epilog's failure
 * alone triggers): scontrol requeue of the completing job (job_mgr.c,
 * _job_requeue_op, requeues "done/exit/exiting jobs"), its restart count
 * up, to run again on other nodes. Slurm refuses it for a job whose last
 * allowed run turned its requeue off: it ends. 0, or -1 with Slurm's
 * answer (one line).
 */
int efa_resume_requeue(const char *job, char *answer, size_t size);

#endif
