/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node's health as slurm-efa judges it, from the node's own files under
 * its root: every EFA device its profile's EFADevices= says the instance
 * type has, each with its ports ACTIVE; the accelerators its GRES names
 * (HealthGres=yes); run under slurmd, slurmd's locked
 * memory at least HealthMinLockedMemory= (slurmd_limits.h); and checkpoint
 * file systems that answer (checkpoint_answer.h). One verdict for the health check
 * (slurm-efa check --node) and the job prolog's gate (spank_efa.so), so
 * that the two never disagree about a node.
 */
#ifndef EFA_HEALTH_NODE_CHECK_H
#define EFA_HEALTH_NODE_CHECK_H

#include <stdbool.h>

#include "common/base/deadline.h"
#include "common/base/error.h"
#include "common/config/efa_conf.h"
#include "common/env/profile.h"
#include "common/node/node.h"
#include "common/nodecache/nodecache.h"

#define EFA_NODE_PROBLEM_MAX 2048

struct efa_node_check {
	struct efa_node *node;			/* as last read */
	struct efa_profiles *profiles;
	const struct efa_profile *profile;	/* the node's, in profiles; NULL: none */
	int expected;				/* EFA devices the profile expects; 0: it says none */
	char problem[EFA_NODE_PROBLEM_MAX];	/* "" when healthy */
};

/*
 * Reads the node under root and judges it, with the checkpoint root of
 * partition (a job's), or of every partition when it is NULL, and, when
 * gres is not NULL, the GPUs and Neuron devices that Gres= promises
 * (gres.h). With wait, a node that shows
 * fewer EFA devices than expected is counted again for the profile's
 * EFADevicesWait= seconds first (devices still attaching after boot).
 * Returns -1 with err when the node or the profiles cannot be read at all
 * (a broken efa.conf or profile directory: bad input, never a fault of the
 * node) or memory runs out (never taken for a device that is not there);
 * 0 otherwise, the verdict in out. With cache, the node's
 * description comes from the cache (nodecache.h) while nothing it was read
 * from changed; what can fail while the node runs (devices present, ports'
 * states, counters, limits, answers) is read afresh either way. Clear out with
 * efa_node_check_clear in both cases. With dl (NULL: none), the waits
 * and the checkpoint roots' look take at most what is left of it.
 */
int efa_node_check(const char *root, const struct efa_config *cfg,
		   const struct efa_node_cache *cache, const char *partition, const char *gres,
		   bool wait, const struct efa_deadline *dl, struct efa_node_check *out,
		   struct efa_error *err);

void efa_node_check_clear(struct efa_node_check *c);

#endif
