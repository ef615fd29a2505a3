/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What is broken on a node beyond a missing EFA device: the things a
 * health check (slurm-efa check --node) names so that an admin, or the
 * drain that follows, knows what failed. Read from the node's own files
 * under its root, as discovery reads them.
 */
#ifndef EFA_NODE_HEALTH_H
#define EFA_NODE_HEALTH_H

#include <stddef.h>

#include "common/node/node.h"

/*
 * Appends to buf ("; " between problems) every EFA port whose state is
 * not ACTIVE (the efa driver's ports/N/state, "4: ACTIVE" when up: an
 * EFA port that is down carries nothing). Returns how many problems were
 * found, or -1 without the memory to look (which says nothing of the
 * ports). (GPUs are not judged here: a node sees every GPU on its bus,
 * and a pod only those given to it; only the node's GRES says how many
 * it should have.)
 */
int efa_node_health_problems(const struct efa_node *node, const char *root, char *buf,
			     size_t size);

#endif
