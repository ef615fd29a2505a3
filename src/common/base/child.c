/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
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
		close(fds[0]);
		if (own_group)
			setpgid(0, 0);
		_exit(fn(arg, fds[1]));
	}
	/* Here too, so that a kill at once still finds the group. */
	if (own_group)
		setpgid(pid, pid);
	close(fds[1]);
	res->killed = !collect(fds[0], timeout_ms, out, size, &res->len);
	out[res->len] = '\0';
	close(fds[0]);
	if (res->killed)
		kill(own_group ? -pid : pid, SIGKILL);
	/* A child that closed its end is ending: waited for at once. */
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t done = waitpid(pid, &status, res->killed ? WNOHANG : 0);

		if (done == pid) {
			res->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
			return 0;
		}
		if ((done < 0 && errno != EINTR) || ms_since(&start) > EFA_CHILD_REAP_MS) {
			res->status = -1;
			return 0;
		}
		if (done == 0)
			usleep(20000);
	}
}
