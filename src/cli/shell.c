/* SPDX-License-Identifier: Apache-2.0 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "common/base/child.h"
#include "shell.h"

/* The child: the command, with the pipe as its stdout and stderr. */
static int run_sh(void *arg, int fd)
{
	efa_child_stdio(fd);
	execl("/bin/sh", "sh", "-c", (const char *)arg, (char *)NULL);
	return 127;
}

int cli_shell(const char *cmd, int timeout, char *out, size_t size)
{
	struct efa_child child;
	struct efa_error err;
	size_t used;

	if (efa_child_run(run_sh, (void *)cmd, timeout * 1000L, true, out, size, &child, &err)) {
		snprintf(out, size, "%s", err.msg);
		return -1;
	}
	/* One log line per run. */
	for (used = 0; used < child.len; used++)
		if (out[used] == '\n' || out[used] == '\r')
			out[used] = ' ';
	while (used && out[used - 1] == ' ')
		out[--used] = '\0';
	if (child.killed)
		snprintf(out + used, size - used, "%s(killed after %d s)", used ? " " : "", timeout);
	return child.status < 0 ? 128 + SIGKILL : child.status;
}
