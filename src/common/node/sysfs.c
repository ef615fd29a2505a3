/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "common/base/dir.h"
#include "common/base/strutil.h"
#include "common/node/sysfs.h"

/*
 * What fd is open on, as the kernel names it in /proc/self/fd, into path
 * (PATH_MAX bytes); -1 where /proc is not mounted.
 */
static int fd_path(int fd, char *path)
{
	char link[32];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, PATH_MAX - 1);
	if (n <= 0 || n >= PATH_MAX - 1 || path[0] != '/')
		return -1;
	path[n] = '\0';
	return 0;
}

/*
 * The real path of a root open as fd, where efa_sysfs_resolve's links
 * resolve to: root may be one no path here leads to any more
 * (/proc/self/fd/N of a directory in another mount namespace,
 * spank/step_counters.c), which realpath() cannot follow.
 */
static char *opened_path(int fd, const char *root)
{
	char path[PATH_MAX];

	return fd_path(fd, path) ? realpath(root, NULL) : strdup(path);
}

int efa_sysfs_open(struct efa_sysfs *fs, const char *root)
{
	size_t len;

	memset(fs, 0, sizeof(*fs));
	fs->dirfd = -1;
	if (!root || !*root)
		root = "/";
	len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	fs->root = strndup(root, len);
	fs->dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fs->real_root = fs->dirfd < 0 ? NULL : opened_path(fs->dirfd, root);
	if (!fs->root || !fs->real_root || fs->dirfd < 0) {
		efa_sysfs_close(fs);
		return -1;
	}
	if (!strcmp(fs->real_root, "/"))
		fs->real_root[0] = '\0';
	return 0;
}

int efa_sysfs_open_confined(struct efa_sysfs *fs, const char *root)
{
	if (efa_sysfs_open(fs, root))
		return -1;
	fs->confined = true;
	return 0;
}

void efa_sysfs_close(struct efa_sysfs *fs)
{
	free(fs->root);
	free(fs->real_root);
	if (fs->dirfd >= 0)
		close(fs->dirfd);
	fs->root = fs->real_root = NULL;
	fs->dirfd = -1;
}

/*
 * The node path relative to the root, for the *at() calls: every lookup
 * starts at the open root instead of walking the root's own path again
 * (a step reads a few hundred attributes). Formatted into buf (PATH_MAX
 * bytes), never allocated: a lookup that failed for want of memory would
 * read as a file that is not there, and a node whose device files "are
 * not there" is drained. NULL (ENAMETOOLONG) when it does not fit.
 */
static const char *vrel(char *buf, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static const char *vrel(char *buf, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, PATH_MAX, fmt, ap);
	size_t skip;

	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	skip = strspn(buf, "/");
	return buf[skip] ? buf + skip : ".";
}

/* Every lookup under the root goes through here. */
static int fs_open(const struct efa_sysfs *fs, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	int fd;

	if (!rel)
		return -1;
	if (!fs->confined)
		return openat(fs->dirfd, rel, flags | O_CLOEXEC);
	/* Someone else's tree: what is read is looked at first, so that a
	 * device node or FIFO planted there is never opened. */
	if (!(flags & (O_PATH | O_DIRECTORY)))
		how.flags = O_PATH | O_CLOEXEC;
	fd = (int)syscall(SYS_openat2, fs->dirfd, rel, &how, sizeof(how));
	if (fd < 0 || (flags & (O_PATH | O_DIRECTORY)))
		return fd;
	return efa_reopen_regular(fd, flags);
}

/* Reads an opened attribute into buf and closes it. */
static int read_small_fd(int fd, char *buf, size_t size)
{
	size_t got = 0;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	/* sysfs and small regular files come whole in one read; a short read
	 * is the end. */
	while (got < size - 1) {
		size_t want = size - 1 - got;
		ssize_t n = read(fd, buf + got, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if ((size_t)n < want)
			break;
	}
	close(fd);
	buf[got] = '\0';
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' ' ||
			   buf[got - 1] == '\t' || buf[got - 1] == '\r'))
		buf[--got] = '\0';
	return 0;
}

