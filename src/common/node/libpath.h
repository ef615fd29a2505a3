/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a task's dynamic loader would find EFA's libraries: libfabric and
 * the NCCL net plugin (aws-ofi-nccl), in the directories of a library
 * path or in the loader's cache, read through a root (the node's, or a
 * container's from inside it, or an unpacked image's).
 */
#ifndef EFA_LIBPATH_H
#define EFA_LIBPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/node/sysfs.h"

enum efa_lib {
	EFA_LIB_FABRIC,		/* libfabric.so* */
	EFA_LIB_NET_PLUGIN,	/* libnccl-net*.so*: what NCCL dlopen()s */
};

/* For messages: "libfabric", "aws-ofi-nccl (...)". */
const char *efa_lib_name(enum efa_lib lib);

/* Whether a file name is one of lib's. */
bool efa_lib_file(const char *name, enum efa_lib lib);

/*
 * Whether directory dir (a node path) holds one of lib's files: 1 or 0
 * (a directory that cannot be opened holds none); -1 without the memory
 * to list it, which is not an answer.
 */
int efa_lib_in_dir(const struct efa_sysfs *fs, const char *dir, enum efa_lib lib);

/*
 * The first absolute directory of list (':'-separated, as in
 * LD_LIBRARY_PATH) that is not an entry of skip and holds one of lib's
 * files, copied into dir: 1; 0 when none does; -1 without memory. At most
 * EFA_LIBPATH_DIRS_MAX entries are looked at: a path of thousands of
 * entries costs no more than that.
 */
#define EFA_LIBPATH_DIRS_MAX 64
int efa_libpath_find(const struct efa_sysfs *fs, const char *list, const char *skip,
		     enum efa_lib lib, char *dir, size_t size);

/* Whether the loader's cache (/etc/ld.so.cache) names a file of lib's. */
bool efa_ldcache_has(const struct efa_sysfs *fs, enum efa_lib lib);

/* Whether item (len bytes) is one of the sep-separated entries of list. */
bool efa_list_has(const char *list, char sep, const char *item, size_t len);

#endif
