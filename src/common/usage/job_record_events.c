/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What hang detection and sick links keep in the job's record
 * (job_record.h): the quiet bits, the hangs found, the link rates above
 * the floor and the sick nodes. Read and written in the summary that
 * job_record.c places in the AdminComment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/array.h"
#include "common/base/json_text.h"
#include "common/usage/job_record.h"
#include "common/usage/job_record_summary.h"

static const char *const hang_action_names[] = {
	[EFA_HANG_ACTION_UNSET] = "notify",
	[EFA_HANG_NOTIFY] = "notify",
	[EFA_HANG_REQUEUE] = "requeue",
	[EFA_HANG_CANCEL] = "cancel",
};

const char *efa_hang_action_name(enum efa_hang_action action)
{
	return hang_action_names[action];
}

struct quiet *efa_rec_find_quiet(const struct summary *s, uint32_t run, uint32_t step)
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
				run = efa_rec_id_value(m.value, 0);
			else if (!strcmp(m.key, "step"))
				step = efa_rec_id_value(m.value, 0);
			else if (!strcmp(m.key, "node_count"))
				count = efa_rec_id_value(m.value, 1);
			else if (!strcmp(m.key, "nodes"))
				bits = m.value, bits_end = m.end;
		}
		if (run < 0 || step < 0 || count < 0 || !bits ||
		    efa_rec_find_quiet(s, (uint32_t)run, (uint32_t)step))
			continue;
		q = (struct quiet){ .run = (uint32_t)run, .step = (uint32_t)step,
				    .node_count = (uint32_t)count };
		q.bits = efa_rec_string_value(bits, bits_end, &oom);
		if (!q.bits || efa_rec_reported_count(q.bits, q.node_count) < 0) {
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

bool efa_rec_holds_hang(const struct summary *s, uint32_t run, uint32_t step)
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
			run = efa_rec_id_value(m.value, 0);
		} else if (!strcmp(m.key, "step")) {
			step = efa_rec_id_value(m.value, 0);
		} else if (!strcmp(m.key, "quiet_seconds")) {
			quiet = efa_rec_id_value(m.value, 0);
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
		if (!read_hang(value, &h) || efa_rec_holds_hang(s, h.run, h.step))
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

struct links *efa_rec_find_links(const struct summary *s, uint32_t run, uint32_t step)
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
			node = efa_rec_id_value(value, 0);
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
				run = efa_rec_id_value(m.value, 0);
			else if (!strcmp(m.key, "step"))
				step = efa_rec_id_value(m.value, 0);
			else if (!strcmp(m.key, "node_count"))
				count = efa_rec_id_value(m.value, 1);
			else if (!strcmp(m.key, "above"))
				above = m.value;
		}
		if (run < 0 || step < 0 || count < 0 || !above || *above != '[' ||
		    efa_rec_find_links(s, (uint32_t)run, (uint32_t)step))
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

bool efa_rec_holds_sick(const struct summary *s, const struct efa_record_sick *k)
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
				run = efa_rec_id_value(m.value, 0);
			else if (!strcmp(m.key, "step"))
				step = efa_rec_id_value(m.value, 0);
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
		if (run < 0 || step < 0 || !k.node[0] || k.rate < 0 || k.peers < 0 || efa_rec_holds_sick(s, &k))
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

int efa_rec_read_events(struct summary *s, const char *quiet, const char *hangs,
			const char *links, const char *sick)
{
	return read_quiet(quiet, s) || read_hangs(hangs, s) || read_links(links, s) ||
	       read_sick(sick, s) ? -1 : 0;
}

int efa_rec_events_json(FILE *f, const struct summary *s)
{
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
				return -1;
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
				return -1;
			}
			fprintf(f, "%s{\"run\":%u,\"step\":%u,\"node\":%s,\"rate\":%.6g,\"peers\":%.6g,\"drained\":%s}",
				i ? "," : "", k->run, k->step, node, k->rate, k->peers,
				k->drained ? "true" : "false");
			free(node);
		}
		fputc(']', f);
	}
	return 0;
}

void efa_rec_events_clear(struct summary *s)
{
	for (size_t i = 0; i < s->nquiet; i++)
		free(s->quiet[i].bits);
	free(s->quiet);
	free(s->hangs);
	for (size_t i = 0; i < s->nlinks; i++)
		free(s->links[i].above);
	free(s->links);
	free(s->sick);
}
