/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The order a step's nodes are numbered in (--efa-rank-order): NCCL builds
 * its rings and trees in rank order and does not detect the network
 * itself, and Slurm's order (its node list, by name) says nothing of where
 * an EC2 instance sits. Topology order groups the nodes under their leaf
 * switch (or block), leaves under their parent, and so on up, keeping
 * Slurm's order inside each group and between groups (a group goes where
 * its first node in Slurm's order went). Every node of a step computes it
 * from the same node list and topology file, so all agree; the plugin's
 * launch variables and `slurm-efa hostfile` both use it.
 */
#ifndef EFA_RANK_ORDER_H
#define EFA_RANK_ORDER_H

#include <stddef.h>

#include "common/base/error.h"
#include "common/topology/topology_read.h"

/*
 * order gets n indexes into names (the step's nodes in Slurm's order): the
 * nodes in topology order. -1 with err when m does not name one of them
 * (the caller keeps Slurm's order, and says why) or on ENOMEM.
 */
int efa_rank_order(const struct efa_topo_map *m, char *const *names, size_t n, size_t *order,
		   struct efa_error *err);

/*
 * How many edges of the ring through the nodes in order (each to the
 * next, the last back to the first: NCCL's ring) join nodes under
 * different switches at each layer: crossings[k] for layer k + 1 counted
 * from the top (m->depth entries; nodes above a layer count as one group
 * there), and limit[k], the fewest any order can have: the
 * switches of that layer the nodes span, when more than one. -1 with err
 * when m does not name a node, or on ENOMEM.
 */
int efa_ring_crossings(const struct efa_topo_map *m, char *const *names, const size_t *order,
		       size_t n, size_t *crossings, size_t *limit, struct efa_error *err);

/*
 * SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE ("2(x3),1"): the tasks
 * of each of the n nodes, in Slurm's order. -1 with err when the text
 * does not name exactly n counts.
 */
int efa_tasks_per_node_parse(const char *text, unsigned *tasks, size_t n, struct efa_error *err);

/* Where one node sits in an order: what its tasks are numbered from. */
struct efa_rank_place {
	size_t node_rank;	/* its position in the order */
	unsigned rank_base;	/* the tasks of the nodes before it */
	size_t first;		/* index (in Slurm's order) of the order's first node */
};

/* The place of node self (an index into Slurm's order) in order. */
void efa_rank_place(const size_t *order, const unsigned *tasks, size_t n, size_t self,
		    struct efa_rank_place *place);

#endif
