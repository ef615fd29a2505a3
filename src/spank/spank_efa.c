/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spank_efa.so: the one place that knows which SPANK context runs which
 * part of slurm-efa. Everything it decides lives in src/common.
 *
 * Remote-context rule (docs/development.md): never fail in init, init_post_opt or
 * user_init, where a failing required plugin can drain the node; report
 * a user's problem from task_init, which fails the step only.
 *
 * SPANK's callbacks carry no pointer of the plugin's: the step slurmstepd
 * runs (one per process) and the plugstack arguments live here, and every
 * part is handed them.
 */
#include <slurm/spank.h>

#include "common/config/mode.h"
#include "common/config/plugin_args.h"
#include "checkpoint_step.h"
#include "container.h"
#include "options.h"
#include "prepare.h"
#include "gate.h"
#include "hang_step.h"
#include "resume_step.h"
#include "step.h"
#include "step_counters.h"
#include "task.h"

SPANK_PLUGIN(efa, 1);

static struct efa_args args;
static struct efa_step step;

static void parse_args(int ac, char **av)
{
	struct efa_error err;

	if (efa_args_parse(ac, av, &args, &err))
		slurm_error("efa: %s", err.msg);
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	switch (spank_context()) {
	case S_CTX_SLURMD:
		parse_args(ac, av);
		slurm_info("efa: spank_efa %s (built for Slurm %s) loaded, config=%s root=%s",
			   PACKAGE_VERSION, SLURM_EFA_BUILT_FOR_SLURM,
			   args.config ? args.config : "(default)", args.root);
		return 0;
	case S_CTX_REMOTE:
		parse_args(ac, av);
		/* fall through */
	case S_CTX_LOCAL:
	case S_CTX_ALLOCATOR:
		/* Only the allocator needs the registration: sbatch and
		 * salloc ignore a static spank_options table. Registering
		 * everywhere keeps the three contexts alike. */
		return efa_options_register(sp);
	default:
		return 0;
	}
}

/* slurmd's job prolog, as root, before the job's tasks: the health gate. */
int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	parse_args(ac, av);
	return efa_job_gate(sp, &args, false);
}

/* slurmd's job epilog, as root, when the job ended on the node: whether
 * the node is to blame. */
int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	int rc;

	parse_args(ac, av);
	rc = efa_job_gate(sp, &args, true);
	efa_counters_job_end(sp, &args);
	return rc;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	const struct efa_options *opts;

	(void)ac;
	(void)av;
	if (spank_context() != S_CTX_REMOTE)
		return 0;
	efa_options_from_job_env(sp);
	opts = efa_options_get();
	efa_container_note_host(&step);
	efa_step_open(&step, sp, &args, opts);
	efa_ckpt_prepare(&step, sp, opts);
	efa_resume_prepare(&step, sp, opts);
	efa_prepare_node(&step, sp, &args);
	efa_counters_step_begin(&step, sp);
	/* The counters' thread watches the step once their start is read. */
	efa_counters_start(&step, efa_hang_step_begin(&step, sp, opts) ? efa_hang_watch : NULL);
	return 0;
}

/* Runs in slurmstepd with the job user's effective uid and groups. */
int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	efa_ckpt_create(&step, sp);
	efa_hang_note_checkpoint(&step);
	efa_task_note_image(&step, sp);
	efa_container_host_mounts(&step, sp);
	efa_task_step_env(&step, sp);
	return 0;
}

/* In slurmstepd, as root, after each task is forked: the step's tasks run. */
int slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		efa_counters_tasks_run(&step);
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (efa_resume_task(&step))
		return -1;
	return efa_task_init(&step, sp);
}

/* In slurmstepd, as root, as each task ends, while the step's stderr is
 * still open. */
int slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (efa_counters_task_exit(&step, sp))
		efa_hang_step_end(&step);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE) {
		efa_counters_step_end(&step, sp);
		efa_hang_step_end(&step);
		efa_ckpt_retain(&step, sp);
		efa_resume_exit(&step, sp);
		efa_step_close(&step);
	}
	return 0;
}
