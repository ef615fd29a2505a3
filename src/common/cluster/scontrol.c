/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <unistd.h>

#include "common/base/child.h"
#include "common/cluster/scontrol.h"

static int exec_argv(void *arg, int fd)
{
	char *const *argv = arg;

	efa_child_stdio(fd);
	execvp(argv[0], argv);
	return 127;
}

int efa_scontrol(char *const *argv, long timeout_ms, char *out, size_t size)
{
	struct efa_child child;
	struct efa_error err;

	if (efa_child_run(exec_argv, (void *)argv, timeout_ms, true, out, size, &child, &err)) {
		snprintf(out, size, "%s", err.msg);
		return -1;
	}
	if (child.killed) {
		snprintf(out, size, "%s did not answer within %ld s", argv[0], timeout_ms / 1000);
		return -1;
	}
	if (child.status) {
		if (!out[0])
			snprintf(out, size, "%s exited %d", argv[0], child.status);
		return -1;
	}
	return 0;
}
