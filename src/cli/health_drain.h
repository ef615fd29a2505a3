/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa check --node --drain: the check's result applied in Slurm. */
#ifndef EFA_CLI_HEALTH_DRAIN_H
#define EFA_CLI_HEALTH_DRAIN_H

#include <stdbool.h>

#include "common/config/efa_conf.h"

/*
 * Drains this node (SLURMD_NODENAME, else the host's name) with the
 * reason "efa: problem" when the check failed and nobody took it out of
 * service yet; returns it to service when slurm-efa drained it and
 * HealthReturnPasses= checks in a row have passed (counted in
 * NodeCacheDir=). Says what it did on stdout. Returns 0, or an exit code
 * when Slurm could not be asked or told.
 */
int cli_health_act(const struct efa_config *cfg, bool healthy, const char *problem);

#endif
