/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What each step moved over the node's EFA devices (common/usage), with
 * MetricsDir= set: a reading of the counters when the step starts, and
 * when it ends the difference added to the job's totals on the node and
 * the node's file for node_exporter written again. Only the steps Slurm
 * numbers (srun's): the batch and extern steps last as long as the job and
 * would count its steps' traffic twice. Nothing here ever fails a step.
 */
#ifndef SPANK_EFA_STEP_COUNTERS_H
#define SPANK_EFA_STEP_COUNTERS_H

#include <slurm/spank.h>

#include "common/config/plugin_args.h"
#include "step.h"

/* init_post_opt, as root, once the node is known (prepare.c). */
void efa_counters_step_begin(struct efa_step *step, spank_t sp);

/* slurm_spank_exit in slurmstepd, as root. */
void efa_counters_step_end(struct efa_step *step, spank_t sp);

/* The job epilog, as root: the job no longer runs on the node. */
void efa_counters_job_end(spank_t sp, const struct efa_args *args);

#endif
