/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cluster as slurm-efa sync and the CLI see it: Slurm's nodes from
 * slurmrestd (libslurmrest), each placed in its zone and network layers by
 * the source efa.conf names (ZoneSource=, TopologySource=: the nodes' own
 * features, the Kubernetes API or the EC2 API), with the feature updates
 * that would make Slurm's features say the same (WriteFeatures=).
 */
#ifndef EFA_SOURCES_ASSEMBLY_H
#define EFA_SOURCES_ASSEMBLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/cluster/zones.h"
#include "common/config/efa_conf.h"
#include "rest/slurmrest.h"

struct ec2;

/* A node whose features in Slurm differ from those its zone and layer
 * sources give: what WriteFeatures= fixes. */
struct node_feature_update {
	char *node;
	char **from;		/* Slurm's now */
	char **to;		/* with the sources' zone and layers */
};

struct node_feature_updates {
	struct node_feature_update *v;
	size_t n;
};

void node_feature_updates_clear(struct node_feature_updates *u);

/* Who failed a read: slurmrestd keeps libslurmrest's error (and its code,
 * which says whether asking again may help); Kubernetes and EC2 are not
 * slurmrestd and have no libslurmrest code. */
enum assembly_failed_at {
	ASSEMBLY_AT_SLURMRESTD,
	ASSEMBLY_AT_KUBERNETES,
	ASSEMBLY_AT_EC2,
	ASSEMBLY_AT_MEMORY,
};

struct assembly_error {
	enum assembly_failed_at at;
	slurmrest_error rest;			/* at ASSEMBLY_AT_SLURMRESTD */
	char message[SLURMREST_ERROR_MAX];	/* what failed; Kubernetes' and EC2's
						 * prefixed with their name */
};

/* One reader of the cluster, kept across reads by sync. */
struct assembly {
	slurmrest_t *rest;		/* not owned */
	const struct efa_config *cfg;	/* not owned */
	const char *url;		/* slurmrestd's, as the snapshot names it */
	int64_t since;			/* the last answer's update time; 0: none */
	struct ec2 *ec2;		/* what EC2 said, kept between reads */
};

/*
 * Reads nodes and zones into cluster. conditional: ask slurmrestd only for
 * what changed since a->since (updated here); an unchanged cluster sets
 * *not_modified and fills nothing. With updates, the nodes whose features
 * the sources change are listed. Returns 0, or -1 with *err filled.
 */
int assembly_read(struct assembly *a, bool conditional, struct efa_cluster *cluster,
		  int *not_modified, struct node_feature_updates *updates,
		  struct assembly_error *err);

/* Closes what the reads kept (the EC2 client). */
void assembly_clear(struct assembly *a);

#endif
