/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The environment a step gets, applied to a task's: the user's values, the
 * owned-variables record, the library path, aws-ofi-nccl's own tuning, the
 * propagated memlock limit (src/common/env: apply.c, warnings.c,
 * memlock.c). Profiles and plans are test_profile's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/hash.h"
#include "common/base/strutil.h"
#include "common/config/efa_conf.h"
#include "common/env/env.h"
#include "common/env/explain.h"
#include "common/env/memlock.h"
#include "common/env/varnames.h"
#include "common/node/node.h"
#include "common/node/rdma.h"
#include "common/node/sysfs.h"
#include "common/node/stack.h"
#include "failalloc.h"
#include "tap.h"

static char dir[] = "/tmp/efa-env.XXXXXX";

/* A fake environment for efa_env_apply. */
struct fake_env {
	char names[16][64];
	char values[16][256];
	char decisions[16][16];
	int n;
};

/* The names fake_get was asked for, in turn. */
static char read_names[512];

static int fake_get(void *ctx, const char *name, char *buf, size_t size)
{
	struct fake_env *e = ctx;
	size_t used = strlen(read_names);

	snprintf(read_names + used, sizeof(read_names) - used, "%s%s", used ? "," : "", name);

	for (int i = 0; i < e->n; i++) {
		if (!strcmp(e->names[i], name))
			/* The contract: -1 when the value does not fit. */
			return snprintf(buf, size, "%s", e->values[i]) < (int)size ? 1 : -1;
	}
	return 0;
}

/* The puts told what the environment held, and those told wrong. */
static int told_current, told_wrong;

static int fake_put(void *ctx, const char *name, const char *value,
		    enum efa_env_decision d, const char *reason, const char *current)
{
	struct fake_env *e = ctx;
	int i;

	(void)reason;
	for (i = 0; i < e->n && strcmp(e->names[i], name); i++)
		;
	if (current) {
		told_current++;
		told_wrong += i == e->n || strcmp(e->values[i], current);
	}
	if (i == e->n) {
		e->n++;
		snprintf(e->names[i], sizeof(e->names[i]), "%s", name);
		e->values[i][0] = '\0';	/* "" here: not set */
	}
	if (d == EFA_ENV_REMOVED)
		e->values[i][0] = '\0';
	else if (d != EFA_ENV_SKIPPED && d != EFA_ENV_USER)
		snprintf(e->values[i], sizeof(e->values[i]), "%s", value);
	snprintf(e->decisions[i], sizeof(e->decisions[i]), "%s", efa_env_decision_name(d));
	return 0;
}

static const char *fake_value(struct fake_env *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->names[i], name))
			return e->values[i];
	return NULL;
}

static const char *fake_decision(struct fake_env *e, const char *name)
{
	for (int i = 0; i < e->n; i++)
		if (!strcmp(e->names[i], name))
			return e->decisions[i];
	return NULL;
}

