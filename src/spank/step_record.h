/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A step's figures on this node added to its job's AdminComment
 * (common/usage/job_record.h), with JobRecord=yes: slurmctld keeps the
 * job's record while it runs, slurmdbd once it ends (sacct).
 *
 * Slurm sets an AdminComment whole: the nodes of a step, ending together,
 * read it, add their part and write it back at the same moments, and a
 * write made from an older reading drops a part written in between. Each
 * node reads it again after a pause and adds its part again until it sees
 * it there (the "reported" bits make a second add a no-op), a few times.
 * It runs while the step's last task ends on the node: srun, and so the
 * batch script, waits for it, and the job is still running to take it.
 */
#ifndef SPANK_EFA_STEP_RECORD_H
#define SPANK_EFA_STEP_RECORD_H

#include <stdint.h>

#include <slurm/slurm.h>

#include "common/usage/job_record.h"
#include "common/usage/usage.h"
#include "common/usage/verdict.h"
#include "step.h"

/* The job as slurmctld has it now (slurmstepd, not its spank prolog or
 * epilog, which set up no authentication): 0, or -1 (errno). */
int efa_job_load(uint32_t job, job_info_msg_t **msg);

/* The job's AdminComment as slurmctld has it now (*comment malloc'd,
 * NULL when none): 0, or -1 (errno). */
int efa_job_comment(uint32_t job, char **comment);

/* Sets the job's AdminComment whole: SLURM_SUCCESS, or not (errno). */
int efa_job_set_comment(uint32_t job, const char *comment);

/* What a writer adds: the AdminComment to set in *next, or NULL when what
 * it adds is there. -1 with err when it cannot be added. */
typedef int (*efa_record_adder)(const char *comment, const void *what, char **next,
				struct efa_error *err);

/*
 * Adds what to the job's AdminComment, reading it again after each write
 * until it is there: a write of another node made from an older reading
 * drops it. what_text names it in the log ("step 12.3").
 */
void efa_step_record_update(const struct efa_step *step, uint32_t job, const char *what_text,
			    efa_record_adder add, const void *what);

void efa_step_record(const struct efa_step *step, const struct efa_step_usage *used,
		     const struct efa_step_verdict *v);

/* The counters a step's record sums (bits 1 << enum efa_hw_counter): its
 * bytes are the verdict's moved, however long the step ran. */
uint32_t efa_step_record_counters(void);

/* A run of a resumable job that Slurm requeued while all its nodes were
 * healthy (common/cluster/resume.h), added to the job's record whatever
 * JobRecord= says: the job's resumes are counted from it. */
void efa_step_record_requeue(const struct efa_step *step, uint32_t job,
			     const struct efa_record_requeue *rq);

#endif
