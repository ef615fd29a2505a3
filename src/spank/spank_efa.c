/*
 * spank_efa.so: the one place that knows which SPANK context runs which
 * part of slurm-efa. Everything it decides lives in src/common.
 *
 * Remote-context rule (see README): never fail in init, init_post_opt or
 * user_init, where a failing required plugin can drain the node; report
 * a user's problem from task_init, which fails the step only.
 */
#include <slurm/spank.h>

#include "common/mode.h"
#include "common/plugin_args.h"
#include "options.h"

SPANK_PLUGIN(efa, 1);

static struct efa_args args;

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

static int set_job_env(spank_t sp, const char *name, const char *value)
{
	spank_err_t rc = spank_setenv(sp, name, value, 1);

	if (rc != ESPANK_SUCCESS) {
		slurm_error("efa: cannot set %s: %s", name, spank_strerror(rc));
		return -1;
	}
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	const struct efa_options *opts = efa_options_get();

	(void)ac;
	(void)av;
	if (opts->efa == EFA_MODE_UNSET)
		return 0;
	if (set_job_env(sp, "SLURM_EFA_MODE", efa_mode_name(opts->efa)))
		return -1;
	if (opts->bind != EFA_BIND_UNSET &&
	    set_job_env(sp, "SLURM_EFA_BIND", efa_bind_name(opts->bind)))
		return -1;
	return 0;
}
