/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base/hash.h"
#include "common/base/strutil.h"
#include "common/env/env.h"
#include "common/env/varnames.h"
#include "common/node/image.h"
#include "common/node/libpath.h"
#include "common/node/stack.h"

#define ENV_VALUE_MAX 8192
#define LONG_VALUE_MAX (4 * 1024 * 1024)

const char *efa_env_decision_name(enum efa_env_decision d)
{
	static const char *const names[] = {
		[EFA_ENV_SET] = "set",
		[EFA_ENV_FORCED] = "forced",
		[EFA_ENV_USER] = "user",
		[EFA_ENV_SKIPPED] = "skipped",
		[EFA_ENV_PREPENDED] = "prepended",
		[EFA_ENV_REMOVED] = "removed",
	};

	return names[d];
}

static bool forced(const struct efa_config *cfg, const char *name)
{
	for (char **f = cfg ? cfg->force_env : NULL; f && *f; f++)
		if (!strcmp(*f, name))
			return true;
	return false;
}

/*
 * Appends the entries of list that are not in skip to out (size bytes,
 * *used of them taken): linear in the list's length, which may be a job's
 * path of many thousands of entries.
 */
static int append_entries(char *out, size_t size, size_t *used, const char *list,
			  const char *skip)
{
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p), sep = *used ? 1 : 0;

		if (len && !efa_list_has(skip, ':', p, len)) {
			if (*used + sep + len + 1 > size)
				return -1;
			if (sep)
				out[(*used)++] = ':';
			memcpy(out + *used, p, len);
			*used += len;
			out[*used] = '\0';
		}
		p += len + (end ? 1 : 0);
	}
	return 0;
}

/* Whether a directory of list not in skip holds the job's own aws-ofi-nccl
 * or libfabric, named in dir: 1 or 0; -1 without memory to look. */
static int find_own_stack(const struct efa_env_plan *plan, const char *list, const char *skip,
			  char *dir, size_t size)
{
	const struct efa_sysfs *fs = plan->task_fs;
	struct efa_sysfs root;
	int found;

	if (!fs) {
		if (efa_sysfs_open(&root, "/"))
			return -1;	/* "/" is there: out of memory */
		fs = &root;
	}
	found = efa_libpath_find(fs, list, skip, EFA_LIB_NET_PLUGIN, dir, size);
	if (!found)
		found = efa_libpath_find(fs, list, skip, EFA_LIB_FABRIC, dir, size);
	if (fs == &root)
		efa_sysfs_close(&root);
	return found;
}

/*
 * A string of at most max bytes with its NUL, whose buffer grows as it
 * needs to. A task applies its part in the child slurmstepd forked for it,
 * where every page first written is a copy-on-write fault, and Slurm's
 * setenvf takes a 256 KiB buffer from the heap's top for every variable
 * set: kilobytes held here while it does move that buffer onto pages the
 * child has not written yet. So an apply holds what its values need, not
 * their bound.
 */
struct bounded {
	char *s;
	size_t cap;
	size_t max;
};

/* Room for len bytes and a NUL; -1 past b->max or without memory. */
static int bounded_reserve(struct bounded *b, size_t len)
{
	size_t cap = b->cap ? b->cap : 256;
	char *s;

	if (len >= b->max)
		return -1;
	if (len < b->cap)
		return 0;
	while (cap <= len)
		cap *= 4;
	if (cap > b->max)
		cap = b->max;
	if (!(s = realloc(b->s, cap)))
		return -1;
	if (!b->cap)
		s[0] = '\0';
	b->s = s;
	b->cap = cap;
	return 0;
}

struct apply {
	const struct efa_config *cfg;
	const char *image;
	efa_env_get_fn get;
	efa_env_put_fn put;
	void *ctx;
	bool failed;			/* out of memory: apply fails */
	struct bounded owned_before;	/* EFA_ENV_OWNED_VAR on arrival */
	struct bounded owned_now;
	size_t owned_len;
	struct bounded current;		/* a variable's value, read */
};

/*
 * get() into b: 1 and the value when name is set, 0 (and "") when it is
 * not, -1 when its value is longer than b->max (then it is the job's) or
 * there is no memory for it (a->failed).
 */
