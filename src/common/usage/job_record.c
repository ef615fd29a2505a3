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

/* A watched step's quiet bits (job_record.h). */
struct quiet {
	uint32_t run, step, node_count;
	char *bits;
};

/* A step's nodes whose link rate passed the floor (job_record.h). */
struct link_above {
	uint32_t node;
	double rate;
};

struct links {
	uint32_t run, step, node_count;
	struct link_above *above;
	size_t n;
};

struct summary {
	struct entry *steps;
	size_t n;
	uint64_t dropped;
	struct efa_record_requeue *requeues;
	size_t nrequeues;
	struct quiet *quiet;
	size_t nquiet;
	struct efa_record_hang *hangs;
	size_t nhangs;
	struct links *links;
	size_t nlinks;
	struct efa_record_sick *sick;
	size_t nsick;
};

static const char *const cause_names[] = {
	[EFA_REQUEUE_PREEMPTION] = "preemption",
	[EFA_REQUEUE_REQUEST] = "request",
};

static const char *const hang_action_names[] = {
	[EFA_HANG_ACTION_UNSET] = "notify",
	[EFA_HANG_NOTIFY] = "notify",
	[EFA_HANG_REQUEUE] = "requeue",
	[EFA_HANG_CANCEL] = "cancel",
};

const char *efa_requeue_cause_name(enum efa_requeue_cause cause)
{
	return cause_names[cause];
}

const char *efa_hang_action_name(enum efa_hang_action action)
{
	return hang_action_names[action];
}

static void entry_clear(struct entry *e)
{
	free(e->nodes);
	free(e->reported);
}

static void summary_clear(struct summary *s)
{
	for (size_t i = 0; i < s->n; i++)
		entry_clear(&s->steps[i]);
	free(s->steps);
	free(s->requeues);
	for (size_t i = 0; i < s->nquiet; i++)
		free(s->quiet[i].bits);
	free(s->quiet);
	free(s->hangs);
	for (size_t i = 0; i < s->nlinks; i++)
		free(s->links[i].above);
	free(s->links);
	free(s->sick);
	memset(s, 0, sizeof(*s));
}

/* Where the summary is in an AdminComment, and what else it holds. */
struct located {
	bool object;		/* the comment is a JSON object */
	const char *efa, *efa_end;	/* the summary's value in it, or NULL */
	const char *close;	/* an object without one: its closing brace */
	bool members;		/*   and whether it has other members */
	size_t prefix;		/* text: bytes of the site's kept before it */
};

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

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* How many nodes a "reported" string names; -1 when it is not one for
 * node_count nodes (a bit past the last node included). */
static long reported_count(const char *bits, uint32_t node_count)
{
	long n = 0;

	if (!bits || strlen(bits) != ((uint64_t)node_count + 3) / 4)
		return -1;
	for (size_t k = 0; bits[k]; k++) {
		int v = hex_value(bits[k]);
		uint64_t past = 4 * (uint64_t)k + 4 > node_count ? 4 * (uint64_t)k + 4 - node_count : 0;

		if (v < 0 || (unsigned)v >> (4 - past))
			return -1;
		n += __builtin_popcount((unsigned)v);
	}
	return n;
}

/* A count as the summary keeps it: an integer above 0, else 0. */
static uint64_t count_value(const char *value)
{
	long long v;

	return efa_json_integer(value, &v) && v > 0 ? (uint64_t)v : 0;
}

/* An id of the summary: an integer from min to UINT32_MAX; -1 if not. */
static long long id_value(const char *value, long long min)
{
	long long v;

	return efa_json_integer(value, &v) && v >= min && v <= UINT32_MAX ? v : -1;
}

/* The string at value, unescaped and malloc'd: it is never longer than
 * its JSON. NULL when it is not a string, or out of memory (*oom). */
