/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The repair ladder: what becomes of a node slurm-efa drained (its health
 * check, the job gate, a sick link: a reason starting "efa:"). Every rung
 * is Slurm's own, and what the ladder knows it reads back from Slurm's
 * node state alone (state flags, reason, reason time, boot time), so a
 * restarted runner continues where the last one stopped:
 *
 *   drained "efa: FAULT", idle      -> reboot: scontrol reboot ASAP, the
 *                                      reason "efa: repair reboot: FAULT";
 *                                      the node stays drained through the
 *                                      reboot and the health check returns
 *                                      it after HealthReturnPasses= passes
 *                                      (a check that fails instead writes
 *                                      the fault again: drain_rules.h)
 *   drained "efa: FAULT" again, the  -> replace: power saving's forced power
 *   fault within RepairWindow= of       down, "efa: repair replace: FAULT":
 *   the node's start                    SuspendProgram ends the instance,
 *                                      ResumeProgram starts a new one when
 *                                      Slurm next needs the node; under
 *                                      Slinky the pod deleted and its
 *                                      Kubernetes node cordoned
 *
 * A node with jobs waits until they end; an admin's reason, or one that
 * changed, is never touched; at most RepairMax= nodes of a partition are
 * under repair at once, and never all of its nodes.
 */
#ifndef EFA_HEALTH_REPAIR_H
#define EFA_HEALTH_REPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config/efa_conf.h"

/* The reasons the ladder sets: "efa: repair reboot: FAULT". */
#define EFA_REPAIR_REASON_PREFIX "efa: repair "
#define EFA_REPAIR_REBOOT_WORD "reboot"
#define EFA_REPAIR_REPLACE_WORD "replace"

/* A node as Slurm shows it (slurmrestd's node listing). */
struct efa_repair_node {
	const char *name;
	const char *const *state;	/* lowercase words: "idle", "drain", "reboot_issued" */
	const char *const *partitions;	/* NULL-terminated */
	const char *reason;		/* "" or NULL when none */
	int64_t reason_time;		/* when the reason was set; 0: unknown */
	int64_t started;		/* when the node last came up: its boot, or
					 * for a pod (Slinky) its slurmd's start,
					 * which is the pod's; 0: unknown */
};

enum efa_repair_stage {
	EFA_REPAIR_NOT_OURS = 0,	/* in service, or out of it for someone else */
	/* Drained by slurm-efa, and waiting: */
	EFA_REPAIR_WAIT_JOBS,		/* for its jobs to end */
	EFA_REPAIR_WAIT_TURN,		/* for RepairMax= (or the partition's size) */
	EFA_REPAIR_NO_ACTION,		/* RepairAction=none for it */
	EFA_REPAIR_EXHAUSTED,		/* a reboot did not clear it and no rung is left */
	/* Due now: the runner acts. */
	EFA_REPAIR_DO_REBOOT,
	EFA_REPAIR_DO_REPLACE,
	/* Under repair (counted against RepairMax=): */
	EFA_REPAIR_REBOOTING,		/* reboot requested or issued */
	EFA_REPAIR_CHECKING,		/* rebooted, drained until its checks pass */
	EFA_REPAIR_REPLACING,		/* powering down, or a new instance starting */
	/* Done with, as far as the ladder goes: */
	EFA_REPAIR_REPLACED,		/* powered down; a new instance when Slurm needs it */
};

struct efa_repair_verdict {
	enum efa_repair_stage stage;
	const char *fault;		/* the fault, within the node's reason
					 * (after "efa: " or the repair word) */
	char why[160];			/* a waiting or due node: why, in words */
};

/* The stage's name for people and JSON: "wait-jobs", "reboot", ... */
const char *efa_repair_stage_name(enum efa_repair_stage stage);

/* Whether efa.conf asks for repairs anywhere (globally or for a partition). */
bool efa_repair_configured(const struct efa_config *cfg);

/* The rungs a node may climb: those its partitions allow (each partition
 * that sets RepairAction= narrows it), else the global RepairAction=. */
enum efa_repair_action efa_repair_action_for(const struct efa_config *cfg,
					     const char *const *partitions);

/*
 * Judges every node of the cluster: out[i] for nodes[i]. Nodes are taken
 * in order: an earlier node due for repair takes a partition's turn
 * before a later one.
 */
void efa_repair_plan(const struct efa_config *cfg, const struct efa_repair_node *nodes,
		     size_t n, struct efa_repair_verdict *out);

/* The reason a rung sets: "efa: repair reboot: FAULT" into buf. */
const char *efa_repair_reason(enum efa_repair_stage due, const char *fault, char *buf,
			      size_t size);

#endif
