/* SPDX-License-Identifier: Apache-2.0 */
/* Small string and file helpers shared by src/common. */
#ifndef EFA_STRUTIL_H
#define EFA_STRUTIL_H

#include <stddef.h>
#include <sys/types.h>

#include "common/base/error.h"

/* Appends formatted text to the NUL-terminated buf of size bytes,
 * truncating. Returns 0, or -1 when the text did not fit. */
int efa_strlcatf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Appends the strings given, up to a NULL one, to the NUL-terminated buf
 * of size bytes, truncating: what "%s%s..." would, without formatting (a
 * step's plan explains each variable's line this way). Returns 0, or -1
 * when they did not fit. */
int efa_strlcat_all(char *buf, size_t size, ...) __attribute__((sentinel));

/* Appends item to the list in buf (size bytes with its NUL), after sep
 * when the list is not empty: whole, or not at all (-1). Without
 * formatting, for lists built per task. */
int efa_list_append(char *buf, size_t size, const char *sep, const char *item);

/*
 * Reads a whole regular file of at most max bytes into a NUL-terminated
 * malloc'd buffer. Errors name the path and say what was wrong.
 */
int efa_read_file(const char *path, size_t max, char **text, size_t *len,
		  struct efa_error *err);

/*
 * Opens what path_fd (an O_PATH descriptor, closed here) names with flags,
 * only when it is a regular file: a device node or FIFO is looked at,
 * never opened. Returns the new descriptor, or -1 with errno (EINVAL for
 * anything but a regular file).
 */
int efa_reopen_regular(int path_fd, int flags);

/* The same for a file already open (read only, closed here); path names
 * it in errors. */
int efa_read_fd(int fd, const char *path, size_t max, char **text, size_t *len,
		struct efa_error *err);

/*
 * Reads len bytes of fd from offset off (pread: the file position is not
 * used), as many reads as it takes, interrupted ones retried. Returns the
 * bytes read (fewer at the end of the file), or -1.
 */
ssize_t efa_pread_full(int fd, void *buf, size_t len, off_t off);

/* Frees a NULL-terminated list of strings and the list; NULL is fine. */
void efa_strv_free(char **v);

/* strcmp of two char * elements, for qsort and bsearch over string arrays. */
int efa_str_ptr_cmp(const void *a, const void *b);

/* A copy of a NULL-terminated list (NULL copies as an empty list). */
char **efa_strv_dup(char *const *v);

#endif
