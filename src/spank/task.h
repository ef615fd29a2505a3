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

/*
 * user_init, in slurmstepd before the tasks fork, first: the container
 * image the step asked pyxis for (step->env.image, "" for none), looked up
 * once here for every task. Slurm's lookup of an option takes a lock and
 * walks the step's options, and in a task's child each page it writes is
 * a copy-on-write fault; a step with nothing to do looks nothing up.
 */
void efa_task_note_image(struct efa_step *step, spank_t sp);

/*
 * user_init, in slurmstepd before the tasks fork: what every task of the
 * step gets alike (the plan's variables, the checkpoint directory, the
 * mode), set once in the step's environment. Each task then finds those
 * set and sets only its own: the environment it ends with is the same.
 * Steps in a container, and steps that fail, are left to their tasks.
 */
void efa_task_step_env(struct efa_step *step, spank_t sp);

/* 0, or -1 to fail the task (with the step's failure, logged here). */
int efa_task_init(struct efa_step *step, spank_t sp);

#endif
