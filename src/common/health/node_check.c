/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>
#include <unistd.h>

#include "common/base/strutil.h"
#include "common/health/checkpoint_answer.h"
#include "common/health/gres.h"
#include "common/health/node_check.h"
#include "common/health/slurmd_limits.h"
#include "common/node/health.h"
#include "common/nodecache/nodecache.h"

/* How often a node still short of EFA devices is counted again. */
#define RECOUNT_INTERVAL 5

/* Reads the node again until it shows every expected device or wait (or
 * the deadline) runs out. */
static int recount(const char *root, const struct efa_config *cfg, int wait,
		   const struct efa_deadline *dl, struct efa_node_check *c, struct efa_error *err)
{
	while (c->expected > 0 && c->node->nnics < (size_t)c->expected && wait > 0) {
		struct efa_node *again = NULL;
		long nap = efa_deadline_cap(dl, 1000L * (wait < RECOUNT_INTERVAL ? wait : RECOUNT_INTERVAL));

		if (!nap)
			break;
		usleep((useconds_t)nap * 1000);
		wait -= (int)((nap + 999) / 1000);
		if (efa_node_discover(root, cfg->instance_type, &again, err))
			return -1;
		efa_node_free(c->node);
		c->node = again;
	}
	return 0;
}

/* The node and its profiles: afresh, or from the node's description in
 * the cache, which is read again whenever what it was read from changed. */
static int read_node(const char *root, const struct efa_config *cfg,
		     const struct efa_node_cache *cache, struct efa_node_check *out,
		     struct efa_error *err)
{
	struct efa_nodedesc desc = { 0 };
	char note[512];

	if (!cache)
		return efa_node_discover(root, cfg->instance_type, &out->node, err) ||
		       efa_profiles_load(cfg->profile_dir, &out->profiles, err) ? -1 : 0;
	if (efa_node_describe(root, cfg, cache, &desc, note, sizeof(note), err) < 0)
		return -1;
	if (!desc.profiles) {
		efa_error_set(err, "%s", desc.profiles_error ? desc.profiles_error : "no profiles");
		efa_nodedesc_clear(&desc);
		return -1;
	}
	out->node = desc.node;
	out->profiles = desc.profiles;
	desc.node = NULL;
	desc.profiles = NULL;
	efa_nodedesc_clear(&desc);
	return 0;
}

int efa_node_check(const char *root, const struct efa_config *cfg,
		   const struct efa_node_cache *cache, const char *partition, const char *gres,
		   bool wait, const struct efa_deadline *dl, struct efa_node_check *out,
		   struct efa_error *err)
{
	char missing[512], ports[EFA_NODE_PROBLEM_MAX] = "";
	int settle = 0, nports;

	memset(out, 0, sizeof(*out));
	if (read_node(root, cfg, cache, out, err))
		return -1;
	out->profile = efa_profiles_match(out->profiles, out->node->instance_type,
					  efa_node_accel_kinds(out->node));
	out->expected = efa_profile_expected_nics(out->profile, out->node->instance_type, &settle);
	if (wait && recount(root, cfg, settle, dl, out, err))
		return -1;
	/* Out of memory is no verdict on the node: nothing is drained. */
	if (efa_node_missing_nics(out->node, root, out->expected, missing, sizeof(missing)) ||
	    (nports = efa_node_health_problems(out->node, root, ports, sizeof(ports))) < 0)
		return efa_error_set(err, "out of memory checking the node");
	if (missing[0])
		efa_strlcatf(out->problem, sizeof(out->problem), "this node has %s", missing);
	if (nports)
		efa_strlcatf(out->problem, sizeof(out->problem), "%s%s", out->problem[0] ? "; " : "",
			     ports);
	if (gres)
		efa_gres_problems(out->node, root, gres, out->problem, sizeof(out->problem));
	/* Locked memory matters to EFA only: a node without it is not judged by it. */
	if (out->node->nnics || out->expected > 0)
		efa_slurmd_memlock_problem(cfg->health_min_locked_memory, out->problem,
					   sizeof(out->problem));
	efa_checkpoint_answer_problem(cfg, partition, dl, out->problem, sizeof(out->problem));
	return 0;
}

void efa_node_check_clear(struct efa_node_check *c)
{
	efa_profiles_free(c->profiles);
	efa_node_free(c->node);
	memset(c, 0, sizeof(*c));
}
