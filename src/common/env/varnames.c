/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "common/env/varnames.h"

bool efa_env_denied(const char *name)
{
	/* RDMAV_FORK_SAFE and friends: rdma-core's fork protection is
	 * automatic on kernels >= 5.13 and the old switch costs memory
	 * pinning; the EFA limits make libfabric abort() at start-up. */
	static const char *const exact[] = {
		"FI_EFA_MTU_SIZE", "FI_EFA_TX_IOV_LIMIT", "FI_EFA_RX_IOV_LIMIT",
	};

	if (!strncmp(name, "RDMAV_", 6))
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return true;
	return false;
}

bool efa_env_reserved(const char *name)
{
	/* The dynamic loader's variables (LD_PRELOAD, LD_AUDIT, ...) would
	 * run code in every task; only the library path is managed, here. */
	return !strncmp(name, "LD_", 3) || !strncmp(name, "SLURM_EFA_", 10);
}
