/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>

#include "common/env/env.h"
#include "common/env/explain.h"
#include "common/env/launch.h"
#include "common/env/memlock.h"
#include "common/node/bind.h"
#include "common/node/image.h"
#include "common/node/sysfs.h"
#include "checkpoint_step.h"
#include "container.h"
#include "task.h"

#define TASK_VARS (EFA_LAUNCH_VARS + 6)

/* A task being set up: its step and its SPANK handle (the environment
 * functions' context); or, shared, what all the step's tasks get, set up
 * in the step's environment before they start. */
struct task {
	struct efa_step *step;
	spank_t sp;
	bool shared;
	bool after_shared;	/* its environment is one the shared part settled */
};

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

static int get_task_env(void *ctx, const char *name, char *buf, size_t size)
{
	const struct task *t = ctx;
	spank_err_t rc = spank_getenv(t->sp, name, buf, (int)size);

	if (rc == ESPANK_SUCCESS)
		return 1;
	return rc == ESPANK_NOSPACE ? -1 : 0;
}

/*
 * Whether the environment holds exactly name=value already. slurmstepd's
 * spank_setenv allocates and clears 256 KiB for every call (setenvf,
 * ENV_BUFSIZE in Slurm's env.c), and a task finds most of its variables
 * already set for the step (efa_task_step_env).
 */
static bool holds(spank_t sp, const char *name, const char *value)
{
	size_t len = strlen(value);
	char small[512], *buf = len + 2 <= sizeof(small) ? small : malloc(len + 2);
	bool same;

	if (!buf)
		return false;
	same = spank_getenv(sp, name, buf, (int)(len + 2)) == ESPANK_SUCCESS && !strcmp(buf, value);
	if (buf != small)
		free(buf);
	return same;
}

static int put_task_env(void *ctx, const char *name, const char *value,
			enum efa_env_decision decision, const char *reason, const char *current)
{
	const struct task *t = ctx;
	spank_err_t rc;

	if (decision == EFA_ENV_USER && value && t->step->env.image[0] && task_id(t->sp) == 0)
		slurm_info("efa: node %s, image %s: %s kept as the image or the job set it (%s)",
			   t->step->node_name, t->step->env.image, name, reason);
	if (decision == EFA_ENV_REMOVED) {
		rc = spank_unsetenv(t->sp, name);
		if (rc != ESPANK_SUCCESS)
			slurm_error("efa: cannot unset %s: %s", name, spank_strerror(rc));
		return rc == ESPANK_SUCCESS ? 0 : -1;
	}
	if (decision != EFA_ENV_SET && decision != EFA_ENV_FORCED &&
	    decision != EFA_ENV_PREPENDED)
		return 0;
	if (current ? !strcmp(current, value) : holds(t->sp, name, value))
		return 0;
	rc = spank_setenv(t->sp, name, value, 1);
	if (rc != ESPANK_SUCCESS) {
		slurm_error("efa: cannot set %s: %s", name, spank_strerror(rc));
		return -1;
	}
	return 0;
}

static int set_own(const struct task *t, const char *name, const char *value)
{
	return put_task_env((void *)t, name, value, EFA_ENV_SET, NULL, NULL);
}

static int add_entry(struct efa_env_entry *e, size_t *n, const char *name,
		     const char *value, const char *reason, bool slurm_var)
{
	int rc = efa_launch_entry_set(&e[*n], name, value, reason);

	e[(*n)++].slurm_var = slurm_var;
	return rc;
}

