/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/topology/hostlist.h"
#include "common/topology/topology.h"

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
	bool pad = efa_slurm_takes_empty_blocks(t->cluster->slurm_version);
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
