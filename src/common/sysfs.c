#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "strutil.h"
#include "sysfs.h"

int efa_sysfs_open(struct efa_sysfs *fs, const char *root)
{
	size_t len;

	memset(fs, 0, sizeof(*fs));
	if (!root || !*root)
		root = "/";
	len = strlen(root);
	while (len > 0 && root[len - 1] == '/')
		len--;
	fs->root = strndup(root, len);
	fs->real_root = realpath(root, NULL);
	if (!fs->root || !fs->real_root) {
		efa_sysfs_close(fs);
		return -1;
	}
	if (!strcmp(fs->real_root, "/"))
		fs->real_root[0] = '\0';
	return 0;
}

void efa_sysfs_close(struct efa_sysfs *fs)
{
	free(fs->root);
	free(fs->real_root);
	fs->root = fs->real_root = NULL;
}

static char *vpath(const struct efa_sysfs *fs, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static char *vpath(const struct efa_sysfs *fs, const char *fmt, va_list ap)
{
	char *rel = NULL, *full = NULL;

	if (vasprintf(&rel, fmt, ap) < 0)
		return NULL;
	if (asprintf(&full, "%s%s", fs->root, rel) < 0)
		full = NULL;
	free(rel);
	return full;
}

char *efa_sysfs_path(const struct efa_sysfs *fs, const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = vpath(fs, fmt, ap);
	va_end(ap);
	return p;
}

static int read_small(const char *path, char *buf, size_t size)
{
	FILE *f;
	size_t n;

	buf[0] = '\0';
	if (!path || !(f = fopen(path, "re")))
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' ||
			 buf[n - 1] == '\t' || buf[n - 1] == '\r'))
		buf[--n] = '\0';
	return 0;
}

int efa_sysfs_read(const struct efa_sysfs *fs, char *buf, size_t size,
		   const char *fmt, ...)
{
	va_list ap;
	char *p;
	int rc;

	va_start(ap, fmt);
	p = vpath(fs, fmt, ap);
	va_end(ap);
	rc = read_small(p, buf, size);
	free(p);
	return rc;
}

int efa_sysfs_read_long(const struct efa_sysfs *fs, long *value,
			const char *fmt, ...)
{
	char buf[64], *end;
	va_list ap;
	char *p;
	int rc;

	va_start(ap, fmt);
	p = vpath(fs, fmt, ap);
	va_end(ap);
	rc = read_small(p, buf, sizeof(buf));
	free(p);
	if (rc || !buf[0])
		return -1;
	errno = 0;
	*value = strtol(buf, &end, 0);
	return (errno || *end) ? -1 : 0;
}

bool efa_sysfs_exists(const struct efa_sysfs *fs, const char *fmt, ...)
{
	struct stat st;
	va_list ap;
	char *p;
	bool found;

	va_start(ap, fmt);
	p = vpath(fs, fmt, ap);
	va_end(ap);
	found = p && stat(p, &st) == 0;
	free(p);
	return found;
}

int efa_sysfs_link_name(const struct efa_sysfs *fs, char *buf, size_t size,
			const char *fmt, ...)
{
	char target[PATH_MAX];
	const char *base;
	va_list ap;
	ssize_t n;
	char *p;

	va_start(ap, fmt);
	p = vpath(fs, fmt, ap);
	va_end(ap);
	n = p ? readlink(p, target, sizeof(target) - 1) : -1;
	free(p);
	buf[0] = '\0';
	if (n < 0)
		return -1;
	target[n] = '\0';
	base = strrchr(target, '/');
	snprintf(buf, size, "%s", base ? base + 1 : target);
	return 0;
}

char *efa_sysfs_resolve(const struct efa_sysfs *fs, const char *fmt, ...)
{
	size_t rlen = strlen(fs->real_root);
	char *p, *real, *node = NULL;
	va_list ap;

	va_start(ap, fmt);
	p = vpath(fs, fmt, ap);
	va_end(ap);
	real = p ? realpath(p, NULL) : NULL;
	free(p);
	if (!real)
		return NULL;
	/* A link leaving the root tree is not part of this node's view. */
	if (!strncmp(real, fs->real_root, rlen) && real[rlen] == '/')
		node = strdup(real + rlen);
	free(real);
	return node;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **efa_sysfs_list(const struct efa_sysfs *fs, const char *fmt, ...)
{
	struct dirent *de;
	char **list, **grown;
	size_t n = 0, cap = 16;
	va_list ap;
	DIR *dir;
	char *p;

	va_start(ap, fmt);
	p = vpath(fs, fmt, ap);
	va_end(ap);
	list = calloc(cap + 1, sizeof(*list));
	if (!p || !list)
		goto fail;
	dir = opendir(p);
	free(p);
	p = NULL;
	if (!dir)
		return list;
	while ((de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		if (n == cap) {
			grown = realloc(list, (cap * 2 + 1) * sizeof(*list));
			if (!grown) {
				closedir(dir);
				goto fail;
			}
			list = grown;
			cap *= 2;
		}
		list[n] = strdup(de->d_name);
		if (!list[n++]) {
			closedir(dir);
			goto fail;
		}
		list[n] = NULL;
	}
	closedir(dir);
	qsort(list, n, sizeof(*list), name_cmp);
	return list;
fail:
	free(p);
	efa_strv_free(list);
	return NULL;
}
