/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The repair ladder (common/health/repair.h) run against a live cluster:
 * its nodes read from slurmrestd, each judged, and the rungs due taken
 * through scontrol (slurmrestd has no reboot in any API version, and
 * v0.0.38 no node update at all: one way for every release and rung).
 * slurm-efa sync runs a round each interval with RepairAction= set;
 * slurm-efa repair --status prints the same judgement.
 */
#ifndef EFA_CLI_REPAIR_ROUND_H
#define EFA_CLI_REPAIR_ROUND_H

#include <stdbool.h>
#include <stdint.h>

#include "common/config/efa_conf.h"
#include "common/health/repair.h"
#include "rest/slurmrest.h"

/* The cluster's nodes and the ladder's verdict on each. */
struct repair_view {
	slurmrest_nodes *nodes;
	struct efa_repair_node *in;		/* nodes->count, borrowing from nodes */
	struct efa_repair_verdict *verdict;	/* one per node */
};

/*
 * Reads the nodes (since > 0: only when something changed since then;
 * view->nodes->not_modified says it did not) and judges them. Returns 0,
 * or -1 with err.
 */
int repair_view_read(slurmrest_t *rest, const struct efa_config *cfg, int64_t since,
		     struct repair_view *view, slurmrest_error *err);
void repair_view_clear(struct repair_view *view);

/* A node's time as scontrol shows it (local, 2026-12-07T04:21:40), or
 * none when Slurm did not say. Returns buf. */
const char *repair_time_text(int64_t t, const char *none, char *buf, size_t size);

typedef void (*repair_say)(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* What a runner keeps between rounds: only what saves work, never what
 * the ladder decides by (that is Slurm's state). */
struct repair_runner {
	int64_t since;		/* the last answer's update time */
	bool failing;		/* the last round could not read the nodes: said once */
};

/* One round: the rungs due taken, each said with its evidence. */
void repair_round(struct repair_runner *r, slurmrest_t *rest, const struct efa_config *cfg,
		  repair_say say);

#endif
