/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hang detection for one --efa step on one node (common/health/hang.h):
 * a thread of the step's slurmstepd samples, every HangCheckInterval=,
 * the node's EFA traffic, the job's output files, its checkpoint
 * directory and its heartbeat file. A node that sees nothing move for
 * HangAfter= sets its quiet bit in the job's record (job_record.h), and
 * clears it when something moves again; the node whose bit completes the
 * step's set acts for the job: one line on the job's stderr, a hang in
 * its record, then HangAction='s requeue (auto-resume) or cancel, each
 * through Slurm's API. Nothing is on the step's launch path but the
 * thread's start; the thread ends with the step's last task on the node.
 */
#ifndef SPANK_EFA_HANG_STEP_H
#define SPANK_EFA_HANG_STEP_H

#include <slurm/spank.h>

#include "options.h"
#include "step.h"

/* The variable that names the step's heartbeat file on the node. */
#define EFA_HEARTBEAT_VAR "SLURM_EFA_HEARTBEAT"

/* init_post_opt, as root, after the counters' start reading
 * (step_counters.h): starts the watch of a multi-node --efa step whose
 * partition sets HangAfter= and which did not opt out. */
void efa_hang_step_begin(struct efa_step *step, spank_t sp, const struct efa_options *opts);

/* user_init, once the checkpoint directory is made: its newest complete
 * checkpoint, for the hang's line (the thread reads it under its lock). */
void efa_hang_note_checkpoint(struct efa_step *step);

/* slurm_spank_task_exit: the watch ends with the step's last task on the
 * node, before its counters' end reading. */
void efa_hang_task_exit(struct efa_step *step);

/* slurm_spank_exit: a watch still running (tasks that never ran) ends. */
void efa_hang_step_end(struct efa_step *step);

#endif