static void test_apply(void)
{
	struct efa_env_entry entries[] = {
		{ "NCCL_SOCKET_IFNAME", "^docker,lo,veth", "p.profile:1", false, false },
		{ "FI_PROVIDER", NULL, "p.profile:2: ofi-nccl 1.16 is not <= 1.5.0", false, false },
		{ "NCCL_ALGO", "Ring", "p.profile:3", false, false },
		{ "FORCED_ONE", "site", "p.profile:4", false, false },
	};
	struct efa_env_plan plan = { .profile = "p5", .v = entries, .n = 4,
				     .libdirs = "/opt/amazon/efa/lib:/opt/ofi" };
	char *force[] = { "FORCED_ONE", NULL };
	struct efa_config cfg = { .force_env = force };
	struct fake_env env = { .n = 4 };

	strcpy(env.names[0], "NCCL_ALGO");
	strcpy(env.values[0], "Tree");
	strcpy(env.names[1], "FORCED_ONE");
	strcpy(env.values[1], "user");
	strcpy(env.names[2], "LD_LIBRARY_PATH");
	strcpy(env.values[2], "/opt/other-node/lib:/usr/local/lib:/opt/ofi");
	strcpy(env.names[3], "SLURM_EFA_LIBDIRS");
	strcpy(env.values[3], "/opt/other-node/lib");

	ok(efa_env_apply(&plan, NULL, 0, &cfg, fake_get, fake_put, &env) == 0, "plan applies");
	is_str(fake_value(&env, "NCCL_SOCKET_IFNAME"), "^docker,lo,veth", "unset variable is set");
	is_str(fake_decision(&env, "NCCL_SOCKET_IFNAME"), "set", "  decision set");
	is_str(fake_value(&env, "NCCL_ALGO"), "Tree", "the user's value wins");
	is_str(fake_decision(&env, "NCCL_ALGO"), "user", "  decision user");
	is_str(fake_value(&env, "FORCED_ONE"), "site", "ForceEnv= overrides the user");
	is_str(fake_decision(&env, "FORCED_ONE"), "forced", "  decision forced");
	is_str(fake_decision(&env, "FI_PROVIDER"), "skipped", "a skipped variable is reported");
	is_str(fake_value(&env, "FI_PROVIDER"), "", "  and not set");
	is_str(fake_value(&env, "LD_LIBRARY_PATH"), "/opt/amazon/efa/lib:/opt/ofi:/usr/local/lib",
	       "LD_LIBRARY_PATH: ours first, an earlier step's dirs and duplicates dropped, the user's kept");
	is_str(fake_value(&env, "SLURM_EFA_LIBDIRS"), "/opt/amazon/efa/lib:/opt/ofi", "what we added is recorded");
	is_str(fake_value(&env, "SLURM_EFA_PROFILE"), "p5", "SLURM_EFA_PROFILE set");

	has_str(fake_value(&env, "SLURM_EFA_SET"), "NCCL_SOCKET_IFNAME:", "SLURM_EFA_SET records what slurm-efa set");
	has_str(fake_value(&env, "SLURM_EFA_SET"), ",FORCED_ONE:", "  forced ones too");
	ok(!strstr(fake_value(&env, "SLURM_EFA_SET"), "NCCL_ALGO"), "  not the user's");
	ok(!strstr(fake_value(&env, "SLURM_EFA_SET"), "docker"), "  a digest of each value, not the value");

	/* A later step (another node, no binding) in that environment. */
	{
		struct efa_env_entry task[] = {
			{ "CUDA_VISIBLE_DEVICES", "2,3", "binding", true, false },
			{ "RANK", "5", "launch", false, false },
		};
		struct efa_env_plan next = { .profile = "p4d", .v = entries, .n = 3 };

		strcpy(env.names[env.n], "FI_EFA_IFACE");
		strcpy(env.values[env.n++], "rdmap16s27");
		strcpy(env.names[env.n], "RANK");
		strcpy(env.values[env.n++], "0");
		/* Entries without a digest, as an earlier release wrote them,
		 * count as slurm-efa's whatever the value. */
		for (int i = 0; i < env.n; i++)
			if (!strcmp(env.names[i], "SLURM_EFA_SET"))
				strcat(env.values[i], ",FI_EFA_IFACE,RANK");
		ok(efa_env_apply(&next, task, 2, NULL, fake_get, fake_put, &env) == 0, "a later step applies");
		is_str(fake_decision(&env, "RANK"), "set", "a value slurm-efa set earlier is not the user's");
		is_str(fake_value(&env, "RANK"), "5", "  and is replaced");
		is_str(fake_decision(&env, "FI_EFA_IFACE"), "removed",
		       "an earlier step's binding this step does not make is removed");
		is_str(fake_decision(&env, "FORCED_ONE"), "removed", "  as is a variable this plan lacks");
		is_str(fake_value(&env, "CUDA_VISIBLE_DEVICES"), "2,3", "Slurm's variables are set as bound");
		ok(!strstr(fake_value(&env, "SLURM_EFA_SET"), "CUDA_VISIBLE_DEVICES") &&
		   strstr(fake_value(&env, "SLURM_EFA_SET"), "RANK:"), "  but never recorded as slurm-efa's");
		is_str(fake_decision(&env, "NCCL_ALGO"), "user", "the user's own value still wins");
	}
	/* The job changes one variable slurm-efa set and unsets another
	 * between steps: the next step keeps both as the job left them. */
	{
		struct efa_env_entry plan_vars[] = {
			{ "NCCL_SOCKET_IFNAME", "^docker,lo,veth", "p.profile:1", false, false },
			{ "FI_PROVIDER", "efa", "p.profile:2", false, false },
			{ "FI_EFA_USE_DEVICE_RDMA", "1", "p.profile:3", false, false },
			{ "NCCL_TUNED", "1", "p.profile:4", false, false },
		};
		struct efa_env_plan step = { .profile = "p5", .v = plan_vars, .n = 4 };
		struct efa_env_plan later = { .profile = "p5", .v = plan_vars, .n = 3 };
		struct fake_env job = { 0 };
		char record[1024];

		efa_env_apply(&step, NULL, 0, NULL, fake_get, fake_put, &job);
		snprintf(record, sizeof(record), "%s", fake_value(&job, "SLURM_EFA_SET"));
		/* the batch script: export NCCL_SOCKET_IFNAME=ens5; unset FI_PROVIDER;
		 * export NCCL_TUNED=0 */
		job.n = 0;
		strcpy(job.names[job.n], "NCCL_SOCKET_IFNAME");
		strcpy(job.values[job.n++], "ens5");
		strcpy(job.names[job.n], "FI_EFA_USE_DEVICE_RDMA");
		strcpy(job.values[job.n++], "1");
		strcpy(job.names[job.n], "NCCL_TUNED");
		strcpy(job.values[job.n++], "0");
		strcpy(job.names[job.n], "SLURM_EFA_SET");
		strcpy(job.values[job.n++], record);
		ok(efa_env_apply(&later, NULL, 0, NULL, fake_get, fake_put, &job) == 0, "a step after the job changed its environment");
		is_str(fake_value(&job, "NCCL_SOCKET_IFNAME"), "ens5", "  a value the job changed is kept");
		is_str(fake_decision(&job, "NCCL_SOCKET_IFNAME"), "user", "  as the job's");
		is_str(fake_value(&job, "FI_PROVIDER"), "", "  a variable the job unset stays unset");
		is_str(fake_decision(&job, "FI_PROVIDER"), "user", "  as the job's choice");
		is_str(fake_decision(&job, "FI_EFA_USE_DEVICE_RDMA"), "set", "  an unchanged one is still slurm-efa's");
		is_str(fake_value(&job, "NCCL_TUNED"), "0", "  a changed one this step does not want is not removed");
		has_str(fake_value(&job, "SLURM_EFA_SET"), "FI_PROVIDER:", "  the unset one stays recorded for nested steps");
		ok(!strstr(fake_value(&job, "SLURM_EFA_SET"), "NCCL_SOCKET_IFNAME"), "  the changed one is no longer slurm-efa's");
	}
	/* A user who lists LD_PRELOAD and PATH in SLURM_EFA_SET cannot make
	 * slurm-efa remove them. */
	{
		struct efa_env_plan none = { .profile = "p5" };
		struct fake_env user = { .n = 3 };

		strcpy(user.names[0], "LD_PRELOAD");
		strcpy(user.values[0], "/home/u/mine.so");
		strcpy(user.names[1], "PATH");
		strcpy(user.values[1], "/usr/bin");
		strcpy(user.names[2], "SLURM_EFA_SET");
		strcpy(user.values[2], "LD_PRELOAD,PATH");
		efa_env_apply(&none, NULL, 0, NULL, fake_get, fake_put, &user);
		is_str(fake_value(&user, "LD_PRELOAD"), "/home/u/mine.so", "LD_PRELOAD listed in SLURM_EFA_SET is not removed");
		is_str(fake_value(&user, "PATH"), "/usr/bin", "  nor PATH");
	}

	ok(efa_env_denied("RDMAV_FORK_SAFE") && efa_env_denied("RDMAV_HUGEPAGES_SAFE") &&
	   efa_env_denied("FI_EFA_RX_IOV_LIMIT") && !efa_env_denied("FI_EFA_FORK_SAFE"),
	   "deny list: RDMAV_* and the EFA limits, not FI_EFA_FORK_SAFE");
}

