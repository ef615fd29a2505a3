/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The summary is read and written where it stands in the AdminComment
 * (common/base/json_text.h), not through a JSON library: the plugin that
 * writes it is loaded by every srun and slurmstepd, jobs without EFA too,
 * and a library it needs is one more object each of them loads. Writing
 * in place also keeps the rest of a site's JSON byte for byte.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/array.h"
#include "common/base/json_text.h"
#include "common/usage/job_record.h"
#include "common/usage/job_record_summary.h"

#define SUFFIX_START "{\"" EFA_RECORD_KEY "\":"

/* The largest count kept: JSON readers take a long long, so a sum past it
 * stays there. */
#define COUNT_MAX ((uint64_t)LLONG_MAX)

static const struct {
	const char *key;
	size_t offset;
} sums[] = {
	{ "bytes", offsetof(struct efa_record_step, bytes) },
	{ "tx_bytes", offsetof(struct efa_record_step, tx_bytes) },
	{ "rx_bytes", offsetof(struct efa_record_step, rx_bytes) },
	{ "retransmitted_packets", offsetof(struct efa_record_step, retransmitted_packets) },
	{ "retransmit_timeouts", offsetof(struct efa_record_step, retransmit_timeouts) },
	{ "unresponsive_remotes", offsetof(struct efa_record_step, unresponsive_remotes) },
	{ "impaired_connections", offsetof(struct efa_record_step, impaired_connections) },
};

#define NSUMS (sizeof(sums) / sizeof(sums[0]))

static uint64_t *sum_field(struct efa_record_step *s, size_t i)
{
	return (uint64_t *)((char *)s + sums[i].offset);
}

/* A step's entry as the summary holds it. */
struct entry {
	uint32_t step, node_count;
	char *nodes;		/* its JSON string, quotes and escapes as written */
	char *reported;		/* hex digits, a bit per node */
	uint64_t seconds;
	bool fallback, shared;
	uint64_t sums[NSUMS];
};

static const char *const cause_names[] = {
	[EFA_REQUEUE_PREEMPTION] = "preemption",
	[EFA_REQUEUE_REQUEST] = "request",
};

const char *efa_requeue_cause_name(enum efa_requeue_cause cause)
{
	return cause_names[cause];
}

static void entry_clear(struct entry *e)
{
	free(e->nodes);
	free(e->reported);
}

void efa_rec_summary_clear(struct summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		entry_clear(&s->steps[i]);
	free(s->steps);
	free(s->requeues);
	efa_rec_events_clear(s);
	memset(s, 0, sizeof(*s));
}

/* The last member of the object at text named key (as JSON readers take
 * the last of a name given twice); the number of members in *count. */
static bool find_member(const char *text, const char *key, struct efa_json_member *found,
			size_t *count, const char **close)
{
	struct efa_json_walk w = { .p = text };
	struct efa_json_member m;
	bool seen = false;
	int rc;

	*count = 0;
	while ((rc = efa_json_member_next(&w, &m)) == 1) {
		(*count)++;
		if (m.key_fits && !strcmp(m.key, key)) {
			*found = m;
			seen = true;
		}
	}
	if (close)
		*close = w.p - 1;
	return rc == 0 && seen;
}

/*
 * A comment that is a JSON object holds the summary under its key; any
 * other text may end with {"efa":...}, added after the site's text.
 */
static void locate(const char *comment, struct located *l)
{
	size_t len = comment ? strlen(comment) : 0, count;
	struct efa_json_member m;

	memset(l, 0, sizeof(*l));
	if (!len)
		return;
	if (efa_json_is_object(comment)) {
		l->object = true;
		if (find_member(comment, EFA_RECORD_KEY, &m, &count, &l->close)) {
			l->efa = m.value;
			l->efa_end = m.end;
		}
		l->members = count > 0;
		return;
	}
	l->prefix = len;
	/* From the end: the summary is the last thing there. */
	for (size_t at = len; at-- > 0;) {
		if (strncmp(comment + at, SUFFIX_START, strlen(SUFFIX_START)) ||
		    !efa_json_is_object(comment + at) ||
		    !find_member(comment + at, EFA_RECORD_KEY, &m, &count, NULL) || count != 1)
			continue;
		l->efa = m.value;
		l->efa_end = m.end;
		l->prefix = at;
		return;
	}
}

/* A count as the summary keeps it: an integer above 0, else 0. */
static uint64_t count_value(const char *value)
{
	long long v;

	return efa_json_integer(value, &v) && v > 0 ? (uint64_t)v : 0;
}

