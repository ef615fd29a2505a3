/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small TAP producer for the unit tests (automake's tap-driver reads it).
 * Header-only so each test is one file; every check prints one TAP line.
 * Each check is also an expression saying whether it passed, for require();
 * the ({ }) that makes is_int() and the others one is GNU C, which GCC and
 * Clang (the fuzz build) both take.
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

#define is_int(got, want, ...) ({ \
	long long g_ = (got), w_ = (want); \
	int pass_ = ok(g_ == w_, __VA_ARGS__); \
	if (!pass_) \
		printf("#   got %lld, want %lld\n", g_, w_); \
	pass_; \
})

#define is_str(got, want, ...) ({ \
	const char *g_ = (got), *w_ = (want); \
	int same_ = (g_ && w_) ? !strcmp(g_, w_) : g_ == w_; \
	int pass_ = ok(same_, __VA_ARGS__); \
	if (!pass_) \
		printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", \
		       w_ ? w_ : "(null)"); \
	pass_; \
})

#define has_str(haystack, needle, ...) ({ \
	const char *h_ = (haystack), *n_ = (needle); \
	int pass_ = ok(h_ && strstr(h_, n_), __VA_ARGS__); \
	if (!pass_) \
		printf("#   '%s' does not contain '%s'\n", h_ ? h_ : "(null)", n_); \
	pass_; \
})

/*
 * require(check) wraps a check that the code after it depends on: the count
 * of an array it indexes, a lookup or parse whose result it dereferences.
 * When the check fails the calling function returns there, so the test says
 * "not ok" instead of crashing on what is missing, which would lose that
 * line and all after it. The return makes it for void functions only; what
 * they have not freed yet is left to the exit of a test that failed anyway.
 */
#define require(check) do { \
	int count_ = tap_count; \
	if (!(check)) { \
		tap_stop(tap_count == count_, #check, __FILE__, __LINE__, __func__); \
		return; \
	} \
} while (0)

static inline void tap_stop(int unreported, const char *check, const char *file,
			    int line, const char *func)
{
	/* A bare condition prints no line: stopping on it would pass silently. */
	if (unreported)
		tap_ok(0, file, line, "require(%s)", check);
	printf("#   the checks after this one need it: stopping %s\n", func);
	fflush(stdout);
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}

#endif