/* A job that brings its own aws-ofi-nccl or libfabric keeps its path. */
static void setvar(struct fake_env *e, const char *name, const char *value)
{
	snprintf(e->names[e->n], sizeof(e->names[0]), "%s", name);
	snprintf(e->values[e->n++], sizeof(e->values[0]), "%s", value);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* SLURM_EFA_SET's records sorted: their order means nothing. */
static void sorted_records(const char *record, char *out, size_t size)
{
	char copy[256], *names[32], *save = NULL;
	size_t n = 0, used = 0;

	snprintf(copy, sizeof(copy), "%s", record);
	for (char *r = strtok_r(copy, ",", &save); r && n < 32; r = strtok_r(NULL, ",", &save))
		names[n++] = r;
	qsort(names, n, sizeof(names[0]), cmp_str);
	out[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%s", i ? "," : "", names[i]);
}

/* How many variables differ between two environments (one unset where the
 * other has "" does not), each named in a diagnostic. */
static int env_differences(struct fake_env *a, struct fake_env *b, const char *how)
{
	int differ = 0;

	for (int i = 0; i < a->n; i++) {
		const char *other = fake_value(b, a->names[i]);
		char mine[256], theirs[256];

		snprintf(mine, sizeof(mine), "%s", a->values[i]);
		snprintf(theirs, sizeof(theirs), "%s", other ? other : "");
		if (!strcmp(a->names[i], "SLURM_EFA_SET")) {
			sorted_records(a->values[i], mine, sizeof(mine));
			sorted_records(other ? other : "", theirs, sizeof(theirs));
		}
		if (strcmp(mine, theirs)) {
			printf("# %s: %s alone, %s %s\n", a->names[i], a->values[i],
			       other ? other : "(unset)", how);
			differ++;
		}
	}
	for (int i = 0; i < b->n; i++)
		if (!fake_value(a, b->names[i]) && b->values[i][0]) {
			printf("# %s: unset alone, %s %s\n", b->names[i], b->values[i], how);
			differ++;
		}
	return differ;
}

/* The environment a task ends with is the same whether the step's shared
 * part was applied first (efa_env_apply_shared, before the tasks fork) or
 * not, and whether the task then applies all of its entries
 * (efa_env_apply) or its own (efa_env_apply_task); each starts from
 * start. The last nshared of the task's entries are the same for every
 * task, and in the shared part too. Returns the number of variables that
 * differ, each named in a diagnostic. */
static int differences(const struct fake_env *start, const struct efa_env_plan *plan,
		       const struct efa_env_entry *task, size_t ntask, size_t nshared,
		       const struct efa_config *cfg, struct fake_env *alone)
{
	struct fake_env shared = *start, own;

	*alone = *start;
	if (efa_env_apply(plan, task, ntask, cfg, fake_get, fake_put, alone) ||
	    efa_env_apply_shared(plan, task + ntask - nshared, nshared, cfg, fake_get, fake_put,
				 &shared))
		return -1;
	own = shared;
	if (efa_env_apply(plan, task, ntask, cfg, fake_get, fake_put, &shared) ||
	    efa_env_apply_task(plan, task, ntask, cfg, fake_get, fake_put, &own))
		return -1;
	return env_differences(alone, &shared, "after the shared part") +
	       env_differences(alone, &own, "after the shared part, the task's own");
}

static void test_apply_shared(void)
{
	struct efa_env_entry vars[] = {
		{ "NCCL_SOCKET_IFNAME", "^docker,lo,veth", "p.profile:1", false, false },
		{ "FI_PROVIDER", "efa", "p.profile:2", false, false },
		{ "NCCL_ALGO", "Ring", "p.profile:3", false, false },
		{ "FORCED_ONE", "site", "p.profile:4", false, false },
	};
	struct efa_env_entry task[] = {
		{ "CUDA_VISIBLE_DEVICES", "2,3", "binding", true, true },
		{ "FI_EFA_IFACE", "rdmap16s27", "binding", false, true },
		{ "RANK", "5", "launch", false, true },
		{ "WORLD_SIZE", "16", "launch", false, false },
	};
	struct efa_env_plan plan = { .profile = "p5", .v = vars, .n = 4,
				     .libdirs = "/opt/amazon/efa/lib:/opt/ofi" };
	struct efa_env_plan fewer = { .profile = "p4d", .v = vars, .n = 2 };
	char *force[] = { "FORCED_ONE", NULL };
	struct efa_config cfg = { .force_env = force };
	struct fake_env start = { 0 }, alone, earlier;

	is_int(differences(&start, &plan, task, 4, 1, &cfg, &alone), 0,
	       "shared part first or not: a task's environment is the same (nothing set before)");
	is_str(fake_value(&alone, "RANK"), "5", "  (the task's own variables set)");

	/* The job's values, an earlier step's records (a binding and a rank
	 * among them), one the job changed and one it unset since. */
	start.n = 0;
	setvar(&start, "NCCL_ALGO", "Tree");
	setvar(&start, "FORCED_ONE", "user");
	setvar(&start, "LD_LIBRARY_PATH", "/opt/other-node/lib:/usr/local/lib:/opt/ofi");
	setvar(&start, "SLURM_EFA_LIBDIRS", "/opt/other-node/lib");
	is_int(differences(&start, &plan, task, 4, 1, &cfg, &earlier), 0,
	       "  with the job's own values and an earlier step's libraries");
	start = earlier;	/* what a first step left, for a step it starts */
	for (int i = 0; i < start.n; i++)
		if (!strcmp(start.names[i], "RANK"))
			strcpy(start.names[i], "UNSET_BY_JOB");	/* the job unset RANK */
		else if (!strcmp(start.names[i], "NCCL_SOCKET_IFNAME"))
			strcpy(start.values[i], "ens5");		/* and changed this */
	is_int(differences(&start, &fewer, task, 4, 1, &cfg, &alone), 0,
	       "  a later step with fewer variables, after the job changed and unset some");
	ok(!strcmp(fake_value(&alone, "RANK"), "") && !strcmp(fake_decision(&alone, "RANK"), "user"),
	   "  (the rank the job unset stays unset)");
	is_str(fake_value(&alone, "NCCL_SOCKET_IFNAME"), "ens5", "  (the job's change is kept)");
	is_str(fake_value(&alone, "FORCED_ONE"), "", "  (what the plan no longer sets is removed)");
	is_int(differences(&start, NULL, task + 2, 2, 1, &cfg, &alone), 0,
	       "  a step without EFA, its launch variables only");
	is_int(differences(&earlier, &plan, task + 2, 2, 1, &cfg, &alone), 0,
	       "  a later step without a binding");
	is_str(fake_value(&alone, "FI_EFA_IFACE"), "", "  (the earlier step's binding is removed)");

	/* A record the job wrote may name a variable twice: the apply that
	 * left the job's value (the first record's digest is not of it) must
	 * not then remove it as an earlier step's (the second's is). */
	{
		struct fake_env env = { 0 };
		char record[128];

		snprintf(record, sizeof(record), "FI_PROVIDER:00000000,FI_PROVIDER:%08x",
			 efa_fnv1a32_str("efa"));
		setvar(&env, "FI_PROVIDER", "efa");
		setvar(&env, "SLURM_EFA_SET", record);
		ok(!efa_env_apply(&plan, task, 4, &cfg, fake_get, fake_put, &env),
		   "a record naming a variable twice");
		is_str(fake_value(&env, "FI_PROVIDER"), "efa", "  the job's value kept, not removed");
	}

	/* The same for a variable no entry names (an earlier step's): the
	 * first well-formed record counts, not a later one that would make
	 * it ours, whether or not the shared part went first. Found by
	 * fuzz_apply: a task after the shared part kept the job's value,
	 * one applying the whole removed it. */
	{
		struct fake_env env = { 0 };
		char record[128];

		snprintf(record, sizeof(record), "OLD_ONE:x,OLD_ONE:00000000,OLD_ONE:%08x,OLD_ONE",
			 efa_fnv1a32_str("job"));
		setvar(&env, "OLD_ONE", "job");
		setvar(&env, "SLURM_EFA_SET", record);
		is_int(differences(&env, &plan, task, 4, 1, &cfg, &alone), 0,
		       "an earlier step's variable recorded twice: shared part first or not, the same");
		is_str(fake_value(&alone, "OLD_ONE"), "job", "  the job's value kept, not removed");
		env.n = 0;
		setvar(&env, "OLD_ONE", "job");
		setvar(&env, "SLURM_EFA_SET", "OLD_ONE:x,OLD_ONE,OLD_ONE:00000000");
		is_int(differences(&env, &plan, task, 4, 1, &cfg, &alone), 0,
		       "  the same when its first well-formed record holds no digest");
		is_str(fake_value(&alone, "OLD_ONE"), "", "  (then it is an earlier step's: removed)");
	}

	/* After the shared part a task reads the record, its own variables
	 * and those ForceEnv= lists, nothing else; a forced variable changed
	 * since (by another plugin) is forced again, as by the whole apply. */
	{
		struct fake_env env = { 0 };

		require(ok(!efa_env_apply_shared(&plan, task + 3, 1, &cfg, fake_get, fake_put, &env),
			   "the shared part applied"));
		for (int i = 0; i < env.n; i++)
			if (!strcmp(env.names[i], "FORCED_ONE"))
				strcpy(env.values[i], "another plugin's");
		read_names[0] = '\0';
		ok(!efa_env_apply_task(&plan, task, 4, &cfg, fake_get, fake_put, &env),
		   "a task's own part applied");
		is_str(read_names, "SLURM_EFA_SET,FORCED_ONE,FI_EFA_IFACE,RANK",
		       "  it read the record, the forced variable and its own");
		is_str(fake_value(&env, "FORCED_ONE"), "site", "  the forced variable forced again");
		is_str(fake_value(&env, "RANK"), "5", "  its rank set");
		is_str(fake_value(&env, "NCCL_ALGO"), "Ring", "  the shared part's kept");
	}
}

static void test_own_libraries(void)
{
	struct efa_env_plan plan = { .profile = "p5", .libdirs = "/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib" };
	char conda[120], container[120], path[200], value[256];
	struct fake_env env = { .n = 1 };
	FILE *f;

	snprintf(conda, sizeof(conda), "%s/conda-lib", dir);
	snprintf(container, sizeof(container), "%s/container-lib", dir);
	require(ok(!mkdir(conda, 0755) && !mkdir(container, 0755), "library directories made"));
	snprintf(path, sizeof(path), "%s/libnccl-net-ofi.so", conda);
	require(ok((f = fopen(path, "w")) != NULL, "a job's own aws-ofi-nccl"));
	fclose(f);
	strcpy(env.names[0], "LD_LIBRARY_PATH");
	snprintf(env.values[0], sizeof(env.values[0]), "/usr/local/lib:%s", conda);
	snprintf(value, sizeof(value), "%s", env.values[0]);
	ok(efa_env_apply(&plan, NULL, 0, NULL, fake_get, fake_put, &env) == 0, "a job with its own aws-ofi-nccl");
	is_str(fake_value(&env, "LD_LIBRARY_PATH"), value, "  keeps its LD_LIBRARY_PATH as it is");
	is_str(fake_decision(&env, "LD_LIBRARY_PATH"), "user", "  as the job's");
	is_str(fake_value(&env, "SLURM_EFA_LIBDIRS"), "", "  and SLURM_EFA_LIBDIRS says nothing was added");

	/* An earlier step put the node's first; this job has its own libfabric. */
	snprintf(path, sizeof(path), "%s/libfabric.so.1", container);
	require(ok((f = fopen(path, "w")) != NULL, "a container's own libfabric"));
	fclose(f);
	env.n = 2;
	snprintf(env.values[0], sizeof(env.values[0]), "/opt/amazon/efa/lib:%s", container);
	strcpy(env.names[1], "SLURM_EFA_LIBDIRS");
	strcpy(env.values[1], "/opt/amazon/efa/lib");
	ok(efa_env_apply(&plan, NULL, 0, NULL, fake_get, fake_put, &env) == 0, "a later step of a job with its own libfabric");
	is_str(fake_value(&env, "LD_LIBRARY_PATH"), container, "  loses what the earlier step put first");

	/* Without its own, the node's go first. */
	env.n = 1;
	strcpy(env.values[0], "/usr/local/lib");
	efa_env_apply(&plan, NULL, 0, NULL, fake_get, fake_put, &env);
	is_str(fake_value(&env, "LD_LIBRARY_PATH"), "/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib:/usr/local/lib",
	       "a job without its own gets the node's libraries first");
}

static void test_warnings(void)
{
	struct efa_env_entry entries[] = {
		{ "NCCL_PROTO", "simple", "efa-common.profile:23, ofi-nccl 1.5.0 is <= 1.5.0", false, false },
		{ "NCCL_NVLS_CHUNKSIZE", "131072", "site.profile:4", false, false },
		{ "FI_PROVIDER", "efa", "efa-common.profile:22", false, false },
		{ "NCCL_ALGO", NULL, "site.profile:5: ofi-nccl 1.16.3 is not < 1.7", false, false },
	};
	struct efa_env_plan plan = { .profile = "site", .v = entries, .n = 4 };
	struct efa_node node = { .stack = { .ofi_nccl = "1.5.0" } };
	char **w = NULL;

	ok(efa_env_plan_warnings(&plan, NULL, &node, &w) == 0 && w && !w[0],
	   "aws-ofi-nccl 1.5.0 tunes nothing: no warning for NCCL_PROTO");
	efa_strv_free(w);
	node.stack.ofi_nccl = "1.16.3";
	require(ok(efa_env_plan_warnings(&plan, NULL, &node, &w) == 0 && w, "warnings with aws-ofi-nccl 1.16.3"));
	is_str(w[0], "efa-common.profile:23 sets NCCL_PROTO, which aws-ofi-nccl tunes per platform from 1.6.0 on: it overrides the plugin's choice for every job; remove it unless measured on this platform",
	       "  a variable the plugin tunes, with where it was set and the release that tunes it");
	has_str(w[1], "site.profile:4 sets NCCL_NVLS_CHUNKSIZE", "  NCCL_NVLS* too");
	ok(w[1] && !w[2], "  not FI_PROVIDER, nor a line whose condition does not hold");
	efa_strv_free(w);
	node.stack.ofi_nccl = NULL;
	require(ok(efa_env_plan_warnings(&plan, NULL, &node, &w) == 0 && w, "warnings with aws-ofi-nccl unknown"));
	has_str(w[0], "from 1.6.0 on (this node's is unknown)", "  an unknown version warns, and says so");
	efa_strv_free(w);
}

/*
 * Each variable aws-ofi-nccl tunes, from the release that first sets it
 * (its tags: src/nccl_ofi_net.c, src/platform-aws.c[pp], src/tuner/): a
 * site profile and ForceEnv= setting it are warned about on the node's
 * plugin from that release on, not before.
 */
static void test_warning_boundaries(void)
{
	static const struct {
		const char *name, *before, *since;
	} vars[] = {
		{ "NCCL_TOPO_FILE", "1.1.0", "1.1.1" },
		{ "NCCL_PROTO", "1.5.0", "1.6.0" },
		{ "NCCL_ALGO", "1.7.4", "1.8.0" },
		{ "NCCL_NET_FORCE_FLUSH", "1.7.4", "1.8.0" },
		{ "NCCL_NVLSTREE_MAX_CHUNKSIZE", "1.7.4", "1.8.0" },
		{ "NCCL_NVLS_CHUNKSIZE", "1.8.1", "1.9.0" },
		{ "NCCL_BUFFSIZE", "1.15.0", "1.16.0" },
		{ "NCCL_P2P_NET_CHUNKSIZE", "1.15.0", "1.16.0" },
		{ "NCCL_TUNER_PLUGIN", "1.15.0", "1.16.0" },
		{ "NCCL_NETDEVS_POLICY", "1.16.3", "1.17.0" },
		{ "NCCL_DEBUG", NULL, NULL },
		{ "FI_EFA_USE_DEVICE_RDMA", NULL, NULL },
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *versions[] = { vars[i].before, vars[i].since, "1.21.1" };
		struct efa_env_entry e = { (char *)vars[i].name, "1", "site.profile:2", false, false };
		struct efa_env_plan plan = { .profile = "site", .v = &e, .n = 1 };
		char *force[] = { (char *)vars[i].name, NULL };
		struct efa_config cfg = { .force_env = force };

		for (size_t k = 0; k < 3; k++) {
			struct efa_node node = { .stack = { .ofi_nccl = (char *)versions[k] } };
			bool want = vars[i].since && k > 0;
			char **w = NULL;

			if (!versions[k])
				continue;
			require(ok(efa_env_plan_warnings(&plan, &cfg, &node, &w) == 0 && w,
				   "%s with aws-ofi-nccl %s", vars[i].name, versions[k]));
			ok(want ? w[0] && w[1] && !w[2] : !w[0], "  %s", want ? "warned, for the profile and ForceEnv=" :
			   "no warning: this plugin does not tune it");
			if (want)
				has_str(w[0], vars[i].since, "  naming %s", vars[i].since);
			efa_strv_free(w);
		}
	}
}

/* A propagated RLIMIT_MEMLOCK below the task's own is refused, never one
 * that is not below it. */
static void test_memlock(void)
{
	static const struct {
		const char *value;
		rlim_t current;
		bool refuse;
	} rows[] = {
		{ "65536", RLIM_INFINITY, true },
		{ "U65536", RLIM_INFINITY, true },		/* srun --propagate */
		{ "65536", 8388608, true },
		{ "8388608", 8388608, false },
		{ "18446744073709551615", RLIM_INFINITY, false },	/* unlimited */
		{ "17179869184", 8388608, false },
		{ "64k", RLIM_INFINITY, false },		/* Slurm refuses it itself */
		{ "", RLIM_INFINITY, false },
		{ NULL, RLIM_INFINITY, false },
	};
	char msg[1024];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ok(efa_memlock_refuse(rows[i].value, rows[i].current, msg, sizeof(msg)) == rows[i].refuse,
		   "memlock %s against %llu: %s", rows[i].value ? rows[i].value : "(unset)",
		   (unsigned long long)rows[i].current, rows[i].refuse ? "not applied" : "left to Slurm");
	efa_memlock_refuse("65536", RLIM_INFINITY, msg, sizeof(msg));
	has_str(msg, "locked-memory limit (64 KiB), below the unlimited EFA tasks get here", "  the message names both");
	has_str(msg, "PropagateResourceLimitsExcept=MEMLOCK", "  and the slurm.conf fix");
}

struct long_env {
	char *ld;
	char *prepended;
};

static int long_get(void *ctx, const char *name, char *buf, size_t size)
{
	struct long_env *e = ctx;

	if (strcmp(name, EFA_ENV_LIBPATH_VAR))
		return 0;
	if (strlen(e->ld) >= size)
		return -1;
	strcpy(buf, e->ld);
	return 1;
}

static int long_put(void *ctx, const char *name, const char *value,
		    enum efa_env_decision decision, const char *reason, const char *current)
{
	struct long_env *e = ctx;

	(void)reason;
	(void)current;
	if (!strcmp(name, EFA_ENV_LIBPATH_VAR) && decision == EFA_ENV_PREPENDED) {
		free(e->prepended);
		e->prepended = strdup(value);
	}
	return 0;
}

static void test_long_library_path(void)
{
	struct efa_env_plan plan = { .libdirs = (char *)"/opt/amazon/efa/lib" };
	struct long_env e = { 0 };
	size_t sizes[] = { 12 * 1024, 64 * 1024, 3 * 1024 * 1024, 5 * 1024 * 1024 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t len = 0;

		e.ld = malloc(sizes[i] + 32);
		require(ok(e.ld != NULL, "a %zu-byte path", sizes[i]));
		for (size_t k = 0; len < sizes[i]; k++)
			len += (size_t)sprintf(e.ld + len, "%s/opt/lib%07zu", k ? ":" : "", k);
		ok(efa_env_apply(&plan, NULL, 0, NULL, long_get, long_put, &e) == 0, "  applied");
		if (sizes[i] < 4 * 1024 * 1024)
			ok(e.prepended && !strncmp(e.prepended, "/opt/amazon/efa/lib:", 20) &&
			   !strcmp(e.prepended + 20, e.ld),
			   "  a %zu KiB LD_LIBRARY_PATH is read whole: the stack's directory first, all of it after",
			   sizes[i] / 1024);
		else
			ok(!e.prepended, "  one past 4 MiB is left as it is, never taken for unset");
		free(e.ld);
		free(e.prepended);
		e.prepended = NULL;
	}
}

/*
 * Values of any length up to the bound are read whole, whatever buffer an
 * apply starts with: a job's own value, and slurm-efa's record of what an
 * earlier step set when it names many variables.
 */
struct sized_env {
	const char *names[4];
	char *values[4];
	char decision[64];	/* NCCL_ALGO's */
	char *kept;		/* the value put for NCCL_ALGO */
	char *record;		/* the SLURM_EFA_SET put */
	char socket_decision[16];
};

static int sized_get(void *ctx, const char *name, char *buf, size_t size)
{
	struct sized_env *e = ctx;

	for (int i = 0; i < 4; i++)
		if (e->names[i] && !strcmp(e->names[i], name)) {
			if (strlen(e->values[i]) >= size)
				return -1;
			strcpy(buf, e->values[i]);
			return 1;
		}
	return 0;
}

static int sized_put(void *ctx, const char *name, const char *value,
		     enum efa_env_decision d, const char *reason, const char *current)
{
	struct sized_env *e = ctx;

	(void)reason;
	(void)current;
	if (!strcmp(name, "NCCL_ALGO")) {
		snprintf(e->decision, sizeof(e->decision), "%s", efa_env_decision_name(d));
		free(e->kept);
		e->kept = value ? strdup(value) : NULL;
	} else if (!strcmp(name, "NCCL_SOCKET_IFNAME")) {
		snprintf(e->socket_decision, sizeof(e->socket_decision), "%s",
			 efa_env_decision_name(d));
	} else if (!strcmp(name, EFA_ENV_OWNED_VAR)) {
		free(e->record);
		e->record = strdup(value);
	}
	return 0;
}

static void test_value_lengths(void)
{
	struct efa_env_entry entries[] = {
		{ "NCCL_ALGO", "Ring", "p.profile:1", false, false },
		{ "NCCL_SOCKET_IFNAME", "^docker,lo,veth", "p.profile:2", false, false },
	};
	struct efa_env_plan plan = { .profile = "p5", .v = entries, .n = 2 };
	size_t lengths[] = { 255, 256, 1000, 4096, 8191, 8192, 20000 };
	char record[8192 + 64];

	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		size_t len = lengths[i], used = 0;
		struct sized_env e = { .names = { "NCCL_ALGO", EFA_ENV_OWNED_VAR, "NCCL_SOCKET_IFNAME" } };

		e.values[0] = malloc(len + 1);
		require(ok(e.values[0] != NULL, "a %zu-byte value", len));
		memset(e.values[0], 'a', len);
		e.values[0][len] = '\0';
		/* An earlier step's record of many variables, NCCL_SOCKET_IFNAME
		 * (with its value's digest) last, about as long as the value. */
		while (used + 32 < len && used + 64 < sizeof(record) - 64)
			used += (size_t)sprintf(record + used, "OLD_VARIABLE_%05zu:0123abcd,", used);
		sprintf(record + used, "NCCL_SOCKET_IFNAME:%08x", efa_fnv1a32_str("eth0"));
		e.values[1] = record;
		e.values[2] = (char *)"eth0";
		ok(efa_env_apply(&plan, NULL, 0, NULL, sized_get, sized_put, &e) == 0, "  applied");
		is_str(e.decision, "user", "  the job's NCCL_ALGO of %zu bytes is the job's", len);
		if (len < 8192)
			ok(e.kept && strlen(e.kept) == len, "  and read whole");
		if (strlen(record) < 8192)
			is_str(e.socket_decision, "set",
			       "  a %zu-byte record of what slurm-efa set is read whole: its last variable is replaced",
			       strlen(record));
		else
			is_str(e.socket_decision, "user",
			       "  a record of 8 KiB or more is no record of slurm-efa's: the value stays");
		ok(e.record && strstr(e.record, "NCCL_SOCKET_IFNAME:") != NULL,
		   "  the new record names what this step set");
		free(e.values[0]);
		free(e.kept);
		free(e.record);
	}
}

/* The NCCL_NET values that name aws-ofi-nccl's network, as NCCL compares. */
static void test_nccl_net_names(void)
{
	ok(efa_env_nccl_net_is_efa("AWS Libfabric"), "NCCL_NET=\"AWS Libfabric\" is aws-ofi-nccl's network");
	ok(efa_env_nccl_net_is_efa("libfabric"), "  so is libfabric, its name from 1.13, in any case");
	ok(!efa_env_nccl_net_is_efa("Socket"), "  Socket is not");
	ok(!efa_env_nccl_net_is_efa("IB"), "  nor IB");
	ok(!efa_env_nccl_net_is_efa("AWS Libfabric2"), "  nor a longer name");
}

/* Whether two fake environments hold the same variables, values and
 * decisions (in the same order: put is told them in the same order). */
static bool same_env(const struct fake_env *a, const struct fake_env *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->names[i], b->names[i]) || strcmp(a->values[i], b->values[i]) ||
		    strcmp(a->decisions[i], b->decisions[i]))
			return false;
	return true;
}

