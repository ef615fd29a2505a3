/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The plugin's part of auto-resume (common/cluster/resume.h): the first
 * run turns Slurm's requeue on for the job; each run is told which it is
 * and where it resumes from, and a run that node failures put past the
 * job's --efa-resume (or its partition's Resume=) ends as it starts; the
 * batch step, as it ends, records a run Slurm requeued while its nodes
 * were healthy (a preemption or a requeue), which does not count; the
 * epilog of a node that broke under the job requeues it.
 */
#ifndef SPANK_EFA_RESUME_STEP_H
#define SPANK_EFA_RESUME_STEP_H

#include <stdint.h>

#include <slurm/spank.h>

#include "common/cluster/resume.h"
#include "options.h"
#include "step.h"

/* init_post_opt, in slurmstepd: whether this batch step's job is one
 * slurm-efa resumes, and which run this is (read from slurmctld). */
void efa_resume_prepare(struct efa_step *step, spank_t sp, const struct efa_options *opts);

/*
 * task_init of the batch script (as the job's user, who may change the
 * job's requeue): the first run turns requeue on; a resumed run's stderr
 * is told which run it is and where it resumes from. -1 (the script does
 * not run, the job ends) for a run past the job's resumes.
 */
int efa_resume_task(struct efa_step *step);

/* The batch step's end, in slurmstepd as root: a run requeued while all
 * its nodes were healthy is recorded in the job's AdminComment. */
void efa_resume_exit(const struct efa_step *step, spank_t sp);

/*
 * The job epilog found the node broken, under a resumable job whose
 * requeue is not Slurm 26.05's expedited one (which the epilog's failure
 * alone triggers): scontrol requeue of the completing job (job_mgr.c,
 * _job_requeue_op, requeues "done/exit/exiting jobs"), its restart count
 * up, to run again on other nodes. 0, or -1 with Slurm's answer (one
 * line).
 */
int efa_resume_requeue(const char *job, char *answer, size_t size);

/*
 * For the epilog: what the job's run that just ended was (*run), with
 * limit its resumes. The epilog runs in slurmstepd's spank mode, which
 * sets up no authentication for Slurm's API: the job is read with
 * scontrol. -1 with why when it cannot be read.
 */
int efa_resume_ended_run(const char *job, long limit, enum efa_resume_run *run, char *why,
			 size_t size);

#endif
