/* SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/usage/job_record.h"

#define SUFFIX_START "{\"" EFA_RECORD_KEY "\":"

/* Jansson's integer: long long where the compiler has it, else long. */
#if JSON_INTEGER_IS_LONG_LONG
#define RECORD_INT_MAX LLONG_MAX
#else
#define RECORD_INT_MAX LONG_MAX
#endif

/* Where the summary is in an AdminComment, and what else it holds. */
struct located {
	json_t *root;		/* the whole comment, when it is a JSON object */
	json_t *efa;		/* the summary (borrowed), or NULL */
	size_t prefix;		/* text: bytes of the site's kept before it */
};

static void located_clear(struct located *l)
{
	json_decref(l->root);
	memset(l, 0, sizeof(*l));
}

/*
 * text parsed, or NULL when it is not JSON; -1 when Jansson ran out of
 * memory: it gives a reason for every text it refuses and none for a
 * failed allocation (load.c), and a summary taken for the site's text
 * would be added to a second time.
 */
static int parse(const char *text, json_t **out)
{
	json_error_t jerr;

	*out = json_loads(text, 0, &jerr);
	return *out || jerr.text[0] ? 0 : -1;
}

/*
 * A comment that is a JSON object holds the summary under its key; any
 * other text may end with {"efa":...}, added after the site's text.
 */
static int locate(const char *comment, struct located *l)
{
	size_t len = comment ? strlen(comment) : 0;
	json_t *tail;

	memset(l, 0, sizeof(*l));
	if (!len) {
		l->root = json_object();
		return l->root ? 0 : -1;
	}
	if (parse(comment, &l->root))
		return -1;
	if (json_is_object(l->root)) {
		l->efa = json_object_get(l->root, EFA_RECORD_KEY);
		return 0;
	}
	json_decref(l->root);
	l->root = NULL;
	l->prefix = len;
	/* From the end: the summary is the last thing there, one parse. */
	for (size_t at = len; at-- > 0;) {
		if (strncmp(comment + at, SUFFIX_START, strlen(SUFFIX_START)))
			continue;
		if (parse(comment + at, &tail))
			return -1;
		if (json_is_object(tail) && json_object_size(tail) == 1 &&
		    json_object_get(tail, EFA_RECORD_KEY)) {
			l->root = tail;
			l->efa = json_object_get(tail, EFA_RECORD_KEY);
			l->prefix = at;
			return 0;
		}
		json_decref(tail);
	}
	l->root = json_object();
	return l->root ? 0 : -1;
}

static uint64_t get_count(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v) : 0;
}

/* Jansson's integers are signed: a sum past its range stays at the top. */
static int add_count(json_t *o, const char *key, uint64_t add)
{
	uint64_t sum = get_count(o, key) + add;

	if (sum > (uint64_t)RECORD_INT_MAX || sum < add)
		sum = (uint64_t)RECORD_INT_MAX;
	return json_object_set_new(o, key, json_integer((json_int_t)sum));
}

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

	if (!bits || strlen(bits) != (node_count + 3) / 4)
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

/* Whether an entry has the shape this file gives it. */
static bool entry_valid(const json_t *e)
{
	const json_t *step = json_object_get(e, "step"), *count = json_object_get(e, "node_count");

	return json_is_object(e) && json_is_integer(step) && json_integer_value(step) >= 0 &&
	       json_integer_value(step) <= UINT32_MAX && json_is_integer(count) &&
	       json_integer_value(count) > 0 && json_integer_value(count) <= UINT32_MAX &&
	       json_is_string(json_object_get(e, "nodes")) &&
	       reported_count(json_string_value(json_object_get(e, "reported")),
			      (uint32_t)json_integer_value(count)) >= 0;
}