/* One apply from start, and the environment the first one left. */
struct apply_run {
	const struct fake_env *start;
	const struct efa_env_plan *plan;
	const struct efa_env_entry *task;
	size_t ntask;
	struct fake_env whole;
};

static enum failalloc_result apply_once(void *ctx, long n)
{
	struct apply_run *r = ctx;
	struct fake_env env = *r->start;

	if (efa_env_apply(r->plan, r->task, r->ntask, NULL, fake_get, fake_put, &env))
		return FAILALLOC_FAILED;
	if (!n)
		r->whole = env;
	return same_env(&env, &r->whole) ? FAILALLOC_SAME : FAILALLOC_OTHER;
}

/*
 * An apply from start with its n-th allocation failing, for every n it
 * makes: it fails (-1), or it succeeds with what it does without failures;
 * never a success that decided otherwise (the job's libraries taken for
 * absent, a record cut short), and nothing left allocated either way.
 */
static void apply_failing(const char *what, const struct fake_env *start,
			  const struct efa_env_plan *plan, const struct efa_env_entry *task,
			  size_t ntask)
{
	struct apply_run r = { .start = start, .plan = plan, .task = task, .ntask = ntask };
	struct failalloc_tally t;
	int rc = failalloc_each(apply_once, &r, &t);

	if (!ok(!rc, "%s: applied with %ld allocations", what, t.total))
		return;
	is_int(t.failed, t.total, "  each of the %ld failures failed the apply", t.total);
	is_int(t.other, 0, "  none succeeded with other decisions");
	is_int(t.leaked, 0, "  none left memory allocated");
}

