/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A job's EFA summary in Slurm's record of it: its AdminComment, which
 * slurmctld keeps while the job runs and hands to slurmdbd when it ends
 * (sacct -o AdminComment), and which only root and SlurmUser can change.
 * The summary is JSON under one key:
 *
 *   {"efa":{"steps":[{"step":0,"nodes":"p5-[001-002]","node_count":2,
 *     "reported":"3","seconds":75,"bytes":0,"tx_bytes":0,"rx_bytes":0,
 *     "retransmitted_packets":0,"retransmit_timeouts":0,
 *     "unresponsive_remotes":0,"impaired_connections":0,
 *     "fallback":true,"shared":false}]}}
 *
 * one entry per --efa step on several nodes, its figures summed over the
 * nodes that reported: "reported" is a bit per node of the step (node i:
 * hex digit i / 4, bit i % 4, first digit first), so a node adds its part
 * once however often it tries. "fallback" is the step's first node's
 * verdict (common/usage/verdict.h), "shared" whether any node had another
 * job's step beside it.
 *
 * A job slurm-efa resumes (--efa-resume) also has its runs that Slurm
 * requeued while all their nodes were healthy, which do not use up its
 * resumes (common/cluster/resume.h):
 *
 *   "requeues":[{"run":1,"cause":"preemption"},{"run":3,"cause":"request"}]
 *
 * "run" is the run's restart count (SLURM_RESTART_COUNT), "cause"
 * "preemption" (PreemptMode=REQUEUE) or "request" (scontrol requeue by a
 * person or a script); the newest EFA_RECORD_REQUEUES_MAX are kept.
 *
 * Whatever the AdminComment held stays as it was, byte for byte: in a
 * JSON object the summary is the value of its key (the last, if the key
 * is there twice), added before the closing brace when missing; anything
 * else (the site's text) is followed by the summary, one space between.
 */
#ifndef EFA_JOB_RECORD_H
#define EFA_JOB_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "common/config/efa_conf.h"

#define EFA_RECORD_KEY "efa"
/* The steps a record keeps: the newest; older ones are counted in
 * "steps_dropped". */
#define EFA_RECORD_STEPS_MAX 32
/* slurmdbd keeps AdminComment in a MySQL TEXT column: 65,535 bytes. */
#define EFA_RECORD_COMMENT_MAX 60000

/* One node's part of a step, or (efa_record_steps) a step's sums. */
struct efa_record_step {
	uint32_t step_id;
	char nodes[1024];	/* the step's node list, as Slurm writes it */
	uint32_t node_count;
	uint32_t node_index;	/* a part: this node's index in the step */
	uint32_t reported;	/* a step: how many nodes added their part */
	long seconds;		/* the longest a node saw the step run */
	bool fallback;
	bool shared;
	uint64_t bytes;		/* sent, received, RDMA both ways */
	uint64_t tx_bytes, rx_bytes;
	uint64_t retransmitted_packets;
	uint64_t retransmit_timeouts, unresponsive_remotes, impaired_connections;
};

/* The runs of a resumable job kept, newest; older ones count as node
 * failures again, so a job cannot grow its resumes by being requeued. */
#define EFA_RECORD_REQUEUES_MAX 64

enum efa_requeue_cause {
	EFA_REQUEUE_PREEMPTION,
	EFA_REQUEUE_REQUEST,
};

/* A run of the job requeued while all its nodes were healthy. */
struct efa_record_requeue {
	uint32_t run;
	enum efa_requeue_cause cause;
};

/* "preemption", "request". */
const char *efa_requeue_cause_name(enum efa_requeue_cause cause);

/*
 * Adds a node's part of a step to comment (the job's AdminComment as it
 * is; NULL or "" for none). *out is the AdminComment to set (malloc'd), or
 * NULL when there is nothing to change: comment holds this node's part
 * already, or the step is older than the EFA_RECORD_STEPS_MAX kept. -1
 * with err when out of memory, the part does not fit (a node index past
 * the step's nodes, the step there with another node count) or the
 * AdminComment would grow past EFA_RECORD_COMMENT_MAX.
 */
int efa_record_add(const char *comment, const struct efa_record_step *part, char **out,
		   struct efa_error *err);

/*
 * The steps of the summary in comment, oldest first (*steps malloc'd;
 * none: 0 steps), and how many older ones were dropped. -1 with err when
 * out of memory.
 */
int efa_record_steps(const char *comment, struct efa_record_step **steps, size_t *nsteps,
		     unsigned long *dropped, struct efa_error *err);

/*
 * Adds rq to comment's requeued runs: *out as for efa_record_add (NULL
 * when the run is there already). -1 with err when out of memory or the
 * AdminComment would grow past EFA_RECORD_COMMENT_MAX.
 */
int efa_record_add_requeue(const char *comment, const struct efa_record_requeue *rq, char **out,
			   struct efa_error *err);

/* The requeued runs in comment, in the order added (*list malloc'd; none:
 * 0). -1 with err when out of memory. */
int efa_record_requeues(const char *comment, struct efa_record_requeue **list, size_t *n,
			struct efa_error *err);

/*
 * Hang detection (common/health/hang.h) keeps two more things:
 *
 *   "quiet":[{"run":0,"step":1,"node_count":4,"nodes":"b"}]
 *   "hangs":[{"run":0,"step":1,"action":"requeue","quiet_seconds":610,
 *     "nodes":"p5-[001-004]"}]
 *
 * "quiet" has, per watched step of the job's current run (its restart
 * count), a bit per node (as "reported") set while that node has seen
 * nothing of the step move for HangAfter=: each node sets and clears its
 * own, and the step's first node reads them all. "hangs" are the hangs
 * found, the newest EFA_RECORD_HANGS_MAX, with what was done.
 */
#define EFA_RECORD_HANGS_MAX 16

struct efa_record_hang {
	uint32_t run, step;
	enum efa_hang_action action;	/* what was done */
	long quiet_seconds;		/* how long the quietest-recent node saw nothing */
	char nodes[1024];		/* the step's nodes */
};

/* "notify", "requeue", "cancel". */
const char *efa_hang_action_name(enum efa_hang_action action);

/*
 * Sets (quiet) or clears node_index's quiet bit for step of run in
 * comment; bits of other runs are dropped. *out as for efa_record_add
 * (NULL when the bit is as asked already). -1 with err when out of
 * memory, the node index is past node_count, or the AdminComment would
 * grow past EFA_RECORD_COMMENT_MAX.
 */
int efa_record_mark_quiet(const char *comment, uint32_t run, uint32_t step, uint32_t node_count,
			  uint32_t node_index, bool quiet, char **out, struct efa_error *err);

/* Whether comment has every one of the node_count quiet bits of step of
 * run set. */
bool efa_record_all_quiet(const char *comment, uint32_t run, uint32_t step, uint32_t node_count);

/*
 * Adds h to comment's hangs (and clears its step's quiet bits): *out as
 * for efa_record_add (NULL when a hang of that run and step is there).
 * -1 with err when out of memory or the AdminComment would grow past
 * EFA_RECORD_COMMENT_MAX.
 */
int efa_record_add_hang(const char *comment, const struct efa_record_hang *h, char **out,
			struct efa_error *err);

/* Any step, any action, for efa_record_hung. */
#define EFA_RECORD_ANY_STEP UINT32_MAX

/* Whether comment has a hang of run in step (EFA_RECORD_ANY_STEP: any)
 * on which action was done (EFA_HANG_ACTION_UNSET: any). false too when
 * memory runs out. */
bool efa_record_hung(const char *comment, uint32_t run, uint32_t step,
		     enum efa_hang_action action);

/* The hangs in comment, oldest first (*list malloc'd; none: 0). -1 with
 * err when out of memory. */
int efa_record_hangs(const char *comment, struct efa_record_hang **list, size_t *n,
		     struct efa_error *err);

/*
 * Sick links (SickLinks=yes, common/health/hang.h) keep two more:
 *
 *   "links":[{"run":0,"step":1,"node_count":3,"above":[[2,0.25]]}]
 *   "sick":[{"run":0,"step":1,"node":"p5-003","rate":0.25,"peers":0.01,
 *     "drained":true}]
 *
 * "links" has, per step of the current run, the nodes whose own link's
 * error rate passed SickLinkFloor= ([node index, rate]; each node sets its
 * own), "sick" the nodes named, the newest EFA_RECORD_SICK_MAX.
 */
#define EFA_RECORD_SICK_MAX 16

struct efa_record_sick {
	uint32_t run, step;
	char node[256];
	double rate;		/* its errors per packet sent over the step */
	double peers;		/* the median of its peers' */
	bool drained;
};

/*
 * Sets node's link rate for step of run (links of other runs dropped):
 * *out as for efa_record_add (NULL when it is there as given). -1 with err
 * when out of memory, node is past node_count, or the AdminComment would
 * grow past EFA_RECORD_COMMENT_MAX.
 */
int efa_record_set_link(const char *comment, uint32_t run, uint32_t step, uint32_t node_count,
			uint32_t node, double rate, char **out, struct efa_error *err);

/* The link rates of step of run in comment into rates[node_count], -1
 * for a node that set none. -1 when out of memory. */
int efa_record_links(const char *comment, uint32_t run, uint32_t step, uint32_t node_count,
		     double *rates);

/* Adds a sick node (*out as for efa_record_add: NULL when that run, step
 * and node are there). -1 with err as efa_record_set_link. */
int efa_record_add_sick(const char *comment, const struct efa_record_sick *sick, char **out,
			struct efa_error *err);

/* The sick nodes in comment, oldest first (*list malloc'd; none: 0). -1
 * with err when out of memory. */
int efa_record_sick_links(const char *comment, struct efa_record_sick **list, size_t *n,
			  struct efa_error *err);

/* The summary's JSON ({"steps":[...]}) as text, malloc'd; NULL when
 * comment holds none or memory ran out. */
char *efa_record_json(const char *comment);

#endif
