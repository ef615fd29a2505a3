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

unsigned long efa_resume_node_failures(unsigned long restarts,
				       const struct efa_record_requeue *requeues, size_t n)
{
	unsigned long failures = restarts;

	/* The record holds each run once (job_record.c). */
	for (size_t i = 0; i < n; i++)
		if (requeues[i].run < restarts && failures)
			failures--;
	return failures;
}

enum efa_resume_run efa_resume_run(long limit, unsigned long node_failures)
{
	if (limit < 0 || node_failures > (unsigned long)limit)
		return EFA_RESUME_OVER;
	return node_failures == (unsigned long)limit ? EFA_RESUME_LAST : EFA_RESUME_MORE;
}