static void test_allocation_failures(void)
{
	struct efa_env_entry vars[] = {
		{ "NCCL_SOCKET_IFNAME", "^docker,lo,veth", "p.profile:1", false, false },
		{ "FI_PROVIDER", "efa", "p.profile:2", false, false },
		{ "NCCL_ALGO", "Ring", "p.profile:3", false, false },
	};
	struct efa_env_entry task[] = {
		{ "CUDA_VISIBLE_DEVICES", "2,3", "binding", true, false },
		{ "FI_EFA_IFACE", "rdmap16s27", "binding", false, false },
	};
	struct efa_env_plan plan = { .profile = "p5", .v = vars, .n = 3,
				     .libdirs = "/opt/amazon/efa/lib:/opt/ofi" };
	struct fake_env start = { 0 };
	char digest_of_stale[64], conda[120];

	/* The job's value, an earlier step's libraries and a record of one
	 * variable this step does not set (removed as stale). */
	setvar(&start, "NCCL_ALGO", "Tree");
	setvar(&start, "LD_LIBRARY_PATH", "/opt/other-node/lib:/usr/local/lib:/opt/ofi");
	setvar(&start, "SLURM_EFA_LIBDIRS", "/opt/other-node/lib");
	setvar(&start, "STALE_ONE", "old");
	snprintf(digest_of_stale, sizeof(digest_of_stale), "STALE_ONE:%08x,NCCL_SOCKET_IFNAME",
		 efa_fnv1a32_str("old"));
	setvar(&start, "SLURM_EFA_SET", digest_of_stale);
	apply_failing("a task's apply after an earlier step", &start, &plan, task, 2);

	/* A job with its own aws-ofi-nccl (test_own_libraries made it). */
	snprintf(conda, sizeof(conda), "/usr/local/lib:%s/conda-lib", dir);
	start.n = 0;
	setvar(&start, "LD_LIBRARY_PATH", conda);
	apply_failing("a task's apply that finds the job's own libraries", &start, &plan, task, 2);
}


