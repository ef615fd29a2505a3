/* SPDX-License-Identifier: Apache-2.0 */
/* efa.conf: every byte sequence parses or is refused with a message; what
 * parsed gives sbatch a signal that fits. */
#include <stdlib.h>
#include <string.h>

#include "common/cluster/policy.h"
#include "common/config/efa_conf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct efa_config *cfg = NULL;
	struct efa_error err;

	if (!efa_config_parse((const char *)data, size, "fuzz.conf", &cfg, &err)) {
		char sig[64];

		efa_config_partition(cfg, "gpu");
		if (efa_policy_checkpoint_signal(cfg, "gpu,train", NULL, sig, sizeof(sig)) == 1 &&
		    strncmp(sig, "B:", 2))
			abort();
		efa_config_free(cfg);
	}
	return 0;
}
