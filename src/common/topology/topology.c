/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/array.h"
#include "common/topology/topology.h"

/* A parent that the node being placed would create. */
#define NEW_PARENT ((size_t)-2)

enum lookup { ABSENT, SWITCH, RESERVED };

struct builder {
	struct efa_topo_tree *t;
	const struct efa_cluster *c;
	struct hsearch_data names;	/* every switch name, and the reserved ones */
	char **reserved;
	size_t nreserved;
};

/* What Slurm's hostlist parser reads back as one name. */
static bool valid_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._-", *s))
			return false;
	return true;
}

/* Appends x to v (n entries), doubling at powers of two. */
static int append(size_t **v, size_t *n, size_t x)
{
	if (!(*n & (*n - 1))) {
		size_t *grown = realloc(*v, (*n ? *n * 2 : 1) * sizeof(**v));

		if (!grown)
			return -1;
		*v = grown;
	}
	(*v)[(*n)++] = x;
	return 0;
}

static enum lookup lookup(struct builder *b, const char *name, size_t *at)
{
	ENTRY want = { .key = (char *)name }, *found;

	if (!hsearch_r(want, FIND, &found, &b->names))
		return ABSENT;
	if (!found->data)
		return RESERVED;
	*at = (size_t)(uintptr_t)found->data - 1;
	return SWITCH;
}

/* Enters name (which must outlive the table) for switch at, or reserves it. */
static int enter(struct builder *b, char *name, const size_t *at)
{
	ENTRY e = { .key = name, .data = at ? (void *)(uintptr_t)(*at + 1) : NULL }, *done;

	return hsearch_r(e, ENTER, &done, &b->names) ? 0 : -1;
}

static int add_switch(struct builder *b, const char *name, const char *zone, size_t layer,
		      size_t parent, size_t *at)
{
	struct efa_topo_tree *t = b->t;
	struct efa_topo_switch *s;

	if (!(t->nswitches & (t->nswitches - 1))) {
		struct efa_topo_switch *grown = realloc(t->switches, (t->nswitches ? t->nswitches * 2 : 1) *
							sizeof(*grown));

		if (!grown)
			return -1;
		t->switches = grown;
	}
	*at = t->nswitches;
	s = &t->switches[*at];
	memset(s, 0, sizeof(*s));
	s->zone = zone;
	s->layer = layer;
	s->parent = parent;
	if (!(s->name = strdup(name)))
		return -1;
	t->nswitches++;
	if (enter(b, s->name, at))
		return -1;
	return parent == EFA_TOPO_NO_PARENT ? 0 :
		append(&t->switches[parent].children, &t->switches[parent].nchildren, *at);
}

static int zone_switch(struct builder *b, const char *name, const char *zone, struct efa_error *err)
{
	char *leaf, **grown;
	size_t at;

	if (!valid_name(name))
		return efa_error_set(err, "zone %s cannot be a switch name in topology.conf: use letters, digits, '.', '_' and '-' in zone features",
				     name);
	if (asprintf(&leaf, "%s%s", name, EFA_TOPO_NO_LAYERS_SUFFIX) < 0)
		return efa_error_set(err, "out of memory");
	if (lookup(b, name, &at) != ABSENT || lookup(b, leaf, &at) != ABSENT) {
		efa_error_set(err, "zone %s: its switch names %s and %s are taken by another zone: rename one zone",
			      name, name, leaf);
		free(leaf);
		return -1;
	}
	grown = realloc(b->reserved, (b->nreserved + 1) * sizeof(*grown));
	if (!grown) {
		free(leaf);
		return efa_error_set(err, "out of memory");
	}
	b->reserved = grown;
	b->reserved[b->nreserved++] = leaf;
	if (enter(b, leaf, NULL) || add_switch(b, name, zone, 0, EFA_TOPO_NO_PARENT, &at))
		return efa_error_set(err, "out of memory");
	return 0;
}

/*
 * Whether n's path (complete) contradicts the tree so far; why goes in
 * note. Checked before anything is added, so a refused path leaves no
 * switches behind.
 */
