/* SPDX-License-Identifier: Apache-2.0 */
/*
 * task_init, in each task just before it runs, as the job's user (inside
 * its container when pyxis started one): the task's own checks, then the
 * step's plan and the task's bindings, launch variables and checkpoint
 * directory applied to its environment.
 */
#ifndef SPANK_EFA_TASK_H
#define SPANK_EFA_TASK_H

#include <slurm/spank.h>

#include "step.h"

/* 0, or -1 to fail the task (with the step's failure, logged here). */
int efa_task_init(struct efa_step *step, spank_t sp);

#endif
