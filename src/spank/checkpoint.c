/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "common/checkpoint/checkpoint.h"
#include "common/checkpoint/checkpoint_dir.h"
#include "common/checkpoint/retention.h"
#include "checkpoint.h"
#include "step.h"

/* How long the end of a batch step waits for retention. */
#define RETAIN_TIMEOUT_MS 60000
/* The child's report; what comes past this is read and dropped. */
#define REPORT_MAX 65536
#define NODE_NAME_MAX 256
#define USER_NAME_MAX 256

static struct {
	bool active;		/* the step has a checkpoint directory */
	bool ready;		/* created on this node */
	bool batch;		/* the batch step: retention when it ends */
	char dir[EFA_CKPT_PATH_MAX];
	char root[EFA_CKPT_PATH_MAX];	/* "/" when the partition has none */
	enum efa_ckpt_fs fs;
	mode_t mode;
	long keep;
	uid_t uid;
	gid_t gid;
	char node[NODE_NAME_MAX];
	dev_t dev;		/* the directory as created on the node */
	ino_t ino;
} ckpt;

static int user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	char tmp[16384];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &found) || !found)
		return -1;
	return snprintf(buf, size, "%s", pw.pw_name) >= (int)size ? -1 : 0;
}

static int decide_dir(spank_t sp, const char *root, const struct efa_options *opts,
		      struct efa_error *err)
{
	char user[USER_NAME_MAX], name[EFA_CKPT_NAME_MAX + 2], task[16];
	uint32_t job_id = 0, array_id = 0, array_task = 0;

	if (opts->checkpoint_dir[0] && root)
		return efa_checkpoint_allowed(root, opts->checkpoint_dir, ckpt.dir,
					      sizeof(ckpt.dir), err);
	if (opts->checkpoint_dir[0]) {
		snprintf(ckpt.dir, sizeof(ckpt.dir), "%s", opts->checkpoint_dir);
		return 0;
	}
	if (user_name(ckpt.uid, user, sizeof(user)))
		return efa_error_set(err, "cannot find the name of uid %u", (unsigned)ckpt.uid);
	/* A name too long for the buffer could not be a directory name
	 * either: failing here gives the job id, as it should. */
	if (spank_getenv(sp, "SLURM_JOB_NAME", name, sizeof(name)) != ESPANK_SUCCESS)
		name[0] = '\0';
	spank_get_item(sp, S_JOB_ID, &job_id);
	/* A task of an array: its own directory, under the array's id. */
	if (spank_get_item(sp, S_JOB_ARRAY_ID, &array_id) == ESPANK_SUCCESS && array_id &&
	    spank_get_item(sp, S_JOB_ARRAY_TASK_ID, &array_task) == ESPANK_SUCCESS &&
	    array_task < NO_VAL) {	/* NO_VAL: not an array's task */
		snprintf(task, sizeof(task), "%u", (unsigned)array_task);
		return efa_checkpoint_default(root, user, name, array_id, task, ckpt.dir,
					      sizeof(ckpt.dir), err);
	}
	return efa_checkpoint_default(root, user, name, job_id, NULL, ckpt.dir, sizeof(ckpt.dir),
				      err);
}

void efa_ckpt_prepare(spank_t sp, const struct efa_config *cfg,
		      const struct efa_partition *part, const struct efa_options *opts,
		      const char *node_name)
{
	const char *root = part ? part->checkpoint_root : NULL;
	uint32_t step_id = 0;
	struct efa_error err;

	if (!opts->checkpoint_dir[0] && !root)
		return;
	snprintf(ckpt.node, sizeof(ckpt.node), "%s", node_name);
	if (spank_get_item(sp, S_JOB_UID, &ckpt.uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &ckpt.gid) != ESPANK_SUCCESS) {
		efa_step_fail("efa: node %s cannot tell the job's user: no checkpoint directory (tell your cluster admin)",
			      ckpt.node);
		return;
	}
	if (efa_path_normalize(root ? root : "/", ckpt.root, sizeof(ckpt.root), &err) ||
	    decide_dir(sp, root ? ckpt.root : NULL, opts, &err)) {
		efa_step_fail("efa: node %s refuses the checkpoint directory: %s", ckpt.node, err.msg);
		return;
	}
	spank_get_item(sp, S_JOB_STEPID, &step_id);
	ckpt.batch = step_id == SLURM_BATCH_SCRIPT;
	ckpt.fs = root ? part->checkpoint_fs : EFA_CKPT_FS_ANY;
	ckpt.mode = cfg->checkpoint_mode;
	ckpt.keep = opts->checkpoint_keep != EFA_CKPT_KEEP_UNSET ? opts->checkpoint_keep :
		    part ? part->checkpoint_keep : EFA_CKPT_KEEP_UNSET;
	ckpt.active = true;
}

void efa_ckpt_create(spank_t sp)
{
	struct efa_error err;
	struct stat st;
	spank_err_t rc;
	int fd;

	/* enroot's hook mounts what this names: only a directory made here. */
	spank_unsetenv(sp, EFA_CKPT_ENV_VAR);
	if (!ckpt.active)
		return;
	if (efa_checkpoint_fs_check(ckpt.root, ckpt.fs, NULL, &err)) {
		efa_step_fail("efa: node %s cannot hold checkpoints: %s", ckpt.node, err.msg);
		return;
	}
	fd = efa_checkpoint_open(ckpt.root, ckpt.dir, ckpt.uid, true, ckpt.mode, &err);
	if (fd < 0) {
		efa_step_fail("efa: node %s cannot create checkpoint directory %s: %s",
			      ckpt.node, ckpt.dir, err.msg);
		return;
	}
	if (fstat(fd, &st)) {
		efa_step_fail("efa: node %s cannot stat checkpoint directory %s: %s",
			      ckpt.node, ckpt.dir, strerror(errno));
		close(fd);
		return;
	}
	close(fd);
	ckpt.dev = st.st_dev;
	ckpt.ino = st.st_ino;
	ckpt.ready = true;
	/* For enroot's hook, which pyxis runs with the job's environment
	 * when it starts the container, after every plugin's user_init. */
	rc = spank_setenv(sp, EFA_CKPT_ENV_VAR, ckpt.dir, 1);
	if (rc != ESPANK_SUCCESS)
		slurm_error("efa: cannot set %s: %s", EFA_CKPT_ENV_VAR, spank_strerror(rc));
}

