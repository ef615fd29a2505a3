/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compact snapshot as the bridge loads it, and a decision on it. The
 * input's checksum is set before it is read: a mutated file would
 * otherwise stop there, and what follows the checksum (the bounds of every
 * record and string) is what must hold for a file that passes it.
 */
#include "common/cluster/policy.h"
#include "common/cluster/snapshot.h"
#include "fuzz.h"

#define SUM_AT 24
#define SUMMED_FROM 32

/* Every string the cluster points to, read to its end (ASan sees a read
 * past the file). */
static size_t walk(const struct efa_cluster *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->nzones; i++) {
		n += strlen(c->zones[i].name) + strlen(c->zones[i].feature);
		for (char **p = c->zones[i].partitions; *p; p++)
			n += strlen(*p) + c->zones[i].part_nodes[p - c->zones[i].partitions];
	}
	for (size_t i = 0; i < c->nnodes; i++) {
		const struct efa_cluster_node *node = &c->nodes[i];

		n += strlen(node->name) + strlen(node->state);
		n += node->zone ? strlen(node->zone) + strlen(node->zone_feature ? node->zone_feature : "") : 0;
		n += node->block ? strlen(node->block) : 0;
		for (size_t l = 0; node->layers && l < c->nlayers; l++)
			n += node->layers[l] ? strlen(node->layers[l]) : 0;
		for (char **p = node->partitions; *p; p++)
			n += strlen(*p);
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char conf[] = "PartitionName=gpu SingleZone=yes\n";
	struct efa_job_request req = { .partition = "gpu", .min_nodes = 2, .user = "u" };
	struct efa_config *cfg;
	struct efa_decision d;
	struct efa_cluster c;
	struct efa_error err;
	uint8_t *copy = malloc(size ? size : 1);
	volatile size_t sink;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= SUMMED_FROM) {
		uint64_t sum = efa_snapshot_compact_sum(copy + SUMMED_FROM, size - SUMMED_FROM);

		memcpy(copy + SUM_AT, &sum, sizeof(sum));
	}
	if (efa_snapshot_compact_parse(copy, size, "fuzz", NULL, &c, &err)) {
		free(copy);
		return 0;
	}
	free(copy);
	sink = walk(&c);
	(void)sink;
	if (!efa_config_parse(conf, sizeof(conf) - 1, "fuzz", &cfg, &err)) {
		if (!efa_policy_decide(cfg, &c, NULL, c.generated, &req, &d))
			efa_decision_clear(&d);
		efa_config_free(cfg);
	}
	efa_cluster_clear(&c);
	return 0;
}
