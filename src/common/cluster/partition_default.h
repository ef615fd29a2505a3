/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The partition slurmctld gives a job that names none (slurm.conf's
 * Default=YES), for a submission that must know where it will run
 * before slurmctld has it: asked of slurmctld, as a configless client
 * has no slurm.conf to read. And what a submission adds from it.
 */
#ifndef EFA_PARTITION_DEFAULT_H
#define EFA_PARTITION_DEFAULT_H

#include <stddef.h>

#include "common/base/error.h"

/*
 * The Default=YES partition in the text of "scontrol -o show partition"
 * (one partition per line). 0 with its name, 1 when no partition is the
 * default, -1 when the name does not fit in size bytes.
 */
int efa_default_partition_parse(const char *text, char *name, size_t size);

/*
 * Asks slurmctld (scontrol, at most timeout_ms). 0 with the name, 1 when
 * no partition is the default, -1 with err saying why it could not tell.
 */
int efa_default_partition(long timeout_ms, char *name, size_t size, struct efa_error *err);

/* How long a submission waits at most to learn its default partition. */
#define EFA_DEFAULT_PARTITION_TIMEOUT_MS 10000

struct efa_config;

/*
 * The --signal a batch job being submitted gets from its partition's
 * CheckpointSignal= (efa_policy_checkpoint_signal), its partition asked of
 * slurmctld when the job names none (partition NULL) and some partition
 * has the key. sbatch's cli_filter and `slurm-efa submit` call it.
 * Returns 1 with out, 0 when none applies, -1 when it could not tell (err
 * says why).
 */
int efa_submit_checkpoint_signal(const struct efa_config *cfg, const char *partition,
				 const char *efa, char *out, size_t size, struct efa_error *err);

#endif
