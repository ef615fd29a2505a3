/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

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

#define RESTARTS_FIELD " Restarts="
#define COMMENT_LINE "\n   AdminComment="

int efa_resume_shown_job(const char *text, unsigned long *restarts, char **comment)
{
	const char *r = strstr(text, RESTARTS_FIELD), *c = strstr(text, COMMENT_LINE), *end;
	char *stop;

	*comment = NULL;
	if (!r)
		return -1;
	r += strlen(RESTARTS_FIELD);
	if (*r < '0' || *r > '9')
		return -1;
	*restarts = strtoul(r, &stop, 10);
	if (*stop && *stop != ' ' && *stop != '\n')
		return -1;
	if (!c)
		return 0;
	c += strlen(COMMENT_LINE);
	end = c + strcspn(c, "\n");
	/* scontrol ends the field with a blank. */
	if (end > c && end[-1] == ' ')
		end--;
	*comment = strndup(c, (size_t)(end - c));
	return *comment ? 0 : -1;
}
