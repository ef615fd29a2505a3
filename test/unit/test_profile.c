/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/env/env.h"
#include "common/env/memlock.h"
#include "common/env/profile.h"
#include "common/config/efa_conf.h"
#include "common/node/rdma.h"
#include "common/node/stack.h"
#include "common/base/strutil.h"
#include "tap.h"

static void profile_rejects(const char *text, const char *want)
{
	struct efa_profile p;
	struct efa_error err = { "" };
	int rc = efa_profile_parse(text, strlen(text), "site", &p, &err);

	ok(rc == -1, "profile rejected: %s", want);
	has_str(err.msg, want, "  message");
	if (!rc)	/* wrongly accepted */
		efa_profile_clear(&p);
}

static void test_parse_errors(void)
{
	profile_rejects("Match=p5.48xlarge\nEnv=RDMAV_FORK_SAFE=1\n",
			"site.profile:2: RDMAV_FORK_SAFE must never be set");
	profile_rejects("Env=FI_EFA_MTU_SIZE=8000\n", "FI_EFA_MTU_SIZE must never be set");
	profile_rejects("Env=FI_EFA_TX_IOV_LIMIT=1\n", "FI_EFA_TX_IOV_LIMIT must never be set");
	profile_rejects("Env=LD_LIBRARY_PATH=/x\n", "LD_LIBRARY_PATH cannot be set in a profile");
	profile_rejects("Env=LD_PRELOAD=/tmp/x.so\n", "LD_PRELOAD cannot be set in a profile");
	profile_rejects("Env=SLURM_EFA_PROFILE=x\n", "SLURM_EFA_PROFILE cannot be set");
	profile_rejects("Env=1BAD=x\n", "site.profile:1: Env=1BAD=x: use Env=NAME=VALUE");
	profile_rejects("Env=NOVALUE\n", "use Env=NAME=VALUE");
	profile_rejects("Env=A=1 If=libfabric~1.18\n", "bad condition 'libfabric~1.18'");
	profile_rejects("Env=A=1 If=nccl>=2.19\n", "unknown component 'nccl'");
	profile_rejects("Env=A=1 If=libfabric<\n", "bad condition");
	profile_rejects("If=libfabric<1.18\n", "If= follows an Env=");
	profile_rejects("Env=A=1 Env=B=2\n", "one Env= per line");
	profile_rejects("\n\nColor=blue\n", "site.profile:3: unknown key 'Color'");
	profile_rejects("Match=p5,,p4\n", "empty item in list");
}

static char dir[] = "/tmp/efa-profiles.XXXXXX";

static void write_profile(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.profile", dir, name);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void unlink_profile(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s.profile", dir, name);
	unlink(path);
}

