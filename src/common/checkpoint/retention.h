/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checkpoint retention and the resume point: of the checkpoints directly
 * inside a job's checkpoint directory, which one a resumed job starts
 * from and which ones retention deletes. One decision (efa_retention_plan)
 * serves the plugin and `slurm-efa check --checkpoint-dir`.
 *
 * Completeness is each framework's end-of-save mark (complete.h), and
 * only what is positively complete counts:
 * - a job resumes from the newest complete checkpoint, never from an
 *   incomplete or unknown one however new;
 * - keep N counts complete checkpoints: those beyond the N newest go;
 * - an incomplete checkpoint goes only when a complete one is newer by
 *   both its step and its modification time (a save that died); one that
 *   may still be written (newer by either) stays;
 * - an unknown one (no framework speaks for it) is never deleted.
 * A save still running on another node when retention runs is therefore
 * never complete and never the newest complete one: nothing it needs goes.
 *
 * A checkpoint is a directory whose name matches checkpoint-*,
 * checkpoint_*, step-*, step_*, global_step*, iter_* or NeMo's
 * NAME--key=value...: the names training frameworks give them (Hugging
 * Face checkpoint-N, DeepSpeed global_stepN, Megatron iter_N, torchtitan
 * step-N, NeMo and Lightning's metric names). Newest means the highest
 * step when both names carry one of one family (checkpoint-N against
 * checkpoint-M, not against iter_M), as the frameworks resume (a rotation
 * cut off halfway leaves the older directory with the later time), else
 * the latest modification time, ties broken by the name in version
 * order (step_10 is newer than step_9). A file with such a name and a
 * symbolic link are never counted, followed or deleted. At most EFA_RETENTION_MAX
 * checkpoints are judged: a directory holding more is left alone.
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

#define EFA_RETENTION_MAX 10000

bool efa_retention_match(const char *name);

/*
 * Marks the entries to delete: complete checkpoints beyond the keep
 * newest of them, and incomplete ones older (by time and by name) than
 * the newest complete one. Nothing when keep <= 0. Returns how many were
 * marked.
 */
size_t efa_retention_select(struct efa_retention_entry *v, size_t n, long keep);

/*
 * The checkpoint a job resumes from: the newest complete one, never an
 * incomplete or unknown one however new. NULL: none.
 */
const struct efa_retention_entry *efa_retention_newest(const struct efa_retention_entry *v,
						       size_t n);

/* Both decisions on one directory: its entries newest first, each marked
 * for retention with keep, and the one to resume from. */
struct efa_retention_plan {
	struct efa_retention_entry *v;
	size_t n;
	const struct efa_retention_entry *resume;	/* NULL: none */
	size_t removals;
};

/* Scans dirfd and decides; free the plan with efa_retention_plan_free. */
int efa_retention_plan(int dirfd, long keep, struct efa_retention_plan *plan,
		       struct efa_error *err);
void efa_retention_plan_free(struct efa_retention_plan *plan);

/* Sorts entries newest first (the order retention counts them in). */
void efa_retention_sort(struct efa_retention_entry *v, size_t n);

/* Whether an entry is a checkpoint: a directory, not a link, named like one. */
bool efa_retention_is_checkpoint(const struct efa_retention_entry *e);

/* The entries of dirfd whose names match, as lstat(2) sees them, each
 * with its state; an error past EFA_RETENTION_MAX of them. */
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
