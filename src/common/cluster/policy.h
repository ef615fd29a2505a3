/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The submission policy for a job, decided from efa.conf and the zone
 * snapshot alone (slurmctld calls it under its locks: no network, no
 * waiting). The job_submit bridge and `slurm-efa check` both call this.
 */
#ifndef EFA_POLICY_H
#define EFA_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "common/base/error.h"
#include "common/cluster/zones.h"
#include "common/config/efa_conf.h"

struct efa_job_request {
	const char *partition;		/* the job's partitions, comma-separated:
					 * every one's policy holds */
	uint32_t min_nodes;		/* 0: not said (1) */
	uint32_t max_nodes;		/* 0: not said (no limit) */
	const char *features;		/* the user's --constraint, or NULL */
	const char *user;
	const char *job_name;		/* NULL when none */
	const char *efa;		/* --efa as carried: NULL absent, "(null)" bare */
	const char *checkpoint_dir;	/* --checkpoint-dir, or NULL */
	const char *resume;		/* --efa-resume, or NULL */
	bool array;			/* a job array: each task has its own default
					 * directory, recorded as <...>_%a */
};

enum efa_verdict {
	EFA_VERDICT_ACCEPT,		/* unchanged */
	EFA_VERDICT_CHANGE,		/* accept with the fields below */
	EFA_VERDICT_REJECT,		/* message says why and what to do */
};

#define EFA_DECISION_TEXT 1024

struct efa_decision {
	enum efa_verdict verdict;
	char *features;			/* new constraint, when changed */
	char *checkpoint_dir;		/* where checkpoints go, when a root applies */
	/* Resumable (--efa-resume, or a partition's Resume=): Slurm's requeue
	 * turned on, and expedited (efa.conf ResumeExpedite=yes) */
	bool requeue;
	bool expedite;
	long resume;			/* the most times it runs again; 0: not */
	char message[EFA_DECISION_TEXT];	/* for the user (rejections) */
	/* For slurmctld's log, "" when none: what an admin should see at the
	 * default level (a check skipped, a choice left to the node)... */
	char log[EFA_DECISION_TEXT];
	/* ...and what was changed and why, routine for every such job: for
	 * the debug level, where a busy cluster's log can afford it. */
	char detail[EFA_DECISION_TEXT];
};

/*
 * snapshot: NULL when it could not be read (snapshot_problem says why).
 * now: the current time, to judge the snapshot's age.
 */
int efa_policy_decide(const struct efa_config *cfg, const struct efa_cluster *snapshot,
		      const char *snapshot_problem, int64_t now,
		      const struct efa_job_request *req, struct efa_decision *out);

void efa_decision_clear(struct efa_decision *d);

/*
 * Time to save before the time limit: the --signal (sbatch's
 * "B:SIG@SECONDS", in out) for a batch job of these partitions
 * (comma-separated, the job's order) that gives no --signal of its own.
 * The first of them whose CheckpointSignal= is set and in which the job
 * uses EFA (efa: its --efa as carried, NULL when absent; else the
 * partition's EFA=) gives it. Returns 1 with out, 0 when none applies
 * (also for an --efa value the bridge refuses), -1 when out is too small.
 * sbatch applies it (the cli_filter bridge): Slurm's job_submit/lua
 * cannot set a job's signal.
 */
int efa_policy_checkpoint_signal(const struct efa_config *cfg, const char *partitions,
				 const char *efa, char *out, size_t size);

/* Whether any partition of efa.conf has a CheckpointSignal=: when none
 * does, a submission need not learn its default partition. */
bool efa_policy_any_checkpoint_signal(const struct efa_config *cfg);

#endif
