/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/child.h"
#include "common/cluster/scontrol.h"

const char *efa_slurm_command(const char *name, char *buf, size_t size)
{
	const char *dir = getenv(EFA_SLURM_BINDIR_ENV);

	if (dir && dir[0] && snprintf(buf, size, "%s/%s", dir, name) < (int)size)
		return buf;
	if (snprintf(buf, size, "%s/%s", EFA_SLURM_BINDIR, name) < (int)size && !access(buf, X_OK))
		return buf;
	snprintf(buf, size, "%s", name);
	return buf;
}

struct command {
	char *const *argv;
	const char *path;
};

static int exec_argv(void *arg, int fd)
{
	const struct command *cmd = arg;

	efa_child_stdio(fd);
	execvp(cmd->path, cmd->argv);
	printf("cannot run %s: %s\n", cmd->path, strerror(errno));
	return 127;
}

int efa_scontrol(char *const *argv, long timeout_ms, char *out, size_t size)
{
	char path[PATH_MAX];
	struct command cmd = { argv, efa_slurm_command(argv[0], path, sizeof(path)) };
	struct efa_child child;
	struct efa_error err;

	if (efa_child_run(exec_argv, &cmd, timeout_ms, true, out, size, &child, &err)) {
		snprintf(out, size, "%s", err.msg);
		return -1;
	}
	if (child.killed) {
		snprintf(out, size, "%s did not answer within %ld s", cmd.path, timeout_ms / 1000);
		return -1;
	}
	if (child.status) {
		if (!out[0])
			snprintf(out, size, "%s exited %d", cmd.path, child.status);
		return -1;
	}
	return 0;
}
