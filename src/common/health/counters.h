/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EFA error counters in a node health check. The efa driver counts, per
 * port, SRD events that say the network or a peer is failing
 * (/sys/class/infiniband/DEV/ports/N/hw_counters: its network statistics,
 * efa_com_cmd.h struct efa_com_network_stats, Nitro v4 and later):
 * retrans_timeout_events (traffic timed out and took another path),
 * unresponsive_remote_events and impaired_remote_conn_events (a connection
 * entered an impaired state, with a lower rate limit). Their absolute
 * values only grow with uptime; what says a NIC went bad is how fast they
 * rise, so each check compares with the previous one, kept in a file.
 * Only retrans_timeout_events is this node's own link: the other two count
 * what its peers did (one dead node raises them on every healthy peer), so
 * their rise is a warning, never a problem that drains.
 */
#ifndef EFA_HEALTH_COUNTERS_H
#define EFA_HEALTH_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/node/hw_counters.h"

/* How much each counter may rise between two checks; 0: not judged. */
struct efa_counter_limits {
	long retrans_timeouts;
	long unresponsive_remotes;
	long impaired_connections;
};

bool efa_counter_limits_any(const struct efa_counter_limits *lim);

/*
 * Compares now with the previous reading (NULL or "" on a first check:
 * nothing is judged) and appends to buf ("; " between) every counter of
 * the node's own link that rose by more than its limit, and to warn (when
 * not NULL) every counter of its peers' doing that did. A counter that
 * went down (the driver was reloaded) is a new start, not a fault.
 * Returns how many problems were found (warnings not counted).
 */
size_t efa_counters_problems(const char *before, const char *now,
			     const struct efa_counter_limits *lim, char *buf, size_t size,
			     char *warn, size_t wsize);

/*
 * A check: judges the node's counters as read now (efa_hw_read) against
 * the reading kept in state (a file of efa_hw_format's "DEV PORT NAME
 * VALUE" lines; missing on a first check), and keeps now there (its
 * directory made when missing). Problems are appended to buf as
 * efa_counters_problems does. -1 with err when the reading cannot be
 * kept: the next check would compare with a stale one. Warnings go to
 * warn likewise.
 */
int efa_counters_check(const struct efa_hw_reading *now, const char *state,
		       const struct efa_counter_limits *lim, char *buf, size_t size,
		       char *warn, size_t wsize, struct efa_error *err);

#endif
