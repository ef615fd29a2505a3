/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base/strutil.h"
#include "common/env/env.h"
#include "common/node/image.h"
#include "common/node/libpath.h"
#include "common/node/stack.h"

#define MAX_INCLUDE_DEPTH 16

void efa_env_plan_free(struct efa_env_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->v[i].name);
		free(plan->v[i].value);
		free(plan->v[i].reason);
	}
	free(plan->v);
	free(plan->profile);
	free(plan->libdirs);
	free(plan);
}

static struct efa_env_entry *entry_for(struct efa_env_plan *plan, const char *name)
{
	struct efa_env_entry *grown;

	for (size_t i = 0; i < plan->n; i++)
		if (!strcmp(plan->v[i].name, name))
			return &plan->v[i];
	grown = realloc(plan->v, (plan->n + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	plan->v = grown;
	memset(&grown[plan->n], 0, sizeof(*grown));
	grown[plan->n].name = strdup(name);
	if (!grown[plan->n].name)
		return NULL;
	return &grown[plan->n++];
}

static int take_var(struct efa_env_plan *plan, const struct efa_profile_var *var,
		    const struct efa_node *node)
{
	char why[256] = "", reason[512];
	struct efa_env_entry *e;
	bool holds = true;

	for (size_t i = 0; i < var->nconds && holds; i++)
		holds = efa_cond_holds(&var->conds[i], &node->stack, why, sizeof(why));
	e = entry_for(plan, var->name);
	if (!e)
		return -1;
	if (!holds && e->value)
		return 0;	/* an earlier line already set it */
	reason[0] = '\0';
	if (holds)
		efa_strlcat_all(reason, sizeof(reason), var->where, why[0] ? ", " : "", why, NULL);
	else	/* every line that could have set it, and why it did not */
		efa_strlcat_all(reason, sizeof(reason), e->reason ? e->reason : "",
				e->reason ? "; " : "", var->where, ": ", why, NULL);
	free(e->value);
	free(e->reason);
	e->value = holds ? strdup(var->value) : NULL;
	e->reason = strdup(reason);
	return (!e->reason || (holds && !e->value)) ? -1 : 0;
}

static int take_profile(struct efa_env_plan *plan, const struct efa_profiles *profiles,
			const struct efa_profile *p, const struct efa_node *node,
			int depth, struct efa_error *err)
{
	if (depth > MAX_INCLUDE_DEPTH)
		return efa_error_set(err, "%s.profile: Include= nests deeper than %d (a cycle?)",
				     p->name, MAX_INCLUDE_DEPTH);
	for (char **inc = p->includes; inc && *inc; inc++) {
		const struct efa_profile *q = efa_profiles_find(profiles, *inc);

		if (q && take_profile(plan, profiles, q, node, depth + 1, err))
			return -1;
	}
	for (size_t i = 0; i < p->nvars; i++)
		if (take_var(plan, &p->vars[i], node))
			return efa_error_set(err, "out of memory");
	return 0;
}

/*
 * FI_EFA_USE_DEVICE_RDMA=1 (any value libfabric reads as true) makes
 * libfabric abort() on an EFA device without RDMA read, whatever its
 * version (rdma.h): a profile's line stands only where the node's devices
 * are known to have it.
 */
static int guard_device_rdma(struct efa_env_plan *plan, const struct efa_node *node)
{
	static const char *const off[] = { "0", "false", "no", "off" };
	struct efa_env_entry *e = NULL;
	char *reason;

	for (size_t i = 0; i < plan->n && !e; i++)
		if (!strcmp(plan->v[i].name, "FI_EFA_USE_DEVICE_RDMA") && plan->v[i].value)
			e = &plan->v[i];
	if (!e || node->rdma_read == EFA_RDMA_READ_YES)
		return 0;
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		if (!strcasecmp(e->value, off[i]))
			return 0;
	if (asprintf(&reason, "%s, but not set: libfabric aborts with it on an EFA device without RDMA read, and %s",
		     e->reason, node->rdma_read_why[0] ? node->rdma_read_why :
		     "nothing says this node's devices have it") < 0)
		return -1;
	free(e->value);
	free(e->reason);
	e->value = NULL;
	e->reason = reason;
	return 0;
}

static int join_libdirs(struct efa_env_plan *plan, const struct efa_node *node)
{
	size_t len = 0;

	for (char **d = node->stack.libdirs; d && *d; d++)
		len += strlen(*d) + 1;
	if (!len)
		return 0;
	plan->libdirs = calloc(1, len);
	if (!plan->libdirs)
		return -1;
	for (char **d = node->stack.libdirs; *d; d++) {
		if (d != node->stack.libdirs)
			strcat(plan->libdirs, ":");
		strcat(plan->libdirs, *d);
	}
	return 0;
}

int efa_env_plan_build(const struct efa_node *node, const struct efa_profiles *profiles,
		       struct efa_env_plan **out, struct efa_error *err)
{
	struct efa_env_plan *plan = calloc(1, sizeof(*plan));
	const struct efa_profile *p;

	if (!plan)
		return efa_error_set(err, "out of memory");
	p = profiles ? efa_profiles_match(profiles, node->instance_type, efa_node_accel_kinds(node))
		     : NULL;
	if (p) {
		plan->profile = strdup(p->name);
		if (!plan->profile) {
			efa_error_set(err, "out of memory");
			goto fail;
		}
		if (take_profile(plan, profiles, p, node, 0, err))
			goto fail;
		if (guard_device_rdma(plan, node)) {
			efa_error_set(err, "out of memory");
			goto fail;
		}
	}
	if (join_libdirs(plan, node)) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	*out = plan;
	return 0;
fail:
	efa_env_plan_free(plan);
	return -1;
}

bool efa_env_nccl_net_is_efa(const char *value)
{
	/* NCCL matches NCCL_NET against each network's name ignoring case
	 * (src/plugin/net.cc, strcasecmp). */
	return !strcasecmp(value, EFA_ENV_NCCL_NET) || !strcasecmp(value, "Libfabric");
}

static int pin_nccl_net(struct efa_env_plan *plan)
{
	struct efa_env_entry *e = entry_for(plan, EFA_ENV_NCCL_NET_VAR);

	if (!e)
		return -1;
	free(e->value);
	free(e->reason);
	e->value = strdup(EFA_ENV_NCCL_NET);
	e->reason = strdup("--efa=required on NVIDIA GPUs: NCCL fails at start-up instead of falling back to its socket transport when aws-ofi-nccl does not load");
	return e->value && e->reason ? 0 : -1;
}

int efa_env_plan_for_task(struct efa_env_plan *plan, const struct efa_node *node,
			  const struct efa_sysfs *fs, const char *ld_path, unsigned checks,
			  bool required, char *problem, size_t size)
{
	efa_task_missing(node, fs, ld_path, checks, problem, size);
	if (problem[0] || !required || !efa_node_has_gpus(node))
		return 0;
	return pin_nccl_net(plan);
}
