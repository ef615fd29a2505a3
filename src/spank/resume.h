/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The batch step's part of auto-resume (common/cluster/resume.h): the run
 * that uses up the job's --efa-resume (or its partition's Resume=) turns
 * Slurm's requeue off for the job, so that the next node failure ends it;
 * a resumed run tells the job which run it is and where it resumes from.
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

#endif
