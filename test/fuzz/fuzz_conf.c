/* SPDX-License-Identifier: Apache-2.0 */
/* efa.conf: every byte sequence parses or is refused with a message. */
#include "common/config/efa_conf.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct efa_config *cfg = NULL;
	struct efa_error err;

	if (!efa_config_parse((const char *)data, size, "fuzz.conf", &cfg, &err)) {
		efa_config_partition(cfg, "gpu");
		efa_config_free(cfg);
	}
	return 0;
}
