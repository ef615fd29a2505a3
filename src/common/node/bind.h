/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-task accelerator and EFA NIC binding, from the node's PCI topology.
 *
 * Closeness of an accelerator and a NIC comes from their paths under
 * /sys/devices: behind one PCIe switch (they share a bridge below the host
 * bridge) > on one host bridge (p4d shows each switch as its own root bus)
 * > on one NUMA node > anything else. Ties are broken by PCI address,
 * since NICs are kept in PCI order.
 */
#ifndef EFA_BIND_H
#define EFA_BIND_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/node/node.h"

enum efa_close {
	EFA_CLOSE_SYS = 0,
	EFA_CLOSE_NUMA,
	EFA_CLOSE_HOSTBRIDGE,
	EFA_CLOSE_SWITCH,
};

/* nvidia-smi's words: "PXB", "PHB", "NODE", "SYS". */
const char *efa_close_name(enum efa_close level);

enum efa_close efa_closeness(const struct efa_pci *a, const struct efa_pci *b);

struct efa_bind_request {
	const int *gpus;	/* GPU minors (= Slurm GRES indexes), in Slurm's order */
	size_t ngpus;
	bool gpus_given;	/* gpus are this task's own (Slurm bound them, or
				 * the user set CUDA_VISIBLE_DEVICES): keep them */
	unsigned task;		/* local task id */
	unsigned ntasks;	/* tasks of the step on this node */
	int lnc;		/* the job's NEURON_LOGICAL_NC_CONFIG (1, 2); 0:
				 * each device's default */
	const bool *groups;	/* efa_bind_step_groups of these gpus and ntasks,
				 * for a task whose GPUs are not given; NULL:
				 * worked out here */
};

#define EFA_BIND_LIST_MAX 1024

struct efa_task_binding {
	size_t first, count;	/* the task's share of req->gpus (positions),
				 * when it was not given */
	bool shared;		/* more tasks than accelerators */
	char nics[EFA_BIND_LIST_MAX];		/* FI_EFA_IFACE value; "" none */
	char neuron_cores[64];			/* NEURON_RT_VISIBLE_CORES, logical
						 * cores; "" none */
};

/*
 * The binding of one task: its share of the step's GPUs (or, on Neuron
 * nodes without GPUs, of the node's Neuron devices and their cores), and
 * the usable EFA NICs closest to them. Tasks whose accelerators have the
 * same closest NICs split those NICs evenly.
 */
int efa_bind_task(const struct efa_node *node, const struct efa_bind_request *req,
		  struct efa_task_binding *out, struct efa_error *err);

/*
 * Computes every accelerator-NIC closeness once, so the bindings of a
 * step's tasks (each computed in its own process) only look them up.
 * Optional: without it, efa_bind_task computes them itself.
 */
int efa_bind_index(struct efa_node *node);

/*
 * The closest NICs of each of a step's ntasks local tasks sharing the
 * step's GPUs (gpus, in Slurm's order) or, without GPUs, the node's Neuron
 * devices: ntasks rows of node->nnics flags, row k for task k. Worked out
 * once per step, before its tasks fork, each task's binding then reads
 * them (efa_bind_request.groups) instead of working out every task's to
 * find those it shares its NICs with. Free with free(); NULL when out of
 * memory or ntasks is 0.
 */
bool *efa_bind_step_groups(const struct efa_node *node, const int *gpus, size_t ngpus,
			   unsigned ntasks);

/* Parses "0,1,4" (Slurm's GPU index lists). Returns the count, or -1 for
 * anything else or more than max entries. */
int efa_parse_index_list(const char *text, int *out, size_t max);

#endif
