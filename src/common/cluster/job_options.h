/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa's job options, in one table: spank_efa.so registers them
 * (sbatch, salloc, srun; steps inherit them), `slurm-efa submit` takes
 * them and sends them in the job's environment as slurmrestd jobs carry
 * them (spank_env.h), and the job_submit bridge finds the ones its policy
 * reads by their names. Each value is parsed once, here, as the plugin
 * takes it.
 */
#ifndef EFA_JOB_OPTIONS_H
#define EFA_JOB_OPTIONS_H

#include <stdbool.h>

#include "common/base/error.h"
#include "common/checkpoint/checkpoint.h"
#include "common/config/mode.h"

enum efa_job_option_id {
	EFA_OPT_EFA,
	EFA_OPT_EFA_BIND,
	EFA_OPT_EFA_RANK_ORDER,
	EFA_OPT_CHECKPOINT_DIR,
	EFA_OPT_CHECKPOINT_KEEP,
	EFA_OPT_EFA_RESUME,
	EFA_OPT_EFA_HANG,
	EFA_OPT_COUNT
};

struct efa_job_option {
	const char *name;	/* --NAME */
	const char *arginfo;	/* what its value looks like */
	const char *usage;	/* what sbatch --help says of it */
	bool optional_arg;	/* --efa alone: its value is optional */
};

extern const struct efa_job_option efa_job_options[EFA_OPT_COUNT];

/* A job's options as the plugin holds them. */
struct efa_job_values {
	enum efa_mode efa;
	enum efa_bind bind;
	enum efa_rank_order rank_order;
	char checkpoint_dir[EFA_CKPT_PATH_MAX];	/* normalized; "" when not given */
	long checkpoint_keep;			/* EFA_CKPT_KEEP_UNSET when not given */
	long resume;				/* EFA_RESUME_UNSET when not given */
	bool hang_off;				/* --efa-hang=off: no hang detection */
};

/* Nothing given. */
void efa_job_values_init(struct efa_job_values *v);

/* The option's id for its name (without "--"); -1 when it is none. */
int efa_job_option_find(const char *name);

/*
 * Parses value (NULL: the option given without one) of option id into
 * v. -1 with err saying what is wrong and what to use.
 */
int efa_job_option_parse(enum efa_job_option_id id, const char *value, struct efa_job_values *v,
			 struct efa_error *err);

#endif