/*
 * The entry at value, when it has the shape this file gives it (else
 * e->nodes stays NULL); -1 out of memory. Of a name given twice, the last.
 */
static int read_entry(const char *value, struct entry *e)
{
	const char *nodes = NULL, *nodes_end = NULL, *reported = NULL, *reported_end = NULL;
	struct efa_json_walk w = { .p = value };
	long long step = -1, count = -1;
	struct efa_json_member m;
	bool oom = false;
	char *bits;

	memset(e, 0, sizeof(*e));
	if (*value != '{')
		return 0;
	while (efa_json_member_next(&w, &m) == 1) {
		if (!m.key_fits)
			continue;
		if (!strcmp(m.key, "step"))
			step = efa_rec_id_value(m.value, 0);
		else if (!strcmp(m.key, "node_count"))
			count = efa_rec_id_value(m.value, 1);
		else if (!strcmp(m.key, "nodes"))
			nodes = m.value, nodes_end = m.end;
		else if (!strcmp(m.key, "reported"))
			reported = m.value, reported_end = m.end;
		else if (!strcmp(m.key, "seconds"))
			e->seconds = count_value(m.value);
		else if (!strcmp(m.key, "fallback"))
			e->fallback = !strncmp(m.value, "true", 4);
		else if (!strcmp(m.key, "shared"))
			e->shared = !strncmp(m.value, "true", 4);
		else
			for (size_t i = 0; i < NSUMS; i++)
				if (!strcmp(m.key, sums[i].key))
					e->sums[i] = count_value(m.value);
	}
	if (step < 0 || count < 0 || !nodes || *nodes != '"' || !reported)
		return 0;
	bits = efa_rec_string_value(reported, reported_end, &oom);
	if (!bits || efa_rec_reported_count(bits, (uint32_t)count) < 0) {
		free(bits);
		return oom ? -1 : 0;
	}
	e->nodes = strndup(nodes, (size_t)(nodes_end - nodes));
	if (!e->nodes) {
		free(bits);
		return -1;
	}
	e->reported = bits;
	e->step = (uint32_t)step;
	e->node_count = (uint32_t)count;
	return 0;
}

static bool holds_run(const struct summary *s, uint32_t run)
{
	for (size_t i = 0; i < s->nrequeues; i++)
		if (s->requeues[i].run == run)
			return true;
	return false;
}

/* A requeued run at value, when it has the shape this file gives it:
 * 1, else 0. */
static int read_requeue(const char *value, struct efa_record_requeue *rq)
{
	struct efa_json_walk w = { .p = value };
	struct efa_json_member m;
	long long run = -1;
	int cause = -1;
	char name[16];

	if (*value != '{')
		return 0;
	while (efa_json_member_next(&w, &m) == 1) {
		if (m.key_fits && !strcmp(m.key, "run")) {
			run = efa_rec_id_value(m.value, 0);
		} else if (m.key_fits && !strcmp(m.key, "cause")) {
			cause = -1;
			if (!efa_json_string(m.value, name, sizeof(name)))
				continue;
			for (size_t c = 0; c < sizeof(cause_names) / sizeof(cause_names[0]); c++)
				if (!strcmp(name, cause_names[c]))
					cause = (int)c;
		}
	}
	if (run < 0 || cause < 0)
		return 0;
	rq->run = (uint32_t)run;
	rq->cause = (enum efa_requeue_cause)cause;
	return 1;
}

/* The requeued runs at list, each run once, the newest kept. -1 out of
 * memory. */
static int read_requeues(const char *list, struct summary *s)
{
	struct efa_json_walk w = { .p = list };
	struct efa_record_requeue rq;
	const char *value, *end;

	if (!list || *list != '[')
		return 0;
	while (efa_json_element_next(&w, &value, &end) == 1) {
		if (!read_requeue(value, &rq) || holds_run(s, rq.run))
			continue;
		if (efa_array_room(&s->requeues, s->nrequeues, sizeof(*s->requeues)))
			return -1;
		s->requeues[s->nrequeues++] = rq;
	}
	return 0;
}

static void drop_oldest_requeues(struct summary *s, size_t keep)
{
	size_t drop;

	if (s->nrequeues <= keep)
		return;
	drop = s->nrequeues - keep;
	memmove(s->requeues, s->requeues + drop, keep * sizeof(*s->requeues));
	s->nrequeues = keep;
}

