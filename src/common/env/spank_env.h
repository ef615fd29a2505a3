/* SPDX-License-Identifier: Apache-2.0 */
/*
 * How the SPANK options of spank_efa.so travel in a job's environment:
 * sbatch puts them there, and slurm-efa submit does the same for jobs
 * it sends through slurmrestd. The option's name follows the prefix with
 * '-' as '_' (--efa-bind: ..._efa_bind).
 */
#ifndef EFA_SPANK_ENV_H
#define EFA_SPANK_ENV_H

#include <stddef.h>

#define EFA_SPANK_ENV_PREFIX "SLURM_SPANK__SLURM_SPANK_OPTION_efa_"
/* The value of an option given without one (a bare --efa). */
#define EFA_SPANK_ENV_NO_VALUE "(null)"

/* The variable that carries option (without "--"). Returns 0, or -1 when
 * it does not fit in buf. */
int efa_spank_env_name(const char *option, char *buf, size_t size);

#endif
