#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/efa_conf.h"
#include "common/env.h"
#include "common/node.h"
#include "common/profile.h"
#include "step.h"

#define NODE_NAME_MAX 256
#define MESSAGE_MAX 1024
#define ROOT_MAX 4096

static struct {
	enum efa_mode mode;
	enum efa_bind bind;
	char node_name[NODE_NAME_MAX];
	char failure[MESSAGE_MAX];	/* non-empty: fail every task with it */
	struct efa_config *cfg;
	struct efa_env_plan *plan;	/* NULL: set nothing */
} step;

static bool job_env(spank_t sp, const char *name, char *buf, size_t size)
{
	return spank_getenv(sp, name, buf, (int)size) == ESPANK_SUCCESS;
}

static void find_node_name(spank_t sp)
{
	char addr[NODE_NAME_MAX * 2], pattern[NODE_NAME_MAX];

	if (!job_env(sp, "SLURM_TOPOLOGY_ADDR_PATTERN", pattern, sizeof(pattern)))
		pattern[0] = '\0';
	if (job_env(sp, "SLURM_TOPOLOGY_ADDR", addr, sizeof(addr)) &&
	    !efa_node_name_from_topology(addr, pattern, step.node_name, sizeof(step.node_name)))
		return;
	if (gethostname(step.node_name, sizeof(step.node_name)))
		snprintf(step.node_name, sizeof(step.node_name), "(unknown)");
}

/* The user's --efa, else the partition's EFA= default. */
static enum efa_mode effective_mode(spank_t sp, const struct efa_options *opts)
{
	const struct efa_partition *part;
	char name[256];

	if (opts->efa != EFA_MODE_UNSET)
		return opts->efa;
	if (!job_env(sp, "SLURM_JOB_PARTITION", name, sizeof(name)))
		return EFA_MODE_UNSET;
	part = efa_config_partition(step.cfg, name);
	return part ? part->efa : EFA_MODE_UNSET;
}

static void fail_tasks(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail_tasks(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(step.failure, sizeof(step.failure), fmt, ap);
	va_end(ap);
}

static void prepare_plan(const struct efa_args *args)
{
	struct efa_profiles *profiles = NULL;
	struct efa_node *node = NULL;
	struct efa_error err;
	char root[ROOT_MAX], problem[512];

	if (efa_expand_root(args->root, step.node_name, root, sizeof(root))) {
		slurm_error("efa: root=%s is too long", args->root);
		return;
	}
	if (efa_node_discover(root, step.cfg->instance_type, &node, &err)) {
		slurm_error("efa: %s", err.msg);
		if (step.mode == EFA_MODE_REQUIRED)
			fail_tasks("efa: --efa=required but node %s cannot read its devices: %s",
				   step.node_name, err.msg);
		return;
	}
	efa_node_efa_problem(node, problem, sizeof(problem));
	if (problem[0]) {
		if (step.mode == EFA_MODE_REQUIRED) {
			fail_tasks("efa: --efa=required but node %s (%s) has %s: submit without --efa or to a partition of EFA instances",
				   step.node_name,
				   node->instance_type ? node->instance_type : "unknown instance type",
				   problem);
		} else {
			slurm_info("efa: node %s has %s: --efa=auto sets nothing", step.node_name, problem);
		}
		goto out;
	}
	if (efa_profiles_load(step.cfg->profile_dir, &profiles, &err))
		slurm_error("efa: %s: only the library path is set; fix the profiles", err.msg);
	if (efa_env_plan_build(node, profiles, &step.plan, &err))
		slurm_error("efa: %s", err.msg);
out:
	efa_profiles_free(profiles);
	efa_node_free(node);
}

void efa_step_prepare(spank_t sp, const struct efa_args *args,
		      const struct efa_options *opts)
{
	struct efa_error err;

	step.bind = opts->bind;
	find_node_name(sp);
	if (efa_config_find_and_load(args->config, &step.cfg, &err)) {
		slurm_error("efa: %s", err.msg);
		if (opts->efa == EFA_MODE_REQUIRED || opts->efa == EFA_MODE_AUTO)
			fail_tasks("efa: node %s cannot use EFA: %s (tell your cluster admin)",
				   step.node_name, err.msg);
		return;
	}
	step.mode = effective_mode(sp, opts);
	if (step.mode == EFA_MODE_REQUIRED || step.mode == EFA_MODE_AUTO)
		prepare_plan(args);
}

static int get_task_env(void *ctx, const char *name, char *buf, size_t size)
{
	return job_env(ctx, name, buf, size) ? 1 : 0;
}

static int put_task_env(void *ctx, const char *name, const char *value,
			enum efa_env_decision decision, const char *reason)
{
	spank_err_t rc;

	(void)reason;
	if (decision != EFA_ENV_SET && decision != EFA_ENV_FORCED &&
	    decision != EFA_ENV_PREPENDED)
		return 0;
	rc = spank_setenv(ctx, name, value, 1);
	if (rc != ESPANK_SUCCESS) {
		slurm_error("efa: cannot set %s: %s", name, spank_strerror(rc));
		return -1;
	}
	return 0;
}

static int set_own(spank_t sp, const char *name, const char *value)
{
	return put_task_env(sp, name, value, EFA_ENV_SET, NULL);
}

int efa_step_task_init(spank_t sp)
{
	if (step.failure[0]) {
		slurm_error("%s", step.failure);
		return -1;
	}
	if (step.mode == EFA_MODE_UNSET)
		return 0;
	if (set_own(sp, "SLURM_EFA_MODE", efa_mode_name(step.mode)))
		return -1;
	if (step.bind != EFA_BIND_UNSET &&
	    set_own(sp, "SLURM_EFA_BIND", efa_bind_name(step.bind)))
		return -1;
	if (!step.plan)
		return 0;
	return efa_env_apply(step.plan, step.cfg, get_task_env, put_task_env, sp);
}

void efa_step_release(void)
{
	efa_env_plan_free(step.plan);
	efa_config_free(step.cfg);
	memset(&step, 0, sizeof(step));
}
