/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Allocation failures on demand, for the unit tests linked with
 * $(failalloc_ldflags) (Makefile.am): --wrap for the allocators, the
 * (v)asprintf and their fortified forms a -D_FORTIFY_SOURCE build calls,
 * open_memstream and realpath, so the code under test calls failalloc.c's;
 * with ASan the real ones are ASan's. A failing one sets errno to ENOMEM. While armed, the n-th allocation fails (a stream that
 * cannot grow fails its write, as open_memstream's does). The blocks
 * handed out and not freed are counted whether armed or not.
 *
 * A test runs the code once counting (failalloc_count, failalloc_stop:
 * the number of allocations it made), then once with each of them failing
 * (failalloc_fail(n)), and checks that it failed whole and freed what it
 * took (failalloc_live before and after): failalloc_each does all that.
 */
#ifndef EFA_TEST_FAILALLOC_H
#define EFA_TEST_FAILALLOC_H

/* What one run of the code under test gave, against the run without failures. */
enum failalloc_result {
	FAILALLOC_FAILED,	/* it said it failed */
	FAILALLOC_SAME,		/* it succeeded with the same result */
	FAILALLOC_OTHER,	/* it succeeded with another: the defect looked for */
};

struct failalloc_tally {
	long total;		/* allocations the run without failures made */
	long failed, other;	/* runs that gave FAILALLOC_FAILED, _OTHER */
	long leaked;		/* runs after which more or fewer blocks were live */
};

/*
 * run(ctx, 0) once counting its allocations (it keeps what it got, to
 * compare the others with, and returns FAILALLOC_SAME), then run(ctx, n)
 * with the n-th allocation failing, for every n. -1 when the first run
 * fails or makes no allocation.
 */
int failalloc_each(enum failalloc_result (*run)(void *ctx, long n), void *ctx,
		   struct failalloc_tally *t);

/* Arms: counts the allocations from now on, failing none. */
void failalloc_count(void);

/* Arms: the n-th allocation from now on fails (n from 1). */
void failalloc_fail(long n);

/* Disarms; the allocations made since the last arming. */
long failalloc_stop(void);

/* Blocks handed out and not freed yet. */
long failalloc_live(void);

#endif
