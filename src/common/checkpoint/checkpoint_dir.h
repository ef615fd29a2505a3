/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A checkpoint directory on a node: the file system its root is on, and
 * the directory itself, created and opened as the job's user without
 * following a symbolic link anyone planted.
 */
#ifndef EFA_CHECKPOINT_DIR_H
#define EFA_CHECKPOINT_DIR_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/vfs.h>

#include "common/base/error.h"
#include "common/config/efa_conf.h"

#define EFA_LUSTRE_SUPER_MAGIC 0x0BD00BD0

/* statfs(2), or a test's stand-in. */
typedef int (*efa_statfs_fn)(const char *path, struct statfs *st);

/* The name of a file system magic ("ext4", "nfs"), NULL when unknown. */
const char *efa_fs_name(unsigned long magic);

/*
 * CheckpointFS=lustre: root must be on Lustre, so a node whose FSx mount
 * is missing does not write checkpoints to its own disk. The error names
 * root and the file system found. fs_stat NULL: statfs(2).
 */
int efa_checkpoint_fs_check(const char *root, enum efa_ckpt_fs fs, efa_statfs_fn fs_stat,
			    struct efa_error *err);

/*
 * Opens dir (normalized; root itself or below it; root NULL: "/") and
 * returns its fd, or -1 with err. The walk starts at "/" and opens one
 * component at a time with openat(O_NOFOLLOW), so no symbolic link is
 * followed. Every component must be a directory owned by root or uid,
 * one not owned by uid must not be writable by all without the sticky
 * bit, and dir itself must be uid's.
 *
 * With create, missing components below root are made with mode (exactly:
 * the umask does not narrow it) using the caller's credentials, so the
 * caller must run as uid: they become uid's without a chown. Another
 * process creating the same path at the same time is fine. root itself is
 * never created: a missing root is a file system that is not mounted.
 */
int efa_checkpoint_open(const char *root, const char *dir, uid_t uid, bool create,
			mode_t mode, struct efa_error *err);

#endif
