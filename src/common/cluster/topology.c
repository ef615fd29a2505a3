/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <search.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster/hostlist.h"
#include "common/cluster/topology.h"

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
		struct efa_topo_block *grown = realloc(t->blocks, (t->nblocks + 1) * sizeof(*grown));

		if (!grown)
			return -1;
		t->blocks = grown;
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

/* Nodes (n of them, cluster indexes) as a hostlist expression, those in
 * capacity blocks left out when loose_only. NULL on ENOMEM. */
static char *hostlist_of(const struct efa_topo_tree *t, const size_t *nodes, size_t n,
			 bool loose_only)
{
	char **names = calloc(n ? n : 1, sizeof(*names)), *hl;
	size_t k = 0;

	if (!names)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!loose_only || !t->in_block[nodes[i]])
			names[k++] = t->cluster->nodes[nodes[i]].name;
	hl = efa_hostlist_compress(names, k);
	free(names);
	return hl;
}

char *efa_topology_nodes(const struct efa_topo_tree *t, const struct efa_topo_switch *s)
{
	return hostlist_of(t, s->nodes, s->nnodes, false);
}

/* The nodes of s that topology/block gives its leaf's block. */
static size_t loose_nodes(const struct efa_topo_tree *t, const struct efa_topo_switch *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nnodes; i++)
		n += !t->in_block[s->nodes[i]];
	return n;
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
 * The two syntaxes one topology is written in: topology.conf lines, or
 * the entries of one topology of topology.yaml.
 */
struct writer {
	FILE *out;
	bool yaml;
};

/* "key: value" as YAML, the value (a then b) double-quoted: the names are
 * Slurm's, but a quote or a backslash must never end the string early. */
static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
}

static void put_yaml(FILE *out, const char *key, const char *a, const char *b)
{
	fprintf(out, "%s: \"", key);
	put_escaped(out, a);
	put_escaped(out, b);
	fputs("\"\n", out);
}

/* One switch (topology/tree) or block; switches and nodes may be NULL. */
static void put_unit(const struct writer *w, enum efa_topology kind, const char *name,
		     const char *suffix, const char *switches, const char *nodes)
{
	bool block = kind == EFA_TOPOLOGY_BLOCK;

	if (!w->yaml) {
		fprintf(w->out, "%s=%s%s", block ? "BlockName" : "SwitchName", name, suffix);
		if (switches)
			fprintf(w->out, " Switches=%s", switches);
		if (nodes)
			fprintf(w->out, " Nodes=%s", nodes);
		fputc('\n', w->out);
		return;
	}
	put_yaml(w->out, block ? "      - block" : "      - switch", name, suffix);
	if (switches)
		put_yaml(w->out, "        children", switches, "");
	if (nodes)
		put_yaml(w->out, "        nodes", nodes, "");
}

/*
 * s and everything below it, top down: for topology/tree its switches and
 * their leaves, for topology/block only the leaves (less the nodes of
 * capacity blocks), in tree order, so that leaves under one layer-2
 * switch stand side by side.
 */
static int render_switch(const struct efa_topo_tree *t, size_t idx, enum efa_topology kind,
			 const struct writer *w)
{
	const struct efa_topo_switch *s = &t->switches[idx];
	bool block = kind == EFA_TOPOLOGY_BLOCK;
	char *hl;

	if (s->nchildren && !block) {
		if (!(hl = compress_children(t, s)))
			return -1;
		put_unit(w, kind, s->name, "", hl, NULL);
		free(hl);
	}
	if (block ? loose_nodes(t, s) : s->nnodes) {
		if (!(hl = hostlist_of(t, s->nodes, s->nnodes, block)))
			return -1;
		put_unit(w, kind, s->name, s->nchildren ? EFA_TOPO_NO_LAYERS_SUFFIX : "", NULL, hl);
		free(hl);
	}
	for (size_t i = 0; i < s->nchildren; i++)
		if (render_switch(t, s->children[i], kind, w))
			return -1;
	return 0;
}

static void count_block(size_t nodes, size_t *n, size_t *fewest)
{
	if (!nodes)
		return;
	(*n)++;
	if (!*fewest || nodes < *fewest)
		*fewest = nodes;
}

/* The blocks of the switches holding loose nodes below (and at) s, and
 * the fewest nodes one holds. */
