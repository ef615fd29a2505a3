/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The network topology Slurm itself reads, read back on a node or a login
 * host to order a job's nodes (rank_order.h): topology.conf's SwitchName=
 * (topology/tree) or BlockName= (topology/block) lines, or topology.yaml
 * (Slurm 25.05 and later), whoever wrote it. Read strictly: whatever
 * Slurm would refuse, or a file that says two things of one node or
 * switch, is an error naming the file and line, and the caller falls back
 * to Slurm's own order.
 */
#ifndef EFA_TOPOLOGY_READ_H
#define EFA_TOPOLOGY_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"

#define EFA_TOPO_MAP_NONE ((size_t)-1)

/* A switch or block. */
struct efa_topo_unit {
	char *name;
	size_t parent;		/* index, or EFA_TOPO_MAP_NONE at the top */
	unsigned line;		/* where it was defined */
};

/* A node and the switch or block directly above it. */
struct efa_topo_member {
	char *name;
	size_t unit;
	unsigned line;
};

struct efa_topo_map {
	struct efa_topo_unit *units;	/* in the file's order */
	size_t nunits;
	struct efa_topo_member *nodes;	/* sorted by name */
	size_t nnodes;
	size_t depth;			/* the most switches above one node */
};

/* Which topology of a topology.yaml to read. */
enum efa_topo_pick {
	/* The one marked cluster_default, else the first: what Slurm uses
	 * for partitions that name none. */
	EFA_TOPO_PICK_DEFAULT,
	/* The first: the tree, in a file slurm-efa sync wrote. */
	EFA_TOPO_PICK_FIRST,
};

/*
 * Reads text (topology.conf or topology.yaml: told apart by content) into
 * m; source names it in errors ("FILE:LINE: ..."), pick which topology of
 * a topology.yaml. Errors: a key Slurm does not know, a node or
 * switch named twice, a child switch never defined or under two parents,
 * a loop, tree and block lines in one file, a list Slurm cannot expand.
 */
int efa_topo_map_parse(const char *text, const char *source, enum efa_topo_pick pick,
		       struct efa_topo_map *m, struct efa_error *err);

/* From a file (a regular file of at most EFA_TOPOLOGY_MAX_SIZE), the
 * cluster's default topology. */
int efa_topo_map_load(const char *path, struct efa_topo_map *m, struct efa_error *err);

void efa_topo_map_clear(struct efa_topo_map *m);

/* The unit node is directly under; EFA_TOPO_MAP_NONE when the map does
 * not name it. */
size_t efa_topo_map_unit_of(const struct efa_topo_map *m, const char *node);

#endif
