/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A task's environment as the job left it (env.h's apply): SLURM_EFA_SET
 * and any variables, which the job's user writes. Whichever way a step
 * applies its plan — the whole of it in each task (efa_env_apply), or the
 * shared part once in the step's environment and then each task's whole
 * (efa_env_apply_shared, efa_env_apply) or its own entries
 * (efa_env_apply_task) — the task must end with the same environment, up
 * to the order of SLURM_EFA_SET's records.
 *
 * Input: SLURM_EFA_SET's value on the first line (none when the line is
 * "-"), then NAME=VALUE lines.
 */
#include <stdio.h>
#include <unistd.h>

#include "common/config/efa_conf.h"
#include "common/env/env.h"
#include "common/env/varnames.h"
#include "common/node/sysfs.h"
#include "fuzz.h"

#define VARS_MAX 64

struct env {
	char *name[VARS_MAX];
	char *value[VARS_MAX];
	int n;
};

static int find(const struct env *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->name[i], name))
			return i;
	return -1;
}

static int env_get(void *ctx, const char *name, char *buf, size_t size)
{
	const struct env *e = ctx;
	int i = find(e, name);

	if (i < 0)
		return 0;
	return snprintf(buf, size, "%s", e->value[i]) < (int)size ? 1 : -1;
}

static int env_set(struct env *e, const char *name, const char *value)
{
	int i = find(e, name);
	char *copy = strdup(value);

	if (!copy)
		return -1;
	if (i < 0) {
		if (e->n == VARS_MAX || !(e->name[e->n] = strdup(name))) {
			free(copy);
			return -1;
		}
		i = e->n++;
	} else {
		free(e->value[i]);
	}
	e->value[i] = copy;
	return 0;
}

static void env_unset(struct env *e, const char *name)
{
	int i = find(e, name);

	if (i < 0)
		return;
	free(e->name[i]);
	free(e->value[i]);
	e->n--;
	e->name[i] = e->name[e->n];
	e->value[i] = e->value[e->n];
}

static int env_put(void *ctx, const char *name, const char *value, enum efa_env_decision d,
		   const char *reason, const char *current)
{
	struct env *e = ctx;
	int i = find(e, name);

	(void)reason;
	/* put's contract: current is what the variable holds. */
	if (current && (i < 0 || strcmp(e->value[i], current))) {
		fprintf(stderr, "fuzz_apply: put told %s held '%s'\n", name, current);
		abort();
	}
	if (d == EFA_ENV_REMOVED) {
		env_unset(e, name);
		return 0;
	}
	if (d != EFA_ENV_SET && d != EFA_ENV_FORCED && d != EFA_ENV_PREPENDED)
		return 0;
	return env_set(e, name, value);
}

static void env_clear(struct env *e)
{
	for (int i = 0; i < e->n; i++) {
		free(e->name[i]);
		free(e->value[i]);
	}
	e->n = 0;
}

