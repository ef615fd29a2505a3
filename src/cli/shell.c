/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shell.h"

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Keeps what fits, one line: a log line per run. */
static void keep(char *out, size_t size, size_t *used, const char *buf, size_t n)
{
	for (size_t i = 0; i < n && *used + 1 < size; i++)
		out[(*used)++] = buf[i] == '\n' || buf[i] == '\r' ? ' ' : buf[i];
	out[*used] = '\0';
}

static void child(const char *cmd, int fd)
{
	int null = open("/dev/null", O_RDONLY);

	setpgid(0, 0);
	if (null >= 0)
		dup2(null, STDIN_FILENO);
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
	execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	_exit(127);
}

int cli_shell(const char *cmd, int timeout, char *out, size_t size)
{
	long deadline = now_ms() + timeout * 1000L;
	bool killed = false;
	size_t used = 0;
	int fds[2], status;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(fds, O_CLOEXEC)) {
		snprintf(out, size, "cannot make a pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(out, size, "cannot fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (!pid)
		child(cmd, fds[1]);
	/* Also here, so that a kill at once still finds the group. */
	setpgid(pid, pid);
	close(fds[1]);
	for (;;) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		long left = deadline - now_ms();
		char buf[512];
		ssize_t n;

		if (left <= 0) {
			kill(-pid, SIGKILL);
			killed = true;
			break;
		}
		n = poll(&p, 1, (int)left);
		if (n <= 0)
			continue;
		n = read(fds[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		keep(out, size, &used, buf, (size_t)n);
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	while (used && out[used - 1] == ' ')
		out[--used] = '\0';
	if (killed)
		snprintf(out + used, size - used, "%s(killed after %d s)", used ? " " : "", timeout);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
