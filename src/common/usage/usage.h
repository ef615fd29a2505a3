/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What jobs moved over a node's EFA devices, kept on the node: each step
 * takes a reading of the devices' counters when it starts (hw_counters.h)
 * and, when it ends, adds what moved since to its job's totals. The store
 * is a directory per node under NodeCacheDir= (a tmpfs emptied at boot,
 * like the counters it holds):
 *
 *   step-JOB.STEP   the reading a running step started from
 *   span-JOB        the reading the job's first running step started
 *                   from: its totals are the devices' counters over the
 *                   time any of its steps ran, counted once however its
 *                   steps overlap (srun ... & srun ... & wait)
 *   jobs            one line per job: running jobs, and the most recent
 *                   EFA_USAGE_RECENT that ended
 *   lock            flock(2)ed around every change: steps of many jobs
 *                   start and end at once
 *
 * A running job's totals are live: its closed spans' sums plus what its
 * open span moved up to a reading taken now. The figures are the
 * devices', not the job's own, when a step of another job ran on the node
 * while one of its steps did: such a job is marked shared.
 */
#ifndef EFA_USAGE_H
#define EFA_USAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/base/error.h"
#include "common/node/hw_counters.h"

/* Jobs that ended kept on a node, for a scrape or two after their end. */
#define EFA_USAGE_RECENT 32
/* Jobs running on one node at once, at most: the rest are not counted. */
#define EFA_USAGE_RUNNING_MAX 1024
/*
 * A step's start reading is taken this many seconds after its tasks start,
 * by a thread of its slurmstepd, not before they run: neither reading is
 * then on the way from srun to the step's tasks, and a step that ends
 * sooner (srun hostname, a launch benchmark's steps) reads nothing and is
 * not counted. Its figures start then: what its tasks moved, and the
 * errors they met, in their first second are not in them (a task's
 * collectives start once its processes have loaded and met their peers).
 */
#define EFA_USAGE_START_AFTER_S 1

struct efa_job_usage {
	uint32_t job_id;
	char user[64];
	char partition[64];
	time_t start;
	time_t end;		/* 0 while the job runs on the node */
	bool shared;		/* another job's step ran beside one of its steps */
	unsigned steps;		/* steps that ended */
	unsigned hangs;		/* hangs found in its steps on the node (HangAfter=) */
	unsigned sick_links;	/* times the node's link was named sick in its steps */
	uint32_t have;		/* bit c: some step's devices had counter c */
	uint64_t total[EFA_HW_NCOUNTERS];
};

/* One ended step on the node (efa_usage_step_end). */
struct efa_step_usage {
	time_t start, end;
	bool shared;
	struct efa_hw_reading delta;	/* per port */
};

/*
 * The node's store: dir/usage-NODE, made (0700) when missing. path holds
 * it for the calls below. The node name must be a node name
 * (efa_node_name_safe).
 */
int efa_usage_dir(const char *cache_dir, const char *node, char *path, size_t size,
		  struct efa_error *err);

/*
 * A step starts with reading now. With table, its job is in the jobs table
 * (for the node's metrics file, MetricsDir=), labelled with user and
 * partition; without, only the step's own file is written (what the step's
 * end and other jobs' steps read).
 */
int efa_usage_step_begin(const char *dir, uint32_t job, uint32_t step, bool table,
			 const char *user, const char *partition, const struct efa_hw_reading *now,
			 time_t when, struct efa_error *err);

/*
 * The step ends with reading now: what moved since its start is returned
 * in out (clear it with efa_step_usage_clear). With table, when it was its
 * job's last running step on the node, the job's span closes and what
 * moved over it is added to the job's totals. Counters that went back are
 * named in notes.
 * -1 with err when the step has no start (it started before MetricsDir=
 * was set, or the node rebooted) or the store cannot be changed.
 */
int efa_usage_step_end(const char *dir, uint32_t job, uint32_t step, bool table,
		       const struct efa_hw_reading *now, time_t when, struct efa_step_usage *out,
		       char *notes, size_t size, struct efa_error *err);

void efa_step_usage_clear(struct efa_step_usage *u);

/* The job ended on the node (its epilog): no longer running. 1 when it
 * was running in the store, 0 when the store does not hold it running
 * (no error), -1 with err. */
/* What a running job's steps found on the node (common/health/hang.h). */
enum efa_usage_event {
	EFA_USAGE_HANG,		/* the step hung */
	EFA_USAGE_SICK_LINK,	/* the node's link was named sick */
};

/* Counts an event of the running job: 1 when counted, 0 when the job is
 * not running on the node, -1 with err. */
int efa_usage_job_event(const char *dir, uint32_t job, enum efa_usage_event event,
			struct efa_error *err);

int efa_usage_job_end(const char *dir, uint32_t job, time_t when, struct efa_error *err);

/*
 * The jobs of the store, running first, then the ended ones, newest
 * first; a running job's totals include its running steps up to now
 * (NULL: finished steps only). *jobs is malloc'd.
 */
int efa_usage_jobs(const char *dir, const struct efa_hw_reading *now,
		   struct efa_job_usage **jobs, size_t *njobs, struct efa_error *err);

#endif
