
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
	struct efa_error err = { 0 };
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
	struct efa_error err = { 0 };

	write_profile("default", "Match=*\n");
	write_profile("p5", "Match=p5.48xlarge\n");
	write_profile("p5fam", "Match=p5*.48xlarge\n");
	write_profile("p", "Match=p*\n");
	write_profile("base", "Env = A=1\n");
	require(ok(efa_profiles_load(dir, &set, &err) == 0, "profile dir loads (%s)", err.msg));
	is_str(matched(set, "p5.48xlarge"), "p5", "exact name beats patterns");
	is_str(matched(set, "p5en.48xlarge"), "p5fam", "longer pattern beats shorter");
	is_str(matched(set, "p4d.24xlarge"), "p", "short pattern beats *");
	is_str(matched(set, "hpc7g.16xlarge"), "default", "* catches the rest");
	is_str(matched(set, NULL), "default", "unknown instance type: only *");
	ok(efa_profiles_find(set, "base") && efa_profiles_find(set, "base")->nvars == 1 &&
	   !strcmp(efa_profiles_find(set, "base")->vars[0].name, "A") &&
	   !strcmp(efa_profiles_find(set, "base")->vars[0].value, "1"),
	   "Env = A=1: blanks around '=' as in slurm.conf, the value holding its own '='");
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

/* The names in set, space-separated. */
static const char *names_of(const struct efa_profiles *set)
{
	static char buf[256];

	buf[0] = '\0';
	for (size_t i = 0; i < set->n; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "", set->v[i].name);
	return buf;
}

/* What the node cache keeps: the profile a node matches and its includes. */
static void test_keep_matching(void)
{
	struct efa_profiles *set = NULL;
	struct efa_error err = { 0 };

	/* (Beside test_matching's profiles, which match neither type.) */
	write_profile("p5", "Match=p5.48xlarge\nInclude=mid\n");
	write_profile("mid", "Include=base\n");
	write_profile("base", "Env=A=1\n");
	write_profile("p4", "Match=p4d*\nInclude=base\n");
	write_profile("gpus", "Accelerator=nvidia\nInclude=base\n");
	require(ok(efa_profiles_load(dir, &set, &err) == 0, "profiles load (%s)", err.msg));
	ok(efa_profiles_keep_matching(set, "p5.48xlarge", 1u << EFA_ACCEL_GPU) == 0,
	   "keeping what a p5.48xlarge uses");
	is_str(names_of(set), "base mid p5", "  its profile and what it includes, through two levels");
	is_str(matched(set, "p5.48xlarge"), "p5", "  which still match it");
	efa_profiles_free(set);
	require(ok(efa_profiles_load(dir, &set, &err) == 0, "profiles load again"));
	ok(efa_profiles_keep_matching(set, "hpc7g.16xlarge", 1u << EFA_ACCEL_GPU) == 0 &&
	   !strcmp(names_of(set), "base gpus"),
	   "a type only * names, with NVIDIA GPUs: the Accelerator=nvidia profile and its include");
	efa_profiles_free(set);
	write_profile("mid", "Include=p5\n");
	require(ok(efa_profiles_load(dir, &set, &err) == 0, "cyclic includes load"));
	ok(efa_profiles_keep_matching(set, "p5.48xlarge", 0) == 0 && !strcmp(names_of(set), "mid p5"),
	   "  a cycle is followed once: %s", names_of(set));
	efa_profiles_free(set);
	write_profile("p5", "Match=p5.48xlarge\n");
	unlink_profile("mid");
	unlink_profile("p4");
	unlink_profile("gpus");
}

static void test_plan(void)
{
	struct efa_node node = { 0 };
	struct efa_profiles *set = NULL;
	struct efa_env_plan *plan = NULL;
	struct efa_error err = { 0 };
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

static void test_shipped_profiles(void)
{
	struct efa_profiles *set = NULL;
	struct efa_error err = { 0 };
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
	struct efa_error err = { 0 };

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
	struct efa_error err = { 0 };

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

/* A job environment holding one long LD_LIBRARY_PATH, read as slurmstepd
 * gives it: -1 when the buffer is too small for it. */

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
		struct efa_error err = { 0 };
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

/* A plan's reasons are joined by efa_strlcat_all: what snprintf's "%s"s
 * would give, truncation included, at every size. */
static void test_strlcat_all(void)
{
	int wrong = 0;

	for (size_t size = 1; size <= 24; size++) {
		char mine[24] = "p5.profile:3", theirs[64];
		int n = snprintf(theirs, sizeof(theirs), "%s%s%s%s", mine, ", ", "ofi-nccl 1.16", "");
		int rc = efa_strlcat_all(mine, size, ", ", "ofi-nccl 1.16", "", NULL);

		theirs[size - 1] = '\0';	/* where snprintf with size would stop */

		if (size <= strlen("p5.profile:3")) {
			wrong += rc != -1;	/* buf already full */
			continue;
		}
		if (strcmp(mine, theirs) || (rc == -1) != (n >= (int)size)) {
			printf("# size %zu: \"%s\" (%d), snprintf \"%s\" (%d)\n", size, mine, rc, theirs, n);
			wrong++;
		}
	}
	is_int(wrong, 0, "efa_strlcat_all: snprintf's text and truncation at every size");
}

int main(void)
{
	test_strlcat_all();
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	test_parse_errors();
	test_matching();
	test_keep_matching();
	test_plan();
	test_shipped_profiles();
	test_guidance();
	test_fixtures();
	test_expected_devices();
	remove_profiles();
	return done_testing();
}
