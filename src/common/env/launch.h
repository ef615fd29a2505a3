/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The distributed-launch variables PyTorch and the Neuron runtime read, so
 * "srun python train.py" works without torchrun: RANK, LOCAL_RANK,
 * WORLD_SIZE, LOCAL_WORLD_SIZE, NODE_RANK, MASTER_ADDR (the step's first
 * node, in Slurm's order or the topology's (rank_order.h), at
 * the address Slurm reaches it by: node names often do not resolve),
 * MASTER_PORT (from the job and step ids: the same on every node), and on
 * Neuron nodes NEURON_RT_ROOT_COMM_ID.
 */
#ifndef EFA_LAUNCH_H
#define EFA_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/env/env.h"

#define EFA_LAUNCH_VARS 8

struct efa_launch {
	unsigned rank, local_rank, world_size, local_world_size, node_rank;
	bool topology_order;	/* rank and node_rank in topology order */
	const char *first_node;	/* the first node in that order, by name */
	unsigned job_id, step_id;
	long port_lo, port_hi;	/* MasterPortRange= */
	bool neuron;		/* also NEURON_RT_ROOT_COMM_ID */
	bool node_shared;	/* only what all the node's tasks share: no
				 * RANK or LOCAL_RANK (rank and local_rank
				 * unused) */
	/* The first node's address as Slurm reaches it (its NodeAddr, also
	 * for dynamic and cloud nodes), the same on every node of the step;
	 * NULL: first_node. master_from says where it came from. */
	const char *master_addr;
	const char *master_from;
};

/* The first host of a Slurm hostlist ("gpu-[001-004,010],x" -> "gpu-001"). */
int efa_hostlist_first(const char *hostlist, char *buf, size_t size);

long efa_master_port(unsigned job_id, unsigned step_id, long lo, long hi);

/*
 * Fills entries (EFA_LAUNCH_VARS at most) as efa_launch_entry_set does;
 * free them with efa_launch_entries_free. Returns the count, or -1.
 */
int efa_launch_entries(const struct efa_launch *l, struct efa_env_entry *entries,
		       struct efa_error *err);
void efa_launch_entries_free(struct efa_env_entry *entries, size_t n);

/*
 * Fills e (its flags cleared) with copies of name, value and reason in one
 * allocation, which efa_launch_entries_free frees: a task makes a dozen
 * entries, and three allocations each cost more than the rest of making
 * them. -1 without memory (e then holds nothing).
 */
int efa_launch_entry_set(struct efa_env_entry *e, const char *name, const char *value,
			 const char *reason);

#endif