static void remove_profiles(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

/* The name of type's profile; NULL when none matches, to fail a check, not crash. */
static const char *matched(const struct efa_profiles *set, const char *type)
{
	const struct efa_profile *p = efa_profiles_match(set, type, 0);

	return p ? p->name : NULL;
}

static void test_matching(void)
{
	struct efa_profiles *set = NULL;
	struct efa_error err = { "" };

	write_profile("default", "Match=*\n");
	write_profile("p5", "Match=p5.48xlarge\n");
	write_profile("p5fam", "Match=p5*.48xlarge\n");
	write_profile("p", "Match=p*\n");
	write_profile("base", "Env=A=1\n");
	require(ok(efa_profiles_load(dir, &set, &err) == 0, "profile dir loads (%s)", err.msg));
	is_str(matched(set, "p5.48xlarge"), "p5", "exact name beats patterns");
	is_str(matched(set, "p5en.48xlarge"), "p5fam", "longer pattern beats shorter");
	is_str(matched(set, "p4d.24xlarge"), "p", "short pattern beats *");
	is_str(matched(set, "hpc7g.16xlarge"), "default", "* catches the rest");
	is_str(matched(set, NULL), "default", "unknown instance type: only *");
	ok(efa_profiles_find(set, "base") && !efa_profiles_find(set, "base")->match &&
	   efa_profiles_match(set, "base", 0) == efa_profiles_find(set, "default"),
	   "a profile without Match= is include-only");
	efa_profiles_free(set);

	write_profile("gpus", "Accelerator=nvidia\n");
	require(ok(efa_profiles_load(dir, &set, &err) == 0, "a profile with Accelerator= loads (%s)", err.msg));
	is_str(efa_profiles_match(set, "hpc7g.16xlarge", 1u << EFA_ACCEL_GPU)->name, "gpus",
	       "a type only * names, with NVIDIA GPUs: the Accelerator=nvidia profile");
	is_str(efa_profiles_match(set, "p4d.24xlarge", 1u << EFA_ACCEL_GPU)->name, "p",
	       "  a pattern that names the type still wins");
	is_str(efa_profiles_match(set, "hpc7g.16xlarge", 1u << EFA_ACCEL_NEURON)->name, "default",
	       "  another accelerator kind falls to *");
	efa_profiles_free(set);
	write_profile("dup", "Accelerator=neuron,nvidia\n");
	ok(efa_profiles_load(dir, &set, &err) == -1, "the same Accelerator= in two profiles is refused");
	has_str(err.msg, "Accelerator=nvidia appears in both", "  naming it");
	write_profile("dup", "Accelerator=tpu\n");
	ok(efa_profiles_load(dir, &set, &err) == -1, "an unknown accelerator kind is refused");
	has_str(err.msg, "dup.profile:1: Accelerator=tpu: use nvidia, neuron or both", "  with file, line and the kinds");
	unlink_profile("gpus");

	write_profile("dup", "Match=p5.48xlarge\n");
	ok(efa_profiles_load(dir, &set, &err) == -1, "the same Match= in two profiles is refused");
	has_str(err.msg, "Match=p5.48xlarge appears in both dup.profile and p5.profile", "  naming both");
	write_profile("dup", "Include=missing\n");
	ok(efa_profiles_load(dir, &set, &err) == -1, "Include= of a missing profile is refused");
	has_str(err.msg, "dup.profile: Include=missing: no profile missing.profile", "  naming it");
	write_profile("dup", "Match=x\n");
}

static void test_plan(void)
{
	struct efa_node node = { 0 };
	struct efa_profiles *set = NULL;
	struct efa_env_plan *plan = NULL;
	struct efa_error err = { "" };
	char *dirs[] = { "/opt/amazon/efa/lib", "/opt/amazon/ofi-nccl/lib", NULL };

	write_profile("base", "Env=A=base\nEnv=B=old If=libfabric<1.18\nEnv=C=x If=ofi-nccl>=1.0\n");
	write_profile("mid", "Include=base\nEnv=A=mid\n");
	write_profile("p5", "Match=p5.48xlarge\nInclude=mid\nEnv=B=new If=libfabric>=1.18,installer>=1.30\n"
		      "Env=D=d\n");
	require(ok(efa_profiles_load(dir, &set, &err) == 0, "profiles with includes load (%s)", err.msg));
	node.instance_type = "p5.48xlarge";
	node.stack.libfabric = "2.1.0amzn5.0";
	node.stack.installer = "1.43.2";
	node.stack.libdirs = dirs;
	require(ok(efa_env_plan_build(&node, set, &plan, &err) == 0, "plan built"));
	is_str(plan->profile, "p5", "plan names the profile");
	require(is_int(plan->n, 4, "A, B, C, D in the plan"));
	is_str(plan->v[0].name, "A", "included variables come first");
	is_str(plan->v[0].value, "mid", "a later line replaces an earlier one");
	is_str(plan->v[1].value, "new", "B: the line whose conditions hold");
	has_str(plan->v[1].reason, "p5.profile:3", "  with where it came from");
	ok(plan->v[2].value == NULL, "C: condition on an unknown version does not hold");
	has_str(plan->v[2].reason, "ofi-nccl version unknown on this node", "  and says why");
	is_str(plan->libdirs, "/opt/amazon/efa/lib:/opt/amazon/ofi-nccl/lib", "library dirs joined");
	efa_env_plan_free(plan);

	node.stack.libfabric = "1.16.1amzn3.0";
	require(ok(efa_env_plan_build(&node, set, &plan, &err) == 0 && plan->n == 4,
		   "a plan for the older stack (%s)", err.msg));
	is_str(plan->v[1].value, "old", "B: the older stack's value");
	efa_env_plan_free(plan);

	write_profile("mid", "Include=p5\n");
	require(ok(efa_env_plan_build(&node, set, &plan, &err) == 0, "(a cycle is only seen on a reload)"));
	efa_env_plan_free(plan);
	efa_profiles_free(set);
	require(ok(efa_profiles_load(dir, &set, &err) == 0, "cyclic includes load"));
	ok(efa_env_plan_build(&node, set, &plan, &err) == -1, "an Include cycle fails the plan");
	has_str(err.msg, "Include= nests deeper than", "  and says so");
	efa_profiles_free(set);
	write_profile("mid", "Include=base\n");
}

/* A fake environment for efa_env_apply. */
struct fake_env {
	char names[16][64];
	char values[16][256];
	char decisions[16][16];
	int n;
};

static int fake_get(void *ctx, const char *name, char *buf, size_t size)
{
	struct fake_env *e = ctx;

	for (int i = 0; i < e->n; i++) {
		if (!strcmp(e->names[i], name)) {
			snprintf(buf, size, "%s", e->values[i]);
			return 1;
		}
	}
	return 0;
}

static int fake_put(void *ctx, const char *name, const char *value,
		    enum efa_env_decision d, const char *reason)
{
	struct fake_env *e = ctx;
	int i;

	(void)reason;
	for (i = 0; i < e->n && strcmp(e->names[i], name); i++)
		;
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
		{ "NCCL_SOCKET_IFNAME", "^docker,lo,veth", "p.profile:1", false },
		{ "FI_PROVIDER", NULL, "p.profile:2: ofi-nccl 1.16 is not <= 1.5.0", false },
		{ "NCCL_ALGO", "Ring", "p.profile:3", false },
		{ "FORCED_ONE", "site", "p.profile:4", false },
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
			{ "CUDA_VISIBLE_DEVICES", "2,3", "binding", true },
			{ "RANK", "5", "launch", false },
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
			{ "NCCL_SOCKET_IFNAME", "^docker,lo,veth", "p.profile:1", false },
			{ "FI_PROVIDER", "efa", "p.profile:2", false },
			{ "FI_EFA_USE_DEVICE_RDMA", "1", "p.profile:3", false },
			{ "NCCL_TUNED", "1", "p.profile:4", false },
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

static void test_shipped_profiles(void)
{
	struct efa_profiles *set = NULL;
	struct efa_error err = { "" };
	enum { GPU = 1u << EFA_ACCEL_GPU, NEURON = 1u << EFA_ACCEL_NEURON };
	static const struct {
		const char *type, *profile;
		unsigned accels;
	} want[] = {
		{ "p4d.24xlarge", "p4d", GPU }, { "p4de.24xlarge", "p4de", GPU },
		{ "p5.48xlarge", "p5", GPU }, { "p5.4xlarge", "p5-4xlarge", GPU },
		{ "p5e.48xlarge", "p5e", GPU }, { "p5en.48xlarge", "p5en", GPU },
		{ "p6-b200.48xlarge", "p6-b200", GPU }, { "p3dn.24xlarge", "p3dn", GPU },
		{ "g5.48xlarge", "g-series", GPU }, { "g6e.48xlarge", "g-series", GPU },
		{ "g7e.48xlarge", "g-series", GPU }, { "gr6.8xlarge", "g-series", GPU },
		{ "trn1.32xlarge", "trn1", NEURON }, { "trn1n.32xlarge", "trn1n", NEURON },
		{ "trn2.48xlarge", "trn2", NEURON }, { "trn3.48xlarge", "trainium", NEURON },
		{ "inf2.48xlarge", "inf", NEURON }, { "hpc7a.96xlarge", "default", 0 },
		/* types no pattern names: what the node has decides */
		{ "x9z.48xlarge", "neuron", NEURON }, { "q7.48xlarge", "nvidia", GPU },
		{ NULL, "nvidia", GPU }, { "x9z.48xlarge", "default", 0 },
	};

	require(ok(efa_profiles_load(SRCDIR "/etc/profiles", &set, &err) == 0,
		   "the shipped profiles load (%s)", err.msg));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct efa_profile *p = efa_profiles_match(set, want[i].type, want[i].accels);

		is_str(p ? p->name : NULL, want[i].profile, "%s (accelerators %#x) uses the %s profile",
		       want[i].type ? want[i].type : "unknown type", want[i].accels, want[i].profile);
	}
	efa_profiles_free(set);
}

/* A job that brings its own aws-ofi-nccl or libfabric keeps its path. */
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
		{ "NCCL_PROTO", "simple", "efa-common.profile:23, ofi-nccl 1.5.0 is <= 1.5.0", false },
		{ "NCCL_NVLS_CHUNKSIZE", "131072", "site.profile:4", false },
		{ "FI_PROVIDER", "efa", "efa-common.profile:22", false },
		{ "NCCL_ALGO", NULL, "site.profile:5: ofi-nccl 1.16.3 is not < 1.7", false },
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
		struct efa_env_entry e = { (char *)vars[i].name, "1", "site.profile:2", false };
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

static const char *planned(const struct efa_env_plan *plan, const char *name)
{
	for (size_t i = 0; i < plan->n; i++)
		if (!strcmp(plan->v[i].name, name))
			return plan->v[i].value;
	return NULL;
}

/*
 * The shipped profiles against AWS's own guidance, row by row. Each row is
 * a node (type, stack, kernel) and what the sources say it needs; NULL:
 * must not be set. Sources: aws-ofi-nccl doc/efa-env-var.md (section 1 and
 * the section 2 presets: FI_PROVIDER, NCCL_PROTO, FI_EFA_USE_DEVICE_RDMA by
 * aws-ofi-nccl and libfabric version, on p4/p5 or on EFA instances without
 * RDMA), aws-ofi-nccl src/platform-aws.cpp (p5.4xlarge: no GPUDirect RDMA;
 * FI_EFA_FORK_SAFE left unset on Neuron), awsome-distributed-training
 * 1.architectures/efa-cheatsheet.md (FI_EFA_SET_CUDA_SYNC_MEMOPS=0 before
 * installer 1.29.1; FI_EFA_FORK_SAFE not needed from kernel 5.15).
 */
static void test_guidance(void)
{
	static const struct {
		const char *type, *installer, *libfabric, *ofi_nccl, *kernel;
		const char *provider, *proto, *device_rdma, *sync_memops, *fork_safe;
	} rows[] = {
		/* aws-ofi-nccl <= 1.5.0 on p4/p5: all three */
		{ "p4d.24xlarge", "1.20.0", "1.16.1", "1.5.0", "5.10.228-219.884.amzn2.x86_64",
		  "efa", "simple", "1", "0", NULL },
		/* >= 1.6.0, < 1.7.0 on p4/p5: GPUDirect RDMA only */
		{ "p5.48xlarge", "1.26.0", "1.18.2", "1.6.0", "6.8.0-1021-aws",
		  NULL, NULL, "1", "0", NULL },
		/* libfabric < 1.18 with a newer plugin still needs it */
		{ "p4de.24xlarge", "1.29.1", "1.17.0", "1.7.3", "5.10.228-219.884.amzn2.x86_64",
		  NULL, NULL, "1", NULL, NULL },
		/* libfabric >= 1.18 and aws-ofi-nccl >= 1.7.0: nothing */
		{ "p5en.48xlarge", "1.43.2", "2.1.0amzn5.0", "1.16.3", "6.8.0-1021-aws",
		  NULL, NULL, NULL, NULL, NULL },
		{ "p5.48xlarge", "1.29.1", "1.19.0", "1.7.0", "6.8.0-1021-aws",
		  NULL, NULL, NULL, NULL, NULL },
		/* p5.4xlarge has no GPUDirect RDMA: "EFA instances without RDMA" */
		{ "p5.4xlarge", "1.20.0", "1.16.1", "1.5.0", "6.8.0-1021-aws",
		  "efa", "simple", NULL, NULL, NULL },
		{ "p5.4xlarge", "1.26.0", "1.17.0", "1.6.1", "6.8.0-1021-aws",
		  NULL, NULL, NULL, NULL, NULL },
		/* Neuron: fork safety only before kernel 5.15 */
		{ "trn1.32xlarge", "1.43.2", "2.1.0amzn5.0", "1.16.3", "5.10.228-219.884.amzn2.x86_64",
		  "efa", NULL, "1", NULL, "1" },
		{ "trn1.32xlarge", "1.43.2", "2.1.0amzn5.0", "1.16.3", "6.1.119-129.201.amzn2023.x86_64",
		  "efa", NULL, "1", NULL, NULL },
		{ "trn2.48xlarge", "1.43.2", "2.1.0amzn5.0", "1.16.3", "6.8.0-1021-aws",
		  "efa", NULL, "1", NULL, NULL },
	};
	struct efa_profiles *set = NULL;
	struct efa_error err = { "" };

	require(ok(efa_profiles_load(SRCDIR "/etc/profiles", &set, &err) == 0,
		   "the shipped profiles load (%s)", err.msg));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct efa_node node = {
			.instance_type = (char *)rows[i].type,
			.stack = {
				.installer = (char *)rows[i].installer,
				.libfabric = (char *)rows[i].libfabric,
				.ofi_nccl = (char *)rows[i].ofi_nccl,
				.kernel = (char *)rows[i].kernel,
			},
		};
		struct efa_env_plan *plan = NULL;

		/* What discovery finds where no libefa answers: the table's. */
		node.rdma_read = efa_platform_gdr(rows[i].type) ? EFA_RDMA_READ_YES : EFA_RDMA_READ_UNKNOWN;
		if (!ok(efa_env_plan_build(&node, set, &plan, &err) == 0,
			"%s, installer %s, libfabric %s, aws-ofi-nccl %s, kernel %s", rows[i].type,
			rows[i].installer, rows[i].libfabric, rows[i].ofi_nccl, rows[i].kernel))
			continue;
		is_str(planned(plan, "FI_PROVIDER"), rows[i].provider, "  FI_PROVIDER");
		is_str(planned(plan, "NCCL_PROTO"), rows[i].proto, "  NCCL_PROTO");
		is_str(planned(plan, "FI_EFA_USE_DEVICE_RDMA"), rows[i].device_rdma, "  FI_EFA_USE_DEVICE_RDMA");
		is_str(planned(plan, "FI_EFA_SET_CUDA_SYNC_MEMOPS"), rows[i].sync_memops,
		       "  FI_EFA_SET_CUDA_SYNC_MEMOPS");
		is_str(planned(plan, "FI_EFA_FORK_SAFE"), rows[i].fork_safe, "  FI_EFA_FORK_SAFE");
		is_str(planned(plan, "NCCL_SOCKET_IFNAME"), "^docker,lo,veth", "  NCCL_SOCKET_IFNAME");
		efa_env_plan_free(plan);
	}
	efa_profiles_free(set);
}

