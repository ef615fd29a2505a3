/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "common/base/strutil.h"
#include "common/topology/hostlist.h"
#include "common/topology/rank_order.h"
#include "common/topology/topology_read.h"
#include "common/env/env.h"
#include "common/env/explain.h"
#include "common/env/launch.h"
#include "common/env/memlock.h"
#include "common/env/profile.h"
#include "common/node/bind.h"
#include "common/node/node.h"
#include "common/nodecache/nodecache.h"
#include "prepare.h"
#include "slurm_conf.h"

#define NIC_RECOUNT_INTERVAL 5

/* In slurmd's log, where the admin who wrote the profile looks. */
static void log_plan_warnings(const struct efa_step *step, const struct efa_node *node)
{
	char **warnings = NULL;

	if (efa_env_plan_warnings(step->env.plan, step->cfg, node, &warnings)) {
		slurm_error("efa: out of memory checking the profile");
		return;
	}
	for (char **w = warnings; *w; w++)
		slurm_info("efa: node %s: %s", step->node_name, *w);
	efa_strv_free(warnings);
}

/*
 * A node showing fewer EFA devices than its profile's EFADevices= is
 * broken or still bringing NICs up (p5en: EFADevicesWait=): count again
 * for a while, then fail a --efa=required step, or warn an auto one. The
 * node itself is never failed: slurmd stays up and the admin decides.
 */
static void check_expected_nics(struct efa_step *step, struct efa_node **node,
				const struct efa_profiles *profiles)
{
	struct efa_error err;
	char missing[EFA_STEP_MESSAGE_MAX / 2];
	int wait, expected = efa_env_expected_nics(*node, profiles, &wait);

	while (expected > 0 && (*node)->nnics < (size_t)expected && wait > 0) {
		struct efa_node *again = NULL;
		int nap = wait < NIC_RECOUNT_INTERVAL ? wait : NIC_RECOUNT_INTERVAL;

		sleep((unsigned)nap);
		wait -= nap;
		if (efa_node_discover(step->root, step->cfg->instance_type, &again, &err))
			break;
		efa_node_free(*node);
		*node = again;
	}
	/* Without the memory to count, the step goes on: no verdict. */
	if (efa_node_missing_nics(*node, step->root, expected, missing, sizeof(missing)) ||
	    !missing[0])
		return;
	slurm_info("efa: node %s has %s: it needs repair", step->node_name, missing);
	if (step->mode == EFA_MODE_REQUIRED)
		efa_step_fail(step, "efa: --efa=required but node %s has %s. The node needs repair: tell your cluster admin, exclude it (--exclude=%s), or submit with --efa=auto to run on the devices it has",
			      step->node_name, missing, step->node_name);
	else
		snprintf(step->warning, sizeof(step->warning),
			 "efa: warning: node %s has %s: the step runs with less EFA bandwidth (tell your cluster admin)",
			 step->node_name, missing);
}

/* The node and its profiles, read once per boot (nodecache.h). */
static int describe_node(const struct efa_step *step, struct efa_nodedesc *desc,
			 struct efa_error *err)
{
	const struct efa_node_cache cache = { .dir = step->cfg->node_cache_dir,
					      .settle = EFA_NODE_CACHE_SETTLE };
	char note[1024];
	int rc = efa_node_describe(step->root, step->cfg, &cache, desc, note, sizeof(note), err);

	if (rc == EFA_NODE_CACHE_BUILT)
		slurm_debug("efa: node %s: read the node afresh: %s", step->node_name, note);
	else if (rc == EFA_NODE_CACHE_UNWRITABLE)
		slurm_info("efa: node %s: %s: each step reads the node again until this is fixed",
			   step->node_name, note);
	return rc < 0 ? -1 : 0;
}

