/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/atomic_write.h"

static int write_replace(const char *path, const char *text, size_t len, mode_t mode,
			 bool durable, struct efa_error *err)
{
	char *tmp = NULL, *dir_copy = NULL;
	int fd = -1, dirfd = -1, rc = -1;
	size_t done = 0;

	if (asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0) {
		tmp = NULL;
		efa_error_set(err, "out of memory");
		goto out;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		efa_error_set(err, "cannot create %s: %s (does the directory exist and is it writable?)",
			      tmp, strerror(errno));
		goto out;
	}
	while (done < len) {
		ssize_t n = write(fd, text + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			efa_error_set(err, "cannot write %s: %s", tmp, strerror(errno));
			goto out;
		}
		done += (size_t)n;
	}
	/* Readers are often another user: mkstemp's 0600 is not the mode asked. */
	if (fchmod(fd, mode) || (durable && fsync(fd))) {
		efa_error_set(err, "cannot finish %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		efa_error_set(err, "cannot close %s: %s", tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path)) {
		efa_error_set(err, "cannot replace %s: %s", path, strerror(errno));
		goto out;
	}
	free(tmp);
	tmp = NULL;
	/* The rename itself must survive a crash too. */
	dir_copy = durable ? strdup(path) : NULL;
	if (dir_copy && (dirfd = open(dirname(dir_copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
		fsync(dirfd);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	if (tmp)
		unlink(tmp);
	free(tmp);
	free(dir_copy);
	return rc;
}

int efa_write_atomic(const char *path, const char *text, size_t len, mode_t mode,
		     struct efa_error *err)
{
	return write_replace(path, text, len, mode, true, err);
}

int efa_write_replace(const char *path, const char *text, size_t len, mode_t mode,
		      struct efa_error *err)
{
	return write_replace(path, text, len, mode, false, err);
}
