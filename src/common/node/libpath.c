/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/node/libpath.h"

/* glibc's cache holds a few thousand names: a larger file is not one. */
#define LDCACHE_MAX (16 * 1024 * 1024)
#define LDCACHE_MAGIC "glibc-ld.so.cache"
#define LDCACHE_MAGIC_OLD "ld.so-1.7.0"

const char *efa_lib_name(enum efa_lib lib)
{
	return lib == EFA_LIB_FABRIC ? "libfabric" : "aws-ofi-nccl (NCCL's net plugin, libnccl-net-ofi.so)";
}

bool efa_lib_file(const char *name, enum efa_lib lib)
{
	if (lib == EFA_LIB_FABRIC)
		return !strncmp(name, "libfabric.so", 12);
	return !strncmp(name, "libnccl-net", 11) && strstr(name, ".so");
}

int efa_lib_in_dir(const struct efa_sysfs *fs, const char *dir, enum efa_lib lib)
{
	char **entries = efa_sysfs_list(fs, "%s", dir);
	int found = 0;

	if (!entries)
		return -1;	/* out of memory: a directory not there lists empty */
	for (char **e = entries; *e && !found; e++)
		found = efa_lib_file(*e, lib);
	efa_strv_free(entries);
	return found;
}

bool efa_list_has(const char *list, char sep, const char *item, size_t len)
{
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, sep);
		size_t plen = end ? (size_t)(end - p) : strlen(p);

		if (plen == len && !strncmp(p, item, len))
			return true;
		if (!end)
			break;
		p = end + 1;
	}
	return false;
}

int efa_libpath_find(const struct efa_sysfs *fs, const char *list, const char *skip,
		     enum efa_lib lib, char *dir, size_t size)
{
	unsigned looked = 0;

	for (const char *p = list; p && *p && looked < EFA_LIBPATH_DIRS_MAX;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len && len < size && p[0] == '/' && !efa_list_has(skip, ':', p, len)) {
			int in;

			memcpy(dir, p, len);
			dir[len] = '\0';
			looked++;
			if ((in = efa_lib_in_dir(fs, dir, lib)))
				return in;	/* found, or out of memory */
		}
		p += len + (end ? 1 : 0);
	}
	return 0;
}

/*
 * The cache's string table holds every library's name and full path,
 * NUL-terminated, in both of glibc's formats: a name of lib's among them is
 * enough, and the table's layout (which changed between formats) need not
 * be walked.
 */
bool efa_ldcache_has(const struct efa_sysfs *fs, enum efa_lib lib)
{
	struct efa_error err;
	char *text = NULL;
	size_t len;
	bool found = false;

	if (efa_sysfs_read_file(fs, LDCACHE_MAX, &text, &len, &err, "/etc/ld.so.cache"))
		return false;
	if (len > sizeof(LDCACHE_MAGIC) &&
	    (!memcmp(text, LDCACHE_MAGIC, strlen(LDCACHE_MAGIC)) ||
	     !memcmp(text, LDCACHE_MAGIC_OLD, strlen(LDCACHE_MAGIC_OLD)))) {
		for (size_t i = 0; i < len && !found;) {
			const char *s = text + i;
			size_t n = strnlen(s, len - i);
			const char *base = memrchr(s, '/', n);

			base = base ? base + 1 : s;
			found = n < len - i && efa_lib_file(base, lib);
			i += n + 1;
		}
	}
	free(text);
	return found;
}
