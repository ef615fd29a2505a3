/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a node's health check does to the node in Slurm: drain it when the
 * check fails, and return it to service only when slurm-efa drained it
 * (its reason starts EFA_DRAIN_REASON_PREFIX) and enough checks in a row
 * have passed since. A node an admin drained or downed, or whose reason
 * changed since, is never touched: its reason is someone else's.
 */
#ifndef EFA_DRAIN_RULES_H
#define EFA_DRAIN_RULES_H

#include <stdbool.h>
#include <stdint.h>

#define EFA_DRAIN_REASON_PREFIX "efa:"

enum efa_drain_action {
	EFA_DRAIN_NOTHING,	/* leave the node as it is */
	EFA_DRAIN_DRAIN,	/* drain it, with slurm-efa's reason */
	EFA_DRAIN_RESUME,	/* return it to service */
};

/* The node as Slurm shows it ("scontrol show node -o"). */
struct efa_node_state {
	bool drained;		/* DRAIN in its state (draining or drained) */
	bool down;		/* DOWN in its state */
	bool repairing;		/* a reboot or a power down under way
				 * (REBOOT_* or POWER* in its state) */
	int64_t slurmd_start;	/* SlurmdStartTime=, local time; 0: not shown */
	int64_t reason_time;	/* the reason's [user@time]; 0: not shown */
	const char *reason;	/* NULL when none */
};

/*
 * Parses one "scontrol show node NAME -o" line: State=..., SlurmdStartTime= and
 * Reason=... (up to the " [user@time]" Slurm appends, whose time is kept).
 * The reason is copied into buf. false when the line names no state.
 */
bool efa_node_state_parse(const char *line, struct efa_node_state *st, char *buf, size_t size);

/*
 * A node the repair ladder rebooted stays drained with its reason
 * ("efa: repair reboot: FAULT", common/health/repair.h) until its checks
 * pass. A check that fails under a slurmd started since (after the reboot,
 * or a new pod under Slinky; not the old machine's before it went) drains it again
 * with the fault as it is now: the new reason's time, next to the node's boot
 * time, tells the ladder that the reboot did not clear it. While the
 * reboot (or a power down) is under way, passing checks do not count.
 *
 * The action for a check that passed (healthy) or not, given the node's
 * state, how many checks in a row have passed while slurm-efa's drain
 * held (*passes, updated) and how many it takes (needed; 0: never return
 * the node by itself).
 */
enum efa_drain_action efa_drain_decide(bool healthy, const struct efa_node_state *st,
				       long *passes, long needed);

/* Whether a reason is slurm-efa's own. */
bool efa_drain_reason_ours(const char *reason);

#endif
