/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "common/env/spank_env.h"

#include "options.h"

enum option_id {
	OPT_EFA,
	OPT_EFA_BIND,
	OPT_EFA_RANK_ORDER,
	OPT_CHECKPOINT_DIR,
	OPT_CHECKPOINT_KEEP,
	OPT_EFA_RESUME,
	OPT_COUNT
};

static struct efa_options opts = {
	.checkpoint_keep = EFA_CKPT_KEEP_UNSET,
	.resume = EFA_RESUME_UNSET,
};
static bool given[OPT_COUNT];

/* The first problem with a value the job sent; the step fails with it. */
static void note_problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note_problem(const char *fmt, ...)
{
	va_list ap;

	if (opts.problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(opts.problem, sizeof(opts.problem), fmt, ap);
	va_end(ap);
}

static int option_cb(int val, const char *optarg, int remote)
{
	struct efa_error err;
	int rc;

	switch (val) {
	case OPT_EFA:
		rc = efa_mode_parse(optarg, &opts.efa, &err);
		break;
	case OPT_EFA_BIND:
		rc = efa_bind_parse(optarg, &opts.bind, &err);
		break;
	case OPT_EFA_RANK_ORDER:
		rc = efa_rank_order_parse(optarg, &opts.rank_order, &err);
		break;
	case OPT_CHECKPOINT_DIR:
		rc = efa_checkpoint_dir_parse(optarg, opts.checkpoint_dir,
					      sizeof(opts.checkpoint_dir), &err);
		break;
	case OPT_CHECKPOINT_KEEP:
		rc = efa_checkpoint_keep_parse(optarg, &opts.checkpoint_keep, &err);
		break;
	case OPT_EFA_RESUME:
		rc = efa_resume_parse(optarg, &opts.resume, &err);
		break;
	default:
		return -1;
	}
	given[val] = true;
	if (!rc)
		return 0;
	if (!remote) {
		slurm_error("efa: %s", err.msg);
		return -1;
	}
	/* srun and sbatch check values, but a client of Slurm's API can send
	 * any: failing here, before init_post_opt, could drain the node, so
	 * the step fails in task_init instead. */
	slurm_error("efa: %s (in the job's environment)", err.msg);
	note_problem("efa: %s (in the job's environment): this step cannot run with it", err.msg);
	return 0;
}

static struct spank_option options[] = {
	{ "efa", "[auto|required|off]",
	  "Use EFA for this job: 'required' (the default for a bare --efa) fails "
	  "steps on nodes without usable EFA, 'auto' uses EFA where present, "
	  "'off' opts out.",
	  2, OPT_EFA, option_cb },
	{ "efa-bind", "none|closest",
	  "Per-task accelerator and EFA NIC binding: 'closest' gives each task "
	  "its GPUs and the NICs nearest to them, 'none' (default) leaves NIC "
	  "choice to NCCL.",
	  1, OPT_EFA_BIND, option_cb },
	{ "efa-rank-order", "topology|slurm",
	  "How RANK, NODE_RANK and MASTER_ADDR number the step's nodes: "
	  "'topology' puts nodes under one network switch next to each other "
	  "(NCCL's rings follow rank order), 'slurm' keeps Slurm's order.",
	  1, OPT_EFA_RANK_ORDER, option_cb },
	{ "checkpoint-dir", "PATH",
	  "Directory for this job's checkpoints (an absolute path, under the "
	  "partition's checkpoint root when it has one), created as you on every "
	  "node and given to every task as CHECKPOINT_DIR.",
	  1, OPT_CHECKPOINT_DIR, option_cb },
	{ "checkpoint-keep", "N",
	  "When the job ends, keep only the N newest checkpoints (checkpoint-*, "
	  "step_*, global_step*, iter_*, ...) in its checkpoint directory; 0 keeps all.",
	  1, OPT_CHECKPOINT_KEEP, option_cb },
	{ "efa-resume", "N",
	  "When a node of this batch job fails, run the job again on healthy "
	  "nodes, up to N times (same job id); each run gets CHECKPOINT_RESUME_DIR, "
	  "the newest complete checkpoint. 0: never.",
	  1, OPT_EFA_RESUME, option_cb },
};

void efa_options_from_job_env(spank_t sp)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		char name[128], value[EFA_CKPT_PATH_MAX + 64];
		spank_err_t rc;

		if (given[options[i].val])
			continue;
		if (efa_spank_env_name(options[i].name, name, sizeof(name)))
			continue;
		rc = spank_getenv(sp, name, value, sizeof(value));
		if (rc == ESPANK_ENV_NOEXIST)
			continue;
		if (rc == ESPANK_NOSPACE) {
			note_problem("efa: --%s in the job's environment is longer than %zu bytes",
				     options[i].name, sizeof(value) - 1);
			continue;
		}
		if (rc != ESPANK_SUCCESS) {
			note_problem("efa: cannot read --%s from the job's environment: %s",
				     options[i].name, spank_strerror(rc));
			continue;
		}
		option_cb(options[i].val, strcmp(value, EFA_SPANK_ENV_NO_VALUE) ? value : NULL, 1);
	}
}

int efa_options_register(spank_t sp)
{
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		spank_err_t rc = spank_option_register(sp, &options[i]);

		if (rc != ESPANK_SUCCESS) {
			slurm_error("efa: cannot register --%s: %s", options[i].name,
				    spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

enum efa_mode efa_options_job_efa(spank_t sp)
{
	enum efa_mode mode = EFA_MODE_UNSET;
	struct efa_error err;
	char *value = NULL;

	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		if (options[i].val != OPT_EFA)
			continue;
		/* A bare --efa arrives as an empty value: required. */
		if (spank_option_getopt(sp, &options[i], &value) != ESPANK_SUCCESS ||
		    efa_mode_parse(value, &mode, &err))
			return EFA_MODE_UNSET;
	}
	return mode;
}

const struct efa_options *efa_options_get(void)
{
	return &opts;
}
