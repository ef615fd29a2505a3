/* SPDX-License-Identifier: Apache-2.0 */
/* Allocation failures on demand (failalloc.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "failalloc.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_asprintf(char **out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int __wrap___asprintf_chk(char **out, int flag, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
FILE *__wrap_open_memstream(char **text, size_t *size);
char *__real_realpath(const char *path, char *resolved);
int __real_vasprintf(char **out, const char *fmt, va_list ap);
char *__wrap_realpath(const char *path, char *resolved);
int __wrap_vasprintf(char **out, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
int __wrap___vasprintf_chk(char **out, int flag, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* One test program's allocator state: the wrappers replace the
 * program's malloc, of which there is one. */
static bool armed;
static long fail_at, calls, live;

void failalloc_count(void)
{
	armed = true;
	fail_at = 0;
	calls = 0;
}

void failalloc_fail(long n)
{
	armed = true;
	fail_at = n;
	calls = 0;
}

long failalloc_stop(void)
{
	armed = false;
	return calls;
}

long failalloc_live(void)
{
	return live;
}

int failalloc_each(enum failalloc_result (*run)(void *ctx, long n), void *ctx,
		   struct failalloc_tally *t)
{
	enum failalloc_result r;
	long before;

	memset(t, 0, sizeof(*t));
	failalloc_count();
	r = run(ctx, 0);
	t->total = failalloc_stop();
	if (r != FAILALLOC_SAME || !t->total)
		return -1;
	before = live;	/* what the first run kept among them */
	for (long n = 1; n <= t->total; n++) {
		failalloc_fail(n);
		r = run(ctx, n);
		failalloc_stop();
		t->failed += r == FAILALLOC_FAILED;
		t->other += r == FAILALLOC_OTHER;
		t->leaked += live != before;
	}
	return 0;
}

/* Whether this allocation fails; one that does sets errno as malloc's. */
static bool fails(void)
{
	if (!armed || ++calls != fail_at)
		return false;
	errno = ENOMEM;
	return true;
}

void *__wrap_malloc(size_t size)
{
	void *p = fails() ? NULL : __real_malloc(size);

	live += p != NULL;
	return p;
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *p = fails() ? NULL : __real_calloc(n, size);

	live += p != NULL;
	return p;
}

void *__wrap_realloc(void *old, size_t size)
{
	void *p = fails() ? NULL : __real_realloc(old, size);

	live += p && !old;
	return p;
}

void __wrap_free(void *p)
{
	live -= p != NULL;
	__real_free(p);
}

char *__wrap_strdup(const char *s)
{
	char *p = fails() ? NULL : __real_strdup(s);

	live += p != NULL;
	return p;
}

char *__wrap_strndup(const char *s, size_t n)
{
	char *p = fails() ? NULL : __real_strndup(s, n);

	live += p != NULL;
	return p;
}

static int counted_vasprintf(char **out, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

static int counted_vasprintf(char **out, const char *fmt, va_list ap)
{
	int rc;

	if (fails())
		return -1;
	rc = __real_vasprintf(out, fmt, ap);
	live += rc >= 0;
	return rc;
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = counted_vasprintf(out, fmt, ap);
	va_end(ap);
	return rc;
}

/* asprintf as -D_FORTIFY_SOURCE=2 builds call it (dpkg-buildflags, rpm's
 * %optflags): the same block, so counted the same. */
int __wrap___asprintf_chk(char **out, int flag, const char *fmt, ...)
{
	va_list ap;
	int rc;

	(void)flag;
	va_start(ap, fmt);
	rc = counted_vasprintf(out, fmt, ap);
	va_end(ap);
	return rc;
}

int __wrap_vasprintf(char **out, const char *fmt, va_list ap)
{
	return counted_vasprintf(out, fmt, ap);
}

int __wrap___vasprintf_chk(char **out, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	return counted_vasprintf(out, fmt, ap);
}

/* realpath(path, NULL) allocates its answer with libc's own malloc, which
 * the wrappers do not see: counted, and made to fail, here. */
char *__wrap_realpath(const char *path, char *resolved)
{
	char *p;

	if (!resolved && fails())
		return NULL;
	p = __real_realpath(path, resolved);
	live += p && !resolved;
	return p;
}

struct memstream {
	char **text;
	size_t *size, len;
};

static ssize_t memstream_write(void *cookie, const char *buf, size_t n)
{
	struct memstream *m = cookie;
	char *grown = fails() ? NULL : __real_realloc(*m->text, m->len + n + 1);

	if (!grown)
		return 0;
	live += !*m->text;
	memcpy(grown + m->len, buf, n);
	m->len += n;
	grown[m->len] = '\0';
	*m->text = grown;
	*m->size = m->len;
	return n;
}

static int memstream_close(void *cookie)
{
	struct memstream *m = cookie;
	int rc = 0;

	if (!*m->text && !(*m->text = fails() ? NULL : __real_calloc(1, 1)))
		rc = -1;
	else
		live += !m->len;
	__real_free(m);
	return rc;
}

/* Unbuffered, so every write the code makes can be the one that fails. */
FILE *__wrap_open_memstream(char **text, size_t *size)
{
	cookie_io_functions_t io = { .write = memstream_write, .close = memstream_close };
	struct memstream *m = fails() ? NULL : __real_calloc(1, sizeof(*m));
	FILE *f;

	if (!m)
		return NULL;
	*text = NULL;
	*size = 0;
	*m = (struct memstream){ text, size, 0 };
	if (!(f = fopencookie(m, "w", io))) {
		__real_free(m);
		return NULL;
	}
	setvbuf(f, NULL, _IONBF, 0);
	return f;
}
