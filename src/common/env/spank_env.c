/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "common/env/spank_env.h"

int efa_spank_env_name(const char *option, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s%s", EFA_SPANK_ENV_PREFIX, option);

	if (n < 0 || (size_t)n >= size)
		return -1;
	for (char *c = buf + strlen(EFA_SPANK_ENV_PREFIX); *c; c++)
		if (*c == '-')
			*c = '_';
	return 0;
}