static size_t count_switch_blocks(const struct efa_topo_tree *t, size_t idx, size_t *fewest)
{
	const struct efa_topo_switch *s = &t->switches[idx];
	size_t n = 0;

	count_block(loose_nodes(t, s), &n, fewest);
	for (size_t i = 0; i < s->nchildren; i++)
		n += count_switch_blocks(t, s->children[i], fewest);
	return n;
}

/* A zone's blocks: its capacity blocks and its switches' leaves. */
static size_t count_blocks(const struct efa_topo_tree *t, size_t zone, size_t *fewest)
{
	size_t n = count_switch_blocks(t, zone, fewest);

	for (size_t i = 0; i < t->nblocks; i++)
		if (t->blocks[i].zone == zone)
			count_block(t->blocks[i].nnodes, &n, fewest);
	return n;
}

/* A zone's capacity blocks, first in the zone: each is its own unit. */
static int render_capacity_blocks(const struct efa_topo_tree *t, size_t zone,
				  const struct writer *w)
{
	for (size_t i = 0; i < t->nblocks; i++) {
		const struct efa_topo_block *k = &t->blocks[i];
		char *hl;

		if (k->zone != zone)
			continue;
		if (!(hl = hostlist_of(t, k->nodes, k->nnodes, false)))
			return -1;
		put_unit(w, EFA_TOPOLOGY_BLOCK, k->name, "", NULL, hl);
		free(hl);
	}
	return 0;
}

static bool switch_named(const struct efa_topo_tree *t, const char *name)
{
	for (size_t i = 0; i < t->nblocks; i++)
		if (!strcmp(t->blocks[i].name, name))
			return true;
	for (size_t i = 0; i < t->nswitches; i++)
		if (!strcmp(t->switches[i].name, name) ||
		    (t->switches[i].layer == 0 && !strncmp(name, t->switches[i].name, strlen(t->switches[i].name)) &&
		     !strcmp(name + strlen(t->switches[i].name), EFA_TOPO_NO_LAYERS_SUFFIX)))
			return true;
	return false;
}

