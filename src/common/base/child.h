/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A child process with a deadline: what it writes to its pipe comes back
 * to the caller, and past the deadline it is killed (with its process
 * group, when it has one of its own). slurmstepd and the sync daemon must
 * go on: a killed child stuck in a hung file system, which no signal ends,
 * is waited for at most EFA_CHILD_REAP_MS, then left behind.
 */
#ifndef EFA_CHILD_H
#define EFA_CHILD_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"

#define EFA_CHILD_REAP_MS 2000

struct efa_child {
	int status;	/* exit status, 128 + the signal that ended it, or -1
			 * when it was left behind, or ended and was reaped by
			 * another thread's wait for any child (not killed) */
	bool killed;	/* the deadline passed */
	size_t len;	/* bytes of its output kept (the rest read and dropped) */
};

/*
 * Runs fn(arg, fd) in a child, which exits with what fn returns; what it
 * writes to fd goes into out (NUL-terminated, at most size - 1 bytes). Its
 * stdin, stdout and stderr are /dev/null and no other descriptor of the
 * caller's is open in it: one left behind holds none of the caller's
 * output open.
 * With own_group the child leads a process group of its own, killed whole
 * (a shell and what it started). Returns 0 with *res once the child is
 * done, killed or left behind, or -1 when it could not start (err says
 * why).
 */
int efa_child_run(int (*fn)(void *arg, int fd), void *arg, long timeout_ms, bool own_group,
		  char *out, size_t size, struct efa_child *res, struct efa_error *err);

/*
 * For fn before it execs a program: stdin from /dev/null (a program that
 * reads its input must not wait on the caller's), stdout and stderr to
 * fd, so its messages come back in out.
 */
void efa_child_stdio(int fd);

#endif
