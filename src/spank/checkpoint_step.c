/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "common/base/child.h"
#include "common/checkpoint/checkpoint.h"
#include "common/checkpoint/checkpoint_dir.h"
#include "common/checkpoint/retention.h"
#include "checkpoint_step.h"

/* The child's report; what comes past this is read and dropped. */
#define REPORT_MAX 65536
#define USER_NAME_MAX 256


static int user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	char tmp[16384];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &found) || !found)
		return -1;
	return snprintf(buf, size, "%s", pw.pw_name) >= (int)size ? -1 : 0;
}

static int decide_dir(struct efa_step_ckpt *ckpt, spank_t sp, const char *root,
		      const struct efa_options *opts, struct efa_error *err)
{
	char user[USER_NAME_MAX], name[EFA_CKPT_NAME_MAX + 2], task[16];
	uint32_t job_id = 0, array_id = 0, array_task = 0;

	if (opts->v.checkpoint_dir[0] && root)
		return efa_checkpoint_allowed(root, opts->v.checkpoint_dir, ckpt->dir,
					      sizeof(ckpt->dir), err);
	if (opts->v.checkpoint_dir[0]) {
		snprintf(ckpt->dir, sizeof(ckpt->dir), "%s", opts->v.checkpoint_dir);
		return 0;
	}
	if (user_name(ckpt->uid, user, sizeof(user)))
		return efa_error_set(err, "cannot find the name of uid %u", (unsigned)ckpt->uid);
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
		return efa_checkpoint_default(root, user, name, array_id, task, ckpt->dir,
					      sizeof(ckpt->dir), err);
	}
	return efa_checkpoint_default(root, user, name, job_id, NULL, ckpt->dir, sizeof(ckpt->dir),
				      err);
}

void efa_ckpt_prepare(struct efa_step *step, spank_t sp, const struct efa_options *opts)
{
	struct efa_step_ckpt *ckpt = &step->ckpt;
	const struct efa_partition *part = step->part;
	const char *root = part ? part->checkpoint_root : NULL;
	uint32_t step_id = 0;
	struct efa_error err;

	if (!step->cfg || (!opts->v.checkpoint_dir[0] && !root))
		return;
	if (spank_get_item(sp, S_JOB_UID, &ckpt->uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &ckpt->gid) != ESPANK_SUCCESS) {
		efa_step_fail(step, "efa: node %s cannot tell the job's user: no checkpoint directory (tell your cluster admin)",
			      step->node_name);
		return;
	}
	if (efa_path_normalize(root ? root : "/", ckpt->root, sizeof(ckpt->root), &err) ||
	    decide_dir(ckpt, sp, root ? ckpt->root : NULL, opts, &err)) {
		efa_step_fail(step, "efa: node %s refuses the checkpoint directory: %s", step->node_name,
			      err.msg);
		return;
	}
	spank_get_item(sp, S_JOB_STEPID, &step_id);
	ckpt->batch = step_id == SLURM_BATCH_SCRIPT;
	ckpt->fs = root ? part->checkpoint_fs : EFA_CKPT_FS_ANY;
	ckpt->mode = step->cfg->checkpoint_mode;
	ckpt->timeout_ms = step->cfg->checkpoint_timeout < 1 ? 1000 :
			   step->cfg->checkpoint_timeout > INT_MAX / 2000 ? INT_MAX / 2 :
			   step->cfg->checkpoint_timeout * 1000;
	ckpt->keep = opts->v.checkpoint_keep != EFA_CKPT_KEEP_UNSET ? opts->v.checkpoint_keep :
		     part ? part->checkpoint_keep : EFA_CKPT_KEEP_UNSET;
	ckpt->active = true;
}

bool efa_ckpt_reaches_container(const struct efa_step *step)
{
	const struct efa_step_ckpt *ckpt = &step->ckpt;
	struct stat st;

	return !ckpt->ready ||
	       (!stat(ckpt->dir, &st) && st.st_dev == ckpt->dev && st.st_ino == ckpt->ino);
}

const char *efa_ckpt_dir(const struct efa_step *step)
{
	return step->ckpt.ready ? step->ckpt.dir : NULL;
}

