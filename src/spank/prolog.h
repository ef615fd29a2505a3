/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The job prolog's gate. slurmd runs slurm_spank_job_prolog as root, in a
 * "slurmstepd spank prolog" of its own, before the job's first step on
 * the node (with PrologFlags=Alloc, at allocation, on every node of the
 * job). For a job that asked for EFA (--efa, or its partition's EFA=),
 * the node gets the health check of common/health/node_check.h; a node
 * that fails it is drained with slurm-efa's reason and the prolog fails,
 * so that slurmd asks slurmctld to requeue the job (src/slurmd/slurmd/
 * req.c, _launch_job_fail: REQUEST_JOB_REQUEUE with JOB_LAUNCH_FAILED;
 * held unless SchedulerParameters=nohold_on_prolog_fail) before any of
 * its tasks ran there.
 */
#ifndef SPANK_EFA_PROLOG_H
#define SPANK_EFA_PROLOG_H

#include <slurm/spank.h>

#include "common/config/plugin_args.h"

/* 0: let the job start here; -1: the node failed the check (drained). */
int efa_prolog_gate(spank_t sp, const struct efa_args *args);

#endif
