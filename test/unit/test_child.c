/* SPDX-License-Identifier: Apache-2.0 */
/* A child process with a deadline (efa_child_run). */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/child.h"
#include "tap.h"

static int says(void *arg, int fd)
{
	return dprintf(fd, "%s", (const char *)arg) < 0 ? 3 : 7;
}

static int sleeps(void *arg, int fd)
{
	(void)arg;
	dprintf(fd, "started");
	for (;;)
		pause();
	return 0;
}

/* A shell whose own child would outlive it: killed with its group. */
static int shell_group(void *arg, int fd)
{
	dup2(fd, STDOUT_FILENO);
	execl("/bin/sh", "sh", "-c", (const char *)arg, (char *)NULL);
	return 127;
}

/* Writes to the stdout and stderr it was given, and to the descriptor arg
 * names; says what stdin gave and whether that descriptor was open. */
static int writes_stdio(void *arg, int fd)
{
	int other = *(const int *)arg;
	char c;
	ssize_t n;
	bool open_there;

	(void)!write(STDOUT_FILENO, "leak", 4);
	(void)!write(STDERR_FILENO, "leak", 4);
	open_there = write(other, "leak", 4) >= 0;
	n = read(STDIN_FILENO, &c, 1);
	dprintf(fd, "stdin %zd, other %s", n, open_there ? "open" : "closed");
	return 0;
}

/*
 * The caller's stdin, stdout and stderr are a pipe each: the child holds
 * none of them (one left behind in a hung file system would keep the
 * caller's reader, slurmstepd, waiting for the output to close).
 */
static void test_stdio_detached(void)
{
	struct efa_error err;
	struct efa_child r;
	int in[2], outp[2], extra[2], saved[3];
	char out[64], got[16];
	ssize_t n;

	if (pipe(in) || pipe(outp) || pipe(extra)) {
		ok(0, "pipe");
		return;
	}
	for (int i = 0; i < 3; i++)
		saved[i] = dup(i);
	fflush(stdout);
	dup2(in[0], STDIN_FILENO);
	dup2(outp[1], STDOUT_FILENO);
	dup2(outp[1], STDERR_FILENO);
	(void)!write(in[1], "x", 1);
	efa_child_run(writes_stdio, &extra[1], 5000, false, out, sizeof(out), &r, &err);
	for (int i = 0; i < 3; i++) {
		dup2(saved[i], i);
		close(saved[i]);
	}
	close(in[0]);
	close(outp[1]);
	n = read(outp[0], got, sizeof(got));
	close(outp[0]);
	close(in[1]);
	ok(n == 0, "a child writes nothing to its caller's stdout or stderr (%zd bytes came)", n);
	is_str(out, "stdin 0, other closed",
	       "  reads /dev/null, not its caller's stdin, and holds none of its other descriptors");
	close(extra[0]);
	close(extra[1]);
}

static long elapsed_ms(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_nsec - a->tv_nsec) / 1000000;
}

int main(void)
{
	struct timespec t0, t1;
	struct efa_child r;
	struct efa_error err;
	char out[16];

	ok(efa_child_run(says, "hello", 5000, false, out, sizeof(out), &r, &err) == 0, "a child runs");
	is_str(out, "hello", "  its output comes back");
	is_int(r.status, 7, "  with its exit status");
	ok(!r.killed, "  in time");
	efa_child_run(says, "a rather long report", 5000, false, out, sizeof(out), &r, &err);
	is_str(out, "a rather long r", "output past the buffer is read and dropped");
	is_int(r.status, 7, "  and the child still ends normally");
	ok(efa_child_run(sleeps, NULL, 200, false, out, sizeof(out), &r, &err) == 0,
	   "a child that never ends");
	ok(r.killed, "  is killed past its deadline");
	is_int(r.status, 128 + SIGKILL, "  by SIGKILL, and waited for");
	is_str(out, "started", "  what it said before is kept");
	ok(efa_child_run(shell_group, "sleep 30 & echo bg; wait", 300, true, out, sizeof(out), &r, &err) == 0 &&
	   r.killed, "a shell with a child of its own is killed past its deadline");
	is_str(out, "bg\n", "  its output kept");

	/* A child that redirects its output away: the pipe closes at once,
	 * the child goes on, and the deadline still holds. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(efa_child_run(shell_group, "echo before; exec >>/dev/null 2>&1; sleep 5", 1000, true, out,
			 sizeof(out), &r, &err) == 0 && r.killed,
	   "a child that redirects its output and outlives its deadline is killed");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ok(elapsed_ms(&t0, &t1) < 3000, "  at its deadline (%ld ms), not when it ends by itself",
	   elapsed_ms(&t0, &t1));
	is_int(r.status, 128 + SIGKILL, "  by SIGKILL, and waited for");
	is_str(out, "before\n", "  what it said before is kept");
	ok(efa_child_run(shell_group, "exec >&-; sleep 0.2; exit 4", 5000, true, out, sizeof(out), &r,
			 &err) == 0 && !r.killed && r.status == 4,
	   "one that closes its output and ends in time is waited for, with its status");
	test_stdio_detached();
	return done_testing();
}
