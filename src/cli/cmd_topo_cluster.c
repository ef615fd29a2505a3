/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa topo --cluster: the network tree Slurm gets from slurm-efa
 * sync (zone -> layer 1 -> ... -> the nodes' own switch -> nodes), with
 * the nodes' states and the zone's capacity blocks (UltraServers), as
 * slurmrestd or the snapshot sees it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/topology/topology.h"
#include "cli.h"

static void print_nodes(const struct efa_topo_tree *t, const struct efa_topo_switch *s, int depth)
{
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct efa_cluster_node *n = &t->cluster->nodes[s->nodes[i]];

		printf("%*s%-16s %s\n", depth * 2, "", n->name, n->state);
	}
}

static int print_switch(const struct efa_topo_tree *t, size_t idx, int depth)
{
	const struct efa_topo_switch *s = &t->switches[idx];
	char *names = NULL;

	if (s->nnodes && !(names = efa_topology_nodes(t, s)))
		return -1;
	if (s->layer) {
		printf("%*slayer %zu %s%s%s\n", depth * 2, "", s->layer, s->name, names ? ": " : "",
		       names ? names : "");
		print_nodes(t, s, depth + 1);
	} else if (s->nnodes) {
		printf("%*soutside the layer tree: %s\n", (depth + 1) * 2, "", names);
		print_nodes(t, s, depth + 2);
	}
	free(names);
	for (size_t i = 0; i < s->nchildren; i++)
		if (print_switch(t, s->children[i], depth + 1))
			return -1;
	return 0;
}

static void zone_counts(const struct efa_cluster *c, const char *zone, size_t *nodes,
			size_t *usable)
{
	*nodes = *usable = 0;
	for (size_t i = 0; i < c->nnodes; i++)
		if (zone ? c->nodes[i].zone && !strcmp(c->nodes[i].zone, zone) : !c->nodes[i].zone) {
			(*nodes)++;
			*usable += c->nodes[i].usable;
		}
}

static int print_text(const struct efa_topo_tree *t)
{
	const struct efa_cluster *c = t->cluster;
	size_t nodes, usable;

	for (size_t z = 0; z < t->nzones; z++) {
		const struct efa_topo_switch *s = &t->switches[z];

		zone_counts(c, s->zone, &nodes, &usable);
		printf("%s%s: %zu node%s, %zu usable\n", s->zone ? "zone " : "",
		       s->zone ? s->zone : "no zone", nodes, nodes == 1 ? "" : "s", usable);
		if (print_switch(t, z, 0))
			return -1;
		for (size_t i = 0; i < t->nblocks; i++) {
			const struct efa_topo_block *k = &t->blocks[i];
			struct efa_topo_switch as_switch = { .nodes = k->nodes, .nnodes = k->nnodes };
			char *names;

			if (k->zone != z)
				continue;
			if (!(names = efa_topology_nodes(t, &as_switch)))
				return -1;
			printf("  capacity block %s: %s\n", k->name, names);
			free(names);
		}
	}
	printf("\n%zu nodes; %zu without layer features", c->nnodes, t->without_layers);
	for (size_t i = 0; i < c->nlayers; i++)
		printf("%s%s", i ? "," : " (", c->layer_prefixes[i]);
	printf("%s, %zu with contradicting ones%s%s\n", c->nlayers ? ")" : "", t->inconsistent,
	       t->inconsistent ? ": " : "", t->note);
	return 0;
}

static json_t *switch_json(const struct efa_topo_tree *t, size_t idx)
{
	const struct efa_topo_switch *s = &t->switches[idx];
	json_t *nodes = json_array(), *below = json_array();

	for (size_t i = 0; nodes && i < s->nnodes; i++) {
		const struct efa_cluster_node *n = &t->cluster->nodes[s->nodes[i]];

		json_array_append_new(nodes, json_pack("{s:s, s:s, s:b}", "name", n->name, "state",
						       n->state, "usable", n->usable));
	}
	for (size_t i = 0; below && i < s->nchildren; i++)
		json_array_append_new(below, switch_json(t, s->children[i]));
	return json_pack("{s:s, s:I, s:o*, s:o*}", "name", s->name, "layer", (json_int_t)s->layer,
			 "switches", below, "nodes", nodes);
}

static json_t *blocks_json(const struct efa_topo_tree *t, size_t zone)
{
	json_t *blocks = json_array();

	for (size_t i = 0; blocks && i < t->nblocks; i++) {
		const struct efa_topo_block *k = &t->blocks[i];
		json_t *nodes = json_array();

		if (k->zone != zone)
			continue;
		for (size_t n = 0; nodes && n < k->nnodes; n++)
			json_array_append_new(nodes, json_string(t->cluster->nodes[k->nodes[n]].name));
		json_array_append_new(blocks, json_pack("{s:s, s:o*}", "name", k->name, "nodes", nodes));
	}
	return blocks;
}

static int print_json(const struct efa_topo_tree *t)
{
	const struct efa_cluster *c = t->cluster;
	json_t *zones = json_array(), *prefixes = json_array();

	for (size_t i = 0; prefixes && i < c->nlayers; i++)
		json_array_append_new(prefixes, json_string(c->layer_prefixes[i]));
	for (size_t z = 0; zones && z < t->nzones; z++) {
		json_t *sw = switch_json(t, z);

		if (sw) {
			json_object_set_new(sw, "zone", t->switches[z].zone ? json_string(t->switches[z].zone) :
					    json_null());
			json_object_set_new(sw, "capacity_blocks", blocks_json(t, z));
		}
		json_array_append_new(zones, sw);
	}
	return cli_print_json(json_pack("{s:o*, s:o*, s:I, s:I, s:I, s:s, s:I}",
					"layer_prefixes", prefixes, "zones", zones,
					"nodes", (json_int_t)c->nnodes,
					"without_layers", (json_int_t)t->without_layers,
					"inconsistent", (json_int_t)t->inconsistent, "note", t->note,
					"generated", (json_int_t)c->generated));
}

int cmd_topo_cluster(int argc, char **argv, const struct cli_common *common)
{
	struct cli_source src = { 0 };
	struct efa_cluster cluster = { 0 };
	struct efa_topo_tree tree;
	struct efa_config *cfg = NULL;
	/* --cluster says which view; it takes no value. */
	const struct cli_own_option own[] = { { "--cluster", NULL }, { NULL, NULL } };
	struct efa_error err;
	int rc;

	/* For a job or a node list: its ring's crossings (cmd_topo_ring.c). */
	for (int i = 1; i < argc; i++) {
		const char *value;
		int used;

		if (cli_option_value(argv[i], "", "--job", &value, &used) > 0 ||
		    cli_option_value(argv[i], "", "--nodes", &value, &used) > 0)
			return cmd_topo_ring(argc, argv, common);
	}
	if (cli_source_args(argc, argv, &src, own, "topo", cmd_topo_usage))
		return EXIT_USAGE;
	rc = cli_cluster_load(common, &src, &cfg, &cluster);
	if (!rc && efa_topology_build(&cluster, &tree, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		rc = EXIT_REFUSED;
	} else if (!rc) {
		if (common->json ? print_json(&tree) : print_text(&tree)) {
			fprintf(stderr, "slurm-efa: out of memory\n");
			rc = EXIT_REFUSED;
		}
		efa_topology_clear(&tree);
	}
	efa_cluster_clear(&cluster);
	efa_config_free(cfg);
	return rc;
}
