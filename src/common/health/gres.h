/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The accelerators a node's GRES promises the scheduler, against those it
 * shows: a GPU that fell off the bus or lost its driver still counts in
 * Slurm's Gres=gpu:8, and every job given it fails. With HealthGres=yes
 * the health check and the job prolog's gate judge a node by it.
 */
#ifndef EFA_HEALTH_GRES_H
#define EFA_HEALTH_GRES_H

#include <stddef.h>

#include "common/base/error.h"
#include "common/node/node.h"

/* Slurm's GRES names of the accelerators judged. */
#define EFA_GRES_GPU "gpu"
#define EFA_GRES_NEURON "neuron"

/*
 * How many of name a node's Gres= holds, summed over its types:
 * "gpu:8", "gpu:h100:8(S:0-1)", "gpu:a:4,gpu:b:4", "gpu:8,neuron:16".
 * -1 when it names none (or is "(null)"), -2 when it does not parse.
 */
long efa_gres_count(const char *gres, const char *name);

/*
 * The node's Gres= as slurmctld holds it (scontrol show node, within
 * timeout_ms), into buf ("" when it has none). -1 with err when scontrol
 * cannot tell.
 */
int efa_gres_of_node(const char *node, long timeout_ms, char *buf, size_t size,
		     struct efa_error *err);

/*
 * Appends to buf ("; " between) what the node under root lacks against
 * gres: "3/4 GPUs (Gres=gpu:4); 0000:10:1c.0 has no nvidia driver", or
 * the same for Neuron devices. More than gres asks is no problem.
 */
void efa_gres_problems(const struct efa_node *node, const char *root, const char *gres,
		       char *buf, size_t size);

#endif
