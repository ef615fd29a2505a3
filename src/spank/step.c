/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "common/node/bind.h"
#include "common/node/image.h"
#include "common/node/stack.h"
#include "common/node/sysfs.h"
#include "common/checkpoint/checkpoint.h"
#include "common/config/efa_conf.h"
#include "common/config/plugin_args.h"
#include "common/env/env.h"
#include "common/env/launch.h"
#include "common/env/memlock.h"
#include "common/node/node.h"
#include "common/nodecache/nodecache.h"
#include "common/env/profile.h"
#include "common/base/strutil.h"
#include "checkpoint.h"
#include "container.h"
#include "step.h"

#define NODE_NAME_MAX 256
#define MESSAGE_MAX 1024
#define PATH_ARG_MAX 4096
#define GPUS_MAX 256
#define LIST_MAX 2048
#define TASK_VARS (EFA_LAUNCH_VARS + 5)
#define IMAGE_MAX 1024
#define LIBPATH_MAX 65536

static struct {
	enum efa_mode mode;
	enum efa_bind bind;
	char node_name[NODE_NAME_MAX];
	char failure[MESSAGE_MAX];	/* non-empty: fail every task with it */
	char warning[MESSAGE_MAX];	/* non-empty: task 0 tells the job */
	struct efa_config *cfg;
	struct efa_node *node;		/* kept for per-task bindings */
	struct efa_env_plan *plan;	/* NULL: set nothing */
	struct efa_profiles *profiles;	/* kept for a container's own plan */
	char image[IMAGE_MAX];		/* the task's container image, or "" */
	char root[PATH_ARG_MAX];	/* root= with the node's name */
	/* The step's GPUs as Slurm gave them, before any per-task binding. */
	char gres_gpus[LIST_MAX];
	char cuda_visible[LIST_MAX];
	bool refuse_memlock;		/* drop SLURM_RLIMIT_MEMLOCK in each task */
} step;

static bool job_env(spank_t sp, const char *name, char *buf, size_t size)
{
	return spank_getenv(sp, name, buf, (int)size) == ESPANK_SUCCESS;
}

/*
 * The node's Slurm name, which root= and config= may hold (%n): slurmstepd
 * puts it in its own environment (SLURMD_NODENAME, Slurm 22.05 to 26.05),
 * which no job can touch; SLURM_TOPOLOGY_ADDR is in the job's. Either is
 * taken only when it is safe in a path.
 */
static void find_node_name(spank_t sp)
{
	char addr[NODE_NAME_MAX * 2], pattern[NODE_NAME_MAX];
	const char *own = getenv("SLURMD_NODENAME");

	if (efa_node_name_safe(own) && strlen(own) < sizeof(step.node_name)) {
		snprintf(step.node_name, sizeof(step.node_name), "%s", own);
		return;
	}
	if (!job_env(sp, "SLURM_TOPOLOGY_ADDR_PATTERN", pattern, sizeof(pattern)))
		pattern[0] = '\0';
	if (job_env(sp, "SLURM_TOPOLOGY_ADDR", addr, sizeof(addr))) {
		if (!efa_node_name_from_topology(addr, pattern, step.node_name, sizeof(step.node_name)))
			return;
		slurm_info("efa: SLURM_TOPOLOGY_ADDR='%.200s' names no node this plugin can use in a path: using the host's name",
			   addr);
	}
	if (gethostname(step.node_name, sizeof(step.node_name)))
		snprintf(step.node_name, sizeof(step.node_name), "(unknown)");
}

/* The job's partition in efa.conf, or NULL. */
static const struct efa_partition *job_partition(spank_t sp)
{
	char name[256];

	if (!job_env(sp, "SLURM_JOB_PARTITION", name, sizeof(name)))
		return NULL;
	return efa_config_partition(step.cfg, name);
}

/* The user's --efa, else the partition's EFA= default. */
static enum efa_mode effective_mode(const struct efa_options *opts,
				    const struct efa_partition *part)
{
	if (opts->efa != EFA_MODE_UNSET)
		return opts->efa;
	return part ? part->efa : EFA_MODE_UNSET;
}