static void set_version(char **field, const char *version)
{
	free(*field);
	*field = version ? strdup(version) : NULL;
}

/*
 * FI_EFA_USE_DEVICE_RDMA on fixtures of real instance types, with their
 * own stacks and with others: libfabric aborts when it is set on an EFA
 * device without RDMA read (libfabric v1.17.0 rxr_env.c, v2.1.0
 * efa_rdm_util.c), so it is set only where aws-ofi-nccl's platform table
 * runs GPUDirect RDMA (no libefa answers in a fixture), and there only for
 * the stacks that need it (aws-ofi-nccl doc/efa-env-var.md). g4dn falls to
 * the generic NVIDIA profile, inf1 to the Neuron one; both would set it.
 */
static void test_fixtures(void)
{
	static const struct {
		const char *fixture, *libfabric, *ofi_nccl, *profile;
		enum efa_rdma_read rdma_read;
		const char *device_rdma;
	} rows[] = {
		{ "g4dn.12xlarge", NULL, NULL, "nvidia", EFA_RDMA_READ_UNKNOWN, NULL },
		{ "g4dn.12xlarge", "1.17.0", "1.6.0", "nvidia", EFA_RDMA_READ_UNKNOWN, NULL },
		{ "inf1.24xlarge", NULL, NULL, "inf", EFA_RDMA_READ_UNKNOWN, NULL },
		{ "inf1.24xlarge", "2.1.0amzn5.0", "1.16.3", "inf", EFA_RDMA_READ_UNKNOWN, NULL },
		{ "p3dn.24xlarge", NULL, NULL, "p3dn", EFA_RDMA_READ_UNKNOWN, NULL },
		{ "p3dn.24xlarge", "1.17.0", "1.6.0", "p3dn", EFA_RDMA_READ_UNKNOWN, NULL },
		{ "p4d.24xlarge", NULL, NULL, "p4d", EFA_RDMA_READ_YES, "1" },
		{ "p4d.24xlarge", "1.19.0", "1.7.0", "p4d", EFA_RDMA_READ_YES, NULL },
		{ "p4d.24xlarge", "1.19.0", "1.6.1", "p4d", EFA_RDMA_READ_YES, "1" },
		{ "p5.48xlarge", NULL, NULL, "p5", EFA_RDMA_READ_YES, NULL },
		{ "p5.48xlarge", "1.17.0", "1.16.3", "p5", EFA_RDMA_READ_YES, "1" },
		{ "p5en.48xlarge", NULL, NULL, "p5en", EFA_RDMA_READ_YES, NULL },
		{ "trn1.32xlarge", NULL, NULL, "trn1", EFA_RDMA_READ_YES, "1" },
	};
	struct efa_profiles *set = NULL;
	struct efa_error err = { "" };

	require(ok(efa_profiles_load(SRCDIR "/etc/profiles", &set, &err) == 0,
		   "the shipped profiles load (%s)", err.msg));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct efa_env_plan *plan = NULL;
		struct efa_node *node = NULL;
		char root[512];

		snprintf(root, sizeof(root), "%s/%s", FIXTURES, rows[i].fixture);
		if (!ok(efa_node_discover(root, NULL, &node, &err) == 0, "%s discovered (%s)",
			rows[i].fixture, err.msg))
			continue;
		if (rows[i].libfabric) {
			set_version(&node->stack.libfabric, rows[i].libfabric);
			set_version(&node->stack.ofi_nccl, rows[i].ofi_nccl);
		}
		is_int(node->rdma_read, rows[i].rdma_read, "  RDMA read: %s", node->rdma_read_why);
		if (ok(efa_env_plan_build(node, set, &plan, &err) == 0, "  plan with libfabric %s, aws-ofi-nccl %s",
		       node->stack.libfabric ? node->stack.libfabric : "unknown",
		       node->stack.ofi_nccl ? node->stack.ofi_nccl : "unknown")) {
			is_str(plan->profile, rows[i].profile, "  profile %s", rows[i].profile);
			is_str(planned(plan, "FI_EFA_USE_DEVICE_RDMA"), rows[i].device_rdma,
			       "  FI_EFA_USE_DEVICE_RDMA %s", rows[i].device_rdma ? "set" : "not set");
		}
		efa_env_plan_free(plan);
		efa_node_free(node);
	}
	efa_profiles_free(set);
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

