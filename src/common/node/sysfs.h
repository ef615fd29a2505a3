/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a node's /sys, /proc, /dev and /opt under a root prefix, so tests
 * (and acceptance checks) can stand a node's hardware up from a directory
 * tree. Every path argument is the path on the node ("/sys/..."); root is
 * prepended here and nowhere else. Looking a path up takes no memory, so
 * that a file reported missing is missing: a node whose devices read as
 * gone is drained, and running short of memory is not a fault of its own.
 */
#ifndef EFA_SYSFS_H
#define EFA_SYSFS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"

struct efa_sysfs {
	char *root;		/* "" for "/", else without trailing slash */
	char *real_root;	/* realpath(root), to strip resolved links */
	int dirfd;		/* the root, opened O_PATH: lookups start there */
	bool confined;		/* links resolve inside root, as in a chroot */
};

int efa_sysfs_open(struct efa_sysfs *fs, const char *root);

/*
 * The same for a tree someone else made, an unpacked container image:
 * every lookup resolves "..", and links absolute or relative, as if root
 * were "/" (openat2's RESOLVE_IN_ROOT), so the image cannot make slurm-efa
 * read a file of the host. Where the kernel cannot (before 5.6), nothing
 * under the root can be read.
 */
int efa_sysfs_open_confined(struct efa_sysfs *fs, const char *root);
void efa_sysfs_close(struct efa_sysfs *fs);

/* Reads a small attribute file, trailing whitespace removed. Returns 0,
 * or -1 when it cannot be read (buf is then ""). */
int efa_sysfs_read(const struct efa_sysfs *fs, char *buf, size_t size,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * A directory under the root, opened for efa_sysfs_read_in (close it
 * after), or -1. For many attributes of one directory: each is then one
 * lookup, not a walk from the root.
 */
int efa_sysfs_open_dir(const struct efa_sysfs *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* efa_sysfs_read of the entry name (one component, never followed as a
 * link) of a directory from efa_sysfs_open_dir. */
int efa_sysfs_read_in(const struct efa_sysfs *fs, int dir, const char *name, char *buf,
		      size_t size);

/* An attribute as an integer (base 0: "0x10de" and "-1" both work). */
int efa_sysfs_read_long(const struct efa_sysfs *fs, long *value,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A whole regular file of at most max bytes, as efa_read_file. */
int efa_sysfs_read_file(const struct efa_sysfs *fs, size_t max, char **text, size_t *len,
			struct efa_error *err, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* A regular file opened for reading (O_NONBLOCK: a FIFO never blocks),
 * for a caller that reads it in pieces; -1 for anything else. */
int efa_sysfs_open_regular(const struct efa_sysfs *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

bool efa_sysfs_exists(const struct efa_sysfs *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The last component of a symlink's target ("efa" for a driver link),
 * or -1. */
int efa_sysfs_link_name(const struct efa_sysfs *fs, char *buf, size_t size,
			const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The node path a link or path resolves to ("/sys/devices/pci..."),
 * malloc'd in *node: 0, and *node NULL when it resolves to nothing under
 * the root (a dangling link, one leaving the root); -1 without memory,
 * which says nothing about the path.
 */
int efa_sysfs_resolve(const struct efa_sysfs *fs, char **node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Sorted names in a directory (no "." entries), NULL-terminated and
 * malloc'd (free with efa_strv_free); an empty list when the directory is
 * missing; NULL on ENOMEM. */
char **efa_sysfs_list(const struct efa_sysfs *fs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
