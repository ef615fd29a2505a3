/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One job step on one node, as slurmstepd runs it: everything slurm-efa
 * decides for it, made once by the dispatch file (spank_efa.c) in
 * init_post_opt and handed to each part (prepare.c, checkpoint_step.c,
 * container.c, task.c). Problems are recorded here, never raised where
 * they are found: failing a remote context before task_init can drain the
 * node, so every task of the step fails with the first one instead.
 */
#ifndef SPANK_EFA_STEP_H
#define SPANK_EFA_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <slurm/spank.h>

#include "common/checkpoint/checkpoint.h"
#include "common/config/efa_conf.h"
#include "common/config/mode.h"
#include "common/config/plugin_args.h"
#include "common/env/env.h"
#include "common/node/hw_counters.h"
#include "common/env/profile.h"
#include "common/node/node.h"
#include "options.h"

struct efa_step;

#define EFA_STEP_NAME_MAX 256
#define EFA_STEP_MESSAGE_MAX 1024
#define EFA_STEP_PATH_MAX 4096
#define EFA_STEP_LIST_MAX 2048
#define EFA_STEP_IMAGE_MAX 1024

/* The step's checkpoint directory on this node (checkpoint_step.c). */
struct efa_step_ckpt {
	bool active;		/* the step has a checkpoint directory */
	bool ready;		/* created on this node */
	bool batch;		/* the batch step: retention when it ends */
	char dir[EFA_CKPT_PATH_MAX];
	char root[EFA_CKPT_PATH_MAX];	/* "/" when the partition has none */
	/* The newest complete checkpoint in dir when the step started, the
	 * one a resumed job starts from; "" when there is none. */
	char resume[EFA_CKPT_PATH_MAX];
	enum efa_ckpt_fs fs;
	mode_t mode;
	long keep;
	uid_t uid;
	gid_t gid;
	dev_t dev;		/* the directory as created on the node */
	ino_t ino;
	long timeout_ms;	/* CheckpointTimeout=: how long its file system may take */
};

/* The batch step of a job slurm-efa resumes (resume_step.c); limit 0: not one. */
struct efa_step_resume {
	long limit;		/* --efa-resume, or the partition's Resume= */
	uint32_t job_id;
	uint32_t restarts;	/* Slurm's restart count of this run */
	unsigned long node_failures;	/* how many of them were node failures */
	bool requeue;		/* the job's requeue is on */
	char unread[256];	/* why the job could not be read, when it could not */
};

/* The step's reading of the EFA counters (step_counters.c). Set in
 * init_post_opt before its thread starts; active, start, started and the
 * two descriptors by the thread, read by the step's end once it is
 * joined. */
struct efa_step_counters {
	bool counted;		/* the step is counted here (init_post_opt decided) */
	bool running;		/* its thread runs: join it */
	bool active;		/* a reading was taken at the start, none at the end */
	bool judge;		/* an --efa step on several nodes: its user is told what its figures say */
	uint32_t job_id, step_id;
	uint32_t nnodes, nodeid;	/* the step's nodes, and this one's index */
	uint32_t local_tasks, exited;	/* its tasks on this node, and how many ended */
	uid_t uid;			/* the job's user, named in the node's metrics */
	char partition[64];		/* the job's, for the metrics; "" without MetricsDir= */
	char nodes[EFA_STEP_LIST_MAX];	/* SLURM_STEP_NODELIST */
	char nccl_net[64];		/* the step's NCCL_NET, "" when unset */
	char store[EFA_STEP_PATH_MAX];	/* the node's usage store */
	struct efa_hw_reading start;	/* what the end reads again */
	time_t started;			/* when start was read, as the store has it */
	/* The root and the store as the start found them (O_PATH), for an
	 * end that runs where those paths name other directories:
	 * SlurmdParameters=contain_spank runs task_exit inside the job's
	 * mount namespace, whose private /tmp or /dev/shm may hide them.
	 * held: the two are open (-1 each when not). */
	bool held;
	int root_fd, store_fd;
	/* The thread: it waits for the tasks to run, takes the start
	 * reading, then runs watch (the hang watch, hang_step.h) until the
	 * step ends. Its waits are on CLOCK_MONOTONIC. */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool tasks_run;		/* under lock: task_post_fork was called, */
	struct timespec tasks_since;	/* then */
	bool reading;		/* under lock: the thread went on to read */
	bool stop;		/* under lock: the step ends, the thread with it */
	void (*watch)(struct efa_step *step);	/* NULL: none */
};

/* The step's hang watch on this node (hang_step.c), run by the counters'
 * thread: set in init_post_opt and user_init, before the tasks run, and
 * unchanged while the thread reads it. */