bool efa_ckpt_reaches_container(void)
{
	struct stat st;

	return !ckpt.ready ||
	       (!stat(ckpt.dir, &st) && st.st_dev == ckpt.dev && st.st_ino == ckpt.ino);
}

const char *efa_ckpt_dir(void)
{
	return ckpt.ready ? ckpt.dir : NULL;
}

/* One line for the parent to log: 'I' (info) or 'E' (error), then text. */
static void report(int out, char level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(int out, char level, const char *fmt, ...)
{
	char line[EFA_ERROR_MAX + EFA_CKPT_PATH_MAX];
	va_list ap;
	int n;

	line[0] = level;
	va_start(ap, fmt);
	n = vsnprintf(line + 1, sizeof(line) - 2, fmt, ap);
	va_end(ap);
	n = n < 0 ? 0 : n >= (int)sizeof(line) - 2 ? (int)sizeof(line) - 3 : n;
	/* A file name may hold a newline: one report, one line. */
	for (int i = 1; i <= n; i++)
		if (line[i] == '\n')
			line[i] = '?';
	line[n + 1] = '\n';
	/* A failed write means the parent stopped listening: nothing to do. */
	if (write(out, line, (size_t)n + 2) < 0)
		return;
}

static void report_removed(void *ctx, const char *name, const char *error)
{
	int out = *(int *)ctx;

	if (error)
		report(out, 'E', "%s not removed: %s", name, error);
	else
		report(out, 'I', "removed %s", name);
}

/* The child: becomes the job's user, then trims the directory. */
static int retain_as_user(const gid_t *gids, int ngids, int out)
{
	struct efa_error err;
	int fd, rc;

	if (setgroups((size_t)ngids, gids)) {
		report(out, 'E', "setgroups: %s: nothing removed", strerror(errno));
		return -1;
	}
	if (setgid(ckpt.gid)) {
		report(out, 'E', "setgid(%u): %s: nothing removed", (unsigned)ckpt.gid, strerror(errno));
		return -1;
	}
	if (setuid(ckpt.uid)) {
		report(out, 'E', "setuid(%u): %s: nothing removed", (unsigned)ckpt.uid, strerror(errno));
		return -1;
	}
	fd = efa_checkpoint_open(ckpt.root, ckpt.dir, ckpt.uid, false, 0, &err);
	if (fd < 0) {
		report(out, 'E', "%s: nothing removed", err.msg);
		return -1;
	}
	rc = efa_retention_apply(fd, ckpt.keep, report_removed, &out, &err);
	if (rc)
		report(out, 'E', "%s", err.msg);
	close(fd);
	return rc;
}

static long ms_since(const struct timespec *start)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - start->tv_sec) * 1000 + (now.tv_nsec - start->tv_nsec) / 1000000;
}

/* Reads the child's report until it closes its end or the time is up. */
static size_t read_report(int in, pid_t pid, char *buf, size_t size)
{
	struct timespec start;
	size_t used = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		struct pollfd p = { .fd = in, .events = POLLIN };
		long left = RETAIN_TIMEOUT_MS - ms_since(&start);
		char drop[4096];
		ssize_t n;
		int ready;

		ready = left > 0 ? poll(&p, 1, (int)left) : 0;
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) {
			kill(pid, SIGKILL);
			slurm_error("efa: checkpoint retention in %s took more than %d s: stopped, older checkpoints may remain",
				    ckpt.dir, RETAIN_TIMEOUT_MS / 1000);
			break;
		}
		if (used + 1 < size)
			n = read(in, buf + used, size - 1 - used);
		else
			n = read(in, drop, sizeof(drop));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (used + 1 < size)
			used += (size_t)n;
	}
	buf[used] = '\0';
	return used;
}

static void log_report(char *text)
{
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == 'E')
			slurm_error("efa: checkpoint retention in %s: %s", ckpt.dir, line + 1);
		else
			slurm_info("efa: checkpoint retention in %s (keeping the %ld newest): %s",
				   ckpt.dir, ckpt.keep, line + 1);
	}
}

void efa_ckpt_retain(spank_t sp)
{
	static char text[REPORT_MAX];
	gid_t *gids = NULL;
	int ngids = 0, pipefd[2], status;
	pid_t pid;

	if (!ckpt.ready || !ckpt.batch || ckpt.keep <= 0)
		return;
	/* Without the job's groups the child keeps only its primary one. */
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &gids, &ngids) != ESPANK_SUCCESS) {
		gids = &ckpt.gid;
		ngids = 1;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		slurm_error("efa: checkpoint retention in %s: pipe: %s: nothing removed",
			    ckpt.dir, strerror(errno));
		return;
	}
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		_exit(retain_as_user(gids, ngids, pipefd[1]) ? 1 : 0);
	}
	close(pipefd[1]);
	if (pid < 0) {
		slurm_error("efa: checkpoint retention in %s: fork: %s: nothing removed",
			    ckpt.dir, strerror(errno));
		close(pipefd[0]);
		return;
	}
	read_report(pipefd[0], pid, text, sizeof(text));
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	log_report(text);
}