/* Whether version ("26.05.3") is major.minor or later; false when unknown. */
static bool slurm_at_least(const char *version, unsigned major, unsigned minor)
{
	unsigned ma = 0, mi = 0;

	return version && sscanf(version, "%u.%u", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

/* Slurm 26.05 reads a block without nodes; 24.11 refuses it ("block ...
 * hasn't got nodes"). Releases between were not measured. */
static bool takes_empty_blocks(const char *slurm_version)
{
	return slurm_at_least(slurm_version, 26, 5);
}

bool efa_slurm_reads_topology_yaml(const char *slurm_version)
{
	return !slurm_version || slurm_at_least(slurm_version, 25, 5);
}

enum efa_topology_format efa_topology_format_for(enum efa_topology_format configured,
						 const char *path, const char *slurm_version)
{
	size_t len = path ? strlen(path) : 0;

	if (configured != EFA_TOPOLOGY_FORMAT_AUTO)
		return configured;
	if (len > 5 && !strcmp(path + len - 5, ".yaml"))
		return EFA_TOPOLOGY_FORMAT_YAML;
	if (len > 5 && !strcmp(path + len - 5, ".conf"))
		return EFA_TOPOLOGY_FORMAT_CONF;
	return slurm_version && efa_slurm_reads_topology_yaml(slurm_version) ?
	       EFA_TOPOLOGY_FORMAT_YAML : EFA_TOPOLOGY_FORMAT_CONF;
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
 * that many). Nothing is written when no block holds a node: Slurm
 * refuses that.
 */
static int render_blocks(const struct efa_topo_tree *t, const struct writer *w)
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
		return 0;
	if (pad)
		while (span < most)
			span *= 2;
	else
		span = counts & -counts;
	fputs(w->yaml ? "    block_sizes:\n" : "BlockSizes=", w->out);
	for (size_t size = 1; size <= span; size *= 2) {
		if (w->yaml)
			fprintf(w->out, "      - %zu\n", fewest * size);
		else
			fprintf(w->out, "%s%zu", size > 1 ? "," : "", fewest * size);
	}
	fputs(w->yaml ? "    blocks:\n" : "\n", w->out);
	for (size_t z = 0; z < t->nzones; z++) {
		size_t n = count_blocks(t, z, &fewest), empty = 0;

		if (render_capacity_blocks(t, z, w) || render_switch(t, z, EFA_TOPOLOGY_BLOCK, w))
			return -1;
		for (; pad && n < span; n++) {
			char name[EFA_ERROR_MAX];

			do
				snprintf(name, sizeof(name), "%s-empty%zu", t->switches[z].name, ++empty);
			while (switch_named(t, name));
			put_unit(w, EFA_TOPOLOGY_BLOCK, name, "", NULL, NULL);
		}
	}
	return 0;
}

static void render_header(const struct efa_topo_tree *t, const char *what, FILE *out)
{
	const struct efa_cluster *c = t->cluster;

	fprintf(out, "# %s, written by slurm-efa sync from the\n# nodes' network layer features (",
		what);
	for (size_t i = 0; i < c->nlayers; i++)
		fprintf(out, "%s%s", i ? "," : "", c->layer_prefixes[i]);
	fprintf(out, "%s%s): changes made here are overwritten.\n# nodes: %zu; zones: %zu; capacity blocks: %zu; without layer features: %zu; with contradicting ones: %zu\n",
		c->block_prefix ? "; capacity blocks " : "", c->block_prefix ? c->block_prefix : "",
		c->nnodes, t->nzones, t->nblocks, t->without_layers, t->inconsistent);
}

static int render_tree(const struct efa_topo_tree *t, const struct writer *w)
{
	for (size_t i = 0; i < t->nzones; i++)
		if (render_switch(t, i, EFA_TOPOLOGY_TREE, w))
			return -1;
	return 0;
}

/* The text of out once closed (open_memstream sets *text then), or NULL
 * when writing it failed (rc, or a write the stream could not grow for:
 * a part of a topology is never one). */
static char *closed(FILE *out, char **text, int rc)
{
	bool failed = ferror(out);

	if (fclose(out) || rc || failed) {
		free(*text);
		return NULL;
	}
	return *text;
}

char *efa_topology_render(const struct efa_topo_tree *t, enum efa_topology format)
{
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);
	struct writer w = { .out = out };
	int rc;

	if (!out)
		return NULL;
	render_header(t, format == EFA_TOPOLOGY_BLOCK ?
			 "topology.conf for Slurm's topology/block (23.11 and later)" :
			 "topology.conf for Slurm's topology/tree", out);
	rc = format == EFA_TOPOLOGY_BLOCK ? render_blocks(t, &w) : render_tree(t, &w);
	return closed(out, &text, rc);
}

/*
 * One topology of topology.yaml. A cluster without nodes gets a flat one
 * of the same name, so that the partitions that name it still find it.
 */
static int render_yaml_topology(const struct efa_topo_tree *t, enum efa_topology kind,
				bool cluster_default, const struct writer *w)
{
	size_t fewest = 0;

	for (size_t z = 0; z < t->nzones; z++)
		count_blocks(t, z, &fewest);
	fprintf(w->out, "- topology: %s\n  cluster_default: %s\n",
		kind == EFA_TOPOLOGY_BLOCK ? EFA_TOPO_YAML_BLOCK : EFA_TOPO_YAML_TREE,
		cluster_default ? "true" : "false");
	if (!fewest) {
		fputs("  flat: true\n", w->out);
		return 0;
	}
	if (kind == EFA_TOPOLOGY_BLOCK) {
		fputs("  block:\n", w->out);
		return render_blocks(t, w);
	}
	fputs("  tree:\n    switches:\n", w->out);
	return render_tree(t, w);
}

char *efa_topology_render_yaml(const struct efa_topo_tree *t, enum efa_topology cluster_default)
{
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);
	struct writer w = { .out = out, .yaml = true };
	int rc;

	if (!out)
		return NULL;
	render_header(t, "topology.yaml for Slurm 25.05 and later (partitions pick one with Topology=)",
		      out);
	fputs("---\n", out);
	rc = render_yaml_topology(t, EFA_TOPOLOGY_TREE, cluster_default != EFA_TOPOLOGY_BLOCK, &w);
	if (!rc)
		rc = render_yaml_topology(t, EFA_TOPOLOGY_BLOCK, cluster_default == EFA_TOPOLOGY_BLOCK,
					  &w);
	return closed(out, &text, rc);
}
