/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa hostfile: a job's hosts in the order --efa-rank-order=topology
 * numbers them (rank_order.h), for mpirun --hostfile: Open MPI maps ranks
 * to a hostfile's hosts in its order (by slot, and one rank per line with
 * --map-by seq). The topology is the file Slurm reads, found from
 * scontrol's own configuration, so that the order is the one the plugin
 * gives the job's tasks.
 */
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

const char cmd_hostfile_usage[] =
	"usage: slurm-efa hostfile [--job ID | --nodes LIST] [--slots N] [--seq]\n"
	"                          [--order topology|slurm] [--topology FILE]\n";

struct request {
	const char *job;
	const char *nodes;
	const char *topology;
	long slots;		/* 0: no slots= */
	int seq;		/* each host once per slot, for --map-by seq */
	enum efa_rank_order order;
};

static int parse(int argc, char **argv, struct request *req)
{
	struct efa_error err;

	req->order = EFA_RANK_ORDER_TOPOLOGY;
	for (int i = 1; i < argc; i++) {
		static const char *const names[] = { "--job", "--nodes", "--topology", "--order", "--slots" };
		const char *arg = argv[i], *next = NULL;
		int taken = 0, used = 0;
		size_t k;
		char *end;

		if (!strcmp(arg, "--seq")) {
			req->seq = 1;
			continue;
		}
		for (k = 0; k < sizeof(names) / sizeof(names[0]) && !taken; k++)
			taken = cli_option_value(arg, argv[i + 1], names[k], &next, &used);
		if (taken <= 0 || (used == 2 && next[0] == '-')) {
			fprintf(stderr, "slurm-efa hostfile: %s: unknown option, or it needs a value\n%s", arg, cmd_hostfile_usage);
			return -1;
		}
		i += used - 1;
		arg = names[k - 1];
		if (!strcmp(arg, "--job")) {
			req->job = next;
		} else if (!strcmp(arg, "--nodes")) {
			req->nodes = next;
		} else if (!strcmp(arg, "--topology")) {
			req->topology = next;
		} else if (!strcmp(arg, "--order")) {
			if (efa_rank_order_parse(next, &req->order, &err)) {
				fprintf(stderr, "slurm-efa hostfile: %s\n", err.msg);
				return -1;
			}
		} else if (!strcmp(arg, "--slots")) {
			req->slots = strtol(next, &end, 10);
			if (*end || req->slots < 1 || req->slots > 100000) {
				fprintf(stderr, "slurm-efa hostfile: --slots '%s': use a whole number from 1, the ranks per host\n",
					next);
				return -1;
			}
		} else {
			fprintf(stderr, "slurm-efa hostfile: unknown option %s\n%s", arg, cmd_hostfile_usage);
			return -1;
		}
	}
	if (req->job && req->nodes) {
		fprintf(stderr, "slurm-efa hostfile: --job and --nodes: give one\n%s", cmd_hostfile_usage);
		return -1;
	}
	return 0;
}

/* order: the nodes in topology order, or Slurm's when that cannot be had
 * (said on stderr: the hostfile is still good, only slower). */
static void topology_order(const struct request *req, char **names, size_t n, size_t *order)
{
	char path[PATH_MAX_LEN];
	struct efa_topo_map map;
	struct efa_error err;

	for (size_t i = 0; i < n; i++)
		order[i] = i;
	if (req->order != EFA_RANK_ORDER_TOPOLOGY)
		return;
	if (req->topology)
		snprintf(path, sizeof(path), "%s", req->topology);
	else if (cli_slurm_topology_path(path, sizeof(path)))
		goto fallback;
	if (efa_topo_map_load(path, &map, &err)) {
		fprintf(stderr, "slurm-efa hostfile: warning: %s\n", err.msg);
		goto fallback;
	}
	if (efa_rank_order(&map, names, n, order, &err)) {
		fprintf(stderr, "slurm-efa hostfile: warning: %s: %s\n", path, err.msg);
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		efa_topo_map_clear(&map);
		goto fallback;
	}
	efa_topo_map_clear(&map);
	return;
fallback:
	fprintf(stderr, "slurm-efa hostfile: warning: hosts in Slurm's order, not the topology's\n");
}

int cmd_hostfile(int argc, char **argv, const struct cli_common *common)
{
	char list[64 * 1024], **names = NULL;
	struct request req = { 0 };
	struct efa_error err;
	size_t n = 0, *order = NULL;
	int rc = EXIT_REFUSED;

	if (common->json) {
		fprintf(stderr, "slurm-efa hostfile: --json: a hostfile is plain text, one host a line\n%s", cmd_hostfile_usage);
		return EXIT_USAGE;
	}
	if (parse(argc, argv, &req))
		return EXIT_USAGE;
	if (cli_job_nodes(req.job, req.nodes, list, sizeof(list)))
		return EXIT_REFUSED;
	if (efa_hostlist_expand(list, &names, &n, &err)) {
		fprintf(stderr, "slurm-efa hostfile: the job's nodes '%.200s': %s\n", list, err.msg);
		return EXIT_REFUSED;
	}
	if (!(order = calloc(n ? n : 1, sizeof(*order)))) {
		fprintf(stderr, "slurm-efa hostfile: out of memory\n");
		goto out;
	}
	topology_order(&req, names, n, order);
	for (size_t i = 0; i < n; i++) {
		const char *host = names[order[i]];

		if (req.seq)
			for (long s = 0; s < (req.slots ? req.slots : 1); s++)
				printf("%s\n", host);
		else if (req.slots)
			printf("%s slots=%ld\n", host, req.slots);
		else
			printf("%s\n", host);
	}
	rc = fflush(stdout) ? EXIT_REFUSED : 0;
out:
	free(order);
	efa_strv_free(names);
	return rc;
}
