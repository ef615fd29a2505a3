/* SPDX-License-Identifier: Apache-2.0 */
/* Profile files, and the plan built from what parses. */
#include "common/env/env.h"
#include "common/env/profile.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct efa_profiles set = { 0 };
	struct efa_profile p;
	struct efa_env_plan *plan = NULL;
	struct efa_node node = { .instance_type = "p5.48xlarge" };
	struct efa_error err;

	node.stack.libfabric = "1.16.0";
	node.stack.installer = "1.30.0";
	if (efa_profile_parse((const char *)data, size, "fuzz", &p, &err))
		return 0;
	set.v = &p;
	set.n = 1;
	if (!efa_env_plan_build(&node, &set, &plan, &err))
		efa_env_plan_free(plan);
	efa_profile_clear(&p);
	return 0;
}