static void prepare_plan(struct efa_step *step, const struct efa_args *args)
{
	struct efa_nodedesc desc;
	struct efa_profiles *profiles = NULL;
	struct efa_node *node = NULL;
	struct efa_error err;
	char problem[512];

	if (efa_expand_node_name(args->root, step->node_name, step->root, sizeof(step->root))) {
		slurm_error("efa: root=%s is too long", args->root);
		return;
	}
	if (describe_node(step, &desc, &err)) {
		slurm_error("efa: %s", err.msg);
		if (step->mode == EFA_MODE_REQUIRED)
			efa_step_fail(step, "efa: --efa=required but node %s cannot read its devices: %s",
				      step->node_name, err.msg);
		return;
	}
	node = desc.node;
	profiles = desc.profiles;
	desc.node = NULL;
	desc.profiles = NULL;
	efa_node_efa_problem(node, problem, sizeof(problem));
	if (problem[0]) {
		if (step->mode == EFA_MODE_REQUIRED) {
			efa_step_fail(step, "efa: --efa=required but node %s (%s) has %s: submit without --efa or to a partition of EFA instances",
				      step->node_name,
				      node->instance_type ? node->instance_type : "unknown instance type",
				      problem);
		} else {
			slurm_info("efa: node %s has %s: --efa=auto sets nothing EFA-specific", step->node_name,
				   problem);
		}
		goto out;
	}
	if (!profiles)
		slurm_error("efa: %s: only the library path is set; fix the profiles",
			    desc.profiles_error);
	check_expected_nics(step, &node, profiles);
	if (step->failure[0])
		goto out;
	if (efa_env_plan_build(node, profiles, &step->env.plan, &err))
		slurm_error("efa: %s", err.msg);
	else
		log_plan_warnings(step, node);
	step->env.profiles = profiles;
	profiles = NULL;
	/* Each task binds in its own process: work out closeness once. */
	if (step->bind.mode == EFA_BIND_CLOSEST && efa_bind_index(node))
		slurm_error("efa: out of memory indexing the node's topology");
	step->node = node;
	node = NULL;
out:
	efa_nodedesc_clear(&desc);
	efa_profiles_free(profiles);
	efa_node_free(node);
}

/*
 * Once per step, in slurmstepd, whose limit each task inherits: a
 * propagated RLIMIT_MEMLOCK below it is not applied (memlock.h), and the
 * log says so here, once.
 */
static void check_memlock(struct efa_step *step, spank_t sp)
{
	char value[64], msg[EFA_STEP_MESSAGE_MAX];
	struct rlimit rl;

	if (!efa_step_job_env(sp, EFA_MEMLOCK_VAR, value, sizeof(value)) ||
	    getrlimit(RLIMIT_MEMLOCK, &rl))
		return;
	step->env.refuse_memlock = efa_memlock_refuse(value, rl.rlim_cur, msg, sizeof(msg));
	if (step->env.refuse_memlock)
		slurm_info("efa: node %s: %s", step->node_name, msg);
}