static char *string_value(const char *value, const char *end, bool *oom)
{
	char *s;

	if (*value != '"')
		return NULL;
	if (!(s = malloc((size_t)(end - value) + 1))) {
		*oom = true;
		return NULL;
	}
	if (!efa_json_string(value, s, (size_t)(end - value) + 1)) {
		free(s);
		return NULL;
	}
	return s;
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
			step = id_value(m.value, 0);
		else if (!strcmp(m.key, "node_count"))
			count = id_value(m.value, 1);
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
	bits = string_value(reported, reported_end, &oom);
	if (!bits || reported_count(bits, (uint32_t)count) < 0) {
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
			run = id_value(m.value, 0);
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

static struct quiet *find_quiet(const struct summary *s, uint32_t run, uint32_t step)
{
	for (size_t i = 0; i < s->nquiet; i++)
		if (s->quiet[i].run == run && s->quiet[i].step == step)
			return &s->quiet[i];
	return NULL;
}

/* The quiet bits at list, of the shape this file gives them. -1 out of
 * memory. */
static int read_quiet(const char *list, struct summary *s)
{
	struct efa_json_walk w = { .p = list };
	const char *value, *end;

	if (!list || *list != '[')
		return 0;
	while (efa_json_element_next(&w, &value, &end) == 1) {
		struct efa_json_walk e = { .p = value };
		long long run = -1, step = -1, count = -1;
		const char *bits = NULL, *bits_end = NULL;
		struct efa_json_member m;
		bool oom = false;
		struct quiet q;

		if (*value != '{')
			continue;
		while (efa_json_member_next(&e, &m) == 1) {
			if (!m.key_fits)
				continue;
			if (!strcmp(m.key, "run"))
				run = id_value(m.value, 0);
			else if (!strcmp(m.key, "step"))
				step = id_value(m.value, 0);
			else if (!strcmp(m.key, "node_count"))
				count = id_value(m.value, 1);
			else if (!strcmp(m.key, "nodes"))
				bits = m.value, bits_end = m.end;
		}
		if (run < 0 || step < 0 || count < 0 || !bits ||
		    find_quiet(s, (uint32_t)run, (uint32_t)step))
			continue;
		q = (struct quiet){ .run = (uint32_t)run, .step = (uint32_t)step,
				    .node_count = (uint32_t)count };
		q.bits = string_value(bits, bits_end, &oom);
		if (!q.bits || reported_count(q.bits, q.node_count) < 0) {
			free(q.bits);
			if (oom)
				return -1;
			continue;
		}
		if (efa_array_room(&s->quiet, s->nquiet, sizeof(*s->quiet))) {
			free(q.bits);
			return -1;
		}
		s->quiet[s->nquiet++] = q;
	}
	return 0;
}

static bool holds_hang(const struct summary *s, uint32_t run, uint32_t step)
{
	for (size_t i = 0; i < s->nhangs; i++)
		if (s->hangs[i].run == run && s->hangs[i].step == step)
			return true;
	return false;
}

/* A hang at value, when it has the shape this file gives it: 1, else 0. */
static int read_hang(const char *value, struct efa_record_hang *h)
{
	struct efa_json_walk w = { .p = value };
	long long run = -1, step = -1, quiet = -1;
	struct efa_json_member m;
	int action = -1;
	char name[16];

	memset(h, 0, sizeof(*h));
	if (*value != '{')
		return 0;
	while (efa_json_member_next(&w, &m) == 1) {
		if (!m.key_fits)
			continue;
		if (!strcmp(m.key, "run")) {
			run = id_value(m.value, 0);
		} else if (!strcmp(m.key, "step")) {
			step = id_value(m.value, 0);
		} else if (!strcmp(m.key, "quiet_seconds")) {
			quiet = id_value(m.value, 0);
		} else if (!strcmp(m.key, "nodes")) {
			if (!efa_json_string(m.value, h->nodes, sizeof(h->nodes)))
				h->nodes[0] = '\0';
		} else if (!strcmp(m.key, "action")) {
			action = -1;
			if (!efa_json_string(m.value, name, sizeof(name)))
				continue;
			for (int a = EFA_HANG_NOTIFY; a <= EFA_HANG_CANCEL; a++)
				if (!strcmp(name, hang_action_names[a]))
					action = a;
		}
	}
	if (run < 0 || step < 0 || quiet < 0 || action < 0)
		return 0;
	h->run = (uint32_t)run;
	h->step = (uint32_t)step;
	h->quiet_seconds = (long)quiet;
	h->action = (enum efa_hang_action)action;
	return 1;
}

/* The hangs at list, the newest kept. -1 out of memory. */
static int read_hangs(const char *list, struct summary *s)
{
	struct efa_json_walk w = { .p = list };
	struct efa_record_hang h;
	const char *value, *end;

	if (!list || *list != '[')
		return 0;
	while (efa_json_element_next(&w, &value, &end) == 1) {
		if (!read_hang(value, &h) || holds_hang(s, h.run, h.step))
			continue;
		if (efa_array_room(&s->hangs, s->nhangs, sizeof(*s->hangs)))
			return -1;
		s->hangs[s->nhangs++] = h;
	}
	if (s->nhangs > EFA_RECORD_HANGS_MAX) {
		memmove(s->hangs, s->hangs + s->nhangs - EFA_RECORD_HANGS_MAX,
			EFA_RECORD_HANGS_MAX * sizeof(*s->hangs));
		s->nhangs = EFA_RECORD_HANGS_MAX;
	}
	return 0;
}

/* A rate as the record keeps it: a JSON number from 0 up; -1 if not. */
static double rate_value(const char *value)
{
	char *end;
	double v;

	if (!((*value >= '0' && *value <= '9')))
		return -1;
	v = strtod(value, &end);
	return end != value && v >= 0 && v < 1e300 ? v : -1;
}

static struct links *find_links(const struct summary *s, uint32_t run, uint32_t step)
{
	for (size_t i = 0; i < s->nlinks; i++)
		if (s->links[i].run == run && s->links[i].step == step)
			return &s->links[i];
	return NULL;
}

/* A node's [index, rate] into l, once per node. -1 out of memory. */
static int read_above(const char *pair, struct links *l)
{
	struct efa_json_walk w = { .p = pair };
	const char *value, *end;
	long long node = -1;
	double rate = -1;
	int k = 0;

	if (*pair != '[')
		return 0;
	while (efa_json_element_next(&w, &value, &end) == 1) {
		if (k == 0)
			node = id_value(value, 0);
		else if (k == 1)
			rate = rate_value(value);
		k++;
	}
	if (k != 2 || node < 0 || node >= l->node_count || rate < 0)
		return 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->above[i].node == node)
			return 0;
	if (efa_array_room(&l->above, l->n, sizeof(*l->above)))
		return -1;
	l->above[l->n++] = (struct link_above){ (uint32_t)node, rate };
	return 0;
}

static int read_links(const char *list, struct summary *s)
{
	struct efa_json_walk w = { .p = list };
	const char *value, *end;

	if (!list || *list != '[')
		return 0;
	while (efa_json_element_next(&w, &value, &end) == 1) {
		struct efa_json_walk e = { .p = value };
		long long run = -1, step = -1, count = -1;
		const char *above = NULL, *pv, *pe;
		struct efa_json_member m;
		struct links l = { 0 };

		if (*value != '{')
			continue;
		while (efa_json_member_next(&e, &m) == 1) {
			if (!m.key_fits)
				continue;
			if (!strcmp(m.key, "run"))
				run = id_value(m.value, 0);
			else if (!strcmp(m.key, "step"))
				step = id_value(m.value, 0);
			else if (!strcmp(m.key, "node_count"))
				count = id_value(m.value, 1);
			else if (!strcmp(m.key, "above"))
				above = m.value;
		}
		if (run < 0 || step < 0 || count < 0 || !above || *above != '[' ||
		    find_links(s, (uint32_t)run, (uint32_t)step))
			continue;
		l = (struct links){ .run = (uint32_t)run, .step = (uint32_t)step,
				    .node_count = (uint32_t)count };
		e = (struct efa_json_walk){ .p = above };
		while (efa_json_element_next(&e, &pv, &pe) == 1)
			if (read_above(pv, &l)) {
				free(l.above);
				return -1;
			}
		if (efa_array_room(&s->links, s->nlinks, sizeof(*s->links))) {
			free(l.above);
			return -1;
		}
		s->links[s->nlinks++] = l;
	}
	return 0;
}

static bool holds_sick(const struct summary *s, const struct efa_record_sick *k)
{
	for (size_t i = 0; i < s->nsick; i++)
		if (s->sick[i].run == k->run && s->sick[i].step == k->step &&
		    !strcmp(s->sick[i].node, k->node))
			return true;
	return false;
}

static int read_sick(const char *list, struct summary *s)
{
	struct efa_json_walk w = { .p = list };
	const char *value, *end;

	if (!list || *list != '[')
		return 0;
	while (efa_json_element_next(&w, &value, &end) == 1) {
		struct efa_json_walk e = { .p = value };
		struct efa_record_sick k = { 0 };
		long long run = -1, step = -1;
		struct efa_json_member m;

		if (*value != '{')
			continue;
		k.rate = k.peers = -1;
		while (efa_json_member_next(&e, &m) == 1) {
			if (!m.key_fits)
				continue;
			if (!strcmp(m.key, "run"))
				run = id_value(m.value, 0);
			else if (!strcmp(m.key, "step"))
				step = id_value(m.value, 0);
			else if (!strcmp(m.key, "node") &&
				 !efa_json_string(m.value, k.node, sizeof(k.node)))
				k.node[0] = '\0';
			else if (!strcmp(m.key, "rate"))
				k.rate = rate_value(m.value);
			else if (!strcmp(m.key, "peers"))
				k.peers = rate_value(m.value);
			else if (!strcmp(m.key, "drained"))
				k.drained = !strncmp(m.value, "true", 4);
		}
		k.run = (uint32_t)run;
		k.step = (uint32_t)step;
		if (run < 0 || step < 0 || !k.node[0] || k.rate < 0 || k.peers < 0 || holds_sick(s, &k))
			continue;
		if (efa_array_room(&s->sick, s->nsick, sizeof(*s->sick)))
			return -1;
		s->sick[s->nsick++] = k;
	}
	if (s->nsick > EFA_RECORD_SICK_MAX) {
		memmove(s->sick, s->sick + s->nsick - EFA_RECORD_SICK_MAX,
			EFA_RECORD_SICK_MAX * sizeof(*s->sick));
		s->nsick = EFA_RECORD_SICK_MAX;
	}
	return 0;
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
	if (read_requeues(requeues, s) || read_quiet(quiet, s) || read_hangs(hangs, s) ||
	    read_links(links, s) || read_sick(sick, s))
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
	summary_clear(s);
	return -1;
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
	v = hex_value(e->reported[part->node_index / 4]);
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
	if (s->nquiet) {
		fputs(",\"quiet\":[", f);
		for (size_t i = 0; i < s->nquiet; i++)
			fprintf(f, "%s{\"run\":%u,\"step\":%u,\"node_count\":%u,\"nodes\":\"%s\"}",
				i ? "," : "", s->quiet[i].run, s->quiet[i].step, s->quiet[i].node_count,
				s->quiet[i].bits);
		fputc(']', f);
	}
	if (s->nhangs) {
		fputs(",\"hangs\":[", f);
		for (size_t i = 0; i < s->nhangs; i++) {
			const struct efa_record_hang *h = &s->hangs[i];
			char *nodes = efa_json_quote(h->nodes);

			if (!nodes) {
				fclose(f);
				free(text);
				return NULL;
			}
			fprintf(f, "%s{\"run\":%u,\"step\":%u,\"action\":\"%s\",\"quiet_seconds\":%ld,\"nodes\":%s}",
				i ? "," : "", h->run, h->step, hang_action_names[h->action],
				h->quiet_seconds, nodes);
			free(nodes);
		}
		fputc(']', f);
	}
	if (s->nlinks) {
		fputs(",\"links\":[", f);
		for (size_t i = 0; i < s->nlinks; i++) {
			const struct links *l = &s->links[i];

			fprintf(f, "%s{\"run\":%u,\"step\":%u,\"node_count\":%u,\"above\":[", i ? "," : "",
				l->run, l->step, l->node_count);
			for (size_t k = 0; k < l->n; k++)
				fprintf(f, "%s[%u,%.6g]", k ? "," : "", l->above[k].node, l->above[k].rate);
			fputs("]}", f);
		}
		fputc(']', f);
	}
	if (s->nsick) {
		fputs(",\"sick\":[", f);
		for (size_t i = 0; i < s->nsick; i++) {
			const struct efa_record_sick *k = &s->sick[i];
			char *node = efa_json_quote(k->node);

			if (!node) {
				fclose(f);
				free(text);
				return NULL;
			}
			fprintf(f, "%s{\"run\":%u,\"step\":%u,\"node\":%s,\"rate\":%.6g,\"peers\":%.6g,\"drained\":%s}",
				i ? "," : "", k->run, k->step, node, k->rate, k->peers,
				k->drained ? "true" : "false");
			free(node);
		}
		fputc(']', f);
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
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	added = add_part(&s, part, &oom);
	if (added) {
		summary_clear(&s);
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
			summary_clear(&s);
			return efa_error_set(err, "out of memory");
		}
		if (strlen(*out) <= EFA_RECORD_COMMENT_MAX)
			break;
		free(*out);
		*out = NULL;
		if (s.n <= 1) {
			summary_clear(&s);
			return efa_error_set(err, "the job's AdminComment would pass %d bytes, what slurmdbd keeps",
					     EFA_RECORD_COMMENT_MAX);
		}
		drop_oldest(&s);
	}
	summary_clear(&s);
	return 0;
}

/* The AdminComment with s in place of the summary l found, in *out;
 * clears s. -1 with err when out of memory or past what slurmdbd keeps. */
static int written(const char *comment, const struct located *l, struct summary *s, char **out,
		   struct efa_error *err)
{
	char *json = summary_json(s);

	summary_clear(s);
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
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	if (holds_run(&s, rq->run)) {
		summary_clear(&s);
		return 0;
	}
	if (efa_array_room(&s.requeues, s.nrequeues, sizeof(*s.requeues))) {
		summary_clear(&s);
		return efa_error_set(err, "out of memory");
	}
	s.requeues[s.nrequeues++] = *rq;
	drop_oldest_requeues(&s, EFA_RECORD_REQUEUES_MAX);
	return written(comment, &l, &s, out, err);
}

int efa_record_requeues(const char *comment, struct efa_record_requeue **list, size_t *n,
			struct efa_error *err)
{
	struct located l;
	struct summary s;

	*list = NULL;
	*n = 0;
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	*list = s.requeues;
	*n = s.nrequeues;
	s.requeues = NULL;
	summary_clear(&s);
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
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	*dropped = s.dropped > ULONG_MAX ? ULONG_MAX : (unsigned long)s.dropped;
	if (s.n && !(*steps = calloc(s.n, sizeof(**steps)))) {
		summary_clear(&s);
		return efa_error_set(err, "out of memory");
	}
	for (size_t i = 0; i < s.n; i++) {
		const struct entry *e = &s.steps[i];
		struct efa_record_step *r = &(*steps)[i];
		char *nodes = string_value(e->nodes, e->nodes + strlen(e->nodes), &oom);

		if (!nodes) {
			free(*steps);
			*steps = NULL;
			summary_clear(&s);
			return efa_error_set(err, "out of memory");
		}
		snprintf(r->nodes, sizeof(r->nodes), "%s", nodes);
		free(nodes);
		r->step_id = e->step;
		r->node_count = e->node_count;
		r->reported = (uint32_t)reported_count(e->reported, e->node_count);
		r->seconds = e->seconds > LONG_MAX ? LONG_MAX : (long)e->seconds;
		r->fallback = e->fallback;
		r->shared = e->shared;
		for (size_t k = 0; k < NSUMS; k++)
			*sum_field(r, k) = e->sums[k];
	}
	*nsteps = s.n;
	summary_clear(&s);
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

/* Drops the quiet bits of runs other than run (a requeued job's steps
 * start again from 0) and of step of run when drop_step. */
static void drop_quiet(struct summary *s, uint32_t run, uint32_t step, bool drop_step)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nquiet; i++) {
		if (s->quiet[i].run != run || (drop_step && s->quiet[i].step == step))
			free(s->quiet[i].bits);
		else
			s->quiet[k++] = s->quiet[i];
	}
	s->nquiet = k;
}

