/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "common/config/plugin_args.h"
#include "common/env/env.h"
#include "common/env/profile.h"
#include "common/node/node.h"
#include "step.h"

bool efa_step_job_env(spank_t sp, const char *name, char *buf, size_t size)
{
	return spank_getenv(sp, name, buf, (int)size) == ESPANK_SUCCESS;
}

void efa_step_fail(struct efa_step *step, const char *fmt, ...)
{
	va_list ap;

	if (step->failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(step->failure, sizeof(step->failure), fmt, ap);
	va_end(ap);
}

/*
 * The node's Slurm name, which root= and config= may hold (%n): slurmstepd
 * puts it in its own environment (SLURMD_NODENAME, Slurm 22.05 to 26.05),
 * which no job can touch; SLURM_TOPOLOGY_ADDR is in the job's. Either is
 * taken only when it is safe in a path.
 */
static void find_node_name(struct efa_step *step, spank_t sp)
{
	char addr[EFA_STEP_NAME_MAX * 2], pattern[EFA_STEP_NAME_MAX];
	const char *own = getenv("SLURMD_NODENAME");

	if (efa_node_name_safe(own) && strlen(own) < sizeof(step->node_name)) {
		snprintf(step->node_name, sizeof(step->node_name), "%s", own);
		return;
	}
	if (!efa_step_job_env(sp, "SLURM_TOPOLOGY_ADDR_PATTERN", pattern, sizeof(pattern)))
		pattern[0] = '\0';
	if (efa_step_job_env(sp, "SLURM_TOPOLOGY_ADDR", addr, sizeof(addr))) {
		if (!efa_node_name_from_topology(addr, pattern, step->node_name,
						 sizeof(step->node_name)))
			return;
		slurm_info("efa: SLURM_TOPOLOGY_ADDR='%.200s' names no node this plugin can use in a path: using the host's name",
			   addr);
	}
	if (gethostname(step->node_name, sizeof(step->node_name)))
		snprintf(step->node_name, sizeof(step->node_name), "(unknown)");
}

/* The job's partition in efa.conf, or NULL. */
static const struct efa_partition *job_partition(const struct efa_step *step, spank_t sp)
{
	char name[256];

	if (!efa_step_job_env(sp, "SLURM_JOB_PARTITION", name, sizeof(name)))
		return NULL;
	return efa_config_partition(step->cfg, name);
}

/* The user's --efa, else the partition's EFA= default. */
static enum efa_mode effective_mode(const struct efa_options *opts,
				    const struct efa_partition *part)
{
	if (opts->v.efa != EFA_MODE_UNSET)
		return opts->v.efa;
	return part ? part->efa : EFA_MODE_UNSET;
}

void efa_step_open(struct efa_step *step, spank_t sp, const struct efa_args *args,
		   const struct efa_options *opts)
{
	struct efa_error err;

	step->bind.mode = opts->v.bind;
	if (opts->problem[0])
		efa_step_fail(step, "%s", opts->problem);
	find_node_name(step, sp);
	if (efa_args_load_config(args, step->node_name, &step->cfg, &err)) {
		slurm_error("efa: %s", err.msg);
		if (opts->v.efa == EFA_MODE_REQUIRED || opts->v.efa == EFA_MODE_AUTO)
			efa_step_fail(step, "efa: node %s cannot use EFA: %s (tell your cluster admin)",
				      step->node_name, err.msg);
		else if (opts->v.checkpoint_dir[0])
			efa_step_fail(step, "efa: node %s cannot prepare --checkpoint-dir: %s (tell your cluster admin)",
				      step->node_name, err.msg);
		return;
	}
	step->part = job_partition(step, sp);
	step->mode = effective_mode(opts, step->part);
	step->rank.order = opts->v.rank_order != EFA_RANK_ORDER_UNSET ? opts->v.rank_order :
			   step->part ? step->part->rank_order : EFA_RANK_ORDER_UNSET;
}

void efa_step_close(struct efa_step *step)
{
	free(step->bind.groups);
	efa_hw_reading_clear(&step->counters.start);
	if (step->counters.held) {
		if (step->counters.root_fd >= 0)
			close(step->counters.root_fd);
		if (step->counters.store_fd >= 0)
			close(step->counters.store_fd);
	}
	efa_node_free(step->node);
	efa_env_plan_free(step->env.plan);
	efa_profiles_free(step->env.profiles);
	efa_config_free(step->cfg);
	/* What was freed, not the whole step: it is slurmstepd's last act
	 * before the step's exit reaches srun, and writing the step's 40 KB
	 * again would cost a page fault for each of its pages. */
	step->bind.groups = NULL;
	step->counters.held = false;
	step->node = NULL;
	step->env.plan = NULL;
	step->env.profiles = NULL;
	step->cfg = NULL;
}
