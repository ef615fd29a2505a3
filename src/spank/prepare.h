/* SPDX-License-Identifier: Apache-2.0 */
/*
 * init_post_opt, once per step, as root: for a step in EFA mode, the
 * node's description (nodecache.h), the profile's plan, the devices the
 * profile expects and the propagated memlock limit.
 */
#ifndef SPANK_EFA_PREPARE_H
#define SPANK_EFA_PREPARE_H

#include <slurm/spank.h>

#include "common/config/plugin_args.h"
#include "step.h"

/* Builds step->env.plan and keeps step->node and step->env.profiles; problems go
 * to efa_step_fail or the log. Nothing for a step without EFA. */
void efa_prepare_node(struct efa_step *step, spank_t sp, const struct efa_args *args);

#endif
