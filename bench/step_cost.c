/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Plugin work per step per node, in-process: what spank_efa.so does on one
 * node for an 8-task step with --efa --efa-bind=closest (read efa.conf,
 * the node and its profiles as kept in NodeCacheDir= (read afresh when
 * anything they came from changed), build the step's plan and its tasks'
 * closest NICs; what every task gets alike applied once to the step's
 * environment (user_init); then per task its binding, its launch
 * variables and applying its own to its copy of that environment), against
 * the cheapest possible TaskProlog: a fork and exec of /bin/true for each
 * of the 8 tasks (run by a helper process: see helper_start). Setting a
 * variable costs what slurmstepd's spank_setenv does: setenvf in Slurm's
 * env.c formats into a cleared 256 KiB buffer.
 * The same step is also measured with a setenv that clears nothing: the
 * plugin's own work, apart from what Slurm spends on each variable set.
 *
 *   step_cost [--rounds N] CONF ROOT     prints "step US", "own US" and
 *                                        "baseline US" in turn, a line each
 *                                        per round, then "set N": the
 *                                        variables a step sets
 *   step_cost --steps N CONF ROOT        runs N steps, prints nothing (for
 *                                        valgrind --toggle-collect=bench_step)
 *   step_cost --own-steps N CONF ROOT    the same with a setenv that clears
 *                                        nothing
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/node/bind.h"
#include "common/config/efa_conf.h"
#include "common/env/env.h"
#include "common/env/launch.h"
#include "common/node/node.h"
#include "common/nodecache/nodecache.h"
#include "common/env/profile.h"

#define TASKS 8
#define ENV_MAX 128
#define WARMUP 20

/*
 * A task's environment as slurmstepd holds it: a flat list searched in
 * order. A task's starts as the step's, which its child has by the fork,
 * not by copying: its strings are the step's (borrowed) until it sets one.
 */
struct task_env {
	char *vars[ENV_MAX];
	bool own[ENV_MAX];
	size_t n;
};

static const char *const slurm_task_env[] = {
	"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/home/alice", "USER=alice", "SHELL=/bin/bash",
	"LANG=C.UTF-8", "TMPDIR=/tmp", "SLURM_CONF=/etc/slurm/slurm.conf",
	"SLURM_JOB_ID=1234", "SLURM_JOBID=1234", "SLURM_STEP_ID=0", "SLURM_STEPID=0",
	"SLURM_JOB_NAME=train", "SLURM_JOB_PARTITION=p5", "SLURM_JOB_NODELIST=n[1-2]",
	"SLURM_STEP_NODELIST=n[1-2]", "SLURM_NNODES=2", "SLURM_NTASKS=16", "SLURM_NPROCS=16",
	"SLURM_TASKS_PER_NODE=8(x2)", "SLURM_STEP_TASKS_PER_NODE=8(x2)", "SLURM_CPUS_ON_NODE=16",
	"SLURM_NODEID=0", "SLURM_SUBMIT_DIR=/home/alice", "SLURM_SUBMIT_HOST=login1",
	"SLURM_TOPOLOGY_ADDR=n1", "SLURM_TOPOLOGY_ADDR_PATTERN=node", "SLURM_CLUSTER_NAME=c",
	"SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa=(null)",
	"SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa_bind=closest",
};

static int env_get(void *ctx, const char *name, char *buf, size_t size)
{
	const struct task_env *env = ctx;
	size_t len = strlen(name);

	for (size_t i = 0; i < env->n; i++) {
		const char *value = env->vars[i] + len + 1;
		size_t vlen;

		if (strncmp(env->vars[i], name, len) || env->vars[i][len] != '=')
			continue;
		/* As spank_getenv's strlcpy: ESPANK_NOSPACE when it does not fit. */
		vlen = strlen(value);
		if (!size)
			return -1;
		memcpy(buf, value, vlen < size ? vlen + 1 : size - 1);
		buf[size - 1] = '\0';
		return vlen < size ? 1 : -1;
	}
	return 0;
}

/* Slurm's setenvf (env.c): xmalloc(ENV_BUFSIZE), zeroed, per call. */
#define SLURM_ENV_BUFSIZE (256 * 1024)

/* Whether a variable set costs setenvf's buffer (else only its copy), and
 * how many were set. */