int efa_record_mark_quiet(const char *comment, uint32_t run, uint32_t step, uint32_t node_count,
			  uint32_t node_index, bool quiet, char **out, struct efa_error *err)
{
	size_t before, nbits = ((size_t)node_count + 3) / 4;
	struct quiet *q, fresh;
	struct located l;
	struct summary s;
	int v, bit = 1 << (node_index % 4);

	*out = NULL;
	if (!node_count || node_index >= node_count)
		return efa_error_set(err, "node %u of a step of %u nodes", node_index, node_count);
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	before = s.nquiet;
	drop_quiet(&s, run, step, false);
	q = find_quiet(&s, run, step);
	if (q && q->node_count != node_count) {
		drop_quiet(&s, run, step, true);
		q = NULL;
	}
	if (!q && !quiet && s.nquiet == before) {
		summary_clear(&s);
		return 0;
	}
	if (!q) {
		fresh = (struct quiet){ .run = run, .step = step, .node_count = node_count,
					.bits = malloc(nbits + 1) };
		if (!fresh.bits || efa_array_room(&s.quiet, s.nquiet, sizeof(*s.quiet))) {
			free(fresh.bits);
			summary_clear(&s);
			return efa_error_set(err, "out of memory");
		}
		memset(fresh.bits, '0', nbits);
		fresh.bits[nbits] = '\0';
		s.quiet[s.nquiet++] = fresh;
		q = &s.quiet[s.nquiet - 1];
	}
	v = hex_value(q->bits[node_index / 4]);
	if (!!(v & bit) == quiet && s.nquiet == before) {
		summary_clear(&s);
		return 0;
	}
	q->bits[node_index / 4] = "0123456789abcdef"[quiet ? v | bit : v & ~bit];
	return written(comment, &l, &s, out, err);
}

