/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Auto-resume: a job whose node fails runs again, on other nodes, up to
 * N times. It is Slurm's own requeue (a batch job whose node is lost ends
 * NODE_FAIL and is requeued, same job id, when requeue is allowed; one
 * whose prolog fails is requeued too), and slurm-efa's epilog requeues a
 * job that ended on a node it found broken. The job's requeue stays on
 * all along, so that a preemption (PreemptMode=REQUEUE) or a person's
 * requeue still requeues it; those do not use up its N, and a run that
 * node failures have put past N ends as it starts. These are the rules.
 */
#ifndef EFA_RESUME_H
#define EFA_RESUME_H

#include <stdbool.h>
#include <stddef.h>

#include "common/config/efa_conf.h"
#include "common/usage/job_record.h"

/* How many times the job may run again: its --efa-resume (option, or
 * EFA_RESUME_UNSET), else its partition's Resume= (part may be NULL),
 * else 0. */
long efa_resume_limit(long option, const struct efa_partition *part);

/*
 * How many of the run's restarts (Slurm's restart count of it,
 * SLURM_RESTART_COUNT) were node failures: every requeue of an earlier
 * run except those the job's record names as requeued while all its
 * nodes were healthy (requeues, n; common/usage/job_record.h). A requeue
 * nobody recorded counts as a node failure: a job is never resumed more
 * often than it asked.
 */
unsigned long efa_resume_node_failures(unsigned long restarts,
				       const struct efa_record_requeue *requeues, size_t n);

/* What a run that node failures restarted node_failures times is. */
enum efa_resume_run {
	EFA_RESUME_MORE,	/* a node failure now resumes it again */
	EFA_RESUME_LAST,	/* the last the limit allows: a node failure now ends it */
	EFA_RESUME_OVER,	/* past the limit: it ends as it starts */
};

enum efa_resume_run efa_resume_run(long limit, unsigned long node_failures);

/*
 * From what `scontrol show job JOB` printed, not on one line (scontrol's
 * info_job.c prints "Restarts=N" among other fields, and "AdminComment=
 * TEXT " alone on its own line, TEXT as the job has it, blanks and all):
 * the job's restart count, and its AdminComment (*comment malloc'd; NULL
 * when it has none). -1 when the text has no restart count, or out of
 * memory.
 */
int efa_resume_shown_job(const char *text, unsigned long *restarts, char **comment);

#endif
