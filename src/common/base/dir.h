/* SPDX-License-Identifier: Apache-2.0 */
#ifndef EFA_DIR_H
#define EFA_DIR_H

#include "common/base/error.h"

/*
 * Calls fn(name, arg) for each entry of the directory open at fd but "."
 * and "..", in the order the file system gives (sysfs does not sort). It
 * reads with getdents64 into a buffer on the stack: opendir's DIR costs
 * an fstat and a 32 KiB allocation per directory, and a step lists
 * several. A non-zero return of fn ends the walk with that value.
 * Returns 0, fn's value, or -1 with errno when the directory cannot be
 * read. fd stays open, at the directory's end.
 */
int efa_dir_each(int fd, int (*fn)(const char *name, void *arg), void *arg);

/*
 * Deletes name from the directory open at dirfd, with all it holds when it
 * is a directory, from directory descriptors (openat with O_NOFOLLOW,
 * unlinkat), never through a path: a link inside is removed, never
 * followed, and one swapped in for a directory while the walk runs is
 * refused (ELOOP), so whoever owns a part of the tree cannot make it
 * delete anything outside it. Gone already is done. 0, or -1 with err.
 */
int efa_remove_tree(int dirfd, const char *name, struct efa_error *err);

#endif
