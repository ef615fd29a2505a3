/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/strutil.h"
#include "common/config/efa_conf.h"
#include "common/health/slurmd_limits.h"

/* slurmd is a parent or a grandparent; a bound keeps a loop out. */
#define ANCESTORS_MAX 16
#define PROC_FILE_MAX 8192

bool efa_limits_memlock(const char *text, rlim_t *soft)
{
	const char *line = strstr(text, "\nMax locked memory ");
	unsigned long long v;
	char *end;

	if (!line)
		return false;
	line += strlen("\nMax locked memory ");
	line += strspn(line, " ");
	if (!strncmp(line, "unlimited", strlen("unlimited"))) {
		*soft = RLIM_INFINITY;
		return true;
	}
	errno = 0;
	v = strtoull(line, &end, 10);
	if (errno || end == line || (*end != ' ' && *end != '\t'))
		return false;
	*soft = (rlim_t)v;
	return true;
}

/* The name and parent of a process, from /proc/PID/stat: "PID (NAME) S PPID ...". */
static int process_of(pid_t pid, char *name, size_t size, pid_t *parent)
{
	char path[64], *text = NULL, *open_paren, *close_paren;
	size_t len;
	long ppid;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (efa_read_file(path, PROC_FILE_MAX, &text, &len, NULL))
		return -1;
	open_paren = strchr(text, '(');
	/* The name may hold ")": the last one closes it. */
	close_paren = strrchr(text, ')');
	if (open_paren && close_paren > open_paren &&
	    sscanf(close_paren + 1, " %*c %ld", &ppid) == 1) {
		snprintf(name, size, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
		*parent = (pid_t)ppid;
		rc = 0;
	}
	free(text);
	return rc;
}

pid_t efa_slurmd_ancestor(void)
{
	pid_t pid = getppid();
	char name[64];

	for (int hop = 0; hop < ANCESTORS_MAX && pid > 1; hop++) {
		pid_t parent;

		if (process_of(pid, name, sizeof(name), &parent))
			return 0;
		if (!strcmp(name, "slurmd"))
			return pid;
		pid = parent;
	}
	return 0;
}

/* "64 KiB", "8 MiB", "1.5 GiB": as an admin sets them. */
static void human_bytes(unsigned long long v, char *buf, size_t size)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	double x = (double)v;
	size_t u = 0;

	while (x >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		x /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, size, "%llu bytes", v);
	else
		snprintf(buf, size, "%.*f %s", x == (double)(unsigned long long)x ? 0 : 1, x, units[u]);
}

bool efa_slurmd_memlock_problem(long min, char *buf, size_t size)
{
	pid_t slurmd = min > 0 ? efa_slurmd_ancestor() : 0;
	char path[64], *text = NULL, amount[32], wanted[32];
	size_t len;
	rlim_t soft;
	bool limited;

	if (!slurmd)
		return false;
	snprintf(path, sizeof(path), "/proc/%ld/limits", (long)slurmd);
	if (efa_read_file(path, PROC_FILE_MAX, &text, &len, NULL))
		return false;
	limited = efa_limits_memlock(text, &soft) && soft != RLIM_INFINITY &&
		  (min == EFA_BYTES_UNLIMITED || soft < (rlim_t)min);
	free(text);
	if (!limited)
		return false;
	human_bytes((unsigned long long)soft, amount, sizeof(amount));
	if (min == EFA_BYTES_UNLIMITED)
		snprintf(wanted, sizeof(wanted), "unlimited");
	else
		human_bytes((unsigned long long)min, wanted, sizeof(wanted));
	efa_strlcatf(buf, size, "%sslurmd's locked-memory limit is %s, below HealthMinLockedMemory=%s: every job here inherits it, and EFA's memory registration fails under it (start slurmd with LimitMEMLOCK=infinity, as Slurm's slurmd.service does)",
		     buf[0] ? "; " : "", amount, wanted);
	return true;
}