const char *efa_ckpt_resume_dir(const struct efa_step *step)
{
	return step->ckpt.ready && step->ckpt.resume[0] ? step->ckpt.resume : NULL;
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

/* What the child of retention needs: the directory and the job's groups. */
struct retention {
	const struct efa_step_ckpt *ckpt;
	const gid_t *gids;
	int n;
};

/* The child: becomes the job's user, then trims the directory. */
static int retain_as_user(void *arg, int out)
{
	const struct retention *g = arg;
	const struct efa_step_ckpt *ckpt = g->ckpt;
	struct efa_error err;
	int fd, rc;

	if (setgroups((size_t)g->n, g->gids)) {
		report(out, 'E', "setgroups: %s: nothing removed", strerror(errno));
		return -1;
	}
	if (setgid(ckpt->gid)) {
		report(out, 'E', "setgid(%u): %s: nothing removed", (unsigned)ckpt->gid, strerror(errno));
		return -1;
	}
	if (setuid(ckpt->uid)) {
		report(out, 'E', "setuid(%u): %s: nothing removed", (unsigned)ckpt->uid, strerror(errno));
		return -1;
	}
	fd = efa_checkpoint_open(ckpt->root, ckpt->dir, ckpt->uid, false, 0, &err);
	if (fd < 0) {
		report(out, 'E', "%s: nothing removed", err.msg);
		return -1;
	}
	rc = efa_retention_apply(fd, ckpt->keep, report_removed, &out, &err);
	if (rc)
		report(out, 'E', "%s", err.msg);
	close(fd);
	return rc;
}

/* "C<name>": the checkpoint a resumed job starts from, when there is one
 * (a name holding a newline cannot be told in one line: left out). */
static void report_resume(int dirfd, int out)
{
	struct efa_retention_plan plan;
	struct efa_error err;

	if (efa_retention_plan(dirfd, 0, &plan, &err)) {
		report(out, 'W', "no checkpoint to resume from: %s", err.msg);
		return;
	}
	if (plan.resume && !strchr(plan.resume->name, '\n'))
		report(out, 'C', "%s", plan.resume->name);
	efa_retention_plan_free(&plan);
}

/* The child of efa_ckpt_create: "D<dev> <ino>" once made (then what
 * report_resume says), or "E<why>". */
static int create_dir(void *arg, int out)
{
	const struct efa_step_ckpt *ckpt = arg;
	struct efa_error err;
	struct stat st;
	int fd;

	if (efa_checkpoint_fs_check(ckpt->root, ckpt->fs, NULL, &err)) {
		report(out, 'R', "%s", err.msg);
		return -1;
	}
	fd = efa_checkpoint_open(ckpt->root, ckpt->dir, ckpt->uid, true, ckpt->mode, &err);
	if (fd < 0) {
		report(out, 'E', "%s", err.msg);
		return -1;
	}
	if (fstat(fd, &st)) {
		report(out, 'E', "cannot stat it: %s", strerror(errno));
		close(fd);
		return -1;
	}
	report(out, 'D', "%ju %ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	report_resume(fd, out);
	close(fd);
	return 0;
}

/* The child's lines after its first: where a resumed job starts from. */
static void note_resume(struct efa_step_ckpt *ckpt, const char *rest, bool have_rest)
{
	size_t len;

	ckpt->resume[0] = '\0';
	if (!have_rest)
		return;
	len = strcspn(rest, "\n");
	if (rest[0] == 'W')
		slurm_info("efa: checkpoint directory %s: %.*s", ckpt->dir, (int)len - 1, rest + 1);
	else if (rest[0] == 'C' &&
		 snprintf(ckpt->resume, sizeof(ckpt->resume), "%s/%.*s", ckpt->dir, (int)len - 1,
			  rest + 1) >= (int)sizeof(ckpt->resume))
		ckpt->resume[0] = '\0';
}

/*
 * The file system is looked at, and the directory made, in a child with
 * a time limit: a hung FSx for Lustre (or NFS) mount must fail the step
 * with a message, not hang its start, and never drain the node.
 */
void efa_ckpt_create(struct efa_step *step, spank_t sp)
{
	struct efa_step_ckpt *ckpt = &step->ckpt;
	char text[EFA_ERROR_MAX + EFA_CKPT_PATH_MAX + 64];
	struct efa_child child;
	struct efa_error err;
	uintmax_t dev, ino;
	spank_err_t rc;
	bool made;

	/* enroot's hook mounts what this names: only a directory made here. */
	spank_unsetenv(sp, EFA_CKPT_ENV_VAR);
	if (!ckpt->active)
		return;
	if (efa_child_run(create_dir, ckpt, ckpt->timeout_ms, false, text, sizeof(text), &child, &err)) {
		efa_step_fail(step, "efa: node %s cannot create checkpoint directory %s: %s", step->node_name,
			      ckpt->dir, err.msg);
		return;
	}
	/* Made, then stuck looking for the newest checkpoint (one of them a
	 * hung mount): the directory is there, only the resume is unknown. */
	made = text[0] == 'D' && strchr(text, '\n');
	if (child.status < 0)
		slurm_error("efa: the child %s %s is stuck in its file system: left behind",
			    made ? "looking for checkpoints in" : "creating", ckpt->dir);
	if (child.killed && !made) {
		efa_step_fail(step, "efa: node %s cannot create checkpoint directory %s: its file system did not answer within %ld s (CheckpointTimeout=): is FSx for Lustre hung on this node? Tell your cluster admin",
			      step->node_name, ckpt->dir, ckpt->timeout_ms / 1000);
		return;
	}
	text[strcspn(text, "\n")] = '\0';
	if (text[0] == 'R') {
		efa_step_fail(step, "efa: node %s cannot hold checkpoints: %s", step->node_name, text + 1);
		return;
	}
	if (text[0] != 'D' || sscanf(text + 1, "%ju %ju", &dev, &ino) != 2) {
		efa_step_fail(step, "efa: node %s cannot create checkpoint directory %s: %s", step->node_name,
			      ckpt->dir, text[0] ? text + 1 : "its creator ended without a word");
		return;
	}
	ckpt->dev = (dev_t)dev;
	ckpt->ino = (ino_t)ino;
	ckpt->ready = true;
	if (child.killed)
		slurm_error("efa: node %s: checkpoint directory %s did not answer within %ld s while looking for its newest complete checkpoint: CHECKPOINT_RESUME_DIR is not set",
			    step->node_name, ckpt->dir, ckpt->timeout_ms / 1000);
	else
		note_resume(ckpt, text + strlen(text) + 1, child.len > strlen(text) + 1);
	/* For enroot's hook, which pyxis runs with the job's environment
	 * when it starts the container, after every plugin's user_init. */
	rc = spank_setenv(sp, EFA_CKPT_ENV_VAR, ckpt->dir, 1);
	if (rc != ESPANK_SUCCESS)
		slurm_error("efa: cannot set %s: %s", EFA_CKPT_ENV_VAR, spank_strerror(rc));
}

static void log_report(const struct efa_step_ckpt *ckpt, char *text)
{
	char *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == 'E')
			slurm_error("efa: checkpoint retention in %s: %s", ckpt->dir, line + 1);
		else
			slurm_info("efa: checkpoint retention in %s (keeping the %ld newest): %s",
				   ckpt->dir, ckpt->keep, line + 1);
	}
}

