/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Locked memory for EFA tasks. Slurm copies the submitting shell's soft
 * RLIMIT_MEMLOCK into the job (SLURM_RLIMIT_MEMLOCK, PropagateResourceLimits
 * defaults to ALL), and slurmstepd applies it in each task after the SPANK
 * task_init callbacks (src/slurmd/slurmstepd/task.c, exec_task:
 * spank_user_task, then set_user_limits; ulimits.c, _set_limit, which
 * does nothing when the variable is gone): from a login node at 64 KiB every
 * task gets 64 KiB, and libfabric's memory registration fails with "Cannot
 * allocate memory" (awslabs/awsome-distributed-training issue 647). EFA
 * needs it unlimited (the EFA installer's limits.d file sets that).
 */
#ifndef EFA_MEMLOCK_H
#define EFA_MEMLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>

#define EFA_MEMLOCK_VAR "SLURM_RLIMIT_MEMLOCK"

/*
 * Whether an EFA task must not get the propagated limit (the variable's
 * value: digits, "U" first under --propagate) because it is below the one
 * the task has without it (current: slurmd's, inherited); msg then says
 * so, naming both and the slurm.conf fix. A value Slurm would not read is
 * left to Slurm.
 */
bool efa_memlock_refuse(const char *propagated, rlim_t current, char *msg, size_t size);

#endif
