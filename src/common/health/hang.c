/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>

#include "common/health/hang.h"

/* A source moved when it was read at both samples and differs. */
static bool moved(bool was_known, bool known, int64_t was, int64_t now)
{
	return was_known && known && was != now;
}

enum efa_hang_seen efa_hang_add(struct efa_hang_watch *w, const struct efa_hang_sample *s)
{
	const struct efa_hang_sample *l = &w->last;
	enum efa_hang_seen seen = EFA_HANG_QUIET;

	if (!w->started || !s->traffic_known || !l->traffic_known || s->ports != l->ports ||
	    s->traffic < l->traffic) {
		/* A first sample, or a reading that cannot be compared with
		 * the last (a port gone or back, a driver reloaded). */
		seen = w->started ? EFA_HANG_UNKNOWN : EFA_HANG_ACTIVE;
	} else if (s->traffic != l->traffic ||
		   moved(l->output_known, s->output_known, (int64_t)l->output, (int64_t)s->output) ||
		   moved(l->checkpoint_known, s->checkpoint_known, l->checkpoint, s->checkpoint) ||
		   moved(l->heartbeat_known, s->heartbeat_known, l->heartbeat, s->heartbeat)) {
		seen = EFA_HANG_ACTIVE;
	}
	if (seen != EFA_HANG_QUIET)
		w->active_at = s->at;
	w->last = *s;
	w->started = true;
	return seen;
}

int64_t efa_hang_quiet_for(const struct efa_hang_watch *w, int64_t now)
{
	if (!w->started || now < w->active_at)
		return 0;
	return now - w->active_at;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int efa_sick_link(const double *rates, unsigned n, unsigned self, double floor, double factor,
		  double *peers)
{
	unsigned k = 0;
	double *others;
	int sick;

	*peers = -1;
	if (self >= n || rates[self] < 0 || !(others = malloc(n * sizeof(*others))))
		return -1;
	for (unsigned j = 0; j < n; j++)
		if (j != self && rates[j] >= 0)
			others[k++] = rates[j];
	if (!k) {
		free(others);
		return -1;
	}
	qsort(others, k, sizeof(*others), by_value);
	*peers = k % 2 ? others[k / 2] : (others[k / 2 - 1] + others[k / 2]) / 2;
	free(others);
	sick = rates[self] > floor && rates[self] > factor * *peers;
	return sick;
}
