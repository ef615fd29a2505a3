/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The zone snapshot: what slurm-efa sync learned from slurmrestd, in a JSON
 * file that the job_submit bridge reads without touching the network.
 * Written atomically (temporary file, fsync, rename), so a reader sees the
 * old file or the new one, never half of one.
 */
#ifndef EFA_SNAPSHOT_H
#define EFA_SNAPSHOT_H

#include <stdint.h>
#include <sys/stat.h>

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

/*
 * The compact form, written beside the JSON (snapshot.json: snapshot.bin;
 * another name gets ".bin" added) in the same round, for the bridge: one
 * allocation to load, a few milliseconds at 10,000 nodes. It belongs to
 * one JSON file, named by the identity below; one that does not match it,
 * or fails any check, is ignored and the JSON read instead.
 */
#define EFA_SNAPSHOT_COMPACT_FORMAT 1

struct efa_snapshot_id {	/* the JSON file as stat(2) sees it */
	uint64_t ino;
	uint64_t size;
	int64_t mtime_sec;
	int64_t mtime_nsec;
};

void efa_snapshot_id_of(const struct stat *st, struct efa_snapshot_id *id);

/* Where the compact form of the snapshot at path goes; NULL on ENOMEM. */
char *efa_snapshot_compact_path(const char *path);

/* Writes the compact form of c beside the JSON snapshot at path, which
 * must just have been written from c: the JSON as it is now is recorded. */
int efa_snapshot_write_compact(const struct efa_cluster *c, const char *path,
			       struct efa_error *err);

/*
 * Reads compact snapshot bytes (name for messages), for tests and fuzzing:
 * checked for the JSON of identity json and for this release (json NULL:
 * neither). The cluster lives in one allocation (c->block), read only.
 */
int efa_snapshot_compact_parse(const void *data, size_t len, const char *name,
			       const struct efa_snapshot_id *json, struct efa_cluster *c,
			       struct efa_error *err);

/* The checksum a compact file carries. */
uint64_t efa_snapshot_compact_sum(const void *data, size_t len);

/*
 * Reads the snapshot at path (its JSON): through the compact form when
 * that is current and whole, else the JSON, with note saying why the
 * compact form was not used ("" when it was).
 */
int efa_snapshot_load(const char *path, struct efa_cluster *c, char *note, size_t note_size,
		      struct efa_error *err);

#endif