static bool contradicts(struct builder *b, const struct efa_cluster_node *n, size_t depth,
			size_t zone, char *note, size_t size)
{
	const struct efa_topo_tree *t = b->t;
	size_t expect = zone;

	for (size_t i = depth; i < b->c->nlayers; i++)
		if (n->layers[i]) {
			snprintf(note, size, "node %s: layer %zu id %s without a layer %zu", n->name,
				 i + 1, n->layers[i], depth + 1);
			return true;
		}
	for (size_t i = 0; i < depth; i++) {
		const char *id = n->layers[i];
		const char *here = i ? n->layers[i - 1] : t->switches[zone].name;
		enum lookup found;
		size_t at;

		if (!valid_name(id)) {
			snprintf(note, size, "node %s: layer %zu id '%s' cannot be a switch name", n->name,
				 i + 1, id);
			return true;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(id, n->layers[j])) {
				snprintf(note, size, "node %s: %s is both layer %zu and layer %zu", n->name,
					 id, j + 1, i + 1);
				return true;
			}
		found = lookup(b, id, &at);
		if (found == ABSENT) {
			expect = NEW_PARENT;
			continue;
		}
		if (found == RESERVED || !t->switches[at].layer) {
			snprintf(note, size, "node %s: layer %zu id %s is a zone's switch name", n->name,
				 i + 1, id);
			return true;
		}
		if (t->switches[at].layer != i + 1) {
			snprintf(note, size, "node %s: %s is layer %zu here, %zu on other nodes", n->name,
				 id, i + 1, t->switches[at].layer);
			return true;
		}
		if (t->switches[at].parent != expect) {
			snprintf(note, size, "node %s: %s is under %s here, under %s on other nodes",
				 n->name, id, here, t->switches[t->switches[at].parent].name);
			return true;
		}
		expect = at;
	}
	return false;
}

static void contradiction(struct efa_topo_tree *t, const char *note)
{
	if (!t->inconsistent++)
		snprintf(t->note, sizeof(t->note), "%s", note);
}

/*
 * A node sits under the deepest of its layers from the top: instance
 * types have 3 or 4, capacity reservations 1 to 3, so depths mix in one
 * zone. A node without layer 1 sits under its zone.
 */
static int place(struct builder *b, size_t idx, size_t zone)
{
	struct efa_topo_tree *t = b->t;
	const struct efa_cluster_node *n = &b->c->nodes[idx];
	size_t depth = 0, parent = zone;
	char note[sizeof(t->note)];

	while (n->layers && depth < b->c->nlayers && n->layers[depth])
		depth++;
	if (!depth) {
		t->without_layers++;
	} else if (contradicts(b, n, depth, zone, note, sizeof(note))) {
		contradiction(t, note);
	} else {
		for (size_t i = 0; i < depth; i++) {
			size_t at;

			if (lookup(b, n->layers[i], &at) != SWITCH &&
			    add_switch(b, n->layers[i], t->switches[zone].zone, i + 1, parent, &at))
				return -1;
			parent = at;
		}
	}
	return append(&t->switches[parent].nodes, &t->switches[parent].nnodes, idx);
}

static struct efa_topo_block *block_named(struct efa_topo_tree *t, const char *name)
{
	for (size_t i = t->nblocks; i-- > 0;)
		if (!strcmp(t->blocks[i].name, name))
			return &t->blocks[i];
	return NULL;
}

/*
 * The node's capacity block (an UltraServer's NVLink domain), one block
 * for topology/block. A block lies in one zone and is named apart from
 * every switch: a node that says otherwise stays on its switch's block.
 */
static int join_block(struct builder *b, size_t idx, size_t zone)
{
	struct efa_topo_tree *t = b->t;
	const struct efa_cluster_node *n = &b->c->nodes[idx];
	struct efa_topo_block *k = block_named(t, n->block);
	char note[sizeof(t->note)];
	size_t at;

	if (!valid_name(n->block) || lookup(b, n->block, &at) != ABSENT) {
		snprintf(note, sizeof(note), "node %s: capacity block %s %s", n->name, n->block,
			 valid_name(n->block) ? "is named as a switch" : "cannot be a block name");
		contradiction(t, note);
		return 0;
	}
	if (k && k->zone != zone) {
		snprintf(note, sizeof(note), "node %s: capacity block %s is in %s on other nodes",
			 n->name, n->block, t->switches[k->zone].name);
		contradiction(t, note);
		return 0;
	}
	if (!k) {
		if (efa_array_room(&t->blocks, t->nblocks, sizeof(*t->blocks)))
			return -1;
		k = &t->blocks[t->nblocks];
		memset(k, 0, sizeof(*k));
		k->zone = zone;
		if (!(k->name = strdup(n->block)))
			return -1;
		t->nblocks++;
	}
	t->in_block[idx] = true;
	return append(&k->nodes, &k->nnodes, idx);
}

