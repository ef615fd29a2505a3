/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The job record's part for hang detection and sick links (job_record.h):
 * each call reads the summary from the AdminComment (job_record.c),
 * changes its events (job_record_events.c) and writes it back in place.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/array.h"
#include "common/usage/job_record.h"
#include "common/usage/job_record_summary.h"

/* Appends item (size bytes) to the list at listp (a pointer to its
 * array) of *n, keeping the newest max. -1 out of memory. */
static int append_newest(void *listp, size_t *n, size_t size, const void *item, size_t max)
{
	char *list;

	if (efa_array_room(listp, *n, size))
		return -1;
	list = *(char **)listp;
	memcpy(list + *n * size, item, size);
	if (++*n > max) {
		memmove(list, list + size, (*n - 1) * size);
		--*n;
	}
	return 0;
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
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	before = s.nquiet;
	drop_quiet(&s, run, step, false);
	q = efa_rec_find_quiet(&s, run, step);
	if (q && q->node_count != node_count) {
		drop_quiet(&s, run, step, true);
		q = NULL;
	}
	if (!q && !quiet && s.nquiet == before) {
		efa_rec_summary_clear(&s);
		return 0;
	}
	if (!q) {
		fresh = (struct quiet){ .run = run, .step = step, .node_count = node_count,
					.bits = malloc(nbits + 1) };
		if (!fresh.bits || efa_array_room(&s.quiet, s.nquiet, sizeof(*s.quiet))) {
			free(fresh.bits);
			efa_rec_summary_clear(&s);
			return efa_error_set(err, "out of memory");
		}
		memset(fresh.bits, '0', nbits);
		fresh.bits[nbits] = '\0';
		s.quiet[s.nquiet++] = fresh;
		q = &s.quiet[s.nquiet - 1];
	}
	v = efa_rec_hex_value(q->bits[node_index / 4]);
	if (!!(v & bit) == quiet && s.nquiet == before) {
		efa_rec_summary_clear(&s);
		return 0;
	}
	q->bits[node_index / 4] = "0123456789abcdef"[quiet ? v | bit : v & ~bit];
	return efa_rec_written(comment, &l, &s, out, err);
}

bool efa_record_all_quiet(const char *comment, uint32_t run, uint32_t step, uint32_t node_count)
{
	const struct quiet *q;
	struct located l;
	struct summary s;
	bool all;

	if (efa_rec_summary_of(comment, &l, &s))
		return false;
	q = efa_rec_find_quiet(&s, run, step);
	all = q && q->node_count == node_count &&
	      efa_rec_reported_count(q->bits, node_count) == (long)node_count;
	efa_rec_summary_clear(&s);
	return all;
}

int efa_record_add_hang(const char *comment, const struct efa_record_hang *h, char **out,
			struct efa_error *err)
{
	struct located l;
	struct summary s;

	*out = NULL;
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	if (efa_rec_holds_hang(&s, h->run, h->step)) {
		efa_rec_summary_clear(&s);
		return 0;
	}
	drop_quiet(&s, h->run, h->step, true);
	if (append_newest(&s.hangs, &s.nhangs, sizeof(*s.hangs), h, EFA_RECORD_HANGS_MAX)) {
		efa_rec_summary_clear(&s);
		return efa_error_set(err, "out of memory");
	}
	return efa_rec_written(comment, &l, &s, out, err);
}

bool efa_record_hung(const char *comment, uint32_t run, uint32_t step,
		     enum efa_hang_action action)
{
	struct located l;
	struct summary s;
	bool found = false;

	if (efa_rec_summary_of(comment, &l, &s))
		return false;
	for (size_t i = 0; i < s.nhangs && !found; i++)
		found = s.hangs[i].run == run &&
			(step == EFA_RECORD_ANY_STEP || s.hangs[i].step == step) &&
			(action == EFA_HANG_ACTION_UNSET || s.hangs[i].action == action);
	efa_rec_summary_clear(&s);
	return found;
}

int efa_record_hangs(const char *comment, struct efa_record_hang **list, size_t *n,
		     struct efa_error *err)
{
	struct located l;
	struct summary s;

	*list = NULL;
	*n = 0;
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	*list = s.hangs;
	*n = s.nhangs;
	s.hangs = NULL;
	efa_rec_summary_clear(&s);
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
	if (efa_rec_summary_of(comment, &l_at, &s))
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
	l = efa_rec_find_links(&s, run, step);
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
		efa_rec_summary_clear(&s);
		return 0;
	}
	if (k == l->n) {
		if (efa_array_room(&l->above, l->n, sizeof(*l->above)))
			goto oom;
		l->n++;
	}
	l->above[k] = (struct link_above){ node, rate };
	return efa_rec_written(comment, &l_at, &s, out, err);
oom:
	efa_rec_summary_clear(&s);
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
	if (efa_rec_summary_of(comment, &at, &s))
		return -1;
	l = efa_rec_find_links(&s, run, step);
	for (size_t k = 0; l && l->node_count == node_count && k < l->n; k++)
		rates[l->above[k].node] = l->above[k].rate;
	efa_rec_summary_clear(&s);
	return 0;
}

int efa_record_add_sick(const char *comment, const struct efa_record_sick *sick, char **out,
			struct efa_error *err)
{
	struct located l;
	struct summary s;

	*out = NULL;
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	if (efa_rec_holds_sick(&s, sick)) {
		efa_rec_summary_clear(&s);
		return 0;
	}
	if (append_newest(&s.sick, &s.nsick, sizeof(*s.sick), sick, EFA_RECORD_SICK_MAX)) {
		efa_rec_summary_clear(&s);
		return efa_error_set(err, "out of memory");
	}
	return efa_rec_written(comment, &l, &s, out, err);
}

int efa_record_sick_links(const char *comment, struct efa_record_sick **list, size_t *n,
			  struct efa_error *err)
{
	struct located l;
	struct summary s;

	*list = NULL;
	*n = 0;
	if (efa_rec_summary_of(comment, &l, &s))
		return efa_error_set(err, "out of memory");
	*list = s.sick;
	*n = s.nsick;
	s.sick = NULL;
	efa_rec_summary_clear(&s);
	return 0;
}
