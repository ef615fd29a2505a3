/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/base/atomic_write.h"
#include "common/base/strutil.h"
#include "common/health/counters.h"
#include "common/node/hw_counters.h"

#define LINE_MAX_LEN 256

/*
 * The counters judged, with the efa.conf key that limits each, and
 * whether it counts what peers did: an unresponsive remote or an
 * impaired connection is another node's doing (a dead node makes every
 * peer's rise), so it is said, never a reason to drain this node.
 */
static const struct {
	const char *name;	/* the driver's file name */
	const char *key;
	size_t offset;
	bool peers;
} judged[] = {
	{ "retrans_timeout_events", "HealthRetransTimeouts",
	  offsetof(struct efa_counter_limits, retrans_timeouts), false },
	{ "unresponsive_remote_events", "HealthUnresponsiveRemotes",
	  offsetof(struct efa_counter_limits, unresponsive_remotes), true },
	{ "impaired_remote_conn_events", "HealthImpairedConnections",
	  offsetof(struct efa_counter_limits, impaired_connections), true },
};

#define NJUDGED (sizeof(judged) / sizeof(judged[0]))

static long limit_of(const struct efa_counter_limits *lim, size_t i)
{
	return *(const long *)((const char *)lim + judged[i].offset);
}

bool efa_counter_limits_any(const struct efa_counter_limits *lim)
{
	for (size_t i = 0; i < NJUDGED; i++)
		if (limit_of(lim, i) > 0)
			return true;
	return false;
}

/* The value of DEV PORT NAME in a reading; false when it has none. */
static bool find_value(const char *reading, const char *dev, const char *port, const char *name,
		       unsigned long long *value)
{
	char want[LINE_MAX_LEN];
	size_t wlen;

	if (!reading)
		return false;
	wlen = (size_t)snprintf(want, sizeof(want), "%s %s %s ", dev, port, name);
	for (const char *line = reading; *line;) {
		const char *end = strchr(line, '\n');

		if (!strncmp(line, want, wlen)) {
			char *stop;

			errno = 0;
			*value = strtoull(line + wlen, &stop, 10);
			return !errno && stop != line + wlen;
		}
		if (!end)
			break;
		line = end + 1;
	}
	return false;
}

size_t efa_counters_problems(const char *before, const char *now,
			     const struct efa_counter_limits *lim, char *buf, size_t size,
			     char *warn, size_t wsize)
{
	size_t found = 0;

	for (const char *line = now; line && *line;) {
		const char *end = strchr(line, '\n');
		char dev[LINE_MAX_LEN], port[32], name[64];
		unsigned long long was, is;

		if (sscanf(line, "%255s %31s %63s %llu", dev, port, name, &is) == 4 &&
		    find_value(before, dev, port, name, &was) && is > was) {
			for (size_t i = 0; i < NJUDGED; i++) {
				long limit = limit_of(lim, i);

				if (strcmp(name, judged[i].name) || limit <= 0 ||
				    is - was <= (unsigned long long)limit)
					continue;
				if (judged[i].peers) {
					if (warn)
						efa_strlcatf(warn, wsize, "%sEFA device %s: port %s: %s rose by %llu since the last check (%s=%ld): what its peers did, not this node's link; not drained",
							     warn[0] ? "; " : "", dev, port, name, is - was,
							     judged[i].key, limit);
					continue;
				}
				efa_strlcatf(buf, size, "%sEFA device %s: port %s: %s rose by %llu since the last check (%s=%ld)",
					     buf[0] ? "; " : "", dev, port, name, is - was, judged[i].key,
					     limit);
				found++;
			}
		}
		if (!end)
			break;
		line = end + 1;
	}
	return found;
}

/* A kept reading is a few lines a port: anything larger is not ours. */
#define STATE_MAX (1 << 20)

int efa_counters_check(const struct efa_hw_reading *reading, const char *state,
		       const struct efa_counter_limits *lim, char *buf, size_t size,
		       char *warn, size_t wsize, struct efa_error *err)
{
	char *before = NULL, *now = efa_hw_format(reading), dir[4096];
	size_t len;
	int rc = -1;

	if (!now)
		return efa_error_set(err, "out of memory keeping EFA counters");
	if (efa_read_file(state, STATE_MAX, &before, &len, NULL))
		before = NULL;		/* a first check: nothing to compare */
	efa_counters_problems(before, now, lim, buf, size, warn, wsize);
	snprintf(dir, sizeof(dir), "%s", state);
	if (mkdir(dirname(dir), 0755) && errno != EEXIST) {
		efa_error_set(err, "cannot keep EFA counters in %s: %s", dir, strerror(errno));
		goto out;
	}
	if (efa_write_atomic(state, now, strlen(now), 0600, err))
		goto out;
	rc = 0;
out:
	free(before);
	free(now);
	return rc;
}
