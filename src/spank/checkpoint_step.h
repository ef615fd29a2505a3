/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The step's checkpoint directory on this node (step->ckpt): decided in
 * init_post_opt (as root), created in user_init (as the job's user, so it
 * is theirs without a chown), named in each task by task.c, and trimmed to
 * the newest N when the batch step ends. Problems fail the step's tasks
 * (efa_step_fail), never the plugin: that could drain the node. The rules
 * (which paths, which names, what retention removes) are
 * common/checkpoint's.
 */
#ifndef SPANK_EFA_CHECKPOINT_STEP_H
#define SPANK_EFA_CHECKPOINT_STEP_H

#include <stdbool.h>

#include <slurm/spank.h>

#include "options.h"
#include "step.h"

/*
 * Checkpointing is on when the user gave --checkpoint-dir or the job's
 * partition has a CheckpointRoot=.
 */
void efa_ckpt_prepare(struct efa_step *step, spank_t sp, const struct efa_options *opts);

/* In user_init: checks the root's file system, creates the directory
 * and names it in the job's environment (EFA_CKPT_ENV_VAR). */
void efa_ckpt_create(struct efa_step *step, spank_t sp);

/* In a container's task: whether the directory there is the node's (a
 * bind mount), not one in the container's own layer. */
bool efa_ckpt_reaches_container(const struct efa_step *step);

/* The directory every task gets, or NULL. */
const char *efa_ckpt_dir(const struct efa_step *step);

/* The newest complete checkpoint in it when the step started (what
 * CHECKPOINT_RESUME_DIR names), or NULL. */
const char *efa_ckpt_resume_dir(const struct efa_step *step);

/*
 * At the end of the batch step (as root): deletes the older checkpoints
 * in a child process that has become the job's user, waits for it (with
 * a bound) and logs what went. Never fails the job.
 */
void efa_ckpt_retain(struct efa_step *step, spank_t sp);

#endif
