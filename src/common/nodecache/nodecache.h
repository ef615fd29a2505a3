/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's description for steps (its hardware, EFA software and the
 * profiles it uses: the one its type matches and what that includes), read once per boot instead of at every step: slurmstepd, as
 * root, keeps it in a file of NodeCacheDir= (nodedesc.h) and uses it while
 * nothing it was read from changed: the boot (boot_id under root=), root=
 * itself, efa.conf's InstanceType= and ProfileDir=, the profile files, the
 * installer's record and install prefixes, libefa's directories, /dev and
 * /dev/infiniband (their times), and the names in the device directories
 * of sysfs and procfs (whose times do not follow their entries). Checking
 * is a stat or a directory read each. A file that is not root's (or the
 * caller's), is writable by others, or is corrupt, truncated, of another
 * format or another root is never trusted: the node is read again and the
 * file replaced.
 */
#ifndef EFA_NODECACHE_H
#define EFA_NODECACHE_H

#include <stddef.h>

#include "common/base/error.h"
#include "common/config/efa_conf.h"
#include "common/nodecache/nodedesc.h"

/* Inputs changed this recently may change again within their file
 * system's time granularity, unseen: such a description is not kept. */
#define EFA_NODE_CACHE_SETTLE 1

struct efa_node_cache {
	const char *dir;	/* NodeCacheDir= */
	int settle;		/* seconds, EFA_NODE_CACHE_SETTLE */
};

enum efa_node_cache_result {
	EFA_NODE_CACHE_HIT,		/* from the cache */
	EFA_NODE_CACHE_BUILT,		/* read from the node: note says why */
	EFA_NODE_CACHE_UNWRITABLE,	/* read from the node, and it cannot be
					 * kept: note says why, for the admin */
};

/*
 * The description of the node under root for cfg into *out (free with
 * efa_nodedesc_clear): an enum efa_node_cache_result, or -1 with err when
 * the node cannot be read at all (as efa_node_discover).
 */
int efa_node_describe(const char *root, const struct efa_config *cfg,
		      const struct efa_node_cache *cache, struct efa_nodedesc *out,
		      char *note, size_t size, struct efa_error *err);

#endif
