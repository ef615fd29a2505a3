/* SPDX-License-Identifier: Apache-2.0 */
/* The zone snapshot as the bridge reads it, and a decision on it. */
#include "common/cluster/policy.h"
#include "common/cluster/snapshot.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct efa_cluster c;
	struct efa_error err;
	struct efa_config *cfg;
	struct efa_decision d;
	struct efa_job_request req = { .partition = "gpu", .min_nodes = 2, .user = "u" };
	static const char conf[] = "PartitionName=gpu SingleZone=yes\n";

	if (efa_snapshot_parse((const char *)data, size, "fuzz", &c, &err))
		return 0;
	if (!efa_config_parse(conf, sizeof(conf) - 1, "fuzz", &cfg, &err)) {
		if (!efa_policy_decide(cfg, &c, NULL, c.generated, &req, &d))
			efa_decision_clear(&d);
		efa_config_free(cfg);
	}
	efa_cluster_clear(&c);
	return 0;
}
