/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One deadline over several parts of a task, each with a limit of its
 * own: a part gets its own limit or what is left, whichever is less.
 * slurmd kills a health check at its own timeout (60 s in 22.05 and
 * 24.11, HealthCheckTimeout= from 25.05 on: run_script_health_check,
 * slurmd.c), and a killed check gives no verdict at all.
 */
#ifndef EFA_DEADLINE_H
#define EFA_DEADLINE_H

#include <stdbool.h>
#include <time.h>

struct efa_deadline {
	struct timespec end;	/* CLOCK_MONOTONIC */
	bool set;
};

/* From now, ms milliseconds; ms <= 0: no deadline. */
void efa_deadline_start(struct efa_deadline *d, long ms);

/* A part's limit: ms, or what is left of d when that is less (never
 * below 0). d NULL or unset: ms. */
long efa_deadline_cap(const struct efa_deadline *d, long ms);

#endif
