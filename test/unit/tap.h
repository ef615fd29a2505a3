/*
 * A small TAP producer for the unit tests (automake's tap-driver reads it).
 * Header-only so each test is one file; every check prints one TAP line.
 */
#ifndef EFA_TAP_H
#define EFA_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_count;
static int tap_failed;

static inline int tap_ok(int cond, const char *file, int line,
			 const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static inline int tap_ok(int cond, const char *file, int line,
			 const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		printf("#   failed at %s:%d\n", file, line);
		tap_failed++;
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

#define is_int(got, want, ...) do { \
	long long g_ = (got), w_ = (want); \
	if (!ok(g_ == w_, __VA_ARGS__)) \
		printf("#   got %lld, want %lld\n", g_, w_); \
} while (0)

#define is_str(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	int same_ = (g_ && w_) ? !strcmp(g_, w_) : g_ == w_; \
	if (!ok(same_, __VA_ARGS__)) \
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", \
		       w_ ? w_ : "(null)"); \
} while (0)

#define has_str(haystack, needle, ...) do { \
	const char *h_ = (haystack), *n_ = (needle); \
	if (!ok(h_ && strstr(h_, n_), __VA_ARGS__)) \
		printf("#   '%s' does not contain '%s'\n", h_ ? h_ : "(null)", n_); \
} while (0)

static inline int done_testing(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