/* The step's CUDA_VISIBLE_DEVICES entries at positions [first, first+count). */
static void visible_share(const struct efa_step *step, const struct efa_task_binding *b,
			  const int *gpus, size_t ngpus, char *out, size_t size)
{
	const char *p = step->bind.cuda_visible;
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

/* binding_entries' buffers: on the heap, not in a deep stack frame of the
 * task's child slurmstepd, whose pages it has not written yet, and freed
 * before any variable is set (common/env/apply.c, struct bounded, says
 * why both matter). */
struct binding_scratch {
	int gpus[EFA_STEP_GPUS_MAX];
	char task_gres[EFA_STEP_LIST_MAX];
	char task_visible[EFA_STEP_LIST_MAX];
	char value[EFA_BIND_LIST_MAX];
	struct efa_task_binding b;
};

/* --efa-bind=closest: the task's accelerators and the NICs nearest them. */
static int binding_entries(const struct task *t, struct efa_env_entry *e, size_t *n)
{
	const struct efa_step *step = t->step;
	spank_t sp = t->sp;
	struct binding_scratch *s = malloc(sizeof(*s));
	struct efa_bind_request req = { .task = (unsigned)task_id(sp),
					.ntasks = item_u32(sp, S_JOB_LOCAL_TASK_COUNT) };
	struct efa_error err;
	int ngpus, rc = -1;

	if (!s) {
		slurm_error("efa: node %s: out of memory binding task %u", step->node_name, req.task);
		return -1;
	}
	if (!efa_step_job_env(sp, "SLURM_STEP_GPUS", s->task_gres, sizeof(s->task_gres)) &&
	    !efa_step_job_env(sp, "SLURM_JOB_GPUS", s->task_gres, sizeof(s->task_gres)))
		s->task_gres[0] = '\0';
	if (!efa_step_job_env(sp, "CUDA_VISIBLE_DEVICES", s->task_visible, sizeof(s->task_visible)))
		s->task_visible[0] = '\0';
	if (step->bind.gres_gpus[0]) {
		/* Slurm narrows the task's GPU list when it binds (--gpu-bind,
		 * --gpus-per-task); otherwise the share is ours to make. */
		req.gpus_given = s->task_gres[0] && strcmp(s->task_gres, step->bind.gres_gpus);
		ngpus = efa_parse_index_list(req.gpus_given ? s->task_gres : step->bind.gres_gpus,
					     s->gpus, EFA_STEP_GPUS_MAX);
	} else if (s->task_visible[0]) {
		req.gpus_given = true;	/* set by the user, without GRES */
		ngpus = efa_parse_index_list(s->task_visible, s->gpus, EFA_STEP_GPUS_MAX);
	} else {
		ngpus = 0;
	}
	if (ngpus < 0) {
		slurm_error("efa: cannot read the task's GPUs ('%s'): no GPU binding", s->task_gres);
		ngpus = 0;
	}
	req.gpus = s->gpus;
	req.ngpus = (size_t)ngpus;
	if (step->bind.groups && step->bind.ntasks == req.ntasks)
		req.groups = step->bind.groups;
	if (efa_step_job_env(sp, "NEURON_LOGICAL_NC_CONFIG", s->value, sizeof(s->value)) &&
	    (req.lnc = efa_neuron_lnc_parse(s->value)) < 0) {
		if (req.task == 0)
			slurm_error("efa: NEURON_LOGICAL_NC_CONFIG=%s is not 1 or 2 (the Neuron runtime takes no other): NEURON_RT_VISIBLE_CORES counts the devices' default logical cores",
				    s->value);
		req.lnc = 0;
	}
	if (efa_bind_task(step->node, &req, &s->b, &err)) {
		slurm_error("efa: %s", err.msg);
		goto out;
	}
	if (s->b.shared && req.task == 0)
		slurm_info("efa: %u tasks share %s on node %s: each task gets a slice",
			   req.ntasks, ngpus ? "the step's GPUs" : "the Neuron cores", step->node_name);
	if (ngpus && !req.gpus_given) {
		visible_share(step, &s->b, s->gpus, (size_t)ngpus, s->value, sizeof(s->value));
		if (add_entry(e, n, "CUDA_VISIBLE_DEVICES", s->value,
			      "--efa-bind=closest: the task's share", true))
			goto out;
	}
	if (s->b.nics[0] && add_entry(e, n, "FI_EFA_IFACE", s->b.nics, "--efa-bind=closest", false))
		goto out;
	if (s->b.neuron_cores[0] &&
	    add_entry(e, n, "NEURON_RT_VISIBLE_CORES", s->b.neuron_cores, "--efa-bind=closest", false))
		goto out;
	rc = 0;
out:
	free(s);
	return rc;
}

static bool neuron_node(const struct efa_step *step)
{
	for (size_t i = 0; step->node && i < step->node->naccels; i++)
		if (step->node->accels[i].kind == EFA_ACCEL_NEURON && step->node->accels[i].present)
			return true;
	return false;
}

static int launch_entries(const struct task *t, struct efa_env_entry *e, size_t *n)
{
	const struct efa_step *step = t->step;
	spank_t sp = t->sp;
	unsigned local_rank = (unsigned)task_id(sp);
	struct efa_launch l = {
		.node_shared = t->shared,
		.rank = step->rank.ranked ? step->rank.base + local_rank :
				       item_u32(sp, S_TASK_GLOBAL_ID),
		.local_rank = local_rank,
		.world_size = item_u32(sp, S_JOB_TOTAL_TASK_COUNT),
		.local_world_size = item_u32(sp, S_JOB_LOCAL_TASK_COUNT),
		.node_rank = step->rank.ranked ? step->rank.node : item_u32(sp, S_JOB_NODEID),
		.topology_order = step->rank.ranked,
		.first_node = step->rank.master_name,
		.job_id = item_u32(sp, S_JOB_ID),
		.step_id = item_u32(sp, S_JOB_STEPID),
		.port_lo = step->cfg->master_ports.lo,
		.port_hi = step->cfg->master_ports.hi,
		.neuron = neuron_node(step),
		.master_addr = step->rank.master_addr[0] ? step->rank.master_addr : NULL,
		.master_from = step->rank.master_addr[0] ? step->rank.master_from : NULL,
	};
	struct efa_error err;
	int added;

	added = efa_launch_entries(&l, e + *n, &err);
	if (added < 0) {
		slurm_error("efa: %s", err.msg);
		return -1;
	}
	*n += (size_t)added;
	return 0;
}

static int apply_task(const struct task *t)
{
	const struct efa_step *step = t->step;
	spank_t sp = t->sp;
	struct efa_env_entry task[TASK_VARS];
	const char *ckpt_dir = efa_ckpt_dir(step);
	/* The batch script launches the job; its own environment is not a
	 * rank's. Later steps replace whatever it had (SLURM_EFA_SET). A
	 * rank gets its launch variables (prepare.c found its step's first
	 * node) with or without EFA on its node. */
	bool rank = item_u32(sp, S_JOB_STEPID) != SLURM_BATCH_SCRIPT;
	bool launch = rank && step->rank.master_name[0];
	size_t n = 0;
	int rc = -1;

	if (!step->env.plan && !ckpt_dir && !launch)
		return 0;
	memset(task, 0, sizeof(task));
	/* Bindings are each task's own; of the launch variables, RANK and
	 * LOCAL_RANK are. */
	if (!t->shared && step->env.plan && rank && step->bind.mode == EFA_BIND_CLOSEST &&
	    binding_entries(t, task, &n))
		goto out;
	for (size_t i = 0; i < n; i++)
		task[i].per_task = true;
	if (launch && launch_entries(t, task, &n))
		goto out;
	if (ckpt_dir &&
	    (add_entry(task, &n, step->cfg->checkpoint_env, ckpt_dir,
		       "the job's checkpoint directory", false) ||
	     add_entry(task, &n, EFA_CKPT_ENV_VAR, ckpt_dir,
		       "the job's checkpoint directory, whatever CheckpointEnv= says", true)))
		goto out;
	if (efa_ckpt_resume_dir(step) &&
	    add_entry(task, &n, EFA_CKPT_RESUME_VAR, efa_ckpt_resume_dir(step),
		      "the newest complete checkpoint in the job's checkpoint directory", false))
		goto out;
	rc = (t->shared ? efa_env_apply_shared :
	      t->after_shared ? efa_env_apply_task : efa_env_apply)(step->env.plan, task, n, step->cfg,
								       get_task_env, put_task_env,
								       (void *)t);
out:
	efa_launch_entries_free(task, n);
	return rc;
}

/*
 * The task's own checks, where its file system is known: in a container
 * the image must bring EFA's user space and the node's devices (and the
 * step's plan is rebuilt from the image's software); on the node,
 * aws-ofi-nccl must load. --efa=required fails the step, auto drops the
 * plan and sets nothing EFA-specific. Returns -1 when the step must fail
 * (the message is in step->failure). fs (the task's root) is read only in
 * a container or before the step's shared part was settled on the node.
 */
static int settle_task_plan(struct efa_step *step, spank_t sp, struct efa_sysfs *fs,
			    bool container)
{
	struct efa_env_view view = { 0 };
	struct efa_env_task task = {
		.view = &view, .profiles = step->env.profiles, .fs = fs,
		.image = container ? step->env.image : NULL,
		.checks = container ? EFA_CHECK_CONTAINER : 0,
		.required = step->mode == EFA_MODE_REQUIRED,
	};
	struct efa_error err;
	char problem[EFA_ENV_PROBLEM_MAX], *ld_path;
	int rc;

	if (container && efa_ckpt_dir(step) && !efa_ckpt_reaches_container(step))
		efa_step_fail(step, "efa: checkpoint directory %s on node %s is not the node's inside container image %s: what the job writes there would be lost with the container. Install slurm-efa's enroot hook (50-slurm-efa.sh in enroot's hooks.d) or add --container-mounts=%s",
			      efa_ckpt_dir(step), step->node_name, step->env.image, efa_ckpt_dir(step));
	if (step->failure[0])
		return -1;
	if (!step->env.plan || (!container && step->env.host_settled))
		return 0;
	if (!container && step->env.image[0] && task_id(sp) == 0)
		slurm_info("efa: node %s: spank_efa runs before pyxis in plugstack.conf, so container image %s gets the node's EFA settings and its own variables override them: list spank_efa after pyxis (the shipped plugstack.conf.d/slurm-efa.conf sorts after pyxis.conf)",
			   step->node_name, step->env.image);
	/* A job's library path may be long: on the heap, not slurmstepd's stack. */
	ld_path = malloc(EFA_ENV_LIBPATH_MAX);
	if (!ld_path) {
		efa_step_fail(step, "efa: node %s: out of memory", step->node_name);
		return -1;
	}
	if (!efa_step_job_env(sp, EFA_ENV_LIBPATH_VAR, ld_path, EFA_ENV_LIBPATH_MAX))
		ld_path[0] = '\0';
	task.ld_path = ld_path;
	rc = efa_env_view_open(&view, step->node, container ? fs : NULL, &err) ||
	     efa_env_settle_task(&task, &step->env.plan, problem, sizeof(problem), &err);
	free(ld_path);
	efa_env_view_clear(&view);
	if (rc) {
		if (container)
			efa_step_fail(step, "efa: node %s cannot read container image %s: %s",
				      step->node_name, step->env.image, err.msg);
		else
			efa_step_fail(step, "efa: node %s: %s", step->node_name, err.msg);
		return -1;
	}
	if (problem[0] && step->mode == EFA_MODE_REQUIRED) {
		if (container)
			efa_step_fail(step, "efa: --efa=required but container image %s on node %s cannot use EFA: %s. Use an image with EFA's user space (the EFA installer with --skip-kmod, or AWS's deep-learning containers), keep ENROOT_RESTRICT_DEV=n, or submit with --efa=auto",
				      step->env.image, step->node_name, problem);
		else
			efa_step_fail(step, "efa: --efa=required but node %s cannot use EFA: %s. Install aws-ofi-nccl (the EFA installer does), put it on LD_LIBRARY_PATH, or submit with --efa=auto",
				      step->node_name, problem);
		return -1;
	}
	/* --efa=auto: the plan is gone (efa_env_settle_task). */
	if (problem[0] && task_id(sp) == 0)
		slurm_info("efa: node %s%s%s has %s: --efa=auto sets nothing EFA-specific",
			   step->node_name, container ? ", container image " : "", step->env.image,
			   problem);
	return 0;
}

/* A step without EFA, checkpoints or anything to say costs its tasks
 * nothing: every task of every job on the node comes through here. */
static bool nothing_to_do(const struct efa_step *step)
{
	return !step->env.plan && !efa_ckpt_dir(step) && !step->failure[0] && !step->warning[0] &&
	       step->mode == EFA_MODE_UNSET;
}

static int set_mode(const struct task *t)
{
	const struct efa_step *step = t->step;

	if (step->mode == EFA_MODE_UNSET)
		return 0;
	if (set_own(t, "SLURM_EFA_MODE", efa_mode_name(step->mode)) ||
	    (step->bind.mode != EFA_BIND_UNSET && set_own(t, "SLURM_EFA_BIND", efa_bind_name(step->bind.mode))))
		return -1;
	return 0;
}

void efa_task_note_image(struct efa_step *step, spank_t sp)
{
	if (nothing_to_do(step) || !efa_container_image(sp, step->env.image, sizeof(step->env.image)))
		step->env.image[0] = '\0';
}

void efa_task_step_env(struct efa_step *step, spank_t sp)
{
	const struct task t = { .step = step, .sp = sp, .shared = true };
	struct efa_sysfs fs;

	/* A task in a container gets the image's environment from pyxis in
	 * its own task_init: only the task can decide there. A step that
	 * fails is told so by its tasks. */
	if (nothing_to_do(step) || step->failure[0] || step->env.image[0])
		return;
	if (efa_sysfs_open(&fs, "/"))
		return;
	if (!settle_task_plan(step, sp, &fs, efa_container_entered(step))) {
		step->env.host_settled = true;
		step->env.settled = !set_mode(&t) && !apply_task(&t);
	}
	efa_sysfs_close(&fs);
}

int efa_task_init(struct efa_step *step, spank_t sp)
{
	struct task t = { .step = step, .sp = sp };
	struct efa_sysfs fs = { .dirfd = -1 };
	bool container, settled;
	int rc;

	if (nothing_to_do(step))
		return 0;
	/* slurmstepd applies what is left of it after task_init. */
	if (step->env.refuse_memlock)
		spank_unsetenv(sp, EFA_MEMLOCK_VAR);
	container = efa_container_entered(step);
	/* A task on the node of a step whose shared part user_init settled
	 * reads none of its files. */
	settled = !container && step->env.host_settled;
	if (!settled && efa_sysfs_open(&fs, "/")) {
		slurm_error("efa: cannot open the task's root directory");
		return -1;
	}
	if (settle_task_plan(step, sp, settled ? NULL : &fs, container)) {
		efa_sysfs_close(&fs);
		slurm_error("%s", step->failure);
		return -1;
	}
	/* Only slurm_error reaches the job's stderr from here. */
	if (step->warning[0] && task_id(sp) == 0)
		slurm_error("%s", step->warning);
	if (step->rank.warning[0] && item_u32(sp, S_TASK_GLOBAL_ID) == 0)
		slurm_error("%s", step->rank.warning);
	/* The step's environment, which the task has, holds the mode and
	 * what every task shares when user_init applied them. */
	t.after_shared = settled && step->env.settled;
	if (!t.after_shared && set_mode(&t)) {
		efa_sysfs_close(&fs);
		return -1;
	}
	rc = apply_task(&t);
	efa_sysfs_close(&fs);
	return rc;
}