static int get_bounded(struct apply *a, const char *name, struct bounded *b)
{
	if (bounded_reserve(b, 0)) {
		a->failed = true;
		return -1;
	}
	for (;;) {
		int rc = a->get(a->ctx, name, b->s, b->cap);

		if (rc >= 0) {
			if (!rc)
				b->s[0] = '\0';
			return rc;
		}
		if (b->cap >= b->max)
			return -1;	/* the job's */
		if (bounded_reserve(b, b->cap)) {
			a->failed = true;
			return -1;
		}
	}
}

static int apply_libdirs(const struct efa_env_plan *plan, struct apply *a)
{
	efa_env_put_fn put = a->put;
	void *ctx = a->ctx;
	/* A library path of thousands of entries is a job's own, and never
	 * to be taken for unset: read whole up to LONG_VALUE_MAX, and past
	 * that left as it is. */
	struct bounded path = { .max = LONG_VALUE_MAX }, added = { .max = ENV_VALUE_MAX };
	char *current, *value = NULL, *own = NULL, *reason = NULL;
	size_t size, used = 0;
	int rc = 0, found, got_path, got_added;

	if ((got_path = get_bounded(a, EFA_ENV_LIBPATH_VAR, &path)) < 0)
		goto out;	/* past the bound, or no memory: a->failed */
	current = path.s;
	if ((got_added = get_bounded(a, EFA_ENV_LIBDIRS_VAR, &added)) != 1) {
		if (a->failed)
			goto out;
		added.s[0] = '\0';
	}
	size = strlen(current) + strlen(plan->libdirs) + 2;
	/* A directory of the path is no longer than the path. */
	if (!(value = calloc(1, size)) || !(own = malloc(strlen(current) + 1))) {
		a->failed = true;
		goto out;
	}
	if ((found = find_own_stack(plan, current, added.s, own, strlen(current) + 1)) < 0) {
		a->failed = true;
		goto out;
	}
	if (found) {
		/* (value has room for all of current.) */
		append_entries(value, size, &used, current, added.s);
		if (asprintf(&reason, "the job brings its own EFA libraries (%s): the node's are not put first",
			     own) < 0) {
			reason = NULL;
			a->failed = true;
			goto out;
		}
		/* Left as it is, but for what an earlier step put first. */
		rc = put(ctx, EFA_ENV_LIBPATH_VAR, value, added.s[0] ? EFA_ENV_SET : EFA_ENV_USER, reason,
			 got_path == 1 ? current : NULL);
		if (!rc)
			rc = put(ctx, EFA_ENV_LIBDIRS_VAR, "", EFA_ENV_SET, reason,
				 got_added == 1 ? added.s : NULL);
		goto out;
	}
	/* Ours first, then the rest without ours and without the earlier
	 * step's (which may be another node's). */
	if (bounded_reserve(&added, strlen(added.s) + 1 + strlen(plan->libdirs)) ||
	    efa_strlcatf(added.s, added.cap, "%s%s", added.s[0] ? ":" : "", plan->libdirs) ||
	    append_entries(value, size, &used, plan->libdirs, "") ||
	    append_entries(value, size, &used, current, added.s))
		goto out;	/* too long to rewrite: leave the user's path */
	rc = put(ctx, EFA_ENV_LIBPATH_VAR, value, EFA_ENV_PREPENDED,
		 plan->image ? "EFA and aws-ofi-nccl libraries found in the container image" :
			       "EFA and aws-ofi-nccl libraries found on this node",
		 got_path == 1 ? current : NULL);
	/* (added no longer holds what SLURM_EFA_LIBDIRS does.) */
	if (!rc)
		rc = put(ctx, EFA_ENV_LIBDIRS_VAR, plan->libdirs, EFA_ENV_SET,
			 "what slurm-efa added to LD_LIBRARY_PATH", NULL);
out:
	free(path.s);
	free(value);
	free(own);
	free(reason);
	free(added.s);
	return rc;
}

/*
 * What slurm-efa set, in EFA_ENV_OWNED_VAR: "NAME:DIGEST,..." with a digest
 * of the value it set, so that a value the job changed since (or unset) is
 * told apart from slurm-efa's own and kept. A NAME without a digest (an
 * earlier release wrote those) counts as slurm-efa's whatever its value.
 */
