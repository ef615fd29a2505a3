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
 * took (failalloc_live before and after).
 */
#ifndef EFA_TEST_FAILALLOC_H
#define EFA_TEST_FAILALLOC_H

/* Arms: counts the allocations from now on, failing none. */
void failalloc_count(void);

/* Arms: the n-th allocation from now on fails (n from 1). */
void failalloc_fail(long n);

/* Disarms; the allocations made since the last arming. */
long failalloc_stop(void);

/* Blocks handed out and not freed yet. */
long failalloc_live(void);

#endif
