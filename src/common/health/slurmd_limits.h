/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurmd's own locked-memory limit. Every process of every job descends
 * from slurmd and inherits its limits (slurmstepd applies a propagated
 * limit only when it is not above them: common/env/memlock.h), and EFA
 * registers the memory it sends from with the device: it needs the limit
 * unlimited (the EFA installer's limits.d file; Slurm's own slurmd.service
 * has LimitMEMLOCK=infinity). A slurmd started with a distribution's 64 KiB
 * or 8 MiB gives every job on the node a limit libfabric's memory
 * registrations fail under ("Cannot allocate memory").
 */
#ifndef EFA_HEALTH_SLURMD_LIMITS_H
#define EFA_HEALTH_SLURMD_LIMITS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

/*
 * The soft limit of "Max locked memory" in the text of a /proc/PID/limits
 * (RLIM_INFINITY for "unlimited"). false when the line is not there or
 * cannot be read.
 */
bool efa_limits_memlock(const char *text, rlim_t *soft);

/*
 * The slurmd this process runs under: the nearest ancestor whose name is
 * slurmd (HealthCheckProgram's parent; the job prolog's slurmstepd's). 0
 * when there is none (a check run by hand). Processes are read from the
 * real /proc, never under a root=: that prefix stands a node's hardware
 * up from files, and slurmd is a process of this host.
 */
pid_t efa_slurmd_ancestor(void);

/*
 * When this process runs under slurmd and slurmd's soft limit is below
 * min (bytes; EFA_BYTES_UNLIMITED: anything but unlimited is below),
 * appends the problem to buf ("; " after what is there) and returns true.
 * min 0, not under slurmd, or a limit that cannot be read: false, nothing
 * added (a health check that cannot tell does not fail a node).
 */
bool efa_slurmd_memlock_problem(long min, char *buf, size_t size);

#endif
