/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What --efa-rank-order=topology gains and costs, on generated EC2-like
 * trees (3 or 4 layers, up to LEAF_NODES instances under a leaf, FAN
 * switches under each switch above) whose host names ("ip-10-A-B-C", as
 * EC2 names instances) follow no layout.
 *
 *   bench/rank_order [--rounds R] DIR
 *
 * Prints, for 64, 256 and 1,024 nodes and each layer:
 *   crossings LAYERS NODES LAYER SLURM TOPOLOGY LIMIT
 * the ring edges that cross the layer in Slurm's order (by name), in
 * topology order, and the fewest any order can have. Then, for a 1,024-node
 * step of the 4-layer tree, R rounds of alternating samples (microseconds):
 *   order US    read the topology file, expand the node list, order them
 *   read US     the baseline: read the file and expand the list only
 * DIR holds the generated topology files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/strutil.h"
#include "common/topology/hostlist.h"
#include "common/topology/rank_order.h"
#include "common/topology/topology_read.h"

#define LEAF_NODES 16
#define FAN 4
#define MAX_LAYERS 4

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Writes the tree of n nodes to path and returns the step's node list in
 * Slurm's order (its hostlist expression). */
static char *generate(const char *path, int layers, size_t n, unsigned seed)
{
	size_t count[MAX_LAYERS + 1], leaves = (n + LEAF_NODES - 1) / LEAF_NODES * 2;
	size_t *fill = calloc(leaves, sizeof(*fill)), *leaf_of = calloc(n, sizeof(*leaf_of));
	char **names = calloc(n + 1, sizeof(*names)), *list;
	FILE *f = fopen(path, "w");

	if (!fill || !leaf_of || !names || !f) {
		perror(path);
		exit(1);
	}
	srand(seed);
	/* Instances land in leaves at random (half full on average). */
	for (size_t i = 0; i < n; i++) {
		size_t l;

		do
			l = (size_t)rand() % leaves;
		while (fill[l] == LEAF_NODES);
		fill[l]++;
		leaf_of[i] = l;
		/* Unique by i; the random third part scatters Slurm's order. */
		if (asprintf(&names[i], "ip-10-%d-%zu-%zu", rand() % 4, i / 250, i % 250 + 1) < 0)
			exit(1);
	}
	count[layers] = leaves;
	for (int k = layers - 1; k >= 1; k--)
		count[k] = count[k + 1] / FAN ? count[k + 1] / FAN : 1;
	for (int k = 1; k < layers; k++)
		for (size_t p = 0; p < count[k]; p++) {
			fprintf(f, "SwitchName=nn%d-%zu Switches=", k, p);
			for (size_t c = 0, first = 1; c < count[k + 1]; c++)
				if (c % count[k] == p) {
					fprintf(f, "%snn%d-%zu", first ? "" : ",", k + 1, c);
					first = 0;
				}
			fputc('\n', f);
		}
	for (size_t l = 0; l < leaves; l++) {
		if (!fill[l])
			continue;
		fprintf(f, "SwitchName=nn%d-%zu Nodes=", layers, l);
		for (size_t i = 0, first = 1; i < n; i++)
			if (leaf_of[i] == l) {
				fprintf(f, "%s%s", first ? "" : ",", names[i]);
				first = 0;
			}
		fputc('\n', f);
	}
	if (fclose(f))
		exit(1);
	/* Slurm's order: its node list, sorted by name. */
	list = efa_hostlist_compress(names, n);
	efa_strv_free(names);
	free(fill);
	free(leaf_of);
	return list;
}

/* Reads path and list, and orders (or, baseline, only reads). */
static int step(const char *path, const char *list, int order_them)
{
	struct efa_topo_map m;
	struct efa_error err;
	char **names;
	size_t n, *order;
	int rc = -1;

	if (efa_topo_map_load(path, &m, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	if (!efa_hostlist_expand(list, &names, &n, &err)) {
		order = malloc(n * sizeof(*order));
		rc = order && (!order_them || !efa_rank_order(&m, names, n, order, &err)) ? 0 : -1;
		free(order);
		efa_strv_free(names);
	}
	efa_topo_map_clear(&m);
	return rc;
}

static int crossings(const char *path, const char *list, int layers, size_t n)
{
	size_t cross_slurm[MAX_LAYERS], cross_topo[MAX_LAYERS], limit[MAX_LAYERS], *order, *slurm;
	struct efa_topo_map m;
	struct efa_error err;
	char **names;
	size_t got;

	if (efa_topo_map_load(path, &m, &err) || efa_hostlist_expand(list, &names, &got, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	order = malloc(got * sizeof(*order));
	slurm = malloc(got * sizeof(*slurm));
	for (size_t i = 0; i < got; i++)
		slurm[i] = i;
	if (got != n || efa_rank_order(&m, names, got, order, &err) ||
	    efa_ring_crossings(&m, names, slurm, got, cross_slurm, limit, &err) ||
	    efa_ring_crossings(&m, names, order, got, cross_topo, limit, &err)) {
		fprintf(stderr, "%zu nodes of %zu: %s\n", got, n, err.msg);
		return -1;
	}
	for (int k = 0; k < layers && k < (int)m.depth; k++)
		printf("crossings %d %zu %d %zu %zu %zu\n", layers, n, k + 1, cross_slurm[k],
		       cross_topo[k], limit[k]);
	free(order);
	free(slurm);
	efa_strv_free(names);
	efa_topo_map_clear(&m);
	return 0;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 64, 256, 1024 };
	long rounds = 200;
	char path[4096], *list = NULL;
	const char *dir;

	if (argc == 4 && !strcmp(argv[1], "--rounds"))
		rounds = atol(argv[2]);
	if ((argc != 2 && argc != 4) || rounds < 1) {
		fprintf(stderr, "usage: bench/rank_order [--rounds R] DIR\n");
		return 2;
	}
	dir = argv[argc - 1];
	for (int layers = 3; layers <= MAX_LAYERS; layers++)
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			snprintf(path, sizeof(path), "%s/topology-%d-%zu.conf", dir, layers, sizes[s]);
			free(list);
			list = generate(path, layers, sizes[s], (unsigned)(layers * 7919 + (int)s));
			if (!list || crossings(path, list, layers, sizes[s]))
				return 1;
		}
	/* list and path: the last, the 4-layer tree of 1,024 nodes. */
	for (long r = 0; r < rounds; r++) {
		double t0 = now_us();

		if (step(path, list, 1))
			return 1;
		printf("order %.1f\n", now_us() - t0);
		t0 = now_us();
		if (step(path, list, 0))
			return 1;
		printf("read %.1f\n", now_us() - t0);
	}
	free(list);
	return 0;
}