/* The summary at efa: its entries of the right shape (the others are not
 * ours: dropped). -1 out of memory. */
static int read_summary(const char *efa, struct summary *s)
{
	struct efa_json_walk w = { .p = efa };
	const char *steps = NULL, *requeues = NULL, *quiet = NULL, *hangs = NULL, *links = NULL;
	const char *sick = NULL, *value, *end;
	struct efa_json_member m;
	struct entry e;

	memset(s, 0, sizeof(*s));
	if (!efa || *efa != '{')
		return 0;
	/* Of a name given twice, the last. */
	while (efa_json_member_next(&w, &m) == 1) {
		if (m.key_fits && !strcmp(m.key, "steps_dropped"))
			s->dropped = count_value(m.value);
		else if (m.key_fits && !strcmp(m.key, "steps"))
			steps = m.value;
		else if (m.key_fits && !strcmp(m.key, "requeues"))
			requeues = m.value;
		else if (m.key_fits && !strcmp(m.key, "quiet"))
			quiet = m.value;
		else if (m.key_fits && !strcmp(m.key, "hangs"))
			hangs = m.value;
		else if (m.key_fits && !strcmp(m.key, "links"))
			links = m.value;
		else if (m.key_fits && !strcmp(m.key, "sick"))
			sick = m.value;
	}
	if (read_requeues(requeues, s) || efa_rec_read_events(s, quiet, hangs, links, sick))
		goto oom;
	drop_oldest_requeues(s, EFA_RECORD_REQUEUES_MAX);
	if (!steps || *steps != '[')
		return 0;
	w = (struct efa_json_walk){ .p = steps };
	while (efa_json_element_next(&w, &value, &end) == 1) {
		if (read_entry(value, &e))
			goto oom;
		if (!e.nodes)
			continue;
		if (efa_array_room(&s->steps, s->n, sizeof(*s->steps))) {
			entry_clear(&e);
			goto oom;
		}
		s->steps[s->n++] = e;
	}
	return 0;
oom:
	efa_rec_summary_clear(s);
	return -1;
}

int efa_rec_summary_of(const char *comment, struct located *l, struct summary *s)
{
	locate(comment, l);
	return read_summary(l->efa, s);
}

/* A new entry for part's step: nothing reported yet. -1 out of memory. */
static int new_entry(const struct efa_record_step *part, struct entry *e)
{
	size_t nbits = ((size_t)part->node_count + 3) / 4;

	memset(e, 0, sizeof(*e));
	e->step = part->step_id;
	e->node_count = part->node_count;
	e->nodes = efa_json_quote(part->nodes);
	e->reported = malloc(nbits + 1);
	if (!e->nodes || !e->reported) {
		entry_clear(e);
		return -1;
	}
	memset(e->reported, '0', nbits);
	e->reported[nbits] = '\0';
	return 0;
}

static uint64_t saturated_sum(uint64_t a, uint64_t b)
{
	return a + b < a || a + b > COUNT_MAX ? COUNT_MAX : a + b;
}

/* Adds part to its step's entry (made, in step order, when missing); 1
 * when the entry has this node's part already, -1 when the step is there
 * with another node count (*oom: or out of memory). */
static int add_part(struct summary *s, const struct efa_record_step *part, bool *oom)
{
	struct entry *e = NULL, fresh;
	size_t at = s->n;
	int v, bit = 1 << (part->node_index % 4);

	for (size_t i = 0; i < s->n; i++) {
		if (s->steps[i].step == part->step_id) {
			e = &s->steps[i];
			break;
		}
		if (s->steps[i].step > part->step_id && at == s->n)
			at = i;
	}
	if (e && e->node_count != part->node_count)
		return -1;	/* not this step: a job's step ids are unique */
	if (!e) {
		if (new_entry(part, &fresh))
			goto oom;
		if (efa_array_room(&s->steps, s->n, sizeof(*s->steps))) {
			entry_clear(&fresh);
			goto oom;
		}
		memmove(s->steps + at + 1, s->steps + at, (s->n - at) * sizeof(*s->steps));
		s->steps[at] = fresh;
		s->n++;
		e = &s->steps[at];
	}
	v = efa_rec_hex_value(e->reported[part->node_index / 4]);
	if (v & bit)
		return 1;
	e->reported[part->node_index / 4] = "0123456789abcdef"[v | bit];
	for (size_t i = 0; i < NSUMS; i++)
		e->sums[i] = saturated_sum(e->sums[i], *sum_field((struct efa_record_step *)part, i));
	if (part->seconds > 0 && (uint64_t)part->seconds > e->seconds)
		e->seconds = (uint64_t)part->seconds;
	if (part->shared)
		e->shared = true;
	/* The fall-back is the first node's verdict (verdict.h). */
	if (part->node_index == 0)
		e->fallback = part->fallback;
	return 0;
oom:
	*oom = true;
	return -1;
}

