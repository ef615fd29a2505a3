/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The values of the SPANK options, shared by the plugin, the job_submit
 * bridge (which sees them in spank_job_env) and the CLI.
 */
#ifndef EFA_MODE_H
#define EFA_MODE_H

#include "common/base/error.h"

enum efa_mode {
	EFA_MODE_UNSET = 0,	/* neither the user nor the partition said */
	EFA_MODE_OFF,
	EFA_MODE_AUTO,		/* use EFA where the node has it */
	EFA_MODE_REQUIRED,	/* fail the step where the node lacks it */
};

enum efa_bind {
	EFA_BIND_UNSET = 0,
	EFA_BIND_NONE,
	EFA_BIND_CLOSEST,
};

/*
 * Parses the argument of --efa. A bare --efa (NULL, or "(null)" as Slurm
 * forwards an absent optional argument to remote contexts) means
 * "required": a user who asks for EFA wants to know when it is missing,
 * not a job that silently falls back to TCP.
 */
int efa_mode_parse(const char *arg, enum efa_mode *mode, struct efa_error *err);
const char *efa_mode_name(enum efa_mode mode);

int efa_bind_parse(const char *arg, enum efa_bind *bind, struct efa_error *err);
const char *efa_bind_name(enum efa_bind bind);

/* --efa-rank-order: the order the launch variables number a step's nodes
 * in (common/topology/rank_order.h). */
enum efa_rank_order {
	EFA_RANK_ORDER_UNSET = 0,
	EFA_RANK_ORDER_SLURM,		/* Slurm's: its node list, sorted by name */
	EFA_RANK_ORDER_TOPOLOGY,	/* nodes under one switch or block together */
};

int efa_rank_order_parse(const char *arg, enum efa_rank_order *order, struct efa_error *err);
const char *efa_rank_order_name(enum efa_rank_order order);

/*
 * --efa-resume=N: how many times a job whose node fails is requeued and
 * run again. Slurm's own MaxBatchRequeue= (default 5) caps every job; a
 * value above this one is a typo, not a plan.
 */
#define EFA_RESUME_MAX 100
#define EFA_RESUME_UNSET (-1L)

int efa_resume_parse(const char *arg, long *n, struct efa_error *err);

/* --checkpoint-keep=N: how many checkpoints to keep; 0 keeps them all. */
#define EFA_CKPT_KEEP_UNSET (-1L)
#define EFA_CKPT_KEEP_MAX 100000L

int efa_checkpoint_keep_parse(const char *arg, long *keep, struct efa_error *err);

#endif
