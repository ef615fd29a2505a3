/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/base/dir.h"

/* The kernel's directory entry (getdents64(2)); glibc declares no
 * wrapper before 2.30. */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int efa_dir_each(int fd, int (*fn)(const char *name, void *arg), void *arg)
{
	char buf[4096] __attribute__((aligned(8)));
	long got;

	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < got;) {
			const struct linux_dirent64 *de = (const void *)(buf + at);
			const char *name = de->d_name;
			int rc;

			at += de->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if ((rc = fn(name, arg)))
				return rc;
		}
	}
	return got < 0 ? -1 : 0;
}

/* Each level holds a file descriptor open; deeper trees are left alone. */
#define REMOVE_DEPTH_MAX 64

static int remove_tree(int dirfd, const char *name, int depth, struct efa_error *err)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 :
		       efa_error_set(err, "cannot stat %s: %s", name, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, name, 0) && errno != ENOENT)
			return efa_error_set(err, "cannot delete %s: %s", name, strerror(errno));
		return 0;
	}
	if (depth >= REMOVE_DEPTH_MAX)
		return efa_error_set(err, "%s is nested more than %d directories deep: delete it yourself",
				     name, REMOVE_DEPTH_MAX);
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		efa_error_set(err, "cannot open %s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (remove_tree(fd, e->d_name, depth + 1, err)) {
			closedir(d);
			return -1;
		}
	}
	if (errno) {
		efa_error_set(err, "cannot read %s: %s", name, strerror(errno));
		closedir(d);
		return -1;
	}
	closedir(d);
	if (unlinkat(dirfd, name, AT_REMOVEDIR) && errno != ENOENT)
		return efa_error_set(err, "cannot delete %s: %s", name, strerror(errno));
	return 0;
}

int efa_remove_tree(int dirfd, const char *name, struct efa_error *err)
{
	return remove_tree(dirfd, name, 0, err);
}
