/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the SPANK options of spank_efa.so travel with a job: sbatch, salloc
 * and srun carry them in its spank_job_env (EFA_SPANK_JOB_ENV_PREFIX), and
 * in its environment as a step sees them (EFA_SPANK_ENV_PREFIX), where
 * slurm-efa submit also puts them for jobs it sends through slurmrestd.
 * The option's name follows the prefix with '-' as '_' (--efa-bind:
 * ..._efa_bind).
 */
#ifndef EFA_SPANK_ENV_H
#define EFA_SPANK_ENV_H

#include <stddef.h>

#define EFA_SPANK_JOB_ENV_PREFIX "_SLURM_SPANK_OPTION_efa_"
#define EFA_SPANK_ENV_PREFIX "SLURM_SPANK_" EFA_SPANK_JOB_ENV_PREFIX
/* The value of an option given without one (a bare --efa). */
#define EFA_SPANK_ENV_NO_VALUE "(null)"

/* The variable that carries option (without "--"). Returns 0, or -1 when
 * it does not fit in buf. */
int efa_spank_env_name(const char *option, char *buf, size_t size);

#endif
