/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Availability Zones of a cluster's nodes, read from node features: a
 * feature "<ZoneFeaturePrefix><zone>" (Slinky adds "k8s/" to the features
 * of Kubernetes node annotations, so "k8s/<prefix><zone>" counts too).
 * Plain data, shared by slurm-efa sync (which writes the snapshot) and the
 * job_submit bridge (which reads it).
 */
#ifndef EFA_ZONES_H
#define EFA_ZONES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"

#define EFA_SLINKY_FEATURE_PREFIX "k8s/"

struct efa_cluster_node {
	char *name;
	char *zone;		/* "us-west-2a"; NULL when no zone feature */
	char *zone_feature;	/* the feature itself, "az-us-west-2a" */
	char *state;		/* "idle", "idle+drain", ... */
	bool usable;		/* can take new work */
	bool zone_conflict;	/* features of two zones: never usable */
	char **partitions;	/* NULL-terminated */
	char **layers;		/* network node ids, one per layer prefix, top first;
				 * NULL where the node has none, or two */
	char *block;		/* its EC2 capacity block (an UltraServer); NULL: none */
};

struct efa_cluster_zone {
	char *name;
	char *feature;
	size_t nodes;
	size_t usable;
	char **partitions;	/* NULL-terminated, sorted */
	size_t *part_nodes;	/* per entry of partitions: its nodes here */
	size_t *part_usable;	/*   and of those, the usable ones */
};

struct efa_cluster {
	int64_t generated;	/* when the data was read (epoch seconds) */
	char *source;		/* slurmrestd URL */
	char *slurm_version;
	char *api_version;
	char *zone_prefix;
	/* EC2 network layers as features (TopologyFeaturePrefixes=), top
	 * first; set before adding nodes. NULL: none recorded. */
	char **layer_prefixes;
	size_t nlayers;
	/* The capacity block as a feature (CapacityBlockFeaturePrefix=);
	 * NULL: none recorded. */
	char *block_prefix;
	struct efa_cluster_node *nodes;
	size_t nnodes;
	size_t nodes_cap;
	struct efa_cluster_zone *zones;	/* sorted by name */
	size_t nzones;
	/* Set when all of the above lives in this one allocation (a compact
	 * snapshot read): read only, no nodes can be added. */
	void *arena;
};

/*
 * The zone a node's features name, or NULL; *feature gets the matching
 * feature. Two different zone features on one node are an error (a node
 * sits in one zone): the first is used and *conflict is set.
 */
const char *efa_zone_of(char *const *features, const char *prefix, const char **feature,
			bool *conflict);

/* Whether a node in these (lowercase) states takes new work. */
bool efa_state_usable(char *const *states);

/* Adds a node (copies everything) and keeps the zone table current; a
 * node with features of two zones is kept but not usable. Its layers come
 * from the features by the zone rule, one prefix at a time. */
int efa_cluster_add_node(struct efa_cluster *c, const char *name, char *const *features,
			 char *const *states, char *const *partitions, struct efa_error *err);

/* Where another source (Kubernetes labels, EC2) says a node is. */
struct efa_placement {
	const char *zone;	/* NULL: unknown */
	bool replace_zone;	/* the zone comes from this source */
	/*
	 * One id per layer prefix, top first. Below the deepest one given
	 * the node has no layer (EC2 gives 3 or 4, a reservation 1 to 3); a
	 * layer missing above it is unknown. NULL, or none given: unknown.
	 */
	char *const *layers;
	const char *block;	/* with layers: the capacity block, NULL for none */
	bool replace_layers;	/* the layers (and block) come from this source */
};

/*
 * A node's features as p says where it is: features of c's zone prefix
 * (also under the Slinky prefix), of each layer prefix and of the block
 * prefix give way to prefix+id, or go where p says there is none; what p
 * does not know, the node's own features still say. A new feature takes
 * the place of the first it replaces (else goes last); the rest is kept
 * in order. NULL on ENOMEM.
 */
char **efa_features_placed(char *const *features, const struct efa_cluster *c,
			   const struct efa_placement *p);

/* Records the layer prefixes and the block prefix (NULL or "": none),
 * copied, before nodes are added. */
int efa_cluster_set_layers(struct efa_cluster *c, char *const *prefixes, const char *block_prefix);

void efa_cluster_clear(struct efa_cluster *c);

const struct efa_cluster_zone *efa_cluster_zone(const struct efa_cluster *c, const char *name);

/* A zone's nodes and usable nodes within one partition, without walking
 * the nodes: what a placement decision asks for every zone. */
void efa_zone_in_partition(const struct efa_cluster_zone *z, const char *partition,
			   size_t *nodes, size_t *usable);

#endif