#define DIGEST_LEN 8

static void value_digest(const char *value, char out[DIGEST_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint32_t h = efa_fnv1a32_str(value);
	/* By hand: a step makes one per variable per task. */
	for (int i = DIGEST_LEN - 1; i >= 0; i--, h >>= 4)
		out[i] = hex[h & 0xf];
	out[DIGEST_LEN] = '\0';
}

enum recorded { NOT_RECORDED, RECORDED, RECORDED_WITH_DIGEST };

/* Looks name up in a record; digest gets the recorded one, if any. */
static enum recorded record_find(const char *record, const char *name, size_t len,
				 char digest[DIGEST_LEN + 1])
{
	for (const char *p = record; p && *p;) {
		const char *end = strchr(p, ',');
		size_t plen = end ? (size_t)(end - p) : strlen(p);

		if (plen >= len && !strncmp(p, name, len)) {
			if (plen == len)
				return RECORDED;
			if (p[len] == ':' && plen == len + 1 + DIGEST_LEN) {
				memcpy(digest, p + len + 1, DIGEST_LEN);
				digest[DIGEST_LEN] = '\0';
				return RECORDED_WITH_DIGEST;
			}
		}
		if (!end)
			break;
		p = end + 1;
	}
	return NOT_RECORDED;
}

/* Whether the job's current value is the one slurm-efa recorded setting. */
static bool still_ours(enum recorded r, const char *recorded_digest, const char *current)
{
	char digest[DIGEST_LEN + 1];

	if (r == RECORDED)
		return true;
	value_digest(current, digest);
	return r == RECORDED_WITH_DIGEST && !strcmp(digest, recorded_digest);
}


/*
 * Appends a record to owned_now, after a comma when it holds one already:
 * len bytes of at and, with a digest, ':' and the digest. Too many to
 * record is harmless: those stay as user values.
 */
static void owned_append(struct apply *a, const char *at, size_t len, const char *digest)
{
	size_t add = (a->owned_len ? 1 : 0) + len + (digest ? 1 + DIGEST_LEN : 0);
	char *p;

	if (a->owned_len + add >= ENV_VALUE_MAX)
		return;
	if (bounded_reserve(&a->owned_now, a->owned_len + add)) {
		a->failed = true;
		return;
	}
	p = a->owned_now.s + a->owned_len;
	if (a->owned_len)
		*p++ = ',';
	memcpy(p, at, len);
	p += len;
	if (digest) {
		*p++ = ':';
		memcpy(p, digest, DIGEST_LEN);
		p += DIGEST_LEN;
	}
	*p = '\0';
	a->owned_len += add;
}

static void record_add(struct apply *a, const char *name, const char *digest)
{
	owned_append(a, name, strlen(name), digest);
}

static int apply_entry(struct apply *a, const struct efa_env_entry *e)
{
	char recorded_digest[DIGEST_LEN + 1], digest[DIGEST_LEN + 1], *current;
	enum recorded r = record_find(a->owned_before.s, e->name, strlen(e->name), recorded_digest);
	int got = e->value && !e->slurm_var ? get_bounded(a, e->name, &a->current) : 0;
	bool present = got != 0;	/* -1: longer than ENV_VALUE_MAX, the job's */
	const char *reason = e->reason;
	enum efa_env_decision d;
	int rc;

	if (a->failed)
		return -1;
	current = a->current.s;

	if (!e->value) {
		d = EFA_ENV_SKIPPED;
	} else if (e->slurm_var || (!present && r != RECORDED_WITH_DIGEST) ||
		   (got == 1 && r != NOT_RECORDED && still_ours(r, recorded_digest, current))) {
		d = EFA_ENV_SET;
	} else if (forced(a->cfg, e->name)) {
		d = EFA_ENV_FORCED;
	} else if (!present) {
		/* The job unset what slurm-efa set: it stays unset, and
		 * recorded, for the steps this one starts. */
		rc = a->put(a->ctx, e->name, NULL, EFA_ENV_USER,
			    "unset by the job after slurm-efa set it: left unset", NULL);
		record_add(a, e->name, recorded_digest);
		return rc;
	} else {
		d = EFA_ENV_USER;
		reason = r != NOT_RECORDED ? "changed by the job after slurm-efa set it: the job's value wins" :
			 a->image ? "set by the container image or the job: its value wins (ForceEnv= overrides)" :
				    "already set in this environment: the job's value wins";
	}
	rc = a->put(a->ctx, e->name, d == EFA_ENV_USER ? current : e->value, d, reason,
		    got == 1 ? current : NULL);
	if (rc || (d != EFA_ENV_SET && d != EFA_ENV_FORCED) || e->slurm_var)
		return rc;
	value_digest(e->value, digest);
	record_add(a, e->name, digest);
	return 0;
}

/*
 * The next entry of owned_before, from *p on, that owned_now does not
 * record (a variable this apply made no decision on): its start, its
 * length and its name's; NULL at the end. *p moves past it.
 */
static const char *next_undecided(const struct apply *a, const char **p, size_t *entry,
				  size_t *len)
{
	char unused[DIGEST_LEN + 1];

	while (**p) {
		const char *at = *p, *end = strchr(at, ',');

		*entry = end ? (size_t)(end - at) : strlen(at);
		*len = strcspn(at, ",:");
		*p = end ? end + 1 : at + *entry;
		if (*len && record_find(a->owned_now.s, at, *len, unused) == NOT_RECORDED)
			return at;
	}
	return NULL;
}

/*
 * Removes the variable a record at names (len bytes) unless the job changed
 * it since slurm-efa set it. A record the job wrote may name a variable
 * twice: the first well-formed one counts, as it does for an entry
 * (apply_entry), so that every part and every copy decide alike.
 */
static int remove_if_ours(struct apply *a, const char *at, size_t len)
{
	char digest[DIGEST_LEN + 1], name[256];
	enum recorded r;

	if (len >= sizeof(name))
		return 0;
	memcpy(name, at, len);
	name[len] = '\0';
	r = record_find(a->owned_before.s, name, len, digest);
	/* The record is in the user's hands: never let it remove what
	 * slurm-efa could not have set. */
	if (efa_env_reserved(name) || !strcmp(name, "PATH") ||
	    get_bounded(a, name, &a->current) != 1 || !still_ours(r, digest, a->current.s))
		return 0;
	return a->put(a->ctx, name, NULL, EFA_ENV_REMOVED,
		      "set by slurm-efa for an earlier step; not wanted here", a->current.s);
}

/*
 * How much of a step an apply decides: all of it for one task
 * (efa_env_apply); what every task shares (efa_env_apply_shared); or a
 * task's own entries in an environment the shared part settled
 * (efa_env_apply_task).
 */
enum part { WHOLE, SHARED, TASK_AFTER_SHARED };

/* Whether name (len bytes) is a plan entry's or one of task's, and
 * whether that one is per task. */
static bool entry_named(const struct efa_env_plan *plan, const struct efa_env_entry *task,
			size_t ntask, const char *name, size_t len, bool *per_task)
{
	*per_task = false;
	for (size_t i = 0; plan && i < plan->n; i++)
		if (!strncmp(plan->v[i].name, name, len) && !plan->v[i].name[len])
			return true;
	for (size_t i = 0; i < ntask; i++)
		if (!strncmp(task[i].name, name, len) && !task[i].name[len]) {
			*per_task = task[i].per_task;
			return true;
		}
	return false;
}

/*
 * The records of owned_before that owned_now does not hold: a variable no
 * entry names, or one this apply or the shared part left as the job
 * changed it (a record the job wrote may name one twice). A variable no
 * entry names is an earlier step's: the shared part keeps its record for
 * the tasks, a task removes it unless the job changed it since. Of those
 * an entry names, a task after the shared part keeps the records of what
 * that part decided; the others are dropped.
 */
static int undecided_records(struct apply *a, enum part part, const struct efa_env_plan *plan,
			     const struct efa_env_entry *task, size_t ntask)
{
	const char *p = a->owned_before.s, *at;
	size_t entry, len;
	int rc;

	while ((at = next_undecided(a, &p, &entry, &len))) {
		bool per_task, named = entry_named(plan, task, ntask, at, len, &per_task);

		if (named ? part == TASK_AFTER_SHARED && !per_task : part == SHARED)
			owned_append(a, at, entry, NULL);	/* as it is */
		else if (!named && (rc = remove_if_ours(a, at, len)))
			return rc;
		if (a->failed)
			return -1;
	}
	return 0;
}

/* Whether this part decides e: after the shared part, a task decides its
 * own entries, and ForceEnv='s again (as the whole apply would). */
static bool decides(const struct apply *a, enum part part, const struct efa_env_entry *e)
{
	return part != TASK_AFTER_SHARED || e->per_task || forced(a->cfg, e->name);
}

static int apply(const struct efa_env_plan *plan, const struct efa_env_entry *task, size_t ntask,
		 const struct efa_config *cfg, efa_env_get_fn get, efa_env_put_fn put, void *ctx,
		 enum part part)
{
	struct apply a = { .cfg = cfg, .image = plan ? plan->image : NULL,
			   .get = get, .put = put, .ctx = ctx,
			   .owned_before = { .max = ENV_VALUE_MAX },
			   .owned_now = { .max = ENV_VALUE_MAX },
			   .current = { .max = ENV_VALUE_MAX } };
	bool recorded;
	int rc = -1;

	if (bounded_reserve(&a.owned_now, 0) || bounded_reserve(&a.owned_before, 0))
		goto out;
	/* Longer than ENV_VALUE_MAX, it is not a record of ours. */
	recorded = get_bounded(&a, EFA_ENV_OWNED_VAR, &a.owned_before) == 1;
	if (!recorded)
		a.owned_before.s[0] = '\0';
	if (a.failed)
		goto out;
	for (size_t i = 0; plan && i < plan->n; i++)
		if (decides(&a, part, &plan->v[i]) && (rc = apply_entry(&a, &plan->v[i])))
			goto out;
	for (size_t i = 0; i < ntask; i++)
		if (decides(&a, part, &task[i]) && (rc = apply_entry(&a, &task[i])))
			goto out;
	if ((rc = undecided_records(&a, part, plan, task, ntask)))
		goto out;
	/* The shared part prepended the library directories and named the
	 * profile in the environment the task has. */
	if (part != TASK_AFTER_SHARED && plan && plan->libdirs && (rc = apply_libdirs(plan, &a)))
		goto out;
	rc = -1;
	if (a.failed)
		goto out;
	if ((rc = put(ctx, EFA_ENV_OWNED_VAR, a.owned_now.s, EFA_ENV_SET,
		      "what slurm-efa set, so later steps may change it",
		      recorded ? a.owned_before.s : NULL)))
		goto out;
	/* EFA is off for this step without a plan: no profile to name. */
	if (plan && part != TASK_AFTER_SHARED)
		rc = put(ctx, EFA_ENV_PROFILE_VAR, plan->profile ? plan->profile : "none",
			 EFA_ENV_SET, "the profile this node matched", NULL);
out:
	free(a.owned_before.s);
	free(a.owned_now.s);
	free(a.current.s);
	return rc;
}

int efa_env_apply(const struct efa_env_plan *plan, const struct efa_env_entry *task,
		  size_t ntask, const struct efa_config *cfg,
		  efa_env_get_fn get, efa_env_put_fn put, void *ctx)
{
	return apply(plan, task, ntask, cfg, get, put, ctx, WHOLE);
}

int efa_env_apply_shared(const struct efa_env_plan *plan, const struct efa_env_entry *entries,
			 size_t n, const struct efa_config *cfg,
			 efa_env_get_fn get, efa_env_put_fn put, void *ctx)
{
	return apply(plan, entries, n, cfg, get, put, ctx, SHARED);
}

int efa_env_apply_task(const struct efa_env_plan *plan, const struct efa_env_entry *task,
		       size_t ntask, const struct efa_config *cfg,
		       efa_env_get_fn get, efa_env_put_fn put, void *ctx)
{
	return apply(plan, task, ntask, cfg, get, put, ctx, TASK_AFTER_SHARED);
}
