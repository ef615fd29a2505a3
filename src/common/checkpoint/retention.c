/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/array.h"
#include "common/base/dir.h"
#include "common/checkpoint/retention.h"

/* The names frameworks give checkpoints, each a family of its own. */
static const char *const prefixes[] = {
	"checkpoint-", "checkpoint_", "step-", "step_", "global_step", "iter_",
};
#define NPREFIXES (sizeof(prefixes) / sizeof(prefixes[0]))

/* The family of name (an index into prefixes), or -1. */
static int prefix_of(const char *name)
{
	for (size_t i = 0; i < NPREFIXES; i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return (int)i;
	return -1;
}

bool efa_retention_match(const char *name)
{
	return prefix_of(name) >= 0 || efa_ckpt_nemo_name(name);
}

bool efa_retention_is_checkpoint(const struct efa_retention_entry *e)
{
	return e->is_dir && !e->is_link && efa_retention_match(e->name);
}

/* What keep counts and a job resumes from: complete checkpoints alone. */
static bool counted(const struct efa_retention_entry *e)
{
	return efa_retention_is_checkpoint(e) && e->state == EFA_CKPT_COMPLETE;
}

/*
 * The step a name carries, and the family of names it belongs to:
 * checkpoint-N, global_stepN, iter_N, step-N and the like, or NeMo's
 * step=N; -1 when it carries none. Frameworks resume from the highest
 * step (transformers' get_last_checkpoint, Megatron's and DeepSpeed's
 * trackers), and a directory's time changes whenever an entry is removed
 * from it (a rotation cut off halfway makes the older checkpoint look
 * newest). Steps of two families are not compared.
 */
static long step_of(const char *name, int *family)
{
	const char *digits = NULL, *nemo;
	char *end;
	long n;

	*family = prefix_of(name);
	if (*family >= 0) {
		digits = name + strlen(prefixes[*family]);
	} else if (efa_ckpt_nemo_name(name) && (nemo = strstr(name, "-step="))) {
		digits = nemo + 6;
		*family = (int)NPREFIXES;
	}
	if (!digits || *digits < '0' || *digits > '9')
		return -1;
	errno = 0;
	n = strtol(digits, &end, 10);
	if (errno || (*end && *end != '-'))
		return -1;
	return n;
}

static bool later_time(const struct efa_retention_entry *a, const struct efa_retention_entry *b)
{
	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec > b->mtime.tv_sec;
	return a->mtime.tv_nsec > b->mtime.tv_nsec;
}

/* Newer: the higher step when both carry one of one family, else the
 * later time, then the later name in version order. */
static bool newer(const struct efa_retention_entry *a, const struct efa_retention_entry *b)
{
	int fa, fb;
	long sa = step_of(a->name, &fa), sb = step_of(b->name, &fb);

	if (sa >= 0 && sb >= 0 && fa == fb && sa != sb)
		return sa > sb;
	if (later_time(a, b) || later_time(b, a))
		return later_time(a, b);
	return strverscmp(a->name, b->name) > 0;
}

static int newest_first(const void *a, const void *b)
{
	return newer(a, b) ? -1 : newer(b, a) ? 1 : 0;
}

void efa_retention_sort(struct efa_retention_entry *v, size_t n)
{
	qsort(v, n, sizeof(*v), newest_first);
}

const struct efa_retention_entry *efa_retention_newest(const struct efa_retention_entry *v,
						       size_t n)
{
	const struct efa_retention_entry *newest = NULL;

	for (size_t i = 0; i < n; i++)
		if (counted(&v[i]) && (!newest || newer(&v[i], newest)))
			newest = &v[i];
	return newest;
}

size_t efa_retention_select(struct efa_retention_entry *v, size_t n, long keep)
{
	const struct efa_retention_entry *newest = efa_retention_newest(v, n);
	size_t marked = 0;

	for (size_t i = 0; i < n; i++) {
		long newer_ones = 0;

		v[i].remove = false;
		if (keep <= 0 || !efa_retention_is_checkpoint(&v[i]))
			continue;
		if (v[i].state == EFA_CKPT_UNKNOWN)
			continue;
		if (v[i].state == EFA_CKPT_INCOMPLETE) {
			/* A save that died when a complete one came after it
			 * by step and by time; else it may still be written. */
			v[i].remove = newest && newer(newest, &v[i]) && later_time(newest, &v[i]);
			marked += v[i].remove;
			continue;
		}
		/* Quadratic but allocation-free: a directory holds few checkpoints. */
		for (size_t j = 0; j < n && newer_ones < keep; j++)
			newer_ones += j != i && counted(&v[j]) && newer(&v[j], &v[i]);
		v[i].remove = newer_ones >= keep;
		marked += v[i].remove;
	}
	return marked;
}

void efa_retention_free(struct efa_retention_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static int add_entry(struct efa_retention_entry **v, size_t *n, int dirfd, const char *name,
		     const struct stat *st, const struct efa_ckpt_marks *marks)
{
	struct efa_retention_entry *grown;

	if (efa_array_room(v, *n, sizeof(**v)))
		return -1;
	grown = *v;
	grown[*n] = (struct efa_retention_entry){
		.name = strdup(name),
		.mtime = st->st_mtim,
		.is_link = S_ISLNK(st->st_mode),
		.is_dir = S_ISDIR(st->st_mode),
	};
	if (!grown[*n].name)
		return -1;
	grown[*n].state = grown[*n].is_dir && !grown[*n].is_link ?
			  efa_ckpt_state_of(dirfd, name, marks, &grown[*n].why) : EFA_CKPT_UNKNOWN;
	if (!grown[*n].why)
		grown[*n].why = "not a directory";
	(*n)++;
	return 0;
}

int efa_retention_scan(int dirfd, struct efa_retention_entry **out, size_t *nout,
		       struct efa_error *err)
{
	struct efa_retention_entry *v = NULL;
	struct efa_ckpt_marks marks;
	struct dirent *e;
	size_t n = 0;
	DIR *d;
	int fd;

	efa_ckpt_marks_read(dirfd, &marks);
	/* fdopendir owns its fd: read through a fresh one. */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		efa_error_set(err, "cannot read the checkpoint directory: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((errno = 0, e = readdir(d))) {
		struct stat st;

		if (!efa_retention_match(e->d_name))
			continue;
		if (n >= EFA_RETENTION_MAX) {
			efa_error_set(err, "it holds more than %d checkpoints: nothing is judged or deleted; clean it up by hand",
				      EFA_RETENTION_MAX);
			goto fail;
		}
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT)
				continue;
			efa_error_set(err, "cannot stat %s: %s", e->d_name, strerror(errno));
			goto fail;
		}
		if (add_entry(&v, &n, dirfd, e->d_name, &st, &marks)) {
			efa_error_set(err, "out of memory");
			goto fail;
		}
	}
	if (errno) {
		efa_error_set(err, "cannot read the checkpoint directory: %s", strerror(errno));
		goto fail;
	}
	closedir(d);
	*out = v;
	*nout = n;
	return 0;
fail:
	closedir(d);
	efa_retention_free(v, n);
	return -1;
}

