/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/env/memlock.h"

static void describe(rlim_t limit, char *buf, size_t size)
{
	if (limit == RLIM_INFINITY)
		snprintf(buf, size, "unlimited");
	else
		snprintf(buf, size, "%llu KiB", (unsigned long long)limit / 1024);
}

bool efa_memlock_refuse(const char *propagated, rlim_t current, char *msg, size_t size)
{
	char want[32], have[32], *end;
	unsigned long long value;

	msg[0] = '\0';
	if (!propagated)
		return false;
	if (*propagated == 'U')
		propagated++;
	errno = 0;
	value = strtoull(propagated, &end, 10);
	if (errno || end == propagated || *end || (rlim_t)value >= current)
		return false;
	describe((rlim_t)value, want, sizeof(want));
	describe(current, have, sizeof(have));
	snprintf(msg, size, "the job brings the submitting shell's locked-memory limit (%s), below the %s EFA tasks get here: its tasks keep %s, since libfabric fails with \"Cannot allocate memory\" under a small limit. Set PropagateResourceLimitsExcept=MEMLOCK in slurm.conf, or raise the login node's memlock limit",
		 want, have, have);
	return true;
}
