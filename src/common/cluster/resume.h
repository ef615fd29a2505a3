/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Auto-resume: a job whose node fails runs again, on other nodes, up to
 * N times. It is Slurm's own requeue (a batch job whose node is lost ends
 * NODE_FAIL and is requeued, same job id, when requeue is allowed); the
 * bridge allows it at submission, and the batch step of the run that
 * uses up N forbids it, so the next failure ends the job. These are the
 * rules both follow.
 */
#ifndef EFA_RESUME_H
#define EFA_RESUME_H

#include <stdbool.h>

#include "common/config/efa_conf.h"

/* How many times the job may run again: its --efa-resume (option, or
 * EFA_RESUME_UNSET), else its partition's Resume= (part may be NULL),
 * else 0. */
long efa_resume_limit(long option, const struct efa_partition *part);

/*
 * Whether the run that Slurm has restarted `restarts` times
 * (SLURM_RESTART_COUNT) is the last one the limit allows: then requeue
 * must be turned off for it. A manual requeue counts as well, so a run
 * past the limit is a last one too.
 */
bool efa_resume_last_run(long limit, unsigned long restarts);

#endif