/* The job's environment of explain's tests: no variable of its own. */
static int empty_get(void *ctx, const char *name, char *buf, size_t size)
{
	(void)ctx;
	(void)name;
	(void)buf;
	(void)size;
	return 0;
}

struct explain_run {
	const struct efa_env_question *q;
	struct efa_env_report whole;
	bool kept;
};

static const struct efa_env_row *report_row(const struct efa_env_report *r, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].name, name))
			return &r->rows[i];
	return NULL;
}

static bool same_report(const struct efa_env_report *a, const struct efa_env_report *b)
{
	if (strcmp(a->problem, b->problem) || strcmp(a->missing, b->missing) ||
	    !a->plan != !b->plan || a->nrows != b->nrows)
		return false;
	for (size_t i = 0; i < a->nrows; i++) {
		const struct efa_env_row *x = &a->rows[i], *y = &b->rows[i];

		if (strcmp(x->name, y->name) || x->decision != y->decision ||
		    !x->value != !y->value || (x->value && strcmp(x->value, y->value)))
			return false;
	}
	return true;
}

static enum failalloc_result explain_once(void *ctx, long n)
{
	struct explain_run *r = ctx;
	struct efa_env_report report;
	struct efa_error err;
	enum failalloc_result result;

	if (efa_env_explain(r->q, &report, &err)) {
		efa_env_report_clear(&report);
		return FAILALLOC_FAILED;
	}
	if (!n) {
		r->whole = report;
		r->kept = true;
		return FAILALLOC_SAME;
	}
	result = same_report(&report, &r->whole) ? FAILALLOC_SAME : FAILALLOC_OTHER;
	efa_env_report_clear(&report);
	return result;
}

