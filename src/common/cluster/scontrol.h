/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Telling slurmctld something from a node (a health check draining its
 * node, a batch step turning off its job's requeue): scontrol, run with
 * a deadline, so that a controller that is away never hangs slurmd or
 * slurmstepd.
 */
#ifndef EFA_SCONTROL_H
#define EFA_SCONTROL_H

#include <stddef.h>

/* scontrol answers at once or the controller is away. */
#define EFA_SCONTROL_TIMEOUT_MS 30000

/*
 * Runs argv (argv[0] "scontrol", found on PATH) for at most timeout_ms.
 * Returns 0 with what it printed in out, or -1 with out saying why: it
 * could not start, did not answer in time, or exited non-zero (its own
 * message, when it printed one).
 */
int efa_scontrol(char *const *argv, long timeout_ms, char *out, size_t size);

#endif
