/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa sync with Topology=tree|block: Slurm's topology.conf (or
 * topology.yaml) kept current from the nodes' network layer features.
 */
#ifndef EFA_CLI_TOPOLOGY_SYNC_H
#define EFA_CLI_TOPOLOGY_SYNC_H

#include <stdbool.h>

#include "common/base/error.h"
#include "common/cluster/zones.h"
#include "common/config/efa_conf.h"

/* How long TopologyReload= may take before it is killed. */
#define TOPOLOGY_RELOAD_TIMEOUT 60

struct topology_sync {
	bool retry;		/* the last round failed: try again without news */
	bool reload_failed;	/* run TopologyReload= again, even for an unchanged file */
	bool reported;		/* the file's state was said at least once */
	char said[EFA_ERROR_MAX];	/* the last failure said, not repeated */
};

typedef void (*topology_say)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * After each successful refresh (fresh: the nodes were read, not answered
 * "unchanged"): builds the tree, replaces TopologyFile= when its content
 * changed and then runs TopologyReload=, saying what changed. Failures
 * are said (once while they last) and retried next round; none is fatal.
 * Returns whether TopologyReload= ran (whatever its exit status): a
 * reconfigure may have reset the nodes' features.
 */
bool topology_sync(struct topology_sync *ts, const struct efa_config *cfg,
		   const struct efa_cluster *c, bool fresh, topology_say say);

#endif