/*
 * What `slurm-efa env` and the plugin agree on (explain.c), on fixtures:
 * a p5's variables and their decisions, a node without EFA, a p4d that
 * lost one device (usable, but it needs repair); and, with each of its
 * allocations failing, an explain that fails whole and frees what it took.
 */
static void test_explain(void)
{
	static const char *const fixtures[] = { "p5.48xlarge", "cpu-only", "p4d-3nics" };
	struct efa_config cfg = { .profile_dir = SRCDIR "/etc/profiles" };
	struct efa_sysfs task_fs;
	struct efa_env_report r[3];
	struct efa_error err;
	char root[4096];

	if (!ok(!efa_sysfs_open(&task_fs, "/"), "explain: the task's / opens"))
		return;
	for (size_t i = 0; i < 3; i++) {
		struct efa_node *node = NULL;
		struct efa_env_question q = { .root = root, .cfg = &cfg, .fs = &task_fs,
					      .required = true, .get = empty_get };

		memset(&r[i], 0, sizeof(r[i]));
		snprintf(root, sizeof(root), "%s/%s", FIXTURES, fixtures[i]);
		if (!ok(!efa_node_discover(root, NULL, &node, &err), "explain: %s is read", fixtures[i]))
			continue;
		q.node = node;
		ok(!efa_env_explain(&q, &r[i], &err), "  explained");
		if (i == 0) {
			struct explain_run run = { .q = &q };
			struct failalloc_tally t;
			int rc = failalloc_each(explain_once, &run, &t);

			if (ok(!rc, "  explained again with %ld allocations", t.total)) {
				is_int(t.failed, t.total, "  each of the %ld failures failed it", t.total);
				is_int(t.other, 0, "  none succeeded with another report");
				is_int(t.leaked, 0, "  none left memory allocated");
			}
			if (run.kept)
				efa_env_report_clear(&run.whole);
		}
		efa_node_free(node);
	}
	is_str(r[0].problem, "", "a p5: EFA usable");
	is_str(r[0].missing, "", "  nothing missing");
	is_str(r[0].plan ? r[0].plan->profile : "", "p5", "  profile p5");
	is_str(report_row(&r[0], "NCCL_SOCKET_IFNAME") ?
	       report_row(&r[0], "NCCL_SOCKET_IFNAME")->value : "", "^docker,lo,veth",
	       "  its profile's NCCL_SOCKET_IFNAME");
	is_str(report_row(&r[0], "NCCL_NET") ? report_row(&r[0], "NCCL_NET")->value : "",
	       EFA_ENV_NCCL_NET, "  NCCL_NET pinned (--efa=required on NVIDIA GPUs)");
	is_str(report_row(&r[0], EFA_ENV_PROFILE_VAR) ?
	       report_row(&r[0], EFA_ENV_PROFILE_VAR)->value : "", "p5", "  SLURM_EFA_PROFILE");
	ok(r[1].problem[0] && !r[1].plan && !r[1].nrows,
	   "a node without EFA: the problem, no plan, no variables (%s)", r[1].problem);
	ok(!strncmp(r[2].missing, "3 of the 4 EFA devices", 22) && !r[2].problem[0] && r[2].plan,
	   "a p4d with 3 of its 4 devices needs repair and keeps its plan (%s)", r[2].missing);
	for (size_t i = 0; i < 3; i++)
		efa_env_report_clear(&r[i]);
	efa_sysfs_close(&task_fs);
}

int main(void)
{
	char cmd[64];

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	test_apply();
	test_apply_shared();
	test_own_libraries();
	test_allocation_failures();
	test_long_library_path();
	test_value_lengths();
	test_warnings();
	test_warning_boundaries();
	test_memlock();
	test_nccl_net_names();
	test_explain();
	ok(told_current > 0, "%d decisions were told the value the environment held", told_current);
	is_int(told_wrong, 0, "  and each was told it right (a put leaves such a value unsearched)");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
	return done_testing();
}
