/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/atomic_write.h"
#include "common/base/fields.h"
#include "common/base/strutil.h"
#include "common/usage/usage.h"

#define TABLE_HEADER "# slurm-efa job usage 1\n"
#define STEP_PREFIX "step-"
/* The reading a job's first running step on the node started from: the
 * job's totals are the devices' counters over the time any of its steps
 * runs, counted once however its steps overlap (srun ... & srun ... &). */
#define SPAN_PREFIX "span-"
/* A table line: 8 fields and a value per counter, each at most ~64. */
#define TABLE_LINE_MAX (64 * (8 + EFA_HW_NCOUNTERS))
#define TABLE_MAX ((EFA_USAGE_RUNNING_MAX + EFA_USAGE_RECENT) * TABLE_LINE_MAX)
#define STEP_FILE_MAX (1 << 20)

struct table {
	struct efa_job_usage *jobs;
	size_t n;
};

int efa_usage_dir(const char *cache_dir, const char *node, char *path, size_t size,
		  struct efa_error *err)
{
	struct stat st;

	if (snprintf(path, size, "%s/usage-%s", cache_dir, node) >= (int)size)
		return efa_error_set(err, "NodeCacheDir=%s is too long", cache_dir);
	if (mkdir(cache_dir, 0755) && errno != EEXIST)
		return efa_error_set(err, "cannot make NodeCacheDir=%s: %s", cache_dir, strerror(errno));
	if (mkdir(path, 0700) && errno != EEXIST)
		return efa_error_set(err, "cannot make %s: %s", path, strerror(errno));
	/* Only a directory of the store's owner, closed to others: its
	 * files say what other users' jobs did. */
	if (lstat(path, &st) || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		return efa_error_set(err, "%s is not a directory of uid %u closed to others: remove it",
				     path, (unsigned)geteuid());
	return 0;
}

static int lock_store(const char *dir, int how, struct efa_error *err)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		efa_error_set(err, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	while (flock(fd, how)) {
		if (errno != EINTR) {
			efa_error_set(err, "cannot lock %s: %s", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void unlock_store(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* A label as the table keeps it: one word, "-" for none. */
static void word(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	for (; src && src[i] && i + 1 < size; i++)
		dst[i] = (src[i] == ' ' || src[i] == '\t' || src[i] == '\n') ? '_' : src[i];
	dst[i] = '\0';
	if (!dst[0])
		snprintf(dst, size, "-");
}

static bool parse_job(const char *line, struct efa_job_usage *j)
{
	uint64_t id, shared, steps, have, hangs, sick;
	int64_t start, end;

	memset(j, 0, sizeof(*j));
	if (!efa_field_u64(&line, &id) || id > UINT32_MAX || !efa_field_i64(&line, &start) ||
	    !efa_field_i64(&line, &end) || !efa_field_u64(&line, &shared) || shared > 1 ||
	    !efa_field_u64(&line, &steps) || steps > UINT_MAX || !efa_field_hex(&line, &have) ||
	    have > UINT32_MAX || !efa_field_word(&line, j->user, sizeof(j->user)) ||
	    !efa_field_word(&line, j->partition, sizeof(j->partition)))
		return false;
	j->job_id = (uint32_t)id;
	j->start = (time_t)start;
	j->end = (time_t)end;
	j->shared = shared;
	j->steps = (unsigned)steps;
	j->have = (uint32_t)have;
	for (int c = 0; c < EFA_HW_NCOUNTERS; c++)
		if (!efa_field_u64(&line, &j->total[c]))
			return false;
	/* Hangs came later: a line written before has none. */
	if (efa_field_u64(&line, &hangs) && hangs <= UINT_MAX)
		j->hangs = (unsigned)hangs;
	if (efa_field_u64(&line, &sick) && sick <= UINT_MAX)
		j->sick_links = (unsigned)sick;
	return true;
}

static int load_table(const char *dir, struct table *t, struct efa_error *err)
{
	char path[4096], *text = NULL;
	size_t len;

	memset(t, 0, sizeof(*t));
	snprintf(path, sizeof(path), "%s/jobs", dir);
	if (efa_read_file(path, TABLE_MAX, &text, &len, NULL))
		return 0;	/* no job yet */
	for (const char *line = text; *line;) {
		const char *end = strchr(line, '\n');
		struct efa_job_usage j, *grown;

		if (line[0] != '#' && parse_job(line, &j)) {
			grown = realloc(t->jobs, (t->n + 1) * sizeof(*grown));
			if (!grown) {
				free(text);
				free(t->jobs);
				t->jobs = NULL;
				return efa_error_set(err, "out of memory reading %s", path);
			}
			t->jobs = grown;
			t->jobs[t->n++] = j;
		}
		if (!end)
			break;
		line = end + 1;
	}
	free(text);
	return 0;
}

/* Running jobs first, oldest first; then ended ones, newest first. */
static int job_order(const void *a, const void *b)
{
	const struct efa_job_usage *x = a, *y = b;

	if (!x->end != !y->end)
		return x->end ? 1 : -1;
	if (!x->end)
		return (x->start > y->start) - (x->start < y->start);
	return (x->end < y->end) - (x->end > y->end);
}

static int save_table(const char *dir, struct table *t, struct efa_error *err)
{
	size_t running = 0, ended = 0, size;
	char path[4096], *text, *at;
	int rc;

	if (t->n)
		qsort(t->jobs, t->n, sizeof(*t->jobs), job_order);
	size = sizeof(TABLE_HEADER) + t->n * TABLE_LINE_MAX;
	text = malloc(size);
	if (!text)
		return efa_error_set(err, "out of memory");
	at = efa_field_put(text, TABLE_HEADER);
	for (size_t i = 0; i < t->n; i++) {
		const struct efa_job_usage *j = &t->jobs[i];

		if (j->end ? ended++ >= EFA_USAGE_RECENT : running++ >= EFA_USAGE_RUNNING_MAX)
			continue;
		at = efa_field_put_u64(at, j->job_id);
		*at++ = ' ';
		at = efa_field_put_i64(at, j->start);
		*at++ = ' ';
		at = efa_field_put_i64(at, j->end);
		*at++ = ' ';
		*at++ = j->shared ? '1' : '0';
		*at++ = ' ';
		at = efa_field_put_u64(at, j->steps);
		*at++ = ' ';
		at = efa_field_put_hex(at, j->have);
		*at++ = ' ';
		at = efa_field_put(at, j->user);
		*at++ = ' ';
		at = efa_field_put(at, j->partition);
		for (int c = 0; c < EFA_HW_NCOUNTERS; c++) {
			*at++ = ' ';
			at = efa_field_put_u64(at, j->total[c]);
		}
		*at++ = ' ';
		at = efa_field_put_u64(at, j->hangs);
		*at++ = ' ';
		at = efa_field_put_u64(at, j->sick_links);
		*at++ = '\n';
	}
	*at = '\0';
	snprintf(path, sizeof(path), "%s/jobs", dir);
	rc = efa_write_replace(path, text, (size_t)(at - text), 0600, err);
	free(text);
	return rc;
}

static struct efa_job_usage *find_job(struct table *t, uint32_t job)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->jobs[i].job_id == job)
			return &t->jobs[i];
	return NULL;
}

static struct efa_job_usage *add_job(struct table *t, uint32_t job, time_t when)
{
	struct efa_job_usage *grown = realloc(t->jobs, (t->n + 1) * sizeof(*grown));

	if (!grown)
		return NULL;
	t->jobs = grown;
	memset(&t->jobs[t->n], 0, sizeof(*grown));
	t->jobs[t->n].job_id = job;
	t->jobs[t->n].start = when;
	snprintf(t->jobs[t->n].user, sizeof(grown->user), "-");
	snprintf(t->jobs[t->n].partition, sizeof(grown->partition), "-");
	return &t->jobs[t->n++];
}

/* Calls fn for each running step's file in dir, with its job id. */
static int each_step(const char *dir, int (*fn)(const char *path, uint32_t job, void *arg),
		     void *arg)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return 0;
	while (!rc && (e = readdir(d))) {
		char path[4096];
		uint32_t job, step;
		char extra;

		if (strncmp(e->d_name, STEP_PREFIX, strlen(STEP_PREFIX)) ||
		    sscanf(e->d_name + strlen(STEP_PREFIX), "%" SCNu32 ".%" SCNu32 "%c", &job, &step,
			   &extra) != 2)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		rc = fn(path, job, arg);
	}
	closedir(d);
	return rc;
}

struct sharing {
	struct table *t;
	uint32_t job;
	bool any;
};

static int mark_other(const char *path, uint32_t job, void *arg)
{
	struct sharing *sh = arg;
	struct efa_job_usage *j;

	(void)path;
	if (job == sh->job)
		return 0;
	sh->any = true;
	j = find_job(sh->t, job);
	if (j)
		j->shared = true;
	return 0;
}

/*
 * Whether a step of another job runs on the node now (its reading is
 * kept); marks those jobs shared. Steps, not jobs: a job whose epilog
 * never ran (its slurmd died) stays "running" in the table, but has no
 * step left to share the devices with.
 */
static bool others_running(const char *dir, struct table *t, uint32_t job)
{
	struct sharing sh = { t, job, false };

	each_step(dir, mark_other, &sh);
	return sh.any;
}

static void add_delta(struct efa_job_usage *j, const struct efa_hw_reading *delta)
{
	for (int c = 0; c < EFA_HW_NCOUNTERS; c++) {
		uint64_t sum;

		if (efa_hw_sum(delta, c, &sum)) {
			j->total[c] += sum;
			j->have |= 1u << c;
		}
	}
}

static void step_path(char *buf, size_t size, const char *dir, uint32_t job, uint32_t step)
{
	snprintf(buf, size, "%s/" STEP_PREFIX "%" PRIu32 ".%" PRIu32, dir, job, step);
}

static void span_path(char *buf, size_t size, const char *dir, uint32_t job)
{
	snprintf(buf, size, "%s/" SPAN_PREFIX "%" PRIu32, dir, job);
}

struct job_step {
	uint32_t job;
	const char *self;	/* a step's reading not to count, or NULL */
};

static int is_job_step(const char *path, uint32_t job, void *arg)
{
	const struct job_step *js = arg;

	/* one is enough: 1 stops the walk */
	return job == js->job && !(js->self && !strcmp(path, js->self));
}

/* Whether a step of job other than self runs on the node. */
static bool job_has_step(const char *dir, uint32_t job, const char *self)
{
	struct job_step js = { job, self };

	return each_step(dir, is_job_step, &js) == 1;
}

/* A reading as the store keeps it: "# WHEN SHARED", then the counters. */
static int write_reading(const char *path, const struct efa_hw_reading *now, time_t when,
			 bool shared, struct efa_error *err)
{
	char *reading = efa_hw_format(now), *text = NULL, head[64];
	size_t head_len, len;
	int rc;

	/* One buffer, sized once: a p5's reading is some 20 KB, which a
	 * formatted print would grow into step by step. */
	head_len = (size_t)snprintf(head, sizeof(head), "# %lld %d\n", (long long)when, shared ? 1 : 0);
	len = reading ? strlen(reading) : 0;
	if (reading)
		text = malloc(head_len + len + 1);
	if (!text) {
		free(reading);
		return efa_error_set(err, "out of memory");
	}
	memcpy(text, head, head_len);
	memcpy(text + head_len, reading, len + 1);
	rc = efa_write_replace(path, text, head_len + len, 0600, err);
	free(reading);
	free(text);
	return rc;
}

int efa_usage_step_begin(const char *dir, uint32_t job, uint32_t step, bool table,
			 const char *user, const char *partition, const struct efa_hw_reading *now,
			 time_t when, struct efa_error *err)
{
	struct table t = { 0 };
	struct efa_job_usage *j;
	char path[4096];
	bool shared;
	int lock, rc = -1;

	lock = lock_store(dir, LOCK_EX, err);
	if (lock < 0)
		return -1;
	if (table && load_table(dir, &t, err))
		goto out;
	shared = others_running(dir, &t, job);
	if (table) {
		/* The job's first running step here opens its span; a step
		 * inside another of the job's adds nothing to it. */
		if (!job_has_step(dir, job, NULL)) {
			span_path(path, sizeof(path), dir, job);
			if (write_reading(path, now, when, shared, err))
				goto out;
		}
		j = find_job(&t, job);
		if (!j && !(j = add_job(&t, job, when))) {
			efa_error_set(err, "out of memory");
			goto out;
		}
		word(j->user, sizeof(j->user), user);
		word(j->partition, sizeof(j->partition), partition);
		j->end = 0;	/* a requeued job runs again under its ID */
		j->shared |= shared;
		if (save_table(dir, &t, err))
			goto out;
	}
	step_path(path, sizeof(path), dir, job, step);
	rc = write_reading(path, now, when, shared, err);
out:
	free(t.jobs);
	unlock_store(lock);
	return rc;
}

/* A running step's start: when, whether shared, and its reading. */
static int read_step(const char *path, time_t *start, bool *shared, struct efa_hw_reading *r,
		     struct efa_error *err)
{
	char *text = NULL;
	size_t len;
	long long when;
	int sh;

	if (efa_read_file(path, STEP_FILE_MAX, &text, &len, err))
		return -1;
	if (sscanf(text, "# %lld %d", &when, &sh) != 2 || efa_hw_parse(text, r)) {
		free(text);
		return efa_error_set(err, "%s is not a step's reading", path);
	}
	free(text);
	*start = (time_t)when;
	*shared = sh;
	return 0;
}

/* What the devices moved since the span's reading at path, added to j;
 * -1 when there is none to read. */
static int add_span(const char *path, const struct efa_hw_reading *now, struct efa_job_usage *j)
{
	struct efa_hw_reading before = { 0 }, delta;
	struct efa_error ignored;
	time_t start;
	bool shared;
	int rc = -1;

	if (read_step(path, &start, &shared, &before, &ignored))
		return -1;
	if (!efa_hw_delta(&before, now, &delta, NULL, 0)) {
		add_delta(j, &delta);
		efa_hw_reading_clear(&delta);
		rc = 0;
	}
	efa_hw_reading_clear(&before);
	return rc;
}

/*
 * The step whose reading is at self ends: when it is the job's last
 * running step on the node, the job's span closes and what the devices
 * moved over it is added to j (1). 0 while another of its steps runs
 * (the span goes on; nothing added); -1 when there is no span to close (a
 * store kept from before spans): the caller adds the step's own figures.
 */
static int close_span(const char *dir, uint32_t job, const char *self,
		      const struct efa_hw_reading *now, struct efa_job_usage *j)
{
	char path[4096];
	int rc;

	if (job_has_step(dir, job, self))
		return 0;
	span_path(path, sizeof(path), dir, job);
	rc = add_span(path, now, j);
	unlink(path);
	return rc ? -1 : 1;
}

void efa_step_usage_clear(struct efa_step_usage *u)
{
	efa_hw_reading_clear(&u->delta);
}

int efa_usage_step_end(const char *dir, uint32_t job, uint32_t step, bool table,
		       const struct efa_hw_reading *now, time_t when, struct efa_step_usage *out,
		       char *notes, size_t size, struct efa_error *err)
{
	struct efa_hw_reading before = { 0 };
	struct efa_job_usage *j;
	struct table t = { 0 };
	char path[4096];
	int lock, rc = -1;

	memset(out, 0, sizeof(*out));
	lock = lock_store(dir, LOCK_EX, err);
	if (lock < 0)
		return -1;
	step_path(path, sizeof(path), dir, job, step);
	if (read_step(path, &out->start, &out->shared, &before, err))
		goto out;
	out->end = when;
	if (efa_hw_delta(&before, now, &out->delta, notes, size)) {
		efa_error_set(err, "out of memory");
		goto out;
	}
	if (table && load_table(dir, &t, err))
		goto out;
	out->shared |= others_running(dir, &t, job);
	if (table) {
		j = find_job(&t, job);
		if (!j && !(j = add_job(&t, job, out->start))) {
			efa_error_set(err, "out of memory");
			goto out;
		}
		j->shared |= out->shared;
		j->steps++;
		if (close_span(dir, job, path, now, j) < 0)
			add_delta(j, &out->delta);
		if (save_table(dir, &t, err))
			goto out;
	}
	unlink(path);
	rc = 0;
out:
	if (rc)
		efa_step_usage_clear(out);
	efa_hw_reading_clear(&before);
	free(t.jobs);
	unlock_store(lock);
	return rc;
}

static int remove_if_job(const char *path, uint32_t job, void *arg)
{
	if (job == *(uint32_t *)arg)
		unlink(path);
	return 0;
}

int efa_usage_job_event(const char *dir, uint32_t job, enum efa_usage_event event,
			struct efa_error *err)
{
	struct efa_job_usage *j;
	struct table t;
	int lock, rc = -1;

	lock = lock_store(dir, LOCK_EX, err);
	if (lock < 0)
		return -1;
	if (load_table(dir, &t, err))
		goto out;
	j = find_job(&t, job);
	rc = 0;
	if (j && !j->end) {
		if (event == EFA_USAGE_HANG)
			j->hangs++;
		else
			j->sick_links++;
		rc = save_table(dir, &t, err) ? -1 : 1;
	}
	free(t.jobs);
out:
	unlock_store(lock);
	return rc;
}

int efa_usage_job_end(const char *dir, uint32_t job, time_t when, struct efa_error *err)
{
	struct efa_job_usage *j;
	struct table t;
	char path[4096];
	int lock, rc = -1;

	lock = lock_store(dir, LOCK_EX, err);
	if (lock < 0)
		return -1;
	/* A step whose slurmstepd died never ended: its start is stale,
	 * and so is the job's span. */
	each_step(dir, remove_if_job, &job);
	span_path(path, sizeof(path), dir, job);
	unlink(path);
	if (load_table(dir, &t, err))
		goto out;
	j = find_job(&t, job);
	rc = 0;
	if (j && !j->end) {
		j->end = when;
		rc = save_table(dir, &t, err) ? -1 : 1;
	}
	free(t.jobs);
out:
	unlock_store(lock);
	return rc;
}

int efa_usage_jobs(const char *dir, const struct efa_hw_reading *now,
		   struct efa_job_usage **jobs, size_t *njobs, struct efa_error *err)
{
	struct table t;
	int lock;

	*jobs = NULL;
	*njobs = 0;
	lock = lock_store(dir, LOCK_SH, err);
	if (lock < 0)
		return -1;
	if (load_table(dir, &t, err)) {
		unlock_store(lock);
		return -1;
	}
	/* A running job's open span, up to now (none: between steps). */
	for (size_t i = 0; now && i < t.n; i++) {
		char path[4096];

		if (t.jobs[i].end)
			continue;
		span_path(path, sizeof(path), dir, t.jobs[i].job_id);
		add_span(path, now, &t.jobs[i]);
	}
	unlock_store(lock);
	if (t.n)	/* none: t.jobs is NULL, which qsort must not get */
		qsort(t.jobs, t.n, sizeof(*t.jobs), job_order);
	*jobs = t.jobs;
	*njobs = t.n;
	return 0;
}
