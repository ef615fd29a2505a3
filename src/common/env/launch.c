/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/env/launch.h"

int efa_hostlist_first(const char *hostlist, char *buf, size_t size)
{
	size_t used = 0;
	const char *p = hostlist;

	if (!p || !*p)
		return -1;
	while (*p && *p != ',') {
		size_t len;
		const char *piece = p;

		if (*p == '[') {
			/* The first number of the first range, as written
			 * (zero padding is part of the name). */
			piece = ++p;
			while (isdigit((unsigned char)*p))
				p++;
			len = (size_t)(p - piece);
			p = strchr(p, ']');
			if (!len || !p)
				return -1;
			p++;
		} else {
			len = 1;
			p++;
		}
		if (used + len >= size)
			return -1;
		memcpy(buf + used, piece, len);
		used += len;
	}
	buf[used] = '\0';
	return used ? 0 : -1;
}

long efa_master_port(unsigned job_id, unsigned step_id, long lo, long hi)
{
	unsigned long span = (unsigned long)(hi - lo + 1);

	/* Steps of one job that run at once on the same first node must not
	 * collide; the batch and extern steps have huge ids and count as 0. */
	if (step_id >= 0xfffffff0U)
		step_id = 0;
	return lo + (long)(((unsigned long)job_id + step_id) % span);
}

static int add(struct efa_env_entry *e, int *n, const char *name, const char *reason,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int add(struct efa_env_entry *e, int *n, const char *name, const char *reason,
	       const char *fmt, ...)
{
	struct efa_env_entry *entry = &e[*n];
	va_list ap;
	int rc;

	memset(entry, 0, sizeof(*entry));
	va_start(ap, fmt);
	rc = vasprintf(&entry->value, fmt, ap);
	va_end(ap);
	entry->name = strdup(name);
	entry->reason = strdup(reason);
	(*n)++;
	if (rc < 0) {
		entry->value = NULL;
		return -1;
	}
	return entry->name && entry->reason ? 0 : -1;
}

int efa_launch_entries(const struct efa_launch *l, struct efa_env_entry *e,
		       struct efa_error *err)
{
	const char *why = l->topology_order ?
			  "distributed launch, nodes in topology order (--efa-rank-order=topology)" :
			  "distributed launch (DistributedEnv=yes)";
	char master[256];
	long port;
	int n = 0;

	if (l->master_addr && l->master_addr[0]) {
		if (snprintf(master, sizeof(master), "%s", l->master_addr) >= (int)sizeof(master))
			return efa_error_set(err, "the first node's address '%.64s...' is too long",
					     l->master_addr);
	} else if (!l->first_node || !l->first_node[0] ||
		   snprintf(master, sizeof(master), "%s", l->first_node) >= (int)sizeof(master)) {
		return efa_error_set(err, "the step's first node is not known");
	}
	port = efa_master_port(l->job_id, l->step_id, l->port_lo, l->port_hi);
	if ((!l->node_shared && (add(e, &n, "RANK", why, "%u", l->rank) ||
				 add(e, &n, "LOCAL_RANK", why, "%u", l->local_rank))) ||
	    add(e, &n, "WORLD_SIZE", why, "%u", l->world_size) ||
	    add(e, &n, "LOCAL_WORLD_SIZE", why, "%u", l->local_world_size) ||
	    add(e, &n, "NODE_RANK", why, "%u", l->node_rank) ||
	    add(e, &n, "MASTER_ADDR", l->master_from ? l->master_from : "the step's first node",
		"%s", master) ||
	    add(e, &n, "MASTER_PORT", "from the job and step ids (MasterPortRange=)", "%ld", port) ||
	    (l->neuron && add(e, &n, "NEURON_RT_ROOT_COMM_ID", "Neuron collectives root",
			      "%s:%ld", master, port == l->port_hi ? l->port_lo : port + 1))) {
		efa_launch_entries_free(e, (size_t)n);
		return efa_error_set(err, "out of memory");
	}
	return n;
}

void efa_launch_entries_free(struct efa_env_entry *entries, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(entries[i].name);
		free(entries[i].value);
		free(entries[i].reason);
	}
}
