/* SPDX-License-Identifier: Apache-2.0 */
#include "common/cluster/resume.h"

long efa_resume_limit(long option, const struct efa_partition *part)
{
	if (option != EFA_RESUME_UNSET)
		return option;
	if (part && part->resume != EFA_RESUME_UNSET)
		return part->resume;
	return 0;
}

bool efa_resume_last_run(long limit, unsigned long restarts)
{
	return limit > 0 && restarts >= (unsigned long)limit;
}
