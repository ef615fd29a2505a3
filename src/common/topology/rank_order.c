/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/topology/rank_order.h"

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

/* Appends item to list's children (head and tail by list, next by item). */
static void append(size_t *head, size_t *tail, size_t *next, size_t list, size_t item)
{
	next[item] = EFA_TOPO_MAP_NONE;
	if (head[list] == EFA_TOPO_MAP_NONE)
		head[list] = item;
	else
		next[tail[list]] = item;
	tail[list] = item;
}

/*
 * The step's part of the tree, each switch's children in the order
 * Slurm's order first reaches them (a switch by its first node, a node by
 * itself): walked depth first, it lists every switch's nodes together,
 * and the groups, and the nodes inside one, in Slurm's order. Linear in
 * the nodes and the layers. Items: node i is i, switch u is n + u; the
 * list above the top switches is the last.
 */
int efa_rank_order(const struct efa_topo_map *m, char *const *names, size_t n, size_t *order,
		   struct efa_error *err)
{
	size_t depth = m->depth ? m->depth : 1, top = m->nunits, out = 0, level = 0;
	size_t *paths = NULL, *head = NULL, *tail = NULL, *next = NULL, *stack = NULL;
	int rc = -1;

	if (!n)
		return 0;
	if (!(paths = layer_paths(m, names, n, err)))
		return -1;
	head = malloc((m->nunits + 1) * sizeof(*head));
	tail = malloc((m->nunits + 1) * sizeof(*tail));
	next = malloc((n + m->nunits) * sizeof(*next));
	stack = malloc((depth + 1) * sizeof(*stack));
	if (!head || !tail || !next || !stack) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	for (size_t u = 0; u <= m->nunits; u++)
		head[u] = EFA_TOPO_MAP_NONE;
	for (size_t i = 0; i < n; i++) {
		size_t parent = top;

		for (size_t k = 0; k < depth && paths[i * depth + k] != EFA_TOPO_MAP_NONE; k++) {
			size_t u = paths[i * depth + k];

			/* A switch has children once reached: the node that
			 * reaches it appends one below it at once. */
			if (head[u] == EFA_TOPO_MAP_NONE)
				append(head, tail, next, parent, n + u);
			parent = u;
		}
		append(head, tail, next, parent, i);
	}
	/* stack[level]: the next child to visit at each level */
	stack[0] = head[top];
	for (;;) {
		size_t item = stack[level];

		if (item == EFA_TOPO_MAP_NONE) {
			if (!level--)
				break;
			continue;
		}
		stack[level] = next[item];
		if (item < n)
			order[out++] = item;
		else
			stack[++level] = head[item - n];
	}
	rc = 0;
fail:
	free(paths);
	free(head);
	free(tail);
	free(next);
	free(stack);
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
