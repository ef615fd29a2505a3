/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa topo --cluster --job ID | --nodes LIST: how many edges of the
 * ring through the job's nodes (NCCL's: each rank's node to the next, the
 * last back to the first) cross each layer of the topology Slurm reads, in
 * Slurm's order and in the order --efa-rank-order=topology gives, beside
 * the least any order can have.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/topology/hostlist.h"
#include "common/topology/rank_order.h"
#include "common/topology/topology_read.h"
#include "cli.h"
#include "job_topology.h"

#define PATH_MAX_LEN 4096

struct ring {
	size_t layers;
	size_t *slurm, *topology, *least;
};

static int print_text(const char *path, const char *list, size_t n, const struct ring *r)
{
	printf("ring through %zu node%s (%s), topology %s\n", n, n == 1 ? "" : "s", list, path);
	printf("%-6s %14s %15s %6s\n", "layer", "Slurm's order", "topology order", "least");
	for (size_t k = 0; k < r->layers; k++)
		printf("%-6zu %14zu %15zu %6zu\n", k + 1, r->slurm[k], r->topology[k], r->least[k]);
	return 0;
}

static int print_json(const char *path, const char *list, size_t n, const struct ring *r)
{
	json_t *layers = json_array();

	for (size_t k = 0; layers && k < r->layers; k++)
		json_array_append_new(layers, json_pack("{s:I, s:I, s:I, s:I}", "layer", (json_int_t)k + 1,
							"slurm_order", (json_int_t)r->slurm[k],
							"topology_order", (json_int_t)r->topology[k],
							"least", (json_int_t)r->least[k]));
	return cli_print_json(json_pack("{s:s, s:s, s:I, s:o*}", "topology", path, "nodes", list,
					"count", (json_int_t)n, "layers", layers));
}

int cmd_topo_ring(int argc, char **argv, const struct cli_common *common)
{
	const char *job = NULL, *nodes = NULL, *topology = NULL;
	char list[64 * 1024], path[PATH_MAX_LEN], **names = NULL;
	size_t n = 0, *slurm = NULL, *order = NULL;
	struct efa_topo_map map = { 0 };
	struct ring ring = { 0 };
	struct efa_error err;
	int rc = EXIT_REFUSED;

	for (int i = 1; i < argc; i++) {
		static const char *const option_names[] = { "--job", "--nodes", "--topology" };
		const char **into[] = { &job, &nodes, &topology };
		int taken = 0, used = 0;

		if (!strcmp(argv[i], "--cluster"))
			continue;
		for (size_t k = 0; k < sizeof(option_names) / sizeof(option_names[0]) && !taken; k++)
			taken = cli_option_value(argv[i], argv[i + 1], option_names[k], into[k], &used);
		if (taken < 0)
			return EXIT_USAGE;
		if (!taken) {
			fprintf(stderr, "slurm-efa topo: unexpected argument '%s'\n%s", argv[i], cmd_topo_usage);
			return EXIT_USAGE;
		}
		i += used - 1;
	}
	if (job && nodes) {
		fprintf(stderr, "slurm-efa topo: --job and --nodes: give one\n%s", cmd_topo_usage);
		return EXIT_USAGE;
	}
	if (cli_job_nodes(job, nodes, list, sizeof(list)))
		return EXIT_REFUSED;
	if (topology)
		snprintf(path, sizeof(path), "%s", topology);
	else if (cli_slurm_topology_path(path, sizeof(path)))
		return EXIT_REFUSED;
	if (efa_topo_map_load(path, &map, &err) || efa_hostlist_expand(list, &names, &n, &err)) {
		fprintf(stderr, "slurm-efa topo: %s\n", err.msg);
		goto out;
	}
	ring.layers = map.depth;
	slurm = calloc(n ? n : 1, sizeof(*slurm));
	order = calloc(n ? n : 1, sizeof(*order));
	ring.slurm = calloc(map.depth + 1, sizeof(size_t));
	ring.topology = calloc(map.depth + 1, sizeof(size_t));
	ring.least = calloc(map.depth + 1, sizeof(size_t));
	if (!slurm || !order || !ring.slurm || !ring.topology || !ring.least) {
		fprintf(stderr, "slurm-efa topo: out of memory\n");
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		slurm[i] = i;
	if (efa_rank_order(&map, names, n, order, &err) ||
	    efa_ring_crossings(&map, names, slurm, n, ring.slurm, ring.least, &err) ||
	    efa_ring_crossings(&map, names, order, n, ring.topology, ring.least, &err)) {
		fprintf(stderr, "slurm-efa topo: %s: %s\n", path, err.msg);
		goto out;
	}
	rc = (common->json ? print_json : print_text)(path, list, n, &ring) ? EXIT_REFUSED : 0;
out:
	efa_topo_map_clear(&map);
	efa_strv_free(names);
	free(slurm);
	free(order);
	free(ring.slurm);
	free(ring.topology);
	free(ring.least);
	return rc;
}