static bool setenvf_buffer = true;
static long variables_set;

static int env_put(void *ctx, const char *name, const char *value,
		   enum efa_env_decision decision, const char *reason, const char *current)
{
	struct task_env *env = ctx;
	size_t len = strlen(name), i;
	char *var, *formatted;

	(void)reason;
	if (decision != EFA_ENV_SET && decision != EFA_ENV_FORCED &&
	    decision != EFA_ENV_PREPENDED && decision != EFA_ENV_REMOVED)
		return 0;
	/* As the plugin does: a value there already, as apply read it, is left. */
	if (decision != EFA_ENV_REMOVED && current && !strcmp(current, value))
		return 0;
	for (i = 0; i < env->n; i++)
		if (!strncmp(env->vars[i], name, len) && env->vars[i][len] == '=')
			break;
	if (decision == EFA_ENV_REMOVED) {
		if (i < env->n) {
			if (env->own[i])
				free(env->vars[i]);
			env->n--;
			env->vars[i] = env->vars[env->n];
			env->own[i] = env->own[env->n];
		}
		return 0;
	}
	/* As the plugin does: a variable that holds the value is not set. */
	if (i < env->n && !strcmp(env->vars[i] + len + 1, value))
		return 0;
	variables_set++;
	formatted = setenvf_buffer ? calloc(1, SLURM_ENV_BUFSIZE) : strdup(value);
	if (!formatted)
		return -1;
	if (setenvf_buffer)
		snprintf(formatted, SLURM_ENV_BUFSIZE, "%s", value);
	if (i == ENV_MAX || asprintf(&var, "%s=%s", name, formatted) < 0) {
		free(formatted);
		return -1;
	}
	free(formatted);
	if (i < env->n && env->own[i])
		free(env->vars[i]);
	else if (i == env->n)
		env->n++;
	env->vars[i] = var;
	env->own[i] = true;
	return 0;
}

static void env_clear(struct task_env *env)
{
	for (size_t i = 0; i < env->n; i++)
		if (env->own[i])
			free(env->vars[i]);
	env->n = 0;
}

static void env_reset(struct task_env *env)
{
	env_clear(env);
	for (size_t i = 0; i < sizeof(slurm_task_env) / sizeof(slurm_task_env[0]); i++) {
		env->own[env->n] = true;
		env->vars[env->n++] = strdup(slurm_task_env[i]);
	}
}

/* A task's environment starts as the step's: the fork's copy, not ours. */
static void env_copy(struct task_env *to, const struct task_env *from)
{
	env_clear(to);
	memcpy(to->vars, from->vars, from->n * sizeof(from->vars[0]));
	memset(to->own, 0, from->n * sizeof(to->own[0]));
	to->n = from->n;
}

static int binding_entry(struct efa_env_entry *e, const char *name, const char *value)
{
	int rc = efa_launch_entry_set(e, name, value, "--efa-bind=closest");

	e->per_task = true;
	return rc;
}

/* What every task gets alike, once in the step's environment (user_init). */
static int step_apply(const struct efa_config *cfg, const struct efa_env_plan *plan,
		      struct task_env *step_env)
{
	struct efa_launch launch = {
		.node_shared = true, .world_size = 2 * TASKS, .local_world_size = TASKS,
		.first_node = "n1", .job_id = 1234,
		.port_lo = cfg->master_ports.lo, .port_hi = cfg->master_ports.hi,
	};
	struct efa_env_entry entries[EFA_LAUNCH_VARS];
	struct efa_error err;
	int n, rc;

	memset(entries, 0, sizeof(entries));
	n = efa_launch_entries(&launch, entries, &err);
	if (n < 0)
		return -1;
	env_reset(step_env);
	rc = efa_env_apply_shared(plan, entries, (size_t)n, cfg, env_get, env_put, step_env);
	efa_launch_entries_free(entries, (size_t)n);
	return rc;
}