static int node_cmp(const void *a, const void *b, void *arg)
{
	const struct efa_cluster *c = arg;

	return strcmp(c->nodes[*(const size_t *)a].name, c->nodes[*(const size_t *)b].name);
}

static int switch_cmp(const void *a, const void *b, void *arg)
{
	const struct efa_topo_tree *t = arg;

	return strcmp(t->switches[*(const size_t *)a].name, t->switches[*(const size_t *)b].name);
}

int efa_topology_build(const struct efa_cluster *c, struct efa_topo_tree *t, struct efa_error *err)
{
	struct builder b = { .t = t, .c = c };
	size_t *order = calloc(c->nnodes ? c->nnodes : 1, sizeof(*order));
	int rc = -1;

	memset(t, 0, sizeof(*t));
	t->cluster = c;
	t->in_block = calloc(c->nnodes ? c->nnodes : 1, sizeof(*t->in_block));
	if (!order || !t->in_block || !hcreate_r(2 * (c->nnodes * c->nlayers + 2 * c->nzones + 2) + 16, &b.names)) {
		free(order);
		efa_topology_clear(t);
		return efa_error_set(err, "out of memory");
	}
	for (size_t i = 0; i < c->nnodes; i++) {
		order[i] = i;
		t->without_zone += !c->nodes[i].zone;
	}
	for (size_t i = 0; i < c->nzones; i++)
		if (zone_switch(&b, c->zones[i].name, c->zones[i].name, err))
			goto out;
	if (t->without_zone && zone_switch(&b, EFA_TOPO_NO_ZONE, NULL, err))
		goto out;
	t->nzones = t->nswitches;
	/* By name, so that who came first (and wins a contradiction) does
	 * not depend on slurmrestd's order. */
	qsort_r(order, c->nnodes, sizeof(*order), node_cmp, (void *)c);
	for (size_t i = 0; i < c->nnodes; i++) {
		const struct efa_cluster_node *n = &c->nodes[order[i]];
		const struct efa_cluster_zone *z = n->zone ? efa_cluster_zone(c, n->zone) : NULL;

		if (place(&b, order[i], z ? (size_t)(z - c->zones) : c->nzones)) {
			efa_error_set(err, "out of memory");
			goto out;
		}
	}
	/* After every switch is named, so that a block never takes a
	 * switch's name. */
	for (size_t i = 0; i < c->nnodes; i++) {
		const struct efa_cluster_node *n = &c->nodes[order[i]];
		const struct efa_cluster_zone *z = n->zone ? efa_cluster_zone(c, n->zone) : NULL;

		if (n->block && join_block(&b, order[i], z ? (size_t)(z - c->zones) : c->nzones)) {
			efa_error_set(err, "out of memory");
			goto out;
		}
	}
	for (size_t i = 0; i < t->nswitches; i++)
		if (t->switches[i].nchildren)
			qsort_r(t->switches[i].children, t->switches[i].nchildren, sizeof(size_t),
				switch_cmp, t);
	rc = 0;
out:
	hdestroy_r(&b.names);
	for (size_t i = 0; i < b.nreserved; i++)
		free(b.reserved[i]);
	free(b.reserved);
	free(order);
	if (rc)
		efa_topology_clear(t);
	return rc;
}

void efa_topology_clear(struct efa_topo_tree *t)
{
	for (size_t i = 0; i < t->nswitches; i++) {
		free(t->switches[i].name);
		free(t->switches[i].children);
		free(t->switches[i].nodes);
	}
	free(t->switches);
	for (size_t i = 0; i < t->nblocks; i++) {
		free(t->blocks[i].name);
		free(t->blocks[i].nodes);
	}
	free(t->blocks);
	free(t->in_block);
	memset(t, 0, sizeof(*t));
}
