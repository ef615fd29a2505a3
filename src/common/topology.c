/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostlist.h"
#include "topology.h"

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
static bool contradicts(struct builder *b, const struct efa_cluster_node *n, size_t zone,
			char *note, size_t size)
{
	const struct efa_topo_tree *t = b->t;
	size_t expect = zone;

	for (size_t i = 0; i < b->c->nlayers; i++) {
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

static int place(struct builder *b, size_t idx, size_t zone)
{
	struct efa_topo_tree *t = b->t;
	const struct efa_cluster_node *n = &b->c->nodes[idx];
	size_t have = 0, parent = zone;
	char note[sizeof(t->note)];

	for (size_t i = 0; n->layers && i < b->c->nlayers; i++)
		have += n->layers[i] != NULL;
	if (!b->c->nlayers || have < b->c->nlayers) {
		t->without_layers++;
	} else if (contradicts(b, n, zone, note, sizeof(note))) {
		if (!t->inconsistent++)
			memcpy(t->note, note, sizeof(note));
	} else {
		for (size_t i = 0; i < b->c->nlayers; i++) {
			size_t at;

			if (lookup(b, n->layers[i], &at) != SWITCH &&
			    add_switch(b, n->layers[i], t->switches[zone].zone, i + 1, parent, &at))
				return -1;
			parent = at;
		}
	}
	return append(&t->switches[parent].nodes, &t->switches[parent].nnodes, idx);
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
	if (!order || !hcreate_r(2 * (c->nnodes * c->nlayers + 2 * c->nzones + 2) + 16, &b.names)) {
		free(order);
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
	memset(t, 0, sizeof(*t));
}

char *efa_topology_nodes(const struct efa_topo_tree *t, const struct efa_topo_switch *s)
{
	char **names = calloc(s->nnodes ? s->nnodes : 1, sizeof(*names)), *hl;

	if (!names)
		return NULL;
	for (size_t i = 0; i < s->nnodes; i++)
		names[i] = t->cluster->nodes[s->nodes[i]].name;
	hl = efa_hostlist_compress(names, s->nnodes);
	free(names);
	return hl;
}

/* The switches below s, and its own nodes' leaf when it has both. */
static char *compress_children(const struct efa_topo_tree *t, const struct efa_topo_switch *s)
{
	char **names = calloc(s->nchildren + 1, sizeof(*names)), *leaf = NULL, *hl = NULL;
	size_t n = 0;

	if (!names)
		return NULL;
	for (size_t i = 0; i < s->nchildren; i++)
		names[n++] = t->switches[s->children[i]].name;
	if (s->nnodes) {
		if (asprintf(&leaf, "%s%s", s->name, EFA_TOPO_NO_LAYERS_SUFFIX) < 0)
			goto out;
		names[n++] = leaf;
	}
	hl = efa_hostlist_compress(names, n);
out:
	free(leaf);
	free(names);
	return hl;
}

/*
 * s and everything below it, top down: for topology/tree its switches and
 * their leaves, for topology/block only the leaves, in tree order, so that
 * leaves under one layer-2 switch stand side by side.
 */
static int render_switch(const struct efa_topo_tree *t, size_t idx, enum efa_topology format,
			 FILE *out)
{
	const struct efa_topo_switch *s = &t->switches[idx];
	char *hl;

	if (s->nchildren && format == EFA_TOPOLOGY_TREE) {
		if (!(hl = compress_children(t, s)))
			return -1;
		fprintf(out, "SwitchName=%s Switches=%s\n", s->name, hl);
		free(hl);
	}
	if (s->nnodes) {
		if (!(hl = efa_topology_nodes(t, s)))
			return -1;
		fprintf(out, "%s=%s%s Nodes=%s\n", format == EFA_TOPOLOGY_BLOCK ? "BlockName" : "SwitchName",
			s->name, s->nchildren ? EFA_TOPO_NO_LAYERS_SUFFIX : "", hl);
		free(hl);
	}
	for (size_t i = 0; i < s->nchildren; i++)
		if (render_switch(t, s->children[i], format, out))
			return -1;
	return 0;
}

/* The switches holding nodes below (and at) s, and the fewest nodes one holds. */
static size_t count_blocks(const struct efa_topo_tree *t, size_t idx, size_t *fewest)
{
	const struct efa_topo_switch *s = &t->switches[idx];
	size_t n = 0;

	if (s->nnodes) {
		n++;
		if (!*fewest || s->nnodes < *fewest)
			*fewest = s->nnodes;
	}
	for (size_t i = 0; i < s->nchildren; i++)
		n += count_blocks(t, s->children[i], fewest);
	return n;
}

static bool switch_named(const struct efa_topo_tree *t, const char *name)
{
	for (size_t i = 0; i < t->nswitches; i++)
		if (!strcmp(t->switches[i].name, name) ||
		    (t->switches[i].layer == 0 && !strncmp(name, t->switches[i].name, strlen(t->switches[i].name)) &&
		     !strcmp(name + strlen(t->switches[i].name), EFA_TOPO_NO_LAYERS_SUFFIX)))
			return true;
	return false;
}

/* Slurm 26.05 reads a BlockName= without Nodes=; 24.11 refuses it ("block
 * ... hasn't got nodes"). Releases between were not measured. */
static bool takes_empty_blocks(const char *slurm_version)
{
	unsigned major = 0, minor = 0;

	return slurm_version && sscanf(slurm_version, "%u.%u", &major, &minor) == 2 &&
	       (major > 26 || (major == 26 && minor >= 5));
}

/*
 * topology/block joins 2, 4, 8... blocks that stand side by side in the
 * file (from the first, at multiples of their count) into larger blocks,
 * one level per size in BlockSizes. For no joined block to span two zones,
 * every zone must start at a multiple of the largest join: where Slurm
 * takes empty blocks, each zone is padded to the largest zone's count
 * rounded up to a power of two; elsewhere the joins stop at the largest
 * power of two that divides every zone's count. The base size is the
 * fewest nodes a block holds (Slurm requires each block to hold at least
 * that many).
 */
static int render_blocks(const struct efa_topo_tree *t, FILE *out)
{
	bool pad = takes_empty_blocks(t->cluster->slurm_version);
	size_t fewest = 0, most = 0, counts = 0, span = 1;

	for (size_t z = 0; z < t->nzones; z++) {
		size_t n = count_blocks(t, z, &fewest);

		if (n > most)
			most = n;
		counts |= n;
	}
	if (!fewest)
		return 0;	/* no nodes: Slurm refuses blocks without any */
	if (pad)
		while (span < most)
			span *= 2;
	else
		span = counts & -counts;
	fprintf(out, "BlockSizes=");
	for (size_t size = 1; size <= span; size *= 2)
		fprintf(out, "%s%zu", size > 1 ? "," : "", fewest * size);
	fprintf(out, "\n");
	for (size_t z = 0; z < t->nzones; z++) {
		size_t n = count_blocks(t, z, &fewest), empty = 0;

		if (render_switch(t, z, EFA_TOPOLOGY_BLOCK, out))
			return -1;
		for (; pad && n < span; n++) {
			char name[EFA_ERROR_MAX];

			do
				snprintf(name, sizeof(name), "%s-empty%zu", t->switches[z].name, ++empty);
			while (switch_named(t, name));
			fprintf(out, "BlockName=%s\n", name);
		}
	}
	return 0;
}

char *efa_topology_render(const struct efa_topo_tree *t, enum efa_topology format)
{
	const struct efa_cluster *c = t->cluster;
	char *text = NULL;
	size_t size;
	int rc = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return NULL;
	fprintf(out, "# topology.conf for Slurm's %s, written by slurm-efa sync from the\n# nodes' network layer features (",
		format == EFA_TOPOLOGY_BLOCK ? "topology/block (23.11 and later)" : "topology/tree");
	for (size_t i = 0; i < c->nlayers; i++)
		fprintf(out, "%s%s", i ? "," : "", c->layer_prefixes[i]);
	fprintf(out, "): changes made here are overwritten.\n# nodes: %zu; zones: %zu; without all layer features: %zu; with contradicting ones: %zu\n",
		c->nnodes, t->nzones, t->without_layers, t->inconsistent);
	if (format == EFA_TOPOLOGY_BLOCK)
		rc = render_blocks(t, out);
	for (size_t i = 0; format == EFA_TOPOLOGY_TREE && !rc && i < t->nzones; i++)
		rc = render_switch(t, i, EFA_TOPOLOGY_TREE, out);
	if (fclose(out) || rc) {
		free(text);
		return NULL;
	}
	return text;
}
