/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/fields.h"
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

/* value in decimal in buf (21 bytes hold any long), by fields.c's
 * writer: a task formats seven of these, and vasprintf costs ten times as
 * much. */
static const char *decimal(long value, char buf[21])
{
	*efa_field_put_i64(buf, value) = '\0';
	return buf;
}

int efa_launch_entry_set(struct efa_env_entry *e, const char *name, const char *value,
			 const char *reason)
{
	size_t nlen = strlen(name) + 1, vlen = strlen(value) + 1, rlen = strlen(reason) + 1;
	char *block = malloc(nlen + vlen + rlen);

	memset(e, 0, sizeof(*e));
	if (!block)
		return -1;
	e->name = memcpy(block, name, nlen);
	e->value = memcpy(block + nlen, value, vlen);
	e->reason = memcpy(block + nlen + vlen, reason, rlen);
	return 0;
}

static int add(struct efa_env_entry *e, int *n, const char *name, const char *reason,
	       const char *value)
{
	return efa_launch_entry_set(&e[(*n)++], name, value, reason);
}

int efa_launch_entries(const struct efa_launch *l, struct efa_env_entry *e,
		       struct efa_error *err)
{
	const char *why = l->topology_order ?
			  "distributed launch, nodes in topology order (--efa-rank-order=topology)" :
			  "distributed launch (DistributedEnv=yes)";
	char master[256], root[256 + 22], num[21];
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
	if (l->neuron)
		snprintf(root, sizeof(root), "%s:%ld", master, port == l->port_hi ? l->port_lo : port + 1);
	if ((!l->node_shared && (add(e, &n, "RANK", why, decimal(l->rank, num)) ||
				 add(e, &n, "LOCAL_RANK", why, decimal(l->local_rank, num)))) ||
	    add(e, &n, "WORLD_SIZE", why, decimal(l->world_size, num)) ||
	    add(e, &n, "LOCAL_WORLD_SIZE", why, decimal(l->local_world_size, num)) ||
	    add(e, &n, "NODE_RANK", why, decimal(l->node_rank, num)) ||
	    add(e, &n, "MASTER_ADDR", l->master_from ? l->master_from : "the step's first node",
		master) ||
	    add(e, &n, "MASTER_PORT", "from the job and step ids (MasterPortRange=)",
		decimal(port, num)) ||
	    (l->neuron && add(e, &n, "NEURON_RT_ROOT_COMM_ID", "Neuron collectives root", root))) {
		efa_launch_entries_free(e, (size_t)n);
		return efa_error_set(err, "out of memory");
	}
	/* RANK and LOCAL_RANK come first, and are each task's own. */
	for (int i = 0; !l->node_shared && i < 2; i++)
		e[i].per_task = true;
	return n;
}

void efa_launch_entries_free(struct efa_env_entry *entries, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(entries[i].name);	/* the value and the reason with it */
}
