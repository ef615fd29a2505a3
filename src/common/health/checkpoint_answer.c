/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <limits.h>
#include <string.h>
#include <sys/statfs.h>

#include "common/base/child.h"
#include "common/base/strutil.h"
#include "common/health/checkpoint_answer.h"

/*
 * In the child: the two requests a job's save makes first, the file
 * system's own (statfs) and a lookup in the directory. Either may never
 * return on a hung mount. What they answer does not matter.
 */
static int look_at_root(void *arg, int fd)
{
	const char *root = arg;
	struct statfs sfs;
	DIR *dir;

	(void)fd;
	if (statfs(root, &sfs))
		return 0;
	dir = opendir(root);
	if (dir) {
		(void)readdir(dir);
		closedir(dir);
	}
	return 0;
}

static long timeout_ms(const struct efa_config *cfg)
{
	if (cfg->checkpoint_timeout < 1)
		return 1000;
	if (cfg->checkpoint_timeout > INT_MAX / 1000)
		return INT_MAX;
	return cfg->checkpoint_timeout * 1000;
}

/*
 * Whether partition i's root is one to look at: it has one, and it is the
 * partition asked about, or any is and no partition before it has the
 * same root (a root is looked at once).
 */
static bool to_look_at(const struct efa_config *cfg, const char *partition, size_t i)
{
	const struct efa_partition *p = &cfg->partitions[i];

	if (!p->checkpoint_root)
		return false;
	if (partition)
		return !strcmp(p->name, partition);
	for (size_t j = 0; j < i; j++)
		if (cfg->partitions[j].checkpoint_root &&
		    !strcmp(cfg->partitions[j].checkpoint_root, p->checkpoint_root))
			return false;
	return true;
}

bool efa_checkpoint_answer_problem(const struct efa_config *cfg, const char *partition,
				   const struct efa_deadline *dl, char *buf, size_t size)
{
	for (size_t i = 0; i < cfg->npartitions; i++) {
		const struct efa_partition *p = &cfg->partitions[i];
		struct efa_child child;
		struct efa_error err;
		char out[16];

		long limit = efa_deadline_cap(dl, timeout_ms(cfg));

		if (!to_look_at(cfg, partition, i))
			continue;
		if (!limit) {
			efa_strlcatf(buf, size, "%sthe health check ran out of its %ld s (HealthTimeout=) before it could look at checkpoint file system %s",
				     buf[0] ? "; " : "", cfg->health_timeout, p->checkpoint_root);
			return true;
		}
		/* A child that cannot start (no memory, no processes) says
		 * nothing about the file system. */
		if (efa_child_run(look_at_root, p->checkpoint_root, limit, false, out, sizeof(out),
				  &child, &err))
			continue;
		if (!child.killed)
			continue;
		efa_strlcatf(buf, size, "%scheckpoint file system %s (CheckpointRoot= of partition %s) did not answer within %ld s (%s)",
			     buf[0] ? "; " : "", p->checkpoint_root, p->name, (limit + 999) / 1000,
			     limit < timeout_ms(cfg) ? "what was left of HealthTimeout=" : "CheckpointTimeout=");
		return true;
	}
	return false;
}