static json_t *new_entry(const struct efa_record_step *part)
{
	size_t nbits = (part->node_count + 3) / 4;
	char *bits = malloc(nbits + 1);
	json_t *e;

	if (!bits)
		return NULL;
	memset(bits, '0', nbits);
	bits[nbits] = '\0';
	e = json_pack("{s:I, s:s, s:I, s:s, s:I, s:b, s:b}", "step", (json_int_t)part->step_id,
		      "nodes", part->nodes, "node_count", (json_int_t)part->node_count, "reported",
		      bits, "seconds", (json_int_t)0, "fallback", 0, "shared", 0);
	free(bits);
	for (size_t i = 0; e && i < NSUMS; i++)
		if (json_object_set_new(e, sums[i].key, json_integer(0))) {
			json_decref(e);
			e = NULL;
		}
	return e;
}

/* The steps array of a summary, made valid: entries that are not ours'
 * shape are dropped. NULL when out of memory. */
static json_t *valid_steps(json_t *efa)
{
	json_t *steps = json_object_get(efa, "steps"), *out = json_array(), *e;
	size_t i;

	if (!out)
		return NULL;
	json_array_foreach(steps, i, e) {
		if (entry_valid(e) && json_array_append(out, e)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

/* Adds part to steps' entry for its step (made, in step order, when
 * missing); 1 when the entry has this node's part already. */
static int add_part(json_t *steps, const struct efa_record_step *part)
{
	json_t *e = NULL, *fresh;
	size_t i, at = json_array_size(steps);
	char *bits;
	int v;

	for (i = 0; i < json_array_size(steps); i++) {
		json_t *s = json_array_get(steps, i);
		json_int_t id = json_integer_value(json_object_get(s, "step"));

		if (id == (json_int_t)part->step_id) {
			e = s;
			break;
		}
		if (id > (json_int_t)part->step_id && at == json_array_size(steps))
			at = i;
	}
	if (e && (uint32_t)json_integer_value(json_object_get(e, "node_count")) != part->node_count)
		return -1;	/* not this step: a job's step ids are unique */
	if (!e) {
		fresh = new_entry(part);
		if (!fresh || json_array_insert_new(steps, at, fresh))
			return -1;
		e = fresh;
	}
	bits = strdup(json_string_value(json_object_get(e, "reported")));
	if (!bits)
		return -1;
	v = hex_value(bits[part->node_index / 4]);
	if (v & (1 << (part->node_index % 4))) {
		free(bits);
		return 1;
	}
	bits[part->node_index / 4] = "0123456789abcdef"[v | (1 << (part->node_index % 4))];
	if (json_object_set_new(e, "reported", json_string(bits))) {
		free(bits);
		return -1;
	}
	free(bits);
	for (size_t s = 0; s < NSUMS; s++)
		if (add_count(e, sums[s].key, *sum_field((struct efa_record_step *)part, s)))
			return -1;
	if (part->seconds > 0 && (uint64_t)part->seconds > get_count(e, "seconds") &&
	    json_object_set_new(e, "seconds", json_integer(part->seconds)))
		return -1;
	if (part->shared && json_object_set_new(e, "shared", json_true()))
		return -1;
	/* The fall-back is the first node's verdict (verdict.h). */
	if (part->node_index == 0 && json_object_set_new(e, "fallback", json_boolean(part->fallback)))
		return -1;
	return 0;
}

static bool holds_step(const json_t *steps, uint32_t id)
{
	size_t i;
	json_t *e;

	json_array_foreach(steps, i, e)
		if (json_integer_value(json_object_get(e, "step")) == (json_int_t)id)
			return true;
	return false;
}

/* The AdminComment: the site's text, then the summary; or the object. */
static char *render(const char *comment, const struct located *l)
{
	char *json = json_dumps(l->root, JSON_COMPACT), *out;
	size_t keep = l->prefix;

	if (!json || !keep)
		return json;
	out = malloc(keep + 1 + strlen(json) + 1);
	if (out) {
		memcpy(out, comment, keep);
		/* The space was added with the summary when it is there. */
		if (comment[keep - 1] == ' ' && keep < strlen(comment))
			strcpy(out + keep, json);
		else
			sprintf(out + keep, " %s", json);
	}
	free(json);
	return out;
}

int efa_record_add(const char *comment, const struct efa_record_step *part, char **out,
		   struct efa_error *err)
{
	struct located l;
	json_t *efa = NULL, *steps = NULL;
	unsigned long dropped;
	int rc = -1, added;

	*out = NULL;
	if (!part->node_count || part->node_index >= part->node_count)
		return efa_error_set(err, "node %u of a step of %u nodes", part->node_index,
				     part->node_count);
	if (locate(comment, &l))
		return efa_error_set(err, "out of memory");
	efa = json_object();
	steps = valid_steps(l.efa);
	if (!efa || !steps)
		goto oom;
	dropped = (unsigned long)get_count(l.efa, "steps_dropped");
	added = add_part(steps, part);
	if (added < 0) {
		efa_error_set(err, "step %u is in the record with another node count",
			      part->step_id);
		goto out;
	}
	if (added > 0) {
		rc = 0;		/* this node's part is there already */
		goto out;
	}
	for (;;) {
		while (json_array_size(steps) > EFA_RECORD_STEPS_MAX) {
			json_array_remove(steps, 0);
			dropped++;
		}
		if (!holds_step(steps, part->step_id)) {
			rc = 0;		/* a step older than the ones kept: nothing to add */
			goto out;
		}
		if (json_object_set(efa, "steps", steps) ||
		    (dropped && json_object_set_new(efa, "steps_dropped", json_integer((json_int_t)dropped))) ||
		    json_object_set(l.root, EFA_RECORD_KEY, efa))
			goto oom;
		free(*out);
		*out = render(comment, &l);
		if (!*out)
			goto oom;
		if (strlen(*out) <= EFA_RECORD_COMMENT_MAX)
			break;
		if (json_array_size(steps) <= 1) {
			free(*out);
			*out = NULL;
			efa_error_set(err, "the job's AdminComment would pass %d bytes, what slurmdbd keeps",
				      EFA_RECORD_COMMENT_MAX);
			goto out;
		}
		json_array_remove(steps, 0);
		dropped++;
	}
	rc = 0;
	goto out;
oom:
	efa_error_set(err, "out of memory");
out:
	json_decref(steps);
	json_decref(efa);
	located_clear(&l);
	return rc;
}

int efa_record_steps(const char *comment, struct efa_record_step **steps, size_t *nsteps,
		     unsigned long *dropped, struct efa_error *err)
{
	struct located l;
	json_t *valid, *e;
	size_t i;

	*steps = NULL;
	*nsteps = 0;
	*dropped = 0;
	if (locate(comment, &l))
		return efa_error_set(err, "out of memory");
	valid = valid_steps(l.efa);
	if (!valid) {
		located_clear(&l);
		return efa_error_set(err, "out of memory");
	}
	*dropped = (unsigned long)get_count(l.efa, "steps_dropped");
	if (json_array_size(valid)) {
		*steps = calloc(json_array_size(valid), sizeof(**steps));
		if (!*steps) {
			json_decref(valid);
			located_clear(&l);
			return efa_error_set(err, "out of memory");
		}
	}
	json_array_foreach(valid, i, e) {
		struct efa_record_step *s = &(*steps)[i];
		uint32_t count = (uint32_t)json_integer_value(json_object_get(e, "node_count"));

		s->step_id = (uint32_t)json_integer_value(json_object_get(e, "step"));
		snprintf(s->nodes, sizeof(s->nodes), "%s", json_string_value(json_object_get(e, "nodes")));
		s->node_count = count;
		s->reported = (uint32_t)reported_count(json_string_value(json_object_get(e, "reported")),
						       count);
		s->seconds = (long)get_count(e, "seconds");
		s->fallback = json_is_true(json_object_get(e, "fallback"));
		s->shared = json_is_true(json_object_get(e, "shared"));
		for (size_t k = 0; k < NSUMS; k++)
			*sum_field(s, k) = get_count(e, sums[k].key);
	}
	*nsteps = json_array_size(valid);
	json_decref(valid);
	located_clear(&l);
	return 0;
}

char *efa_record_json(const char *comment)
{
	struct located l;
	char *text = NULL;

	if (locate(comment, &l))
		return NULL;
	if (json_is_object(l.efa))
		text = json_dumps(l.efa, JSON_COMPACT);
	located_clear(&l);
	return text;
}
