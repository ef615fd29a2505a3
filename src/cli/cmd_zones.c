/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa zones: Availability Zones, their nodes and partitions. */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

const char cmd_zones_usage[] =
	"usage: slurm-efa zones [--partition P] [--snapshot] [--json] [--config FILE]\n"
	"                       [--url URL] [--user U] [--token-file F] [--timeout MS]\n"
	"                       [--api-version vX.Y.Z]\n";

static bool in_partition(const struct efa_cluster_node *n, const char *partition)
{
	if (!partition)
		return true;
	for (char *const *p = n->partitions; p && *p; p++)
		if (!strcmp(*p, partition))
			return true;
	return false;
}

/* Nodes and usable nodes of a zone (NULL: nodes without one) in a partition. */
static void count(const struct efa_cluster *c, const char *zone, const char *partition,
		  size_t *nodes, size_t *usable)
{
	*nodes = *usable = 0;
	for (size_t i = 0; i < c->nnodes; i++) {
		const struct efa_cluster_node *n = &c->nodes[i];

		if (!in_partition(n, partition) ||
		    (zone ? !n->zone || strcmp(n->zone, zone) : n->zone != NULL))
			continue;
		(*nodes)++;
		*usable += n->usable;
	}
}

static char *join_partitions(char *const *v, char *buf, size_t size)
{
	buf[0] = '\0';
	for (char *const *p = v; p && *p; p++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", p == v ? "" : ",", *p);
	return buf;
}

static int print(const struct efa_cluster *c, const char *partition, int json)
{
	char parts[1024];
	size_t nodes, usable;
	/* Only JSON output builds the array, so text output has none to free. */
	json_t *zones = NULL;

	if (json && !(zones = json_array()))
		return -1;
	if (!json)
		printf("%-16s %-22s %5s %6s  %s\n", "ZONE", "FEATURE", "NODES", "USABLE", "PARTITIONS");
	for (size_t i = 0; i < c->nzones; i++) {
		const struct efa_cluster_zone *z = &c->zones[i];

		count(c, z->name, partition, &nodes, &usable);
		if (partition && !nodes)
			continue;
		if (json)
			json_array_append_new(zones, json_pack("{s:s, s:s, s:I, s:I, s:o}", "zone", z->name,
							       "feature", z->feature, "nodes", (json_int_t)nodes,
							       "usable", (json_int_t)usable, "partitions",
							       json_string(join_partitions(z->partitions, parts,
											   sizeof(parts)))));
		else
			printf("%-16s %-22s %5zu %6zu  %s\n", z->name, z->feature, nodes, usable,
			       join_partitions(z->partitions, parts, sizeof(parts)));
	}
	count(c, NULL, partition, &nodes, &usable);
	if (json) {
		json_t *doc = json_pack("{s:o, s:{s:I, s:I}, s:I}", "zones", zones, "no_zone",
					"nodes", (json_int_t)nodes, "usable", (json_int_t)usable,
					"generated", (json_int_t)c->generated);

		if (cli_print_json(doc))
			return -1;
	} else if (nodes) {
		printf("%-16s %-22s %5zu %6zu  (nodes without a %s feature: they never take single-zone jobs)\n",
		       "-", "-", nodes, usable, c->zone_prefix);
	}
	return 0;
}

int cmd_zones(int argc, char **argv, const struct cli_common *common)
{
	struct cli_source src = { 0 };
	struct efa_cluster cluster = { 0 };
	struct efa_config *cfg = NULL;
	const char *partition = NULL;
	const struct cli_own_option own[] = { { "--partition", &partition }, { NULL, NULL } };
	int rc;

	if (cli_source_args(argc, argv, &src, own, "zones", cmd_zones_usage))
		return EXIT_USAGE;
	rc = cli_cluster_load(common, &src, &cfg, &cluster);
	if (!rc)
		rc = print(&cluster, partition, common->json) ? EXIT_REFUSED : 0;
	efa_cluster_clear(&cluster);
	efa_config_free(cfg);
	return rc;
}