bool efa_record_all_quiet(const char *comment, uint32_t run, uint32_t step, uint32_t node_count)
{
	const struct quiet *q;
	struct located l;
	struct summary s;
	bool all;

	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return false;
	q = find_quiet(&s, run, step);
	all = q && q->node_count == node_count &&
	      reported_count(q->bits, node_count) == (long)node_count;
	summary_clear(&s);
	return all;
}

int efa_record_add_hang(const char *comment, const struct efa_record_hang *h, char **out,
			struct efa_error *err)
{
	struct located l;
	struct summary s;

	*out = NULL;
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	if (holds_hang(&s, h->run, h->step)) {
		summary_clear(&s);
		return 0;
	}
	drop_quiet(&s, h->run, h->step, true);
	if (efa_array_room(&s.hangs, s.nhangs, sizeof(*s.hangs))) {
		summary_clear(&s);
		return efa_error_set(err, "out of memory");
	}
	s.hangs[s.nhangs++] = *h;
	if (s.nhangs > EFA_RECORD_HANGS_MAX) {
		memmove(s.hangs, s.hangs + 1, (s.nhangs - 1) * sizeof(*s.hangs));
		s.nhangs--;
	}
	return written(comment, &l, &s, out, err);
}

int efa_record_hangs(const char *comment, struct efa_record_hang **list, size_t *n,
		     struct efa_error *err)
{
	struct located l;
	struct summary s;

