/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster/rank_order.h"

/*
 * A node's place in the tree, as a key: from the top switch down to its
 * own, each switch's first node in Slurm's order, then the node itself.
 * Sorting by these keys groups every switch's nodes together, and puts
 * the groups, and the nodes inside one, in Slurm's order.
 */
struct keyed {
	const size_t *key;
	size_t len;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	for (size_t i = 0; i < x->len && i < y->len; i++)
		if (x->key[i] != y->key[i])
			return x->key[i] < y->key[i] ? -1 : 1;
	/* Not reached: a node's own index ends its key, and no switch's
	 * first node is a node directly under another switch. */
	return (x->len > y->len) - (x->len < y->len);
}

/* Each node's switches from the top down, depth wide, EFA_TOPO_MAP_NONE
 * below its own. */
static size_t *layer_paths(const struct efa_topo_map *m, char *const *names, size_t n,
			   struct efa_error *err)
{
	size_t depth = m->depth ? m->depth : 1, *paths = malloc(n * depth * sizeof(*paths));
	size_t *up = malloc(depth * sizeof(*up));

	if (!paths || !up) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		size_t u = efa_topo_map_unit_of(m, names[i]), len = 0;

		if (u == EFA_TOPO_MAP_NONE) {
			efa_error_set(err, "node %s is not in it", names[i]);
			goto fail;
		}
		for (; u != EFA_TOPO_MAP_NONE && len < depth; u = m->units[u].parent)
			up[len++] = u;
		for (size_t k = 0; k < depth; k++)
			paths[i * depth + k] = k < len ? up[len - 1 - k] : EFA_TOPO_MAP_NONE;
	}
	free(up);
	return paths;
fail:
	free(paths);
	free(up);
	return NULL;
}

int efa_rank_order(const struct efa_topo_map *m, char *const *names, size_t n, size_t *order,
		   struct efa_error *err)
{
	size_t depth = m->depth ? m->depth : 1, width = depth + 1, *first = NULL, *keys = NULL;
	size_t *paths = NULL;
	struct keyed *keyed = NULL;
	int rc = -1;

	if (!n)
		return 0;
	if (!(paths = layer_paths(m, names, n, err)))
		return -1;
	first = malloc((m->nunits ? m->nunits : 1) * sizeof(*first));
	keys = malloc(n * width * sizeof(*keys));
	keyed = malloc(n * sizeof(*keyed));
	if (!first || !keys || !keyed) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	for (size_t u = 0; u < m->nunits; u++)
		first[u] = (size_t)-1;
	/* Nodes in Slurm's order: a switch's first node is the first to
	 * reach it. */
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;

		for (; len < depth && paths[i * depth + len] != EFA_TOPO_MAP_NONE; len++) {
			size_t u = paths[i * depth + len];

			if (first[u] == (size_t)-1)
				first[u] = i;
			keys[i * width + len] = first[u];
		}
		keys[i * width + len] = i;
		keyed[i].key = &keys[i * width];
		keyed[i].len = len + 1;
	}
	qsort(keyed, n, sizeof(*keyed), keyed_cmp);
	for (size_t i = 0; i < n; i++)
		order[i] = keyed[i].key[keyed[i].len - 1];
	rc = 0;
fail:
	free(paths);
	free(first);
	free(keys);
	free(keyed);
	return rc;
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return (x > y) - (x < y);
}

int efa_ring_crossings(const struct efa_topo_map *m, char *const *names, const size_t *order,
		       size_t n, size_t *crossings, size_t *limit, struct efa_error *err)
{
	size_t depth = m->depth, *paths, *column = NULL;

	for (size_t k = 0; k < depth; k++)
		crossings[k] = limit[k] = 0;
	if (n < 2)
		return 0;
	if (!(paths = layer_paths(m, names, n, err)))
		return -1;
	if (!(column = malloc(n * sizeof(*column)))) {
		free(paths);
		return efa_error_set(err, "out of memory");
	}
	for (size_t k = 0; k < depth; k++) {
		size_t spanned = 0;

		for (size_t i = 0; i < n; i++) {
			size_t a = order[i], b = order[(i + 1) % n];

			crossings[k] += paths[a * depth + k] != paths[b * depth + k];
			column[i] = paths[i * depth + k];
		}
		/* Distinct switches of this layer (the nodes above it as one,
		 * as the crossings count them). */
		qsort(column, n, sizeof(*column), size_cmp);
		for (size_t i = 0; i < n; i++)
			spanned += !i || column[i] != column[i - 1];
		limit[k] = spanned > 1 ? spanned : 0;
	}
	free(paths);
	free(column);
	return 0;
}

int efa_tasks_per_node_parse(const char *text, unsigned *tasks, size_t n, struct efa_error *err)
{
	const char *p = text;
	size_t filled = 0;

	while (p && *p) {
		unsigned long count, repeat = 1;
		char *end;

		if (!isdigit((unsigned char)*p))
			goto bad;
		errno = 0;
		count = strtoul(p, &end, 10);
		if (errno || count > 0xffffffffUL)
			goto bad;
		p = end;
		if (!strncmp(p, "(x", 2)) {
			if (!isdigit((unsigned char)p[2]))
				goto bad;
			repeat = strtoul(p + 2, &end, 10);
			if (errno || *end != ')' || !repeat)
				goto bad;
			p = end + 1;
		}
		if (repeat > n - filled)
			goto bad;
		for (unsigned long r = 0; r < repeat; r++)
			tasks[filled++] = (unsigned)count;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (filled == n)
		return 0;
bad:
	return efa_error_set(err, "tasks per node '%.64s' do not name %zu nodes' tasks",
			     text ? text : "", n);
}

void efa_rank_place(const size_t *order, const unsigned *tasks, size_t n, size_t self,
		    struct efa_rank_place *place)
{
	place->node_rank = 0;
	place->rank_base = 0;
	place->first = n ? order[0] : 0;
	for (size_t i = 0; i < n && order[i] != self; i++) {
		place->node_rank++;
		place->rank_base += tasks[order[i]];
	}
}