static void drop_oldest(struct summary *s)
{
	entry_clear(&s->steps[0]);
	memmove(s->steps, s->steps + 1, --s->n * sizeof(*s->steps));
	s->dropped = saturated_sum(s->dropped, 1);
}

static bool holds_step(const struct summary *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->steps[i].step == id)
			return true;
	return false;
}

/* The summary as JSON, malloc'd. */
static char *summary_json(const struct summary *s)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	bool failed;

	if (!f)
		return NULL;
	fputs("{\"steps\":[", f);
	for (size_t i = 0; i < s->n; i++) {
		const struct entry *e = &s->steps[i];

		fprintf(f, "%s{\"step\":%u,\"nodes\":%s,\"node_count\":%u,\"reported\":\"%s\","
			"\"seconds\":%llu,\"fallback\":%s,\"shared\":%s", i ? "," : "", e->step,
			e->nodes, e->node_count, e->reported, (unsigned long long)e->seconds,
			e->fallback ? "true" : "false", e->shared ? "true" : "false");
		for (size_t k = 0; k < NSUMS; k++)
			fprintf(f, ",\"%s\":%llu", sums[k].key, (unsigned long long)e->sums[k]);
		fputc('}', f);
	}
	fputc(']', f);
	if (s->dropped)
		fprintf(f, ",\"steps_dropped\":%llu", (unsigned long long)s->dropped);
	if (s->nrequeues) {
		fputs(",\"requeues\":[", f);
		for (size_t i = 0; i < s->nrequeues; i++)
			fprintf(f, "%s{\"run\":%u,\"cause\":\"%s\"}", i ? "," : "",
				s->requeues[i].run, cause_names[s->requeues[i].cause]);
		fputc(']', f);
	}
	if (efa_rec_events_json(f, s)) {
		fclose(f);
		free(text);
		return NULL;
	}
	fputc('}', f);
	/* A write the stream could not grow for fails alone: fclose succeeds. */
	failed = ferror(f);
	if (fclose(f) || failed) {
		free(text);
		return NULL;
	}
	return text;
}

/* The AdminComment with the summary json where l found it (or added). */
static char *render(const char *comment, const struct located *l, const char *json)
{
	size_t len = comment ? strlen(comment) : 0, keep;
	char *out;

	if (!len) {
		if (asprintf(&out, "%s%s}", SUFFIX_START, json) < 0)
			return NULL;
		return out;
	}
	if (l->object && l->efa) {
		keep = (size_t)(l->efa - comment);
		if (asprintf(&out, "%.*s%s%s", (int)keep, comment, json, l->efa_end) < 0)
			return NULL;
		return out;
	}
	if (l->object) {
		keep = (size_t)(l->close - comment);
		if (asprintf(&out, "%.*s%s\"%s\":%s%s", (int)keep, comment, l->members ? "," : "",
			     EFA_RECORD_KEY, json, l->close) < 0)
			return NULL;
		return out;
	}
	keep = l->prefix;
	/* The space was added with the summary when it is there. */
	if (asprintf(&out, "%.*s%s%s%s}", (int)keep, comment,
		     comment[keep - 1] == ' ' && keep < len ? "" : " ", SUFFIX_START, json) < 0)
		return NULL;
	return out;
}

int efa_record_add(const char *comment, const struct efa_record_step *part, char **out,
		   struct efa_error *err)
{
	struct located l;
	struct summary s;
	bool oom = false;
	char *json;
	int added;