	*list = NULL;
	*n = 0;
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	*list = s.hangs;
	*n = s.nhangs;
	s.hangs = NULL;
	summary_clear(&s);
	return 0;
}

int efa_record_set_link(const char *comment, uint32_t run, uint32_t step, uint32_t node_count,
			uint32_t node, double rate, char **out, struct efa_error *err)
{
	struct links *l, fresh;
	struct located l_at;
	struct summary s;
	size_t k = 0, before;

	*out = NULL;
	if (!node_count || node >= node_count || !(rate >= 0))
		return efa_error_set(err, "node %u of a step of %u nodes, rate %g", node, node_count,
				     rate);
	locate(comment, &l_at);
	if (read_summary(l_at.efa, &s))
		return efa_error_set(err, "out of memory");
	before = s.nlinks;
	for (size_t i = 0; i < s.nlinks; i++) {
		if (s.links[i].run != run || (s.links[i].step == step &&
					      s.links[i].node_count != node_count))
			free(s.links[i].above);
		else
			s.links[k++] = s.links[i];
	}
	s.nlinks = k;
	l = find_links(&s, run, step);
	if (!l) {
		fresh = (struct links){ .run = run, .step = step, .node_count = node_count };
		if (efa_array_room(&s.links, s.nlinks, sizeof(*s.links)))
			goto oom;
		s.links[s.nlinks++] = fresh;
		l = &s.links[s.nlinks - 1];
	}
	for (k = 0; k < l->n && l->above[k].node != node; k++)
		;
	if (k < l->n && l->above[k].rate == rate && s.nlinks == before) {
		summary_clear(&s);
		return 0;
	}
	if (k == l->n) {
		if (efa_array_room(&l->above, l->n, sizeof(*l->above)))
			goto oom;
		l->n++;
	}
	l->above[k] = (struct link_above){ node, rate };
	return written(comment, &l_at, &s, out, err);
oom:
	summary_clear(&s);
	return efa_error_set(err, "out of memory");
}