static int read_small(const struct efa_sysfs *fs, const char *rel, char *buf, size_t size)
{
	buf[0] = '\0';
	return read_small_fd(fs_open(fs, rel, O_RDONLY), buf, size);
}

int efa_sysfs_read(const struct efa_sysfs *fs, char *buf, size_t size,
		   const char *fmt, ...)
{
	char path[PATH_MAX];
	const char *rel;
	va_list ap;

	va_start(ap, fmt);
	rel = vrel(path, fmt, ap);
	va_end(ap);
	return read_small(fs, rel, buf, size);
}

/* fs_open of a node path given as a format. */
static int vopen(const struct efa_sysfs *fs, int flags, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static int vopen(const struct efa_sysfs *fs, int flags, const char *fmt, va_list ap)
{
	char path[PATH_MAX];

	return fs_open(fs, vrel(path, fmt, ap), flags);
}

int efa_sysfs_open_dir(const struct efa_sysfs *fs, const char *fmt, ...)
{
	va_list ap;
	int fd;

	va_start(ap, fmt);
	fd = vopen(fs, O_RDONLY | O_DIRECTORY, fmt, ap);
	va_end(ap);
	return fd;
}

int efa_sysfs_read_in(const struct efa_sysfs *fs, int dir, const char *name, char *buf,
		      size_t size)
{
	int fd;

	buf[0] = '\0';
	if (dir < 0 || !name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -1;
	/* One component, not followed if a link: nothing outside dir. In
	 * someone else's tree, only a regular file is opened for reading. */
	if (!fs->confined)
		return read_small_fd(openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), buf, size);
	fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return read_small_fd(fd < 0 ? -1 : efa_reopen_regular(fd, O_RDONLY), buf, size);
}

int efa_sysfs_read_long(const struct efa_sysfs *fs, long *value,
			const char *fmt, ...)
{
	char buf[64], path[PATH_MAX], *end;
	const char *rel;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rel = vrel(path, fmt, ap);
	va_end(ap);
	rc = read_small(fs, rel, buf, sizeof(buf));
	if (rc || !buf[0])
		return -1;
	errno = 0;
	*value = strtol(buf, &end, 0);
	return (errno || *end) ? -1 : 0;
}

int efa_sysfs_read_file(const struct efa_sysfs *fs, size_t max, char **text, size_t *len,
			struct efa_error *err, const char *fmt, ...)
{
	char path[PATH_MAX];
	const char *rel;
	va_list ap;
	int fd;

	va_start(ap, fmt);
	rel = vrel(path, fmt, ap);
	va_end(ap);
	if (!rel)
		return efa_error_set(err, "cannot open %s/%s...: the path is too long", fs->root,
				     path);
	fd = fs_open(fs, rel, O_RDONLY | O_NONBLOCK);
	if (fd < 0)
		return efa_error_set(err, "cannot open %s/%s: %s", fs->root, rel,
				     fs->confined && errno == EINVAL ? "not a regular file" :
								       strerror(errno));
	/* O_NONBLOCK: a FIFO planted in an image must not hang the reader;
	 * efa_read_fd refuses anything but a regular file. */
	return efa_read_fd(fd, fs->root[0] ? fs->root : "/", max, text, len, err);
}

int efa_sysfs_open_regular(const struct efa_sysfs *fs, const char *fmt, ...)
{
	struct stat st;
	va_list ap;
	int fd;

	va_start(ap, fmt);
	fd = vopen(fs, O_RDONLY | O_NONBLOCK, fmt, ap);
	va_end(ap);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

bool efa_sysfs_exists(const struct efa_sysfs *fs, const char *fmt, ...)
{
	char path[PATH_MAX];
	const char *rel;
	struct stat st;
	va_list ap;
	bool found = false;
	int fd;

	va_start(ap, fmt);
	rel = vrel(path, fmt, ap);
	va_end(ap);
	if (!fs->confined) {
		found = rel && fstatat(fs->dirfd, rel, &st, 0) == 0;
	} else if ((fd = fs_open(fs, rel, O_PATH)) >= 0) {
		found = true;
		close(fd);
	}
	return found;
}

int efa_sysfs_link_name(const struct efa_sysfs *fs, char *buf, size_t size,
			const char *fmt, ...)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *base, *rel;
	va_list ap;
	ssize_t n;

	va_start(ap, fmt);
	rel = vrel(path, fmt, ap);
	va_end(ap);
	if (!fs->confined) {
		n = rel ? readlinkat(fs->dirfd, rel, target, sizeof(target) - 1) : -1;
	} else {
		int fd = fs_open(fs, rel, O_PATH | O_NOFOLLOW);

		n = fd >= 0 ? readlinkat(fd, "", target, sizeof(target) - 1) : -1;
		if (fd >= 0)
			close(fd);
	}
	buf[0] = '\0';
	if (n < 0)
		return -1;
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(buf, size, "%s", base ? base + 1 : target);
	return 0;
}

/*
 * Where a path really is, into real (PATH_MAX bytes): the kernel resolves
 * it once when opening it, and names what it opened in /proc/self/fd
 * (realpath() would readlink every component instead, some twenty per
 * sysfs device). realpath() is the fallback where /proc is not mounted.
 * -1 when it is not there.
 */
static int real_path(const struct efa_sysfs *fs, const char *rel, char *real)
{
	char full[PATH_MAX];
	int fd, rc;

	fd = fs_open(fs, rel, O_PATH);
	if (fd < 0)
		return -1;
	rc = fd_path(fd, real);
	close(fd);
	if (!rc)
		return 0;
	if (fs->confined)
		return -1;	/* realpath() would follow links out of the root */
	if (snprintf(full, sizeof(full), "%s/%s", fs->root, rel) >= (int)sizeof(full))
		return -1;
	return realpath(full, real) ? 0 : -1;
}

int efa_sysfs_resolve(const struct efa_sysfs *fs, char **node, const char *fmt, ...)
{
	size_t rlen = strlen(fs->real_root);
	char path[PATH_MAX], real[PATH_MAX];
	const char *rel;
	va_list ap;

	*node = NULL;
	va_start(ap, fmt);
	rel = vrel(path, fmt, ap);
	va_end(ap);
	if (!rel || real_path(fs, rel, real))
		return 0;
	/* A link leaving the root tree is not part of this node's view. */
	if (strncmp(real, fs->real_root, rlen) || real[rlen] != '/')
		return 0;
	*node = strdup(real + rlen);
	return *node ? 0 : -1;
}

struct names {
	char **v;	/* NULL-terminated */
	size_t n, cap;
};

/* Appends name, unless hidden, to the list; 1 without memory. */
static int add_name(const char *name, void *arg)
{
	struct names *l = arg;

	if (name[0] == '.')
		return 0;
	if (l->n == l->cap) {
		char **grown = realloc(l->v, (l->cap * 2 + 1) * sizeof(*grown));

		if (!grown)
			return 1;
		l->v = grown;
		l->cap *= 2;
	}
	l->v[l->n] = strdup(name);
	if (!l->v[l->n])
		return 1;
	l->v[++l->n] = NULL;
	return 0;
}

char **efa_sysfs_list(const struct efa_sysfs *fs, const char *fmt, ...)
{
	struct names l = { .cap = 16 };
	char path[PATH_MAX];
	const char *rel;
	va_list ap;
	int fd, rc;

	va_start(ap, fmt);
	rel = vrel(path, fmt, ap);
	va_end(ap);
	l.v = calloc(l.cap + 1, sizeof(*l.v));
	if (!l.v)
		return NULL;
	fd = fs_open(fs, rel, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return l.v;
	/* A directory that cannot be read on lists what was read. */
	rc = efa_dir_each(fd, add_name, &l);
	close(fd);
	if (rc == 1)
		goto fail;
	qsort(l.v, l.n, sizeof(*l.v), efa_str_ptr_cmp);
	return l.v;
fail:
	efa_strv_free(l.v);
	return NULL;
}