	*out = NULL;
	if (!part->node_count || part->node_index >= part->node_count)
		return efa_error_set(err, "node %u of a step of %u nodes", part->node_index,
				     part->node_count);
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	added = add_part(&s, part, &oom);
	if (added) {
		efa_rec_summary_clear(&s);
		if (added > 0)
			return 0;	/* this node's part is there already */
		return oom ? efa_error_set(err, "out of memory") :
			     efa_error_set(err, "step %u is in the record with another node count",
					   part->step_id);
	}
	while (s.n > EFA_RECORD_STEPS_MAX)
		drop_oldest(&s);
	for (;;) {
		if (!holds_step(&s, part->step_id))
			break;	/* a step older than the ones kept: nothing to add */
		json = summary_json(&s);
		*out = json ? render(comment, &l, json) : NULL;
		free(json);
		if (!*out) {
			efa_rec_summary_clear(&s);
			return efa_error_set(err, "out of memory");
		}
		if (strlen(*out) <= EFA_RECORD_COMMENT_MAX)
			break;
		free(*out);
		*out = NULL;
		if (s.n <= 1) {
			efa_rec_summary_clear(&s);
			return efa_error_set(err, "the job's AdminComment would pass %d bytes, what slurmdbd keeps",
					     EFA_RECORD_COMMENT_MAX);
		}
		drop_oldest(&s);
	}
	efa_rec_summary_clear(&s);
	return 0;
}

/* The AdminComment with s in place of the summary l found, in *out;
 * clears s. -1 with err when out of memory or past what slurmdbd keeps. */
int efa_rec_written(const char *comment, const struct located *l, struct summary *s, char **out,
		   struct efa_error *err)
{
	char *json = summary_json(s);

	efa_rec_summary_clear(s);
	*out = json ? render(comment, l, json) : NULL;
	free(json);
	if (!*out)
		return efa_error_set(err, "out of memory");
	if (strlen(*out) > EFA_RECORD_COMMENT_MAX) {
		free(*out);
		*out = NULL;
		return efa_error_set(err, "the job's AdminComment would pass %d bytes, what slurmdbd keeps",
				     EFA_RECORD_COMMENT_MAX);
	}
	return 0;
}

int efa_record_add_requeue(const char *comment, const struct efa_record_requeue *rq, char **out,
			   struct efa_error *err)
{
	struct located l;
	struct summary s;

	*out = NULL;
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	if (holds_run(&s, rq->run)) {
		efa_rec_summary_clear(&s);
		return 0;
	}
	if (efa_array_room(&s.requeues, s.nrequeues, sizeof(*s.requeues))) {
		efa_rec_summary_clear(&s);
		return efa_error_set(err, "out of memory");
	}
	s.requeues[s.nrequeues++] = *rq;
	drop_oldest_requeues(&s, EFA_RECORD_REQUEUES_MAX);
	return efa_rec_written(comment, &l, &s, out, err);
}

int efa_record_requeues(const char *comment, struct efa_record_requeue **list, size_t *n,
			struct efa_error *err)
{
	struct located l;
	struct summary s;

	*list = NULL;
	*n = 0;
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	*list = s.requeues;
	*n = s.nrequeues;
	s.requeues = NULL;
	efa_rec_summary_clear(&s);
	return 0;
}

int efa_record_steps(const char *comment, struct efa_record_step **steps, size_t *nsteps,
		     unsigned long *dropped, struct efa_error *err)
{
	struct located l;
	struct summary s;
	bool oom = false;

	*steps = NULL;
	*nsteps = 0;
	*dropped = 0;
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	*dropped = s.dropped > ULONG_MAX ? ULONG_MAX : (unsigned long)s.dropped;
	if (s.n && !(*steps = calloc(s.n, sizeof(**steps)))) {
		efa_rec_summary_clear(&s);
		return efa_error_set(err, "out of memory");
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct entry *e = &s.steps[i];
		struct efa_record_step *r = &(*steps)[i];
		char *nodes = efa_rec_string_value(e->nodes, e->nodes + strlen(e->nodes), &oom);

		if (!nodes) {
			free(*steps);
			*steps = NULL;
			efa_rec_summary_clear(&s);
			return efa_error_set(err, "out of memory");
		}
		snprintf(r->nodes, sizeof(r->nodes), "%s", nodes);
		free(nodes);
		r->step_id = e->step;
		r->node_count = e->node_count;
		r->reported = (uint32_t)efa_rec_reported_count(e->reported, e->node_count);
		r->seconds = e->seconds > LONG_MAX ? LONG_MAX : (long)e->seconds;
		r->fallback = e->fallback;
		r->shared = e->shared;
		for (size_t k = 0; k < NSUMS; k++)
			*sum_field(r, k) = e->sums[k];
	}
	*nsteps = s.n;
	efa_rec_summary_clear(&s);
	return 0;
}

char *efa_record_json(const char *comment)
{
	struct located l;

	locate(comment, &l);
	if (!l.efa || *l.efa != '{')
		return NULL;
	return strndup(l.efa, (size_t)(l.efa_end - l.efa));
}

