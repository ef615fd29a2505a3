/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/strutil.h"

int efa_strlcatf(char *buf, size_t size, const char *fmt, ...)
{
	size_t used = strnlen(buf, size);
	va_list ap;
	int n;

	if (used >= size)
		return -1;
	va_start(ap, fmt);
	n = vsnprintf(buf + used, size - used, fmt, ap);
	va_end(ap);
	return (n < 0 || (size_t)n >= size - used) ? -1 : 0;
}

int efa_strlcat_all(char *buf, size_t size, ...)
{
	size_t used = strnlen(buf, size);
	const char *s;
	va_list ap;
	int rc = 0;

	if (used >= size)
		return -1;
	va_start(ap, size);
	while ((s = va_arg(ap, const char *))) {
		size_t len = strlen(s);

		if (len >= size - used) {
			len = size - used - 1;
			rc = -1;
		}
		memcpy(buf + used, s, len);
		used += len;
		if (rc)
			break;
	}
	va_end(ap);
	buf[used] = '\0';
	return rc;
}

int efa_list_append(char *buf, size_t size, const char *sep, const char *item)
{
	size_t used = strnlen(buf, size), slen = used ? strlen(sep) : 0, ilen = strlen(item);

	if (used >= size || slen + ilen >= size - used)
		return -1;
	memcpy(buf + used, sep, slen);
	memcpy(buf + used + slen, item, ilen + 1);
	return 0;
}

int efa_reopen_regular(int path_fd, int flags)
{
	char self[64];
	struct stat st;
	int fd, saved;

	if (fstat(path_fd, &st)) {
		saved = errno;
		close(path_fd);
		errno = saved;
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(path_fd);
		errno = EINVAL;
		return -1;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	fd = open(self, flags | O_CLOEXEC);
	saved = errno;
	close(path_fd);
	errno = saved;
	return fd;
}

int efa_read_file(const char *path, size_t max, char **text, size_t *len,
		  struct efa_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return efa_error_set(err, "cannot open %s: %s", path, strerror(errno));
	return efa_read_fd(fd, path, max, text, len, err);
}

int efa_read_fd(int fd, const char *path, size_t max, char **text, size_t *len,
		struct efa_error *err)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0, cap;

	if (fstat(fd, &st)) {
		efa_error_set(err, "cannot stat %s: %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		efa_error_set(err, "%s is not a regular file", path);
		goto fail;
	}
	if ((size_t)st.st_size > max) {
		efa_error_set(err, "%s is larger than %zu bytes", path, max);
		goto fail;
	}
	/* One spare byte for the NUL, and one more to see growth past max. */
	cap = (size_t)st.st_size + 2;
	buf = malloc(cap);
	if (!buf) {
		efa_error_set(err, "out of memory reading %s", path);
		goto fail;
	}
	for (;;) {
		ssize_t n;

		if (got + 1 == cap) {
			char *grown = cap > max ? NULL : realloc(buf, cap * 2);

			if (!grown) {
				efa_error_set(err, "%s is larger than %zu bytes", path, max);
				goto fail;
			}
			buf = grown;
			cap *= 2;
		}
		n = read(fd, buf + got, cap - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			efa_error_set(err, "cannot read %s: %s", path, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		got += n;
		if (got > max) {
			efa_error_set(err, "%s is larger than %zu bytes", path, max);
			goto fail;
		}
	}
	close(fd);
	buf[got] = '\0';
	*text = buf;
	*len = got;
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

void efa_strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

char **efa_strv_dup(char *const *v)
{
	size_t n = 0;
	char **copy;

	while (v && v[n])
		n++;
	if (!(copy = calloc(n + 1, sizeof(*copy))))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!(copy[i] = strdup(v[i]))) {
			efa_strv_free(copy);
			return NULL;
		}
	}
	return copy;
}

int efa_str_ptr_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

ssize_t efa_pread_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}
