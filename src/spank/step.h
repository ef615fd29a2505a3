/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One job step on one node: what slurm-efa decided for it in
 * init_post_opt (once per step, as root) and applies in each task.
 */
#ifndef SPANK_EFA_STEP_H
#define SPANK_EFA_STEP_H

#include <slurm/spank.h>

#include "common/config/plugin_args.h"
#include "options.h"

/* Reads efa.conf and the node, builds the plan. Never fails: problems
 * are kept for efa_step_task_init to report, so the node is not drained. */
void efa_step_prepare(spank_t sp, const struct efa_args *args,
		      const struct efa_options *opts);

/* In user_init, before pyxis starts the container: names the node's EFA
 * libraries for enroot's hook when efa.conf says ContainerHostLibraries=yes
 * (EFA_ENV_HOST_MOUNTS_VAR). */
void efa_step_user_init(spank_t sp);

/* Makes every task of the step fail with this message (the first one
 * given wins): how user_init and init_post_opt report a problem. */
void efa_step_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Applies the plan to the task's environment, or fails the task with
 * the message prepared earlier. */
int efa_step_task_init(spank_t sp);

void efa_step_release(void);

#endif