void efa_ckpt_retain(struct efa_step *step, spank_t sp)
{
	const struct efa_step_ckpt *ckpt = &step->ckpt;
	struct retention g = { .ckpt = ckpt, .gids = NULL, .n = 0 };
	struct efa_child child;
	struct efa_error err;
	/* Retention may have much to delete: twice the time a look takes. */
	long limit = 2 * ckpt->timeout_ms;
	char *text;

	if (!ckpt->ready || !ckpt->batch || ckpt->keep <= 0)
		return;
	/* The child's report may be long: on the heap, not slurmstepd's stack. */
	text = malloc(REPORT_MAX);
	if (!text) {
		slurm_error("efa: checkpoint retention in %s: out of memory: nothing removed", ckpt->dir);
		return;
	}
	/* Without the job's groups the child keeps only its primary one. */
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, (gid_t **)&g.gids, &g.n) != ESPANK_SUCCESS) {
		g.gids = &ckpt->gid;
		g.n = 1;
	}
	if (efa_child_run(retain_as_user, &g, limit, false, text, REPORT_MAX, &child, &err)) {
		slurm_error("efa: checkpoint retention in %s: %s: nothing removed", ckpt->dir, err.msg);
		free(text);
		return;
	}
	if (child.killed)
		slurm_error("efa: checkpoint retention in %s took more than %ld s: stopped, older checkpoints may remain%s",
			    ckpt->dir, limit / 1000,
			    child.status < 0 ? " (its process, stuck in the file system, was left behind)" : "");
	log_report(ckpt, text);
	free(text);
}
