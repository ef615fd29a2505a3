/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The step's checkpoint directory on this node: decided in init_post_opt
 * (as root), created in user_init (as the job's user, so it is theirs
 * without a chown), exported by step.c in task_init, and trimmed to the
 * newest N when the batch step ends. Problems fail the step's tasks
 * (efa_step_fail), never the plugin: that could drain the node.
 */
#ifndef SPANK_EFA_CHECKPOINT_H
#define SPANK_EFA_CHECKPOINT_H

#include <stdbool.h>

#include <slurm/spank.h>

#include "common/config/efa_conf.h"
#include "options.h"

/*
 * Checkpointing is on when the user gave --checkpoint-dir or the job's
 * partition (part, may be NULL) has a CheckpointRoot=.
 */
void efa_ckpt_prepare(spank_t sp, const struct efa_config *cfg,
		      const struct efa_partition *part, const struct efa_options *opts,
		      const char *node_name);

/* In user_init: checks the root's file system, creates the directory
 * and names it in the job's environment (EFA_CKPT_ENV_VAR). */
void efa_ckpt_create(spank_t sp);

/* In a container's task: whether the directory there is the node's (a
 * bind mount), not one in the container's own layer. */
bool efa_ckpt_reaches_container(void);

/* The directory every task gets, or NULL. */
const char *efa_ckpt_dir(void);

/*
 * At the end of the batch step (as root): deletes the older checkpoints
 * in a child process that has become the job's user, waits for it (with
 * a bound) and logs what went. Never fails the job.
 */
void efa_ckpt_retain(spank_t sp);

#endif
