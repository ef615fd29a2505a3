/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The job prolog's and epilog's gate. slurmd runs slurm_spank_job_prolog
 * and slurm_spank_job_epilog as root, each in a "slurmstepd spank" of its
 * own: the prolog before the job's first step on the node (with
 * PrologFlags=Alloc, at allocation, on every node of the job), the epilog
 * when the job ends there. For a job that asked for EFA (--efa, or its
 * partition's EFA=), the node gets the health check of
 * common/health/node_check.h; a node that fails it is drained with
 * slurm-efa's reason and the script fails:
 * - a failed prolog has slurmd ask slurmctld to requeue the job
 *   (src/slurmd/slurmd/req.c, _launch_job_fail: REQUEST_JOB_REQUEUE with
 *   JOB_LAUNCH_FAILED; held unless SchedulerParameters=
 *   nohold_on_prolog_fail) before any of its tasks ran there;
 * - a failed epilog tells slurmctld the node is to blame for how the job
 *   ended: Slurm 26.05 requeues a job with an expedited requeue at once
 *   only then (job_mgr.c: epilog_failed), and holds it otherwise.
 */
#ifndef SPANK_EFA_GATE_H
#define SPANK_EFA_GATE_H

#include <stdbool.h>

#include <slurm/spank.h>

#include "common/config/plugin_args.h"

/* 0: nothing against the node; -1: it failed the check (and is drained). */
int efa_job_gate(spank_t sp, const struct efa_args *args, bool epilog);

#endif