int efa_record_links(const char *comment, uint32_t run, uint32_t step, uint32_t node_count,
		     double *rates)
{
	const struct links *l;
	struct located at;
	struct summary s;

	for (uint32_t i = 0; i < node_count; i++)
		rates[i] = -1;
	locate(comment, &at);
	if (read_summary(at.efa, &s))
		return -1;
	l = find_links(&s, run, step);
	for (size_t k = 0; l && l->node_count == node_count && k < l->n; k++)
		rates[l->above[k].node] = l->above[k].rate;
	summary_clear(&s);
	return 0;
}

int efa_record_add_sick(const char *comment, const struct efa_record_sick *sick, char **out,
			struct efa_error *err)
{
	struct located l;
	struct summary s;

	*out = NULL;
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	if (holds_sick(&s, sick)) {
		summary_clear(&s);
		return 0;
	}
	if (efa_array_room(&s.sick, s.nsick, sizeof(*s.sick))) {
		summary_clear(&s);
		return efa_error_set(err, "out of memory");
	}
	s.sick[s.nsick++] = *sick;
	if (s.nsick > EFA_RECORD_SICK_MAX) {
		memmove(s.sick, s.sick + 1, (s.nsick - 1) * sizeof(*s.sick));
		s.nsick--;
	}
	return written(comment, &l, &s, out, err);
}

int efa_record_sick_links(const char *comment, struct efa_record_sick **list, size_t *n,
			  struct efa_error *err)
{
	struct located l;
	struct summary s;

	*list = NULL;
	*n = 0;
	locate(comment, &l);
	if (read_summary(l.efa, &s))
		return efa_error_set(err, "out of memory");
	*list = s.sick;
	*n = s.nsick;
	s.sick = NULL;
	summary_clear(&s);
	return 0;
}
