/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checkpoint retention: of the checkpoints directly inside a job's
 * checkpoint directory, keep the N newest and delete the others.
 *
 * A checkpoint is an entry whose name matches checkpoint-*, checkpoint_*,
 * step-*, step_*, global_step* or iter_*: the names training frameworks
 * give them (Hugging Face checkpoint-N, DeepSpeed global_stepN, Megatron
 * iter_N, torchtitan step-N). Newest
 * means the latest modification time, ties broken by the name in version
 * order (step_10 is newer than step_9). Only directories are
 * checkpoints: a file with such a name (step_log.txt, checkpoint_notes.md)
 * and a symbolic link are never counted, followed or deleted. With N >= 1
 * the most recently modified checkpoint, which may still be being
 * written, is always kept.
 */
#ifndef EFA_RETENTION_H
#define EFA_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/base/error.h"

struct efa_retention_entry {
	char *name;
	struct timespec mtime;
	bool is_link;
	bool is_dir;
	bool remove;		/* set by efa_retention_select */
};

bool efa_retention_match(const char *name);

/*
 * Marks the entries to delete: checkpoints beyond the keep newest.
 * Nothing when keep <= 0 or when at most keep checkpoints exist.
 * Returns how many were marked.
 */
size_t efa_retention_select(struct efa_retention_entry *v, size_t n, long keep);

/* The entries of dirfd whose names match, as lstat(2) sees them. */
int efa_retention_scan(int dirfd, struct efa_retention_entry **v, size_t *n,
		       struct efa_error *err);
void efa_retention_free(struct efa_retention_entry *v, size_t n);

/*
 * Deletes name from dirfd: a directory with all it holds, never following
 * a link inside it (links are removed, not their targets). A name that
 * is no longer a directory (a link or a file since the scan) is left
 * alone.
 */
int efa_retention_remove(int dirfd, const char *name, struct efa_error *err);

/* Told each deleted checkpoint, or (error set) each one that could not be. */
typedef void (*efa_retention_report_fn)(void *ctx, const char *name, const char *error);

/*
 * Scans, selects and deletes, reporting each checkpoint deleted or not.
 * Returns -1 when the directory could not be read or a deletion failed.
 */
int efa_retention_apply(int dirfd, long keep, efa_retention_report_fn report, void *ctx,
			struct efa_error *err);

#endif
