/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/base/child.h"

static long ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Reads the child's output until it closes its end or the time is up. */
static bool collect(int fd, long timeout_ms, char *out, size_t size, size_t *len)
{
	struct timespec start;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = timeout_ms - ms_since(&start);
		char drop[4096];
		ssize_t n;
		int ready;

		ready = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			return false;
		if (*len + 1 < size)
			n = read(fd, out + *len, size - 1 - *len);
		else
			n = read(fd, drop, sizeof(drop));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		if (*len + 1 < size)
			*len += (size_t)n;
	}
}

static int exit_status(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Waits up to timeout_ms for pid to end: 1 with *status when it did, 0
 * when it did not, -1 when it is no child to wait for any more (another
 * thread's wait for any child took it: slurmstepd's main thread waits so
 * for its tasks). */
static int reap(pid_t pid, long timeout_ms, int *status)
{
	struct timespec start, nap = { 0, 1000000 };

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t done = waitpid(pid, status, WNOHANG);

		if (done == pid)
			return 1;
		if (done < 0 && errno == ECHILD)
			return -1;
		if (done < 0 && errno != EINTR)
			return 0;
		if (ms_since(&start) >= timeout_ms)
			return 0;
		/* A child ends soon after it closes its output: short naps
		 * first, then at most 20 ms between looks. */
		nanosleep(&nap, NULL);
		if (nap.tv_nsec < 20000000)
			nap.tv_nsec *= 2;
	}
}

/*
 * In the child: stdin, stdout and stderr from and to /dev/null, and no
 * other descriptor of the caller's open but the pipe, which it returns
 * (moved above stderr). A child left behind in a hung file system must not
 * hold its caller's output open: slurmstepd waits for a task's output to
 * close (its own copies of the task's pipes too, open in the task until it
 * execs) and gives up only after a minute; slurmd, and a shell's $(...),
 * wait for a program's. A child that runs a program points stdout and
 * stderr at its pipe (efa_child_stdio).
 */
static int detach(int pipe_fd)
{
	int null, max = 65536;
	struct rlimit rl;

	if (pipe_fd <= STDERR_FILENO) {
		int moved = fcntl(pipe_fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);

		if (moved >= 0)
			pipe_fd = moved;
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
	}
#ifdef SYS_close_range
	if ((pipe_fd == STDERR_FILENO + 1 ||
	     syscall(SYS_close_range, STDERR_FILENO + 1, pipe_fd - 1, 0) == 0) &&
	    syscall(SYS_close_range, pipe_fd + 1, ~0U, 0) == 0)
		return pipe_fd;
#endif
	/* Kernels before 5.9: each descriptor the limit allows. */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)max)
		max = (int)rl.rlim_cur;
	for (int i = STDERR_FILENO + 1; i < max; i++)
		if (i != pipe_fd)
			close(i);
	return pipe_fd;
}

int efa_child_run(int (*fn)(void *arg, int fd), void *arg, long timeout_ms, bool own_group,
		  char *out, size_t size, struct efa_child *res, struct efa_error *err)
{
	struct timespec start;
	int fds[2], status;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC))
		return efa_error_set(err, "cannot make a pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		efa_error_set(err, "cannot fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		int fd = detach(fds[1]);

		if (own_group)
			setpgid(0, 0);
		_exit(fn(arg, fd));
	}
	/* Here too, so that a kill at once still finds the group. */
	if (own_group)
		setpgid(pid, pid);
	close(fds[1]);
	clock_gettime(CLOCK_MONOTONIC, &start);
	res->killed = !collect(fds[0], timeout_ms, out, size, &res->len);
	out[res->len] = '\0';
	close(fds[0]);
	/* A child that closed or redirected its output is still bound by
	 * the deadline: the pipe's end is not the child's. */
	if (!res->killed) {
		switch (reap(pid, timeout_ms - ms_since(&start), &status)) {
		case 1:
			res->status = exit_status(status);
			return 0;
		case -1:
			/* Ended (its pid may be another process's now:
			 * never signalled), its status taken elsewhere. */
			res->status = -1;
			return 0;
		}
	}
	res->killed = true;
	kill(own_group ? -pid : pid, SIGKILL);
	if (reap(pid, EFA_CHILD_REAP_MS, &status) == 1)
		res->status = exit_status(status);
	else
		res->status = -1;	/* stuck where no signal reaches: left behind */
	return 0;
}

void efa_child_stdio(int fd)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (null >= 0)
		dup2(null, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
}