struct efa_step_hang {
	bool watch_hang;	/* HangAfter= on, the job not opted out */
	bool watch_links;	/* SickLinks=yes (link_step.h) */
	long after, interval;	/* HangAfter=, HangCheckInterval=: seconds */
	enum efa_hang_action action;
	long resume_limit;	/* the job's resumes (resume.h) */
	uid_t uid;		/* the job's user: owns its heartbeat */
	char heartbeat[EFA_STEP_PATH_MAX];	/* "" when none */
	char resume[EFA_CKPT_PATH_MAX];		/* efa_hang_note_checkpoint */
};

/* slurmstepd's own root directory, the node's, to tell a container's
 * from it. */
struct efa_host_root {
	bool known;
	dev_t dev;
	ino_t ino;
};

/* GPU indexes a step's list (SLURM_STEP_GPUS) may hold. */
#define EFA_STEP_GPUS_MAX 256

/* What every task's environment is built from (prepare.c fills it as the
 * job's user, task.c applies it). */
struct efa_step_env {
	struct efa_env_plan *plan;		/* NULL: set nothing */
	struct efa_profiles *profiles;		/* kept for a container's own plan */
	char image[EFA_STEP_IMAGE_MAX];		/* the step's container image, or "" (user_init) */
	bool refuse_memlock;			/* drop SLURM_RLIMIT_MEMLOCK in each task */
	/* user_init checked the plan against the node's own files, as the
	 * job's user: a task outside a container sees the same. */
	bool host_settled;
	/* ...and applied what every task shares to the step's environment,
	 * which a task outside a container has by the fork: each task then
	 * decides only its own variables (efa_env_apply_task). */
	bool settled;
};

/* Which GPUs and NICs each task gets (--efa-bind). */
struct efa_step_bind {
	enum efa_bind mode;
	/* The step's GPUs as Slurm gave them, before any per-task binding. */
	char gres_gpus[EFA_STEP_LIST_MAX];
	char cuda_visible[EFA_STEP_LIST_MAX];
	/* closest: each local task's closest NICs when it shares gres_gpus
	 * (efa_bind_step_groups), worked out before the tasks fork; NULL:
	 * each task works them out. */
	bool *groups;
	unsigned ntasks;
};

/* The tasks' ranks and their meeting point (--efa-rank-order, or the
 * partition's RankOrder=; prepare.c). */
struct efa_step_rank {
	enum efa_rank_order order;
	/* The step's nodes are in topology order, this node's tasks numbered
	 * from base and the node itself node. */
	bool ranked;
	unsigned base;
	unsigned node;
	/* Why topology order could not be used: the step's first task says so. */
	char warning[EFA_STEP_MESSAGE_MAX];
	/* MASTER_ADDR: the first node of the step's order as Slurm reaches
	 * it, and where that came from; "" when no address was found (its
	 * name, master_name, is used). */
	char master_name[EFA_STEP_NAME_MAX];
	char master_addr[EFA_STEP_NAME_MAX];
	char master_from[EFA_STEP_NAME_MAX * 2];
};

struct efa_step {
	enum efa_mode mode;
	char node_name[EFA_STEP_NAME_MAX];
	char root[EFA_STEP_PATH_MAX];		/* root= with the node's name */
	char failure[EFA_STEP_MESSAGE_MAX];	/* non-empty: fail every task with it */
	char warning[EFA_STEP_MESSAGE_MAX];	/* non-empty: task 0 tells the job */
	struct efa_config *cfg;			/* NULL when efa.conf did not load */
	const struct efa_partition *part;	/* the job's, in cfg; may be NULL */
	struct efa_node *node;			/* kept for per-task bindings */
	struct efa_step_env env;
	struct efa_step_bind bind;
	struct efa_step_rank rank;
	struct efa_step_ckpt ckpt;
	struct efa_step_resume resume;
	struct efa_step_counters counters;
	struct efa_step_hang hang;
	struct efa_host_root host_root;
};
/*
 * init_post_opt, as root: the node's name, efa.conf, the job's partition
 * and the mode the step runs in. Never fails: what goes wrong is recorded
 * (efa_step_fail) or logged.
 */
void efa_step_open(struct efa_step *step, spank_t sp, const struct efa_args *args,
		   const struct efa_options *opts);

/* Frees what the step holds and forgets it. The rest of the step is left
 * as it was: slurmstepd runs one step, and closes it as the step ends. */
void efa_step_close(struct efa_step *step);

/* Makes every task of the step fail with this message (the first one
 * recorded wins). */
void efa_step_fail(struct efa_step *step, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A variable of the job's environment (the step's, or in task_init the
 * task's), copied into buf; false when it is not set or does not fit. */
bool efa_step_job_env(spank_t sp, const char *name, char *buf, size_t size);

#endif