void efa_step_fail(const char *fmt, ...)
{
	va_list ap;

	if (step.failure[0])
		return;
	va_start(ap, fmt);
	vsnprintf(step.failure, sizeof(step.failure), fmt, ap);
	va_end(ap);
}

/* In slurmd's log, where the admin who wrote the profile looks. */
static void log_plan_warnings(const struct efa_node *node)
{
	char **warnings = NULL;

	if (efa_env_plan_warnings(step.plan, step.cfg, node, &warnings)) {
		slurm_error("efa: out of memory checking the profile");
		return;
	}
	for (char **w = warnings; *w; w++)
		slurm_info("efa: node %s: %s", step.node_name, *w);
	efa_strv_free(warnings);
}

#define NIC_RECOUNT_INTERVAL 5

/*
 * A node showing fewer EFA devices than its profile's EFADevices= is
 * broken or still bringing NICs up (p5en: EFADevicesWait=): count again
 * for a while, then fail a --efa=required step, or warn an auto one. The
 * node itself is never failed: slurmd stays up and the admin decides.
 */
static void check_expected_nics(struct efa_node **node, const struct efa_profiles *profiles)
{
	const struct efa_profile *p;
	struct efa_error err;
	char missing[MESSAGE_MAX / 2];
	unsigned accels = 0;
	int wait, expected;

	if (!profiles)
		return;
	for (size_t i = 0; i < (*node)->naccels; i++)
		if ((*node)->accels[i].present)
			accels |= 1u << (*node)->accels[i].kind;
	p = efa_profiles_match(profiles, (*node)->instance_type, accels);
	expected = efa_profile_expected_nics(p, (*node)->instance_type, &wait);
	while (expected > 0 && (*node)->nnics < (size_t)expected && wait > 0) {
		struct efa_node *again = NULL;
		int nap = wait < NIC_RECOUNT_INTERVAL ? wait : NIC_RECOUNT_INTERVAL;

		sleep((unsigned)nap);
		wait -= nap;
		if (efa_node_discover(step.root, step.cfg->instance_type, &again, &err))
			break;
		efa_node_free(*node);
		*node = again;
	}
	efa_node_missing_nics(*node, step.root, expected, missing, sizeof(missing));
	if (!missing[0])
		return;
	slurm_info("efa: node %s has %s: it needs repair", step.node_name, missing);
	if (step.mode == EFA_MODE_REQUIRED)
		efa_step_fail("efa: --efa=required but node %s has %s. The node needs repair: tell your cluster admin, exclude it (--exclude=%s), or submit with --efa=auto to run on the devices it has",
			      step.node_name, missing, step.node_name);
	else
		snprintf(step.warning, sizeof(step.warning),
			 "efa: warning: node %s has %s: the step runs with less EFA bandwidth (tell your cluster admin)",
			 step.node_name, missing);
}

/* The node and its profiles, read once per boot (nodecache.h). */
static int describe_node(struct efa_nodedesc *desc, struct efa_error *err)
{
	const struct efa_node_cache cache = { .dir = step.cfg->node_cache_dir,
					      .settle = EFA_NODE_CACHE_SETTLE };
	char note[1024];
	int rc = efa_node_describe(step.root, step.cfg, &cache, desc, note, sizeof(note), err);

	if (rc == EFA_NODE_CACHE_BUILT)
		slurm_debug("efa: node %s: read the node afresh: %s", step.node_name, note);
	else if (rc == EFA_NODE_CACHE_UNWRITABLE)
		slurm_info("efa: node %s: %s: each step reads the node again until this is fixed",
			   step.node_name, note);
	return rc < 0 ? -1 : 0;
}

