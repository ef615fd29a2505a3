/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What each step moved over the node's EFA devices (common/usage): a
 * reading of the counters once the step's tasks run (a thread of its
 * slurmstepd takes it, off the step's launch path), and when its last task on
 * the node ends the difference added to the job's totals on the node, the
 * node's file for node_exporter written again (MetricsDir=), and an --efa
 * step's user told what the figures say (common/usage/verdict.h). Every
 * step with MetricsDir= is counted, an --efa step on several nodes always.
 * Only the steps Slurm numbers (srun's): the batch and extern steps last
 * as long as the job and would count its steps' traffic twice. Nothing
 * here ever fails a step.
 */
#ifndef SPANK_EFA_STEP_COUNTERS_H
#define SPANK_EFA_STEP_COUNTERS_H

#include <slurm/spank.h>

#include "common/config/plugin_args.h"
#include "common/usage/usage.h"
#include "step.h"

/* init_post_opt, as root, once the node is known (prepare.c): whether the
 * step is counted here, and what its figures are labelled with. */
void efa_counters_step_begin(struct efa_step *step, spank_t sp);

/* init_post_opt, last: a counted step's thread, which waits for its tasks
 * to run (efa_counters_tasks_run), takes the start reading
 * EFA_USAGE_START_AFTER_S later (usage.h), then runs watch (NULL: none)
 * until the step ends. A step that ends sooner reads nothing. Nothing on
 * the launch path or srun's wakes the thread of such a step: it looks
 * once a second, and slurm_spank_exit ends it. */
void efa_counters_start(struct efa_step *step, void (*watch)(struct efa_step *step));

/* slurm_spank_task_post_fork, in slurmstepd, as root again once every
 * task is forked (the store is root's): when the tasks ran, for the
 * thread. */
void efa_counters_tasks_run(struct efa_step *step);

/* For the watch: sleeps seconds; false when the step ends first. */
bool efa_counters_wait(struct efa_step *step, long seconds);

/* What a running step found on the node (a hang, a sick link: usage.h),
 * in the node's figures, and its node_exporter file written again
 * (MetricsDir=); what names it in the log. From the step's watch thread. */
void efa_counters_job_event(const struct efa_step *step, enum efa_usage_event event,
			    const char *what);

/* slurm_spank_task_exit in slurmstepd, as root, each time one of the
 * step's tasks on the node ends: the step ends with its last (its thread
 * joined first when it took the start reading, told to end otherwise).
 * True then, for a counted step. */
bool efa_counters_task_exit(struct efa_step *step, spank_t sp);

/* slurm_spank_exit in slurmstepd, as root: the thread is joined, and a
 * step whose tasks did not all run ends here, its user told nothing. */
void efa_counters_step_end(struct efa_step *step, spank_t sp);

/* The job epilog, as root: the job no longer runs on the node. */
void efa_counters_job_end(spank_t sp, const struct efa_args *args);

#endif
