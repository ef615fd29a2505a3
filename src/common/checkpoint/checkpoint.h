/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Checkpoint paths: where a job's checkpoints go and whether a partition
 * allows it. One implementation for the SPANK plugin, the job_submit
 * bridge and `slurm-efa check`. Paths are compared as text after
 * normalization: the controller cannot resolve symbolic links on the
 * nodes' file systems, so the node side follows none below the root
 * (checkpoint_dir.h).
 */
#ifndef EFA_CHECKPOINT_H
#define EFA_CHECKPOINT_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"

#define EFA_CKPT_PATH_MAX 4096
/* A longer job name makes the default directory <root>/<user>/<job id>. */
#define EFA_CKPT_NAME_MAX 128
/* Set in every task beside CheckpointEnv= (which the user may override). */
#define EFA_CKPT_ENV_VAR "SLURM_EFA_CHECKPOINT_DIR"
/* The newest complete checkpoint of the job's directory, for a job that
 * resumes: unset when there is none. */
#define EFA_CKPT_RESUME_VAR "CHECKPOINT_RESUME_DIR"

/*
 * Collapses "//", "." and ".." (never above "/") and drops a trailing
 * "/", without looking at the file system. Relative paths and control
 * characters are refused.
 */
int efa_path_normalize(const char *path, char *buf, size_t size, struct efa_error *err);

/* Whether path is root itself or below it; both already normalized. */
bool efa_path_under(const char *root, const char *path);

/*
 * Whether path is root itself or below it, both normalized. Returns 0
 * with the normalized path in buf, or -1 with a message naming the
 * allowed root.
 */
int efa_checkpoint_allowed(const char *root, const char *path, char *buf, size_t size,
			   struct efa_error *err);

/*
 * Whether name can be one directory name: not empty, ".", or "..", no
 * "/", printable ASCII, at most EFA_CKPT_NAME_MAX bytes.
 */
bool efa_checkpoint_name_ok(const char *name);

/*
 * A job's directory when it gave no --checkpoint-dir: <root>/<user>/<job
 * name>, so a resubmitted job finds its checkpoints again, or
 * <root>/<user>/<job id> when the name cannot be a directory name. A task
 * of a job array (array_task: its index, or "%a" for every task; NULL
 * otherwise) gets one of its own, <job name>_<index> (or <array job
 * id>_<index>): the tasks' retentions do not trim each other's, and a
 * resubmitted array finds each task's again. job_id is then the array's.
 */
int efa_checkpoint_default(const char *root, const char *user, const char *job_name,
			   unsigned long job_id, const char *array_task, char *buf, size_t size,
			   struct efa_error *err);

/* --checkpoint-dir=PATH: an absolute path, normalized into buf. */
int efa_checkpoint_dir_parse(const char *arg, char *buf, size_t size, struct efa_error *err);

/*
 * The note the job_submit bridge adds to a job's AdminComment,
 * "slurm-efa: checkpoints in DIR", into buf. The job's EFA summary shares
 * that field as JSON (usage/job_record.h) and DIR is the user's: '{', '}'
 * and control characters in it are written %XX, so that no path can be
 * taken for a summary ('%' stays: a job array's "%a" reads as it is).
 * Returns buf (cut short, never inside an escape, when it does not fit).
 */
const char *efa_checkpoint_note(const char *dir, char *buf, size_t size);

#endif