static int env_copy(struct env *to, const struct env *from)
{
	to->n = 0;
	for (int i = 0; i < from->n; i++)
		if (env_set(to, from->name[i], from->value[i]))
			return -1;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* SLURM_EFA_SET's records, sorted and joined again. */
static char *sorted_records(const char *record)
{
	char *copy = strdup(record), **v = calloc(strlen(record) + 1, sizeof(*v)), *out, *save;
	size_t n = 0, used = 0;

	out = malloc(strlen(record) + 2);
	if (!copy || !v || !out)
		abort();
	for (char *r = strtok_r(copy, ",", &save); r; r = strtok_r(NULL, ",", &save))
		v[n++] = r;
	qsort(v, n, sizeof(*v), cmp_str);
	out[0] = '\0';
	for (size_t i = 0; i < n; i++)
		used += (size_t)sprintf(out + used, "%s%s", i ? "," : "", v[i]);
	free(copy);
	free(v);
	return out;
}

/* Whether every variable of a is in b with the same value. */
static bool within(const struct env *a, const struct env *b)
{
	for (int i = 0; i < a->n; i++) {
		int j = find(b, a->name[i]);
		bool same;

		if (j < 0)
			return false;
		if (!strcmp(a->name[i], EFA_ENV_OWNED_VAR)) {
			char *x = sorted_records(a->value[i]), *y = sorted_records(b->value[j]);

			same = !strcmp(x, y);
			free(x);
			free(y);
		} else {
			same = !strcmp(a->value[i], b->value[j]);
		}
		if (!same)
			return false;
	}
	return true;
}

static void dump(const char *how, const struct env *e)
{
	fprintf(stderr, "fuzz_apply: %s:\n", how);
	for (int i = 0; i < e->n; i++)
		fprintf(stderr, "  %s=%s\n", e->name[i], e->value[i]);
}

static bool same(const struct env *a, const struct env *b)
{
	return within(a, b) && within(b, a);
}

/* An empty root for the task's file system: no library directory holds
 * a job's own stack. Made once, removed at exit. */
static char root[] = "/tmp/efa-fuzz-apply.XXXXXX";
static struct efa_sysfs fs;

static void remove_root(void)
{
	efa_sysfs_close(&fs);
	rmdir(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct efa_env_entry plan_vars[] = {
		{ "NCCL_SOCKET_IFNAME", "^docker,lo,veth", "p.profile:1", false, false },
		{ "FI_PROVIDER", "efa", "p.profile:2", false, false },
		{ "NCCL_ALGO", "Ring", "p.profile:3", false, false },
		{ "NCCL_PROTO", NULL, "p.profile:4: ofi-nccl 1.5 is not >= 1.7", false, false },
		{ "FI_EFA_USE_DEVICE_RDMA", "1", "p.profile:5", false, false },
	};
	struct efa_env_entry task[] = {
		{ "CUDA_VISIBLE_DEVICES", "2,3", "binding", true, true },
		{ "FI_EFA_IFACE", "rdmap16s27,rdmap32s27", "binding", false, true },
		{ "RANK", "5", "launch", false, true },
		{ "LOCAL_RANK", "1", "launch", false, true },
		{ "WORLD_SIZE", "16", "launch", false, false },
		{ "MASTER_ADDR", "10.0.0.1", "launch", false, false },
		{ "SLURM_EFA_CHECKPOINT_DIR", "/fsx/ckpt", "checkpoint", true, false },
	};
	const size_t ntask = sizeof(task) / sizeof(task[0]), first_shared = 4;
	char *force[] = { "NCCL_ALGO", "MASTER_ADDR", NULL };
	struct efa_config cfg = { .force_env = force };
	struct efa_env_plan plan = { .profile = "p5", .v = plan_vars, .n = 5,
				     .libdirs = "/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib" };
	struct env start = { 0 }, alone = { 0 }, shared = { 0 }, whole = { 0 }, own = { 0 };
	char *s = fuzz_string(data, size), *line, *next;

	if (!ready) {
		if (!mkdtemp(root) || efa_sysfs_open(&fs, root))
			abort();
		atexit(remove_root);
		ready = true;
	}
	plan.task_fs = &fs;
	if (!s)
		return 0;
	next = strchr(s, '\n');
	if (next)
		*next++ = '\0';
	if (strcmp(s, "-") && env_set(&start, EFA_ENV_OWNED_VAR, s))
		goto out;
	for (line = next; line; line = next) {
		char *eq;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		eq = strchr(line, '=');
		if (!eq || eq == line)
			continue;
		*eq = '\0';
		if (env_set(&start, line, eq + 1))
			goto out;
	}
	if (env_copy(&alone, &start) || env_copy(&shared, &start) ||
	    efa_env_apply(&plan, task, ntask, &cfg, env_get, env_put, &alone) ||
	    efa_env_apply_shared(&plan, task + first_shared, ntask - first_shared, &cfg, env_get,
				 env_put, &shared) ||
	    env_copy(&whole, &shared) || env_copy(&own, &shared) ||
	    efa_env_apply(&plan, task, ntask, &cfg, env_get, env_put, &whole) ||
	    efa_env_apply_task(&plan, task, ntask, &cfg, env_get, env_put, &own))
		goto out;	/* out of room in this model: nothing to compare */
	if (!same(&alone, &whole) || !same(&alone, &own)) {
		dump("alone", &alone);
		dump("after the shared part, the whole apply", &whole);
		dump("after the shared part, the task's own", &own);
		abort();
	}
out:
	env_clear(&start);
	env_clear(&alone);
	env_clear(&shared);
	env_clear(&whole);
	env_clear(&own);
	free(s);
	return 0;
}