/* A job environment holding one long LD_LIBRARY_PATH, read as slurmstepd
 * gives it: -1 when the buffer is too small for it. */
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
		    enum efa_env_decision decision, const char *reason)
{
	struct long_env *e = ctx;

	(void)reason;
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

/* EFADevices= and EFADevicesWait=: what a healthy node of a type shows. */
static void test_expected_devices(void)
{
	static const struct {
		const char *text, *type;
		int count, wait;
		const char *error;
	} cases[] = {
		{ "Match=p5en.48xlarge\nEFADevices=p5en.48xlarge:16\nEFADevicesWait=15\n", "p5en.48xlarge", 16, 15, NULL },
		{ "Match=p4d*\nEFADevices=p4d.24xlarge:4,p4de.24xlarge:4\n", "p4de.24xlarge", 4, 0, NULL },
		{ "Match=p6*\nEFADevices=p6-b200.48xlarge:8\n", "p6-b300.48xlarge", 0, 0, NULL },
		{ "Match=x\nEFADevices=16\n", NULL, 0, 0, "EFADevices=16: use EFADevices=INSTANCE_TYPE:COUNT" },
		{ "Match=x\nEFADevices=x:0\n", NULL, 0, 0, "the count must be 1 to" },
		{ "Match=x\nEFADevices=x:4,\n", NULL, 0, 0, "empty item" },
		{ "Match=x\nEFADevicesWait=-1\n", NULL, 0, 0, "EFADevicesWait=-1: seconds, 0 to 300" },
		{ "Match=x\nEnv=A=1 EFADevices=x:4\n", NULL, 0, 0, "on its own line" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct efa_profile p;
		struct efa_error err = { "" };
		int wait = -1, rc = efa_profile_parse(cases[i].text, strlen(cases[i].text), "t", &p, &err);

		if (cases[i].error) {
			ok(rc && strstr(err.msg, cases[i].error), "EFADevices case %zu refused: %s", i, err.msg);
			continue;
		}
		if (!ok(!rc, "EFADevices case %zu parses (%s)", i, err.msg))
			continue;
		is_int(efa_profile_expected_nics(&p, cases[i].type, &wait), cases[i].count,
		       "%s: %d EFA devices expected", cases[i].type, cases[i].count);
		is_int(wait, cases[i].wait, "  counted again for %d s", cases[i].wait);
		efa_profile_clear(&p);
	}
}

int main(void)
{
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	test_parse_errors();
	test_matching();
	test_plan();
	test_apply();
	test_shipped_profiles();
	test_guidance();
	test_own_libraries();
	test_long_library_path();
	test_warnings();
	test_warning_boundaries();
	test_fixtures();
	test_memlock();
	test_expected_devices();
	remove_profiles();
	return done_testing();
}