int efa_retention_remove(int dirfd, const char *name, struct efa_error *err)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 :
		       efa_error_set(err, "cannot stat %s: %s", name, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return efa_error_set(err, "%s became a symbolic link: left alone", name);
	if (!S_ISDIR(st.st_mode))
		return efa_error_set(err, "%s is not a directory: left alone", name);
	return efa_remove_tree(dirfd, name, err);
}

int efa_retention_plan(int dirfd, long keep, struct efa_retention_plan *plan,
		       struct efa_error *err)
{
	memset(plan, 0, sizeof(*plan));
	if (efa_retention_scan(dirfd, &plan->v, &plan->n, err))
		return -1;
	efa_retention_sort(plan->v, plan->n);
	plan->removals = efa_retention_select(plan->v, plan->n, keep);
	plan->resume = efa_retention_newest(plan->v, plan->n);
	return 0;
}

void efa_retention_plan_free(struct efa_retention_plan *plan)
{
	efa_retention_free(plan->v, plan->n);
	memset(plan, 0, sizeof(*plan));
}

int efa_retention_apply(int dirfd, long keep, efa_retention_report_fn report, void *ctx,
			struct efa_error *err)
{
	struct efa_retention_plan plan;
	int rc = 0;

	if (efa_retention_plan(dirfd, keep, &plan, err))
		return -1;
	for (size_t i = 0; i < plan.n; i++) {
		struct efa_error why;

		if (!plan.v[i].remove)
			continue;
		if (efa_retention_remove(dirfd, plan.v[i].name, &why)) {
			report(ctx, plan.v[i].name, why.msg);
			rc = efa_error_set(err, "some old checkpoints could not be deleted");
		} else {
			report(ctx, plan.v[i].name, NULL);
		}
	}
	efa_retention_plan_free(&plan);
	return rc;
}