static void rank_warning(struct efa_step *step, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void rank_warning(struct efa_step *step, const char *fmt, ...)
{
	char why[EFA_STEP_MESSAGE_MAX / 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(step->rank.warning, sizeof(step->rank.warning),
		 "efa: warning: --efa-rank-order=topology: %s: ranks are in Slurm's order (tell your cluster admin)",
		 why);
	slurm_info("efa: node %s: %s", step->node_name, step->rank.warning);
}

/*
 * --efa-rank-order=topology: the step's nodes grouped by the switches (or
 * blocks) of the topology file Slurm itself reads (rank_order.h), this
 * node's place among them, and the first of them for MASTER_ADDR. Every
 * node of the step reads the same node list and file, so all agree.
 */
static void order_by_topology(struct efa_step *step, spank_t sp, const char *nodelist)
{
	char path[EFA_STEP_PATH_MAX], per_node[EFA_STEP_LIST_MAX];
	struct efa_topo_map map = { 0 };
	struct efa_rank_place place;
	unsigned *tasks = NULL;
	size_t *order = NULL, n = 0, self;
	char **names = NULL;
	struct efa_error err;

	if (!efa_slurm_topology_path(path, sizeof(path))) {
		rank_warning(step, "Slurm does not say where its topology file is");
		return;
	}
	if (efa_topo_map_load(path, &map, &err)) {
		rank_warning(step, "%s", err.msg);
		return;
	}
	if (!efa_step_job_env(sp, "SLURM_STEP_TASKS_PER_NODE", per_node, sizeof(per_node)) &&
	    !efa_step_job_env(sp, "SLURM_TASKS_PER_NODE", per_node, sizeof(per_node)))
		per_node[0] = '\0';
	if (efa_hostlist_expand(nodelist, &names, &n, &err) ||
	    !(order = calloc(n ? n : 1, sizeof(*order))) ||
	    !(tasks = calloc(n ? n : 1, sizeof(*tasks)))) {
		rank_warning(step, "the step's nodes '%.200s': %s", nodelist,
			     names ? "out of memory" : err.msg);
		goto out;
	}
	if (efa_tasks_per_node_parse(per_node, tasks, n, &err)) {
		rank_warning(step, "%s", err.msg);
		goto out;
	}
	if (efa_rank_order(&map, names, n, order, &err)) {
		rank_warning(step, "%s: %s", path, err.msg);
		goto out;
	}
	for (self = 0; self < n && strcmp(names[self], step->node_name); self++)
		;
	if (self == n) {
		rank_warning(step, "this node, %s, is not one of the step's nodes '%.200s'",
			     step->node_name, nodelist);
		goto out;
	}
	efa_rank_place(order, tasks, n, self, &place);
	step->rank.ranked = true;
	step->rank.base = place.rank_base;
	step->rank.node = (unsigned)place.node_rank;
	snprintf(step->rank.master_name, sizeof(step->rank.master_name), "%s", names[place.first]);
out:
	efa_strv_free(names);
	free(order);
	free(tasks);
	efa_topo_map_clear(&map);
}

/*
 * The node list the launch variables number, its first node in their
 * order (Slurm's, or the topology's), and the address every task gives
 * as MASTER_ADDR: that node's, as Slurm reaches it (slurm_conf.h). Asked
 * here, in slurmstepd's own process, once.
 */
static void prepare_launch(struct efa_step *step, spank_t sp)
{
	char nodelist[EFA_STEP_LIST_MAX];
	const char *first = step->rank.master_name;
	uint32_t step_id = 0;

	/* The batch script is no rank (task.c sets it no launch variables). */
	if (spank_get_item(sp, S_JOB_STEPID, &step_id) != ESPANK_SUCCESS ||
	    step_id == SLURM_BATCH_SCRIPT)
		return;
	if (!efa_step_job_env(sp, "SLURM_STEP_NODELIST", nodelist, sizeof(nodelist)) &&
	    !efa_step_job_env(sp, "SLURM_JOB_NODELIST", nodelist, sizeof(nodelist)))
		return;
	if (efa_hostlist_first(nodelist, step->rank.master_name, sizeof(step->rank.master_name))) {
		step->rank.master_name[0] = '\0';
		return;
	}
	if (step->rank.order == EFA_RANK_ORDER_TOPOLOGY)
		order_by_topology(step, sp, nodelist);
	if (!efa_slurm_node_addr(first, step->rank.master_addr, sizeof(step->rank.master_addr))) {
		slurm_info("efa: node %s: Slurm gives no address for %s, the step's first node: MASTER_ADDR is its name, which must resolve on every node",
			   step->node_name, first);
		step->rank.master_addr[0] = '\0';
		return;
	}
	snprintf(step->rank.master_from, sizeof(step->rank.master_from),
		 "the step's first node%s, %s, at the address Slurm reaches it by (NodeAddr)",
		 step->rank.ranked ? " in topology order" : "", first);
}

/*
 * --efa-bind=closest: every local task's closest NICs, once per step (its
 * tasks, each in its own process, would each work out all of them), for
 * tasks sharing the step's GPUs as task.c parses them.
 */
static void prepare_bind_groups(struct efa_step *step, spank_t sp)
{
	int gpus[EFA_STEP_GPUS_MAX], ngpus = 0;
	uint32_t ntasks = 0;

	if (!step->node || spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS ||
	    !ntasks)
		return;
	if (step->bind.gres_gpus[0])
		ngpus = efa_parse_index_list(step->bind.gres_gpus, gpus, EFA_STEP_GPUS_MAX);
	if (ngpus < 0)
		ngpus = 0;
	step->bind.groups = efa_bind_step_groups(step->node, gpus, (size_t)ngpus, ntasks);
	step->bind.ntasks = ntasks;
}

void efa_prepare_node(struct efa_step *step, spank_t sp, const struct efa_args *args)
{
	if (!step->cfg || (step->mode != EFA_MODE_REQUIRED && step->mode != EFA_MODE_AUTO))
		return;
	if (!efa_step_job_env(sp, "SLURM_STEP_GPUS", step->bind.gres_gpus, sizeof(step->bind.gres_gpus)) &&
	    !efa_step_job_env(sp, "SLURM_JOB_GPUS", step->bind.gres_gpus, sizeof(step->bind.gres_gpus)))
		step->bind.gres_gpus[0] = '\0';
	if (!efa_step_job_env(sp, "CUDA_VISIBLE_DEVICES", step->bind.cuda_visible,
			      sizeof(step->bind.cuda_visible)))
		step->bind.cuda_visible[0] = '\0';
	prepare_plan(step, args);
	if (step->env.plan && step->bind.mode == EFA_BIND_CLOSEST)
		prepare_bind_groups(step, sp);
	if (step->env.plan)
		check_memlock(step, sp);
	/* A rank needs its number whether its node has EFA or not: an auto
	 * step on a node without it still numbers its tasks with the rest. */
	if (step->cfg->distributed_env == EFA_YES && !step->failure[0])
		prepare_launch(step, sp);
}
