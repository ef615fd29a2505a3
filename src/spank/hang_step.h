/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hang detection for one --efa step on one node (common/health/hang.h):
 * the step's watch samples, every HangCheckInterval=,
 * the node's EFA traffic, the job's output files, its checkpoint
 * directory and its heartbeat file. A node that sees nothing move for
 * HangAfter= sets its quiet bit in the job's record (job_record.h), and
 * clears it when something moves again; the node whose bit completes the
 * step's set acts for the job: one line on the job's stderr, a hang in
 * its record, then HangAction='s requeue (auto-resume) or cancel, each
 * through Slurm's API. It runs in the counters' thread (step_counters.h),
 * after their start reading, and ends with the step's last task on the
 * node: nothing of it is on the step's launch path.
 */
#ifndef SPANK_EFA_HANG_STEP_H
#define SPANK_EFA_HANG_STEP_H

#include <slurm/spank.h>

#include "options.h"
#include "step.h"

/* The variable that names the step's heartbeat file on the node. */
#define EFA_HEARTBEAT_VAR "SLURM_EFA_HEARTBEAT"

/* init_post_opt, as root, after efa_counters_step_begin: whether a
 * multi-node --efa step is watched on this node (its partition sets
 * HangAfter= and the job did not opt out, or SickLinks=yes), and its
 * heartbeat's variable. True: efa_hang_watch is to run. */
bool efa_hang_step_begin(struct efa_step *step, spank_t sp, const struct efa_options *opts);

/* user_init, once the checkpoint directory is made: its newest complete
 * checkpoint, for the hang's line. */
void efa_hang_note_checkpoint(struct efa_step *step);

/* The watch, in the counters' thread once their start reading is taken
 * (step_counters.h): samples every HangCheckInterval= until the step
 * ends, or until what it watches is found. */
void efa_hang_watch(struct efa_step *step);

/* Once the watch ended (efa_counters_task_exit for the step's last task
 * on the node, or efa_counters_step_end): its heartbeat goes. */
void efa_hang_step_end(struct efa_step *step);

#endif
