/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checkpoint retention: of the checkpoints directly inside a job's
 * checkpoint directory, keep the N newest complete ones and delete the
 * others. Completeness is each framework's end-of-save mark (complete.h):
 * only complete checkpoints (and those no mark speaks for) count, the
 * newest complete one is never deleted, an incomplete one newer than it
 * (a save still running, or cut off) is left alone, and an incomplete one
 * older than it (a save that died) goes.
 *
 * A checkpoint is an entry whose name matches checkpoint-*, checkpoint_*,
 * step-*, step_*, global_step* or iter_*: the names training frameworks
 * give them (Hugging Face checkpoint-N, DeepSpeed global_stepN, Megatron
 * iter_N, torchtitan step-N). Newest
 * means the latest modification time, ties broken by the name in version
 * order (step_10 is newer than step_9). Only directories are
 * checkpoints: a file with such a name (step_log.txt, checkpoint_notes.md)
 * and a symbolic link are never counted, followed or deleted.
 */
#ifndef EFA_RETENTION_H
#define EFA_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "common/base/error.h"
#include "common/checkpoint/complete.h"

struct efa_retention_entry {
	char *name;
	struct timespec mtime;
	bool is_link;
	bool is_dir;
	enum efa_ckpt_state state;	/* set by efa_retention_scan */
	const char *why;		/* why that state (static text) */
	bool remove;		/* set by efa_retention_select */
};

bool efa_retention_match(const char *name);

/*
 * Marks the entries to delete: complete (and unknown) checkpoints beyond
 * the keep newest of them, and incomplete ones older than the newest of
 * them. Nothing when keep <= 0. Returns how many were marked.
 */
size_t efa_retention_select(struct efa_retention_entry *v, size_t n, long keep);

/*
 * The checkpoint a job resumes from: the newest complete one (or one no
 * mark speaks for), never an incomplete one however new. NULL: none.
 */
const struct efa_retention_entry *efa_retention_newest(const struct efa_retention_entry *v,
						       size_t n);

/* Sorts entries newest first (the order retention counts them in). */
void efa_retention_sort(struct efa_retention_entry *v, size_t n);

/* Whether an entry is a checkpoint: a directory, not a link, named like one. */
bool efa_retention_is_checkpoint(const struct efa_retention_entry *e);

/* The entries of dirfd whose names match, as lstat(2) sees them, each
 * with its state. */
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
