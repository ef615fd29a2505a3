/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/health/drain_rules.h"
#include "common/health/repair.h"

bool efa_drain_reason_ours(const char *reason)
{
	return reason && !strncmp(reason, EFA_DRAIN_REASON_PREFIX, strlen(EFA_DRAIN_REASON_PREFIX));
}

/* The value of KEY= in a "Key=Value Key=Value" line, up to the next
 * " Key=" (values may hold spaces: Reason=). */
static const char *value_of(const char *line, const char *key, size_t *len)
{
	size_t klen = strlen(key);
	const char *p = line, *end;

	for (;;) {
		p = strstr(p, key);
		if (!p)
			return NULL;
		if ((p == line || p[-1] == ' ') && p[klen] == '=')
			break;
		p += klen;
	}
	p += klen + 1;
	/* The next word with an '=' in it starts the next key. */
	for (end = p; *end && *end != '\n'; end++) {
		if (*end == ' ') {
			const char *w = end + 1;
			size_t wl = strcspn(w, " =\n");

			if (w[wl] == '=' && wl && w[0] >= 'A' && w[0] <= 'Z')
				break;
		}
	}
	*len = (size_t)(end - p);
	return p;
}

/* scontrol's "2026-12-07T04:21:46" (its local time); 0 when it is not one. */
static int64_t time_of(const char *text, size_t len)
{
	char buf[32];
	struct tm tm = { .tm_isdst = -1 };
	const char *end;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, text, len);
	buf[len] = '\0';
	end = strptime(buf, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end || *end)
		return 0;
	return (int64_t)mktime(&tm);
}

bool efa_node_state_parse(const char *line, struct efa_node_state *st, char *buf, size_t size)
{
	const char *state, *reason;
	size_t len = 0, rlen = 0;
	char word[128];

	memset(st, 0, sizeof(*st));
	buf[0] = '\0';
	state = value_of(line, "State", &len);
	if (!state || !len)
		return false;
	snprintf(word, sizeof(word), "%.*s", (int)len, state);
	st->drained = strstr(word, "DRAIN") != NULL;
	st->down = strstr(word, "DOWN") != NULL;
	st->repairing = strstr(word, "REBOOT") || strstr(word, "POWER");
	state = value_of(line, "SlurmdStartTime", &len);
	if (state)
		st->slurmd_start = time_of(state, len);
	reason = value_of(line, "Reason", &rlen);
	if (reason && rlen && strncmp(reason, "(null)", 6)) {
		/* Slurm appends " [user@time]" to the reason it shows. */
		const char *stamp = reason + rlen;

		while (stamp > reason && stamp[-1] == ' ')
			stamp--;
		if (stamp > reason && stamp[-1] == ']') {
			const char *open = stamp - 1;

			while (open > reason && *open != '[')
				open--;
			if (*open == '[' && open > reason && open[-1] == ' ') {
				const char *at = memchr(open, '@', (size_t)(stamp - open));

				if (at)
					st->reason_time = time_of(at + 1, (size_t)(stamp - 1 - (at + 1)));
				stamp = open - 1;
			}
		}
		snprintf(buf, size, "%.*s", (int)(stamp - reason), reason);
		st->reason = buf;
	}
	return true;
}

enum efa_drain_action efa_drain_decide(bool healthy, const struct efa_node_state *st,
				       long *passes, long needed)
{
	bool ours = (st->drained || st->down) && efa_drain_reason_ours(st->reason);

	if (!healthy) {
		*passes = 0;
		if (st->drained && !st->down && !st->repairing && st->reason &&
		    !strncmp(st->reason, EFA_REPAIR_REASON_PREFIX, strlen(EFA_REPAIR_REASON_PREFIX)) &&
		    (!st->slurmd_start || !st->reason_time || st->slurmd_start >= st->reason_time))
			return EFA_DRAIN_DRAIN;
		/* Already out of service: ours stays so, an admin's is theirs. */
		return st->drained || st->down ? EFA_DRAIN_NOTHING : EFA_DRAIN_DRAIN;
	}
	/* A reboot or power down under way is finished first: a node
	 * returned through it would cancel it (update_node, node_mgr.c). */
	if (!ours || st->repairing) {
		*passes = 0;
		return EFA_DRAIN_NOTHING;
	}
	++*passes;
	if (needed <= 0 || *passes < needed)
		return EFA_DRAIN_NOTHING;
	*passes = 0;
	return EFA_DRAIN_RESUME;
}