static int task_apply(const struct efa_config *cfg, const struct efa_node *node,
		      const struct efa_env_plan *plan, const int *gpus, size_t ngpus,
		      const bool *groups, unsigned task, const struct task_env *step_env,
		      struct task_env *env)
{
	struct efa_bind_request req = { .gpus = gpus, .ngpus = ngpus, .task = task,
					.ntasks = TASKS, .groups = groups };
	struct efa_launch launch = {
		.rank = task, .local_rank = task, .world_size = 2 * TASKS,
		.local_world_size = TASKS, .first_node = "n1", .job_id = 1234,
		.port_lo = cfg->master_ports.lo, .port_hi = cfg->master_ports.hi,
	};
	struct efa_env_entry entries[EFA_LAUNCH_VARS + 2];
	struct efa_task_binding b;
	struct efa_error err;
	size_t n = 0;
	int added, rc = -1;

	memset(entries, 0, sizeof(entries));
	if (efa_bind_task(node, &req, &b, &err))
		return -1;
	if ((b.nics[0] && binding_entry(&entries[n++], "FI_EFA_IFACE", b.nics)) ||
	    (b.neuron_cores[0] && binding_entry(&entries[n++], "NEURON_RT_VISIBLE_CORES", b.neuron_cores)))
		goto out;
	added = efa_launch_entries(&launch, entries + n, &err);
	if (added < 0)
		goto out;
	n += (size_t)added;
	env_copy(env, step_env);
	/* As the plugin does in a task outside a container: the step's
	 * shared part is in the environment the task has. */
	rc = efa_env_apply_task(plan, entries, n, cfg, env_get, env_put, env);
out:
	efa_launch_entries_free(entries, n);
	return rc;
}

static long hits;	/* steps that found the node's description kept */

/* One step on one node, as the plugin does it. Not inlined: callgrind counts it by name. */
__attribute__((noinline)) int bench_step(const char *conf, const char *root, struct task_env *step_env,
	       struct task_env *env);

int bench_step(const char *conf, const char *root, struct task_env *step_env,
	       struct task_env *env)
{
	struct efa_nodedesc desc = { 0 };
	struct efa_node_cache cache = { .settle = EFA_NODE_CACHE_SETTLE };
	struct efa_env_plan *plan = NULL;
	struct efa_config *cfg = NULL;
	const struct efa_node *node;
	struct efa_error err;
	char note[1024];
	int gpus[64], rc = -1;
	size_t ngpus = 0;
	bool *groups = NULL;

	if (efa_config_load(conf, &cfg, &err))
		goto fail;
	cache.dir = cfg->node_cache_dir;
	switch (efa_node_describe(root, cfg, &cache, &desc, note, sizeof(note), &err)) {
	case EFA_NODE_CACHE_HIT:
		hits++;
		break;
	case EFA_NODE_CACHE_UNWRITABLE:
		fprintf(stderr, "step_cost: %s\n", note);
		goto out;
	case EFA_NODE_CACHE_BUILT:
		break;
	default:
		goto fail;
	}
	/* As the plugin does for --efa-bind=closest: a no-op once kept. */
	if (efa_bind_index(desc.node)) {
		fprintf(stderr, "step_cost: out of memory\n");
		goto out;
	}
	node = desc.node;
	if (!desc.profiles) {
		fprintf(stderr, "step_cost: %s\n", desc.profiles_error);
		goto out;
	}
	if (efa_env_plan_build(node, desc.profiles, &plan, &err))
		goto fail;
	/* The step has all the node's GPUs, one task per GPU (Neuron nodes bind devices). */
	for (size_t i = 0; i < node->naccels && ngpus < 64; i++)
		if (node->accels[i].kind == EFA_ACCEL_GPU)
			gpus[ngpus++] = node->accels[i].index;
	/* As the plugin does before the tasks fork: every task's NICs once. */
	groups = efa_bind_step_groups(node, gpus, ngpus, TASKS);
	if (!groups) {
		fprintf(stderr, "step_cost: out of memory\n");
		goto out;
	}
	if (step_apply(cfg, plan, step_env)) {
		fprintf(stderr, "step_cost: the step's shared part failed\n");
		goto out;
	}
	for (unsigned t = 0; t < TASKS; t++)
		if (task_apply(cfg, node, plan, gpus, ngpus, groups, t, step_env, env)) {
			fprintf(stderr, "step_cost: task %u failed\n", t);
			goto out;
		}
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "step_cost: %s\n", err.msg);
out:
	free(groups);
	efa_env_plan_free(plan);
	efa_nodedesc_clear(&desc);
	efa_config_free(cfg);
	return rc;
}