static void prepare_plan(const struct efa_args *args)
{
	struct efa_nodedesc desc;
	struct efa_profiles *profiles = NULL;
	struct efa_node *node = NULL;
	struct efa_error err;
	char problem[512];

	if (efa_expand_node_name(args->root, step.node_name, step.root, sizeof(step.root))) {
		slurm_error("efa: root=%s is too long", args->root);
		return;
	}
	if (describe_node(&desc, &err)) {
		slurm_error("efa: %s", err.msg);
		if (step.mode == EFA_MODE_REQUIRED)
			efa_step_fail("efa: --efa=required but node %s cannot read its devices: %s",
				      step.node_name, err.msg);
		return;
	}
	node = desc.node;
	profiles = desc.profiles;
	desc.node = NULL;
	desc.profiles = NULL;
	efa_node_efa_problem(node, problem, sizeof(problem));
	if (problem[0]) {
		if (step.mode == EFA_MODE_REQUIRED) {
			efa_step_fail("efa: --efa=required but node %s (%s) has %s: submit without --efa or to a partition of EFA instances",
				      step.node_name,
				      node->instance_type ? node->instance_type : "unknown instance type",
				      problem);
		} else {
			slurm_info("efa: node %s has %s: --efa=auto sets nothing", step.node_name, problem);
		}
		goto out;
	}
	if (!profiles)
		slurm_error("efa: %s: only the library path is set; fix the profiles",
			    desc.profiles_error);
	check_expected_nics(&node, profiles);
	if (step.failure[0])
		goto out;
	if (efa_env_plan_build(node, profiles, &step.plan, &err))
		slurm_error("efa: %s", err.msg);
	else
		log_plan_warnings(node);
	step.profiles = profiles;
	profiles = NULL;
	/* Each task binds in its own process: work out closeness once. */
	if (step.bind == EFA_BIND_CLOSEST && efa_bind_index(node))
		slurm_error("efa: out of memory indexing the node's topology");
	step.node = node;
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
static void check_memlock(spank_t sp)
{
	char value[64], msg[MESSAGE_MAX];
	struct rlimit rl;

	if (!job_env(sp, EFA_MEMLOCK_VAR, value, sizeof(value)) || getrlimit(RLIMIT_MEMLOCK, &rl))
		return;
	step.refuse_memlock = efa_memlock_refuse(value, rl.rlim_cur, msg, sizeof(msg));
	if (step.refuse_memlock)
		slurm_info("efa: node %s: %s", step.node_name, msg);
}

static int load_config(const struct efa_args *args, struct efa_error *err)
{
	char path[PATH_ARG_MAX];

	if (!args->config)
		return efa_config_find_and_load(NULL, &step.cfg, err);
	if (efa_expand_node_name(args->config, step.node_name, path, sizeof(path)))
		return efa_error_set(err, "config=%s is too long", args->config);
	return efa_config_find_and_load(path, &step.cfg, err);
}

void efa_step_prepare(spank_t sp, const struct efa_args *args,
		      const struct efa_options *opts)
{
	const struct efa_partition *part;
	struct efa_error err;

	step.bind = opts->bind;
	efa_container_note_host();
	find_node_name(sp);
	if (load_config(args, &err)) {
		slurm_error("efa: %s", err.msg);
		if (opts->efa == EFA_MODE_REQUIRED || opts->efa == EFA_MODE_AUTO)
			efa_step_fail("efa: node %s cannot use EFA: %s (tell your cluster admin)",
				      step.node_name, err.msg);
		else if (opts->checkpoint_dir[0])
			efa_step_fail("efa: node %s cannot prepare --checkpoint-dir: %s (tell your cluster admin)",
				      step.node_name, err.msg);
		return;
	}
	part = job_partition(sp);
	efa_ckpt_prepare(sp, step.cfg, part, opts, step.node_name);
	step.mode = effective_mode(opts, part);
	if (step.mode != EFA_MODE_REQUIRED && step.mode != EFA_MODE_AUTO)
		return;
	if (!job_env(sp, "SLURM_STEP_GPUS", step.gres_gpus, sizeof(step.gres_gpus)) &&
	    !job_env(sp, "SLURM_JOB_GPUS", step.gres_gpus, sizeof(step.gres_gpus)))
		step.gres_gpus[0] = '\0';
	if (!job_env(sp, "CUDA_VISIBLE_DEVICES", step.cuda_visible, sizeof(step.cuda_visible)))
		step.cuda_visible[0] = '\0';
	prepare_plan(args);
	if (step.plan)
		check_memlock(sp);
}

static int task_id(spank_t sp);

static int get_task_env(void *ctx, const char *name, char *buf, size_t size)
{
	spank_err_t rc = spank_getenv(ctx, name, buf, (int)size);

	if (rc == ESPANK_SUCCESS)
		return 1;
	return rc == ESPANK_NOSPACE ? -1 : 0;
}

static int put_task_env(void *ctx, const char *name, const char *value,
			enum efa_env_decision decision, const char *reason)
{
	spank_err_t rc;

	if (decision == EFA_ENV_USER && value && step.image[0] && task_id(ctx) == 0)
		slurm_info("efa: node %s, image %s: %s kept as the image or the job set it (%s)",
			   step.node_name, step.image, name, reason);
	if (decision == EFA_ENV_REMOVED) {
		rc = spank_unsetenv(ctx, name);
		if (rc != ESPANK_SUCCESS)
			slurm_error("efa: cannot unset %s: %s", name, spank_strerror(rc));
		return rc == ESPANK_SUCCESS ? 0 : -1;
	}
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

static uint32_t item_u32(spank_t sp, spank_item_t item)
{
	uint32_t v = 0;

	if (spank_get_item(sp, item, &v) != ESPANK_SUCCESS)
		return 0;
	return v;
}

static int task_id(spank_t sp)
{
	int v = 0;

	if (spank_get_item(sp, S_TASK_ID, &v) != ESPANK_SUCCESS)
		return 0;
	return v;
}

static int add_entry(struct efa_env_entry *e, size_t *n, const char *name,
		     const char *value, const char *reason, bool slurm_var)
{
	e[*n].name = strdup(name);
	e[*n].value = strdup(value);
	e[*n].reason = strdup(reason);
	e[*n].slurm_var = slurm_var;
	(*n)++;
	return e[*n - 1].name && e[*n - 1].value && e[*n - 1].reason ? 0 : -1;
}

/* The step's CUDA_VISIBLE_DEVICES entries at positions [first, first+count). */
static void visible_share(const struct efa_task_binding *b, const int *gpus, size_t ngpus,
			  char *out, size_t size)
{
	const char *p = step.cuda_visible;
	size_t pos = 0, used = 0;

	out[0] = '\0';
	while (p && *p && pos < b->first + b->count) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (pos >= b->first && used + len + 2 < size) {
			used += snprintf(out + used, size - used, "%s%.*s", used ? "," : "", (int)len, p);
		}
		pos++;
		p = end ? end + 1 : NULL;
	}
	if (pos < b->first + b->count || !out[0]) {
		/* CUDA_VISIBLE_DEVICES did not list the step's GPUs: use them. */
		out[0] = '\0';
		used = 0;
		for (size_t i = b->first; i < b->first + b->count && i < ngpus; i++)
			used += snprintf(out + used, size - used, "%s%d", used ? "," : "", gpus[i]);
	}
}

/* --efa-bind=closest: the task's accelerators and the NICs nearest them. */
static int binding_entries(spank_t sp, struct efa_env_entry *e, size_t *n)
{
	int gpus[GPUS_MAX], ngpus;
	char task_gres[LIST_MAX], task_visible[LIST_MAX], value[EFA_BIND_LIST_MAX];
	struct efa_bind_request req = { .task = (unsigned)task_id(sp),
					.ntasks = item_u32(sp, S_JOB_LOCAL_TASK_COUNT) };
	struct efa_task_binding b;
	struct efa_error err;

	if (!job_env(sp, "SLURM_STEP_GPUS", task_gres, sizeof(task_gres)) &&
	    !job_env(sp, "SLURM_JOB_GPUS", task_gres, sizeof(task_gres)))
		task_gres[0] = '\0';
	if (!job_env(sp, "CUDA_VISIBLE_DEVICES", task_visible, sizeof(task_visible)))
		task_visible[0] = '\0';
	if (step.gres_gpus[0]) {
		/* Slurm narrows the task's GPU list when it binds (--gpu-bind,
		 * --gpus-per-task); otherwise the share is ours to make. */
		req.gpus_given = task_gres[0] && strcmp(task_gres, step.gres_gpus);
		ngpus = efa_parse_index_list(req.gpus_given ? task_gres : step.gres_gpus,
					     gpus, GPUS_MAX);
	} else if (task_visible[0]) {
		req.gpus_given = true;	/* set by the user, without GRES */
		ngpus = efa_parse_index_list(task_visible, gpus, GPUS_MAX);
	} else {
		ngpus = 0;
	}
	if (ngpus < 0) {
		slurm_error("efa: cannot read the task's GPUs ('%s'): no GPU binding", task_gres);
		ngpus = 0;
	}
	req.gpus = gpus;
	req.ngpus = (size_t)ngpus;
	if (job_env(sp, "NEURON_LOGICAL_NC_CONFIG", value, sizeof(value)) &&
	    (req.lnc = efa_neuron_lnc_parse(value)) < 0) {
		if (req.task == 0)
			slurm_error("efa: NEURON_LOGICAL_NC_CONFIG=%s is not 1 or 2 (the Neuron runtime takes no other): NEURON_RT_VISIBLE_CORES counts the devices' default logical cores",
				    value);
		req.lnc = 0;
	}
	if (efa_bind_task(step.node, &req, &b, &err)) {
		slurm_error("efa: %s", err.msg);
		return -1;
	}
	if (b.shared && req.task == 0)
		slurm_info("efa: %u tasks share %s on node %s: each task gets a slice",
			   req.ntasks, ngpus ? "the step's GPUs" : "the Neuron cores", step.node_name);
	if (ngpus && !req.gpus_given) {
		visible_share(&b, gpus, (size_t)ngpus, value, sizeof(value));
		if (add_entry(e, n, "CUDA_VISIBLE_DEVICES", value, "--efa-bind=closest: the task's share", true))
			return -1;
	}
	if (b.nics[0] && add_entry(e, n, "FI_EFA_IFACE", b.nics, "--efa-bind=closest", false))
		return -1;
	if (b.neuron_cores[0] &&
	    add_entry(e, n, "NEURON_RT_VISIBLE_CORES", b.neuron_cores, "--efa-bind=closest", false))
		return -1;
	return 0;
}

static bool neuron_node(void)
{
	for (size_t i = 0; step.node && i < step.node->naccels; i++)
		if (step.node->accels[i].kind == EFA_ACCEL_NEURON && step.node->accels[i].present)
			return true;
	return false;
}

static int launch_entries(spank_t sp, struct efa_env_entry *e, size_t *n)
{
	char nodelist[LIST_MAX];
	struct efa_launch l = {
		.rank = item_u32(sp, S_TASK_GLOBAL_ID),
		.local_rank = (unsigned)task_id(sp),
		.world_size = item_u32(sp, S_JOB_TOTAL_TASK_COUNT),
		.local_world_size = item_u32(sp, S_JOB_LOCAL_TASK_COUNT),
		.nodelist = nodelist,
		.job_id = item_u32(sp, S_JOB_ID),
		.step_id = item_u32(sp, S_JOB_STEPID),
		.port_lo = step.cfg->master_ports.lo,
		.port_hi = step.cfg->master_ports.hi,
		.neuron = neuron_node(),
	};
	struct efa_error err;
	int added;

	if (!job_env(sp, "SLURM_STEP_NODELIST", nodelist, sizeof(nodelist)) &&
	    !job_env(sp, "SLURM_JOB_NODELIST", nodelist, sizeof(nodelist)))
		nodelist[0] = '\0';
	added = efa_launch_entries(&l, e + *n, &err);
	if (added < 0) {
		slurm_error("efa: %s", err.msg);
		return -1;
	}
	*n += (size_t)added;
	return 0;
}

static int apply_task(spank_t sp)
{
	struct efa_env_entry task[TASK_VARS];
	const char *ckpt_dir = efa_ckpt_dir();
	size_t n = 0;
	int rc = -1;

	if (!step.plan && !ckpt_dir)
		return 0;
	memset(task, 0, sizeof(task));
	/* The batch script launches the job; its own environment is not a
	 * rank's. Later steps replace whatever it had (SLURM_EFA_SET). */
	if (step.plan && item_u32(sp, S_JOB_STEPID) != SLURM_BATCH_SCRIPT) {
		if (step.bind == EFA_BIND_CLOSEST && binding_entries(sp, task, &n))
			goto out;
		if (step.cfg->distributed_env == EFA_YES && launch_entries(sp, task, &n))
			goto out;
	}
	if (ckpt_dir &&
	    (add_entry(task, &n, step.cfg->checkpoint_env, ckpt_dir,
		       "the job's checkpoint directory", false) ||
	     add_entry(task, &n, EFA_CKPT_ENV_VAR, ckpt_dir,
		       "the job's checkpoint directory, whatever CheckpointEnv= says", true)))
		goto out;
	rc = efa_env_apply(step.plan, task, n, step.cfg, get_task_env, put_task_env, sp);
out:
	efa_launch_entries_free(task, n);
	return rc;
}

void efa_step_user_init(spank_t sp)
{
	char mounts[LIST_MAX], image[IMAGE_MAX];
	spank_err_t rc;

	/* enroot's hook mounts what this names: only what is decided here. */
	spank_unsetenv(sp, EFA_ENV_HOST_MOUNTS_VAR);
	if (!step.plan || step.cfg->container_host_libraries != EFA_YES ||
	    !efa_container_image(sp, image, sizeof(image)))
		return;
	if (efa_image_host_mounts(step.node, step.root, mounts, sizeof(mounts))) {
		slurm_error("efa: node %s: the node's EFA libraries are too many to mount into containers",
			    step.node_name);
		return;
	}
	rc = spank_setenv(sp, EFA_ENV_HOST_MOUNTS_VAR, mounts, 1);
	if (rc != ESPANK_SUCCESS)
		slurm_error("efa: cannot set %s: %s", EFA_ENV_HOST_MOUNTS_VAR, spank_strerror(rc));
}

/*
 * Inside a container the plan is built again from the image's software,
 * with the node's hardware: the image's libfabric and aws-ofi-nccl are
 * what the task loads.
 */
static int plan_for_image(struct efa_sysfs *fs, struct efa_node *view)
{
	struct efa_env_plan *plan = NULL;
	struct efa_error err;

	*view = *step.node;
	if (efa_image_stack(fs, &step.node->stack, &view->stack))
		return -1;
	if (efa_env_plan_build(view, step.profiles, &plan, &err))
		return -1;
	efa_env_plan_free(step.plan);
	step.plan = plan;
	plan->image = step.image;
	plan->task_fs = fs;
	return 0;
}

/*
 * The task's own checks, where its file system is known: in a container
 * the image must bring EFA's user space and the node's devices; on the
 * node, aws-ofi-nccl must load. --efa=required fails the step, auto sets
 * nothing EFA-specific. Returns -1 when the step must fail (the message
 * is in step.failure).
 */
static int check_task(spank_t sp, struct efa_sysfs *fs)
{
	static char ld_path[LIBPATH_MAX];
	bool container = efa_container_entered();
	struct efa_node view = { 0 };
	char problem[1024];

	if (container && efa_ckpt_dir() && !efa_ckpt_reaches_container())
		efa_step_fail("efa: checkpoint directory %s on node %s is not the node's inside container image %s: what the job writes there would be lost with the container. Install slurm-efa's enroot hook (50-slurm-efa.sh in enroot's hooks.d) or add --container-mounts=%s",
			      efa_ckpt_dir(), step.node_name, step.image, efa_ckpt_dir());
	if (step.failure[0])
		return -1;
	if (!step.plan)
		return 0;
	if (!container && step.image[0] && task_id(sp) == 0)
		slurm_info("efa: node %s: spank_efa runs before pyxis in plugstack.conf, so container image %s gets the node's EFA settings and its own variables override them: list spank_efa after pyxis (the shipped plugstack.conf.d/slurm-efa.conf sorts after pyxis.conf)",
			   step.node_name, step.image);
	if (!job_env(sp, "LD_LIBRARY_PATH", ld_path, sizeof(ld_path)))
		ld_path[0] = '\0';
	if (container && plan_for_image(fs, &view)) {
		efa_stack_clear(&view.stack);
		efa_step_fail("efa: node %s cannot read container image %s: out of memory",
			      step.node_name, step.image);
		return -1;
	}
	if (efa_env_plan_for_task(step.plan, container ? &view : step.node, fs, ld_path,
				  container ? EFA_CHECK_CONTAINER : 0, step.mode == EFA_MODE_REQUIRED,
				  problem, sizeof(problem))) {
		efa_stack_clear(&view.stack);
		efa_step_fail("efa: node %s: out of memory", step.node_name);
		return -1;
	}
	efa_stack_clear(&view.stack);
	if (problem[0] && step.mode == EFA_MODE_REQUIRED) {
		if (container)
			efa_step_fail("efa: --efa=required but container image %s on node %s cannot use EFA: %s. Use an image with EFA's user space (the EFA installer with --skip-kmod, or AWS's deep-learning containers), keep ENROOT_RESTRICT_DEV=n, or submit with --efa=auto",
				      step.image, step.node_name, problem);
		else
			efa_step_fail("efa: --efa=required but node %s cannot use EFA: %s. Install aws-ofi-nccl (the EFA installer does), put it on LD_LIBRARY_PATH, or submit with --efa=auto",
				      step.node_name, problem);
		return -1;
	}
	if (problem[0]) {
		if (task_id(sp) == 0)
			slurm_info("efa: node %s%s%s has %s: --efa=auto sets nothing EFA-specific",
				   step.node_name, container ? ", container image " : "", step.image,
				   problem);
		efa_env_plan_free(step.plan);
		step.plan = NULL;
	}
	return 0;
}

int efa_step_task_init(spank_t sp)
{
	struct efa_sysfs fs;
	int rc;

	if (!efa_container_image(sp, step.image, sizeof(step.image)))
		step.image[0] = '\0';
	/* slurmstepd applies what is left of it after task_init. */
	if (step.refuse_memlock)
		spank_unsetenv(sp, EFA_MEMLOCK_VAR);
	if (efa_sysfs_open(&fs, "/")) {
		slurm_error("efa: cannot open the task's root directory");
		return -1;
	}
	if (check_task(sp, &fs)) {
		efa_sysfs_close(&fs);
		slurm_error("%s", step.failure);
		return -1;
	}
	/* Only slurm_error reaches the job's stderr from here. */
	if (step.warning[0] && task_id(sp) == 0)
		slurm_error("%s", step.warning);
	if (step.mode != EFA_MODE_UNSET) {
		if (set_own(sp, "SLURM_EFA_MODE", efa_mode_name(step.mode)) ||
		    (step.bind != EFA_BIND_UNSET &&
		     set_own(sp, "SLURM_EFA_BIND", efa_bind_name(step.bind)))) {
			efa_sysfs_close(&fs);
			return -1;
		}
	}
	rc = apply_task(sp);
	efa_sysfs_close(&fs);
	return rc;
}

void efa_step_release(void)
{
	efa_node_free(step.node);
	efa_env_plan_free(step.plan);
	efa_profiles_free(step.profiles);
	efa_config_free(step.cfg);
	memset(&step, 0, sizeof(step));
}
