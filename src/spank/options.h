/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The SPANK options of spank_efa.so. Slurm's option callbacks carry no
 * handle, so the parsed values live in this file's state, one copy per
 * process (srun, sbatch, salloc or slurmstepd).
 */
#ifndef SPANK_EFA_OPTIONS_H
#define SPANK_EFA_OPTIONS_H

#include <slurm/spank.h>

#include "common/base/error.h"
#include "common/cluster/job_options.h"

struct efa_options {
	struct efa_job_values v;	/* what the job asked (job_options.h) */
	/* In slurmstepd: the first value the job sent that cannot be used
	 * (a client of Slurm's API can send any); "" when none. */
	char problem[EFA_ERROR_MAX + 64];
};

/* Registers every option of the table (job_options.h); call from
 * slurm_spank_init. */
int efa_options_register(spank_t sp);

/*
 * Remote context, init_post_opt: takes options that only the job's
 * environment holds. A job submitted through slurmrestd carries them there
 * (slurm-efa submit), and Slurm applies them to its srun steps but not to
 * its batch step.
 */
void efa_options_from_job_env(spank_t sp);

/*
 * The job prolog (S_CTX_JOB_SCRIPT), where no option callback runs: the
 * job's --efa as Slurm hands it to the prolog, in its environment.
 * EFA_MODE_UNSET when the job did not ask, or asked with a value that is
 * not one (the step refuses it later, with the reason).
 */
enum efa_mode efa_options_job_efa(spank_t sp);

/* The job's --efa-resume as its job prolog or epilog sees it, or
 * EFA_RESUME_UNSET (not given, or not a count). */
long efa_options_job_resume(spank_t sp);

/* What the user asked for (EFA_MODE_UNSET when nothing). */
const struct efa_options *efa_options_get(void);

#endif