/* A TaskProlog at its cheapest: slurmstepd forks and execs it once per task. */
static int baseline(void)
{
	for (int t = 0; t < TASKS; t++) {
		pid_t pid = fork();
		int status;

		if (pid < 0)
			return -1;
		if (!pid) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			return -1;
	}
	return 0;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/*
 * The baseline runs in a helper forked once, before any step: a fork
 * write-protects every page of the process that forks, and the next
 * write to each then faults, so baselines run here would make each
 * round's steps pay faults slurmstepd does not (its 256 KiB setenvf
 * buffer alone is 64 pages). The helper answers each request byte with
 * the baseline's time in µs, or a negative one when it failed.
 */
struct helper {
	pid_t pid;
	int to, from;
};

static int helper_start(struct helper *h)
{
	int req[2], ans[2];

	if (pipe(req))
		return -1;
	if (pipe(ans)) {
		close(req[0]);
		close(req[1]);
		return -1;
	}
	h->pid = fork();
	if (h->pid < 0) {
		close(req[0]);
		close(req[1]);
		close(ans[0]);
		close(ans[1]);
		return -1;
	}
	if (!h->pid) {
		char c;

		close(req[1]);
		close(ans[0]);
		while (read(req[0], &c, 1) == 1) {
			double t0 = now_us(), us;

			us = baseline() ? -1 : now_us() - t0;
			if (write(ans[1], &us, sizeof(us)) != sizeof(us))
				break;
		}
		_exit(0);
	}
	close(req[0]);
	close(ans[1]);
	h->to = req[1];
	h->from = ans[0];
	return 0;
}

/* The baseline's time in µs, or a negative number when it failed. */
static double helper_baseline(const struct helper *h)
{
	double us;

	if (write(h->to, "b", 1) != 1 || read(h->from, &us, sizeof(us)) != sizeof(us))
		return -1;
	return us;
}

static void helper_stop(const struct helper *h)
{
	close(h->to);
	close(h->from);
	waitpid(h->pid, NULL, 0);
}

int main(int argc, char **argv)
{
	struct task_env step_env = { .n = 0 }, env = { .n = 0 };
	long rounds = 200, steps = 0;
	const char *conf, *root;
	struct helper helper;
	double t0, us;
	int rc = 0;

	if (argc == 5 && !strcmp(argv[1], "--rounds"))
		rounds = strtol(argv[2], NULL, 10);
	else if (argc == 5 && !strcmp(argv[1], "--steps"))
		steps = strtol(argv[2], NULL, 10);
	else if (argc == 5 && !strcmp(argv[1], "--own-steps")) {
		steps = strtol(argv[2], NULL, 10);
		setenvf_buffer = false;
	} else if (argc != 3) {
		fprintf(stderr, "usage: step_cost [--rounds N | --steps N | --own-steps N] CONF ROOT\n");
		return 2;
	}
	conf = argv[argc - 2];
	root = argv[argc - 1];
	if (steps) {
		for (long i = 0; i < steps && !rc; i++)
			rc = bench_step(conf, root, &step_env, &env);
		goto out;
	}
	if (helper_start(&helper)) {
		perror("step_cost: the baseline's helper");
		return 1;
	}
	for (int i = 0; i < WARMUP && !rc; i++)
		rc = bench_step(conf, root, &step_env, &env) || helper_baseline(&helper) < 0;
	variables_set = 0;
	for (long i = 0; i < rounds && !rc; i++) {
		setenvf_buffer = true;
		t0 = now_us();
		rc = bench_step(conf, root, &step_env, &env);
		printf("step %.2f\n", now_us() - t0);
		setenvf_buffer = false;
		t0 = now_us();
		rc = rc || bench_step(conf, root, &step_env, &env);
		printf("own %.2f\n", now_us() - t0);
		us = rc ? -1 : helper_baseline(&helper);
		rc = us < 0;
		printf("baseline %.2f\n", us);
	}
	helper_stop(&helper);
	if (rounds)
		printf("set %ld\n", variables_set / (2 * rounds));
	fprintf(stderr, "step_cost: %ld of %ld steps found the node's description kept\n", hits,
		WARMUP + 2 * rounds);
out:
	/* The task's first: it may borrow the step's strings. */
	env_clear(&env);
	env_clear(&step_env);
	return rc ? 1 : 0;
}
