/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The zone snapshot: what slurm-efa sync learned from slurmrestd, in a JSON
 * file that the job_submit bridge reads without touching the network.
 * Written atomically (temporary file, fsync, rename), so a reader sees the
 * old file or the new one, never half of one.
 */
#ifndef EFA_SNAPSHOT_H
#define EFA_SNAPSHOT_H

#include "common/base/error.h"
#include "common/cluster/zones.h"

#define EFA_SNAPSHOT_FORMAT 1
#define EFA_SNAPSHOT_MAX_SIZE (64 * 1024 * 1024)

int efa_snapshot_write(const struct efa_cluster *c, const char *path, struct efa_error *err);

/* Reads a snapshot; errors name the file and what is wrong with it. */
int efa_snapshot_read(const char *path, struct efa_cluster *c, struct efa_error *err);

/* Parses snapshot text (name for messages), for tests and fuzzing. */
int efa_snapshot_parse(const char *text, size_t len, const char *name, struct efa_cluster *c,
		       struct efa_error *err);

#endif
