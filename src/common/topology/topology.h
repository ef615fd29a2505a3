/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The network tree of a cluster, from the EC2 network layers its nodes
 * carry as features (TopologyFeaturePrefixes=, layer 1 on top), for
 * Slurm's topology plugins.
 *
 * One switch per distinct layer id, named by that id (what
 * DescribeInstanceTopology and the console show); above each layer-1
 * switch, one top switch per zone named by the zone, and nothing above
 * those, so that Slurm never builds one allocation across zones. Nodes
 * without a zone are a zone of their own, "no-zone". A node sits under
 * the deepest layer it has from the top (EC2 gives 3 or 4 by instance
 * type, a capacity reservation 1 to 3: depths mix); one without layer 1
 * sits directly under its zone's switch, and so does one whose layers
 * contradict what earlier nodes (by name) said: an id under two parents,
 * at two layers, or twice in one path, a layer below a missing one, or
 * an id that cannot be a switch name. Nodes of one capacity block (the
 * CapacityBlockFeaturePrefix= feature) are one block for topology/block.
 *
 * topology.c builds the tree, topology_render.c writes topology.conf and
 * topology.yaml, topology_release.c knows which Slurm reads what.
 */
#ifndef EFA_TOPOLOGY_H
#define EFA_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/cluster/zones.h"
#include "common/config/efa_conf.h"

#define EFA_TOPO_NO_ZONE "no-zone"
/* A zone's nodes without layers, beside its layer-1 switches: Slurm
 * refuses a switch with both nodes and switches below it. */
#define EFA_TOPO_NO_LAYERS_SUFFIX "-nolayers"
#define EFA_TOPO_NO_PARENT ((size_t)-1)

struct efa_topo_switch {
	char *name;
	const char *zone;	/* the cluster's zone name; NULL for EFA_TOPO_NO_ZONE */
	size_t layer;		/* 0: a zone's switch; else the network layer */
	size_t parent;		/* index, or EFA_TOPO_NO_PARENT for a zone's switch */
	size_t *children;	/* switch indexes, sorted by name */
	size_t nchildren;
	size_t *nodes;		/* the cluster's node indexes, sorted by name */
	size_t nnodes;
};

/* An EC2 capacity block (an UltraServer's NVLink domain): one block of
 * topology/block, whatever switches its nodes hang from. */
struct efa_topo_block {
	char *name;		/* the capacityBlockId */
	size_t zone;		/* its zone's switch */
	size_t *nodes;		/* the cluster's node indexes, by name */
	size_t nnodes;
};

struct efa_topo_tree {
	const struct efa_cluster *cluster;	/* whose nodes these are; not owned */
	struct efa_topo_switch *switches;	/* zones' switches first, no-zone last */
	size_t nswitches;
	size_t nzones;
	struct efa_topo_block *blocks;	/* in the order first seen, by node name */
	size_t nblocks;
	bool *in_block;		/* per cluster node: in one of blocks */
	size_t without_layers;	/* nodes without a layer 1 feature */
	size_t inconsistent;	/* nodes whose layers contradict others' */
	size_t without_zone;
	char note[EFA_ERROR_MAX];	/* the first contradiction, for the log */
};

/* Builds the tree of c, which must outlive it. Fails only on ENOMEM and on
 * zone names that cannot be switch names. */
int efa_topology_build(const struct efa_cluster *c, struct efa_topo_tree *t, struct efa_error *err);

void efa_topology_clear(struct efa_topo_tree *t);

/*
 * topology.conf text, deterministic: EFA_TOPOLOGY_TREE as SwitchName=
 * lines for topology/tree; EFA_TOPOLOGY_BLOCK for topology/block (Slurm
 * 23.11+) as one BlockName= line per switch holding nodes and BlockSizes=
 * such that no block Slurm joins from them spans two zones (zones padded
 * with empty blocks where the cluster's Slurm, 26.05 on, reads them).
 * NULL on ENOMEM.
 */
char *efa_topology_render(const struct efa_topo_tree *t, enum efa_topology format);

/* The names of the two topologies of topology.yaml, for partitions'
 * Topology=. */
#define EFA_TOPO_YAML_TREE "tree"
#define EFA_TOPO_YAML_BLOCK "block"

/*
 * topology.yaml text (Slurm 25.05 and later): the tree and the blocks
 * efa_topology_render writes, as the topologies EFA_TOPO_YAML_TREE and
 * EFA_TOPO_YAML_BLOCK; cluster_default (tree or block) is the one for
 * partitions that name none. NULL on ENOMEM.
 */
char *efa_topology_render_yaml(const struct efa_topo_tree *t, enum efa_topology cluster_default);

/* Whether a Slurm of this version reads topology.yaml (25.05 and later);
 * true when the version is unknown. (topology_release.c: what each Slurm
 * release reads.) */
bool efa_slurm_reads_topology_yaml(const char *slurm_version);

/*
 * Which of Slurm's topology files a Slurm of this version reads, given
 * whether topology.yaml exists beside slurm.conf: that one from 25.05 on
 * (src/interfaces/topology.c reads topology.conf only when the YAML file
 * is absent), topology.conf before.
 */
const char *efa_topology_file_name(const char *slurm_version, bool yaml_exists);

/* Slurm 26.05 reads a block without nodes; 24.11 refuses it ("block ...
 * hasn't got nodes"). Releases between were not measured. */
bool efa_slurm_takes_empty_blocks(const char *slurm_version);

/*
 * The syntax to write path in: configured, unless auto; then the file
 * name's (.yaml or .conf); else YAML where the cluster's Slurm reads it.
 */
enum efa_topology_format efa_topology_format_for(enum efa_topology_format configured,
						 const char *path, const char *slurm_version);

/* The nodes directly under s as a hostlist expression. NULL on ENOMEM. */
char *efa_topology_nodes(const struct efa_topo_tree *t, const struct efa_topo_switch *s);

#endif
