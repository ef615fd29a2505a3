/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node health check's result applied to the node in Slurm, through
 * scontrol with a deadline (common/cluster/scontrol.h), by whoever ran the
 * check on the node as root: slurm-efa check --node --drain (Slurm's
 * HealthCheckProgram) and the job prolog's gate. The rules are
 * common/health/drain_rules.h's.
 */
#ifndef EFA_HEALTH_NODE_DRAIN_H
#define EFA_HEALTH_NODE_DRAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/deadline.h"
#include "common/base/error.h"
#include "common/config/efa_conf.h"

#define EFA_DRAIN_MESSAGE_MAX 1024

/*
 * Drains node (its Slurm name, safe in a path: efa_node_name_safe) with
 * the reason "efa: problem" when the check failed and nobody took it out
 * of service yet. With may_return, also returns it to service when
 * slurm-efa drained it and HealthReturnPasses= checks in a row have passed
 * (counted in NodeCacheDir=); without (the prolog's gate, which judges one
 * job's start), a passing check neither asks Slurm anything nor counts.
 * Returns 0 with what it did in did ("" when nothing; a count of passes
 * it could not keep is said there too), or -1 with err saying why Slurm
 * could not be asked or told. With dl (NULL: none), each scontrol takes at
 * most what is left of it.
 */
int efa_node_health_act(const struct efa_config *cfg, const char *node, bool healthy,
			const char *problem, bool may_return, const struct efa_deadline *dl,
			char *did, size_t size, struct efa_error *err);

#endif
