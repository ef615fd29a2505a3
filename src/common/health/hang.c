/* SPDX-License-Identifier: Apache-2.0 */
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
