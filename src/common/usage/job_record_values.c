/* SPDX-License-Identifier: Apache-2.0 */
/* The values of the job record's summary as it writes them (job_record_summary.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json_text.h"
#include "common/usage/job_record_summary.h"

int efa_rec_hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* How many nodes a "reported" string names; -1 when it is not one for
 * node_count nodes (a bit past the last node included). */
long efa_rec_reported_count(const char *bits, uint32_t node_count)
{
	long n = 0;

	if (!bits || strlen(bits) != ((uint64_t)node_count + 3) / 4)
		return -1;
	for (size_t k = 0; bits[k]; k++) {
		int v = efa_rec_hex_value(bits[k]);
		uint64_t past = 4 * (uint64_t)k + 4 > node_count ? 4 * (uint64_t)k + 4 - node_count : 0;

		if (v < 0 || (unsigned)v >> (4 - past))
			return -1;
		n += __builtin_popcount((unsigned)v);
	}
	return n;
}

/* An id of the summary: an integer from min to UINT32_MAX; -1 if not. */
long long efa_rec_id_value(const char *value, long long min)
{
	long long v;

	return efa_json_integer(value, &v) && v >= min && v <= UINT32_MAX ? v : -1;
}

/* The string at value, unescaped and malloc'd: it is never longer than
 * its JSON. NULL when it is not a string, or out of memory (*oom). */
char *efa_rec_string_value(const char *value, const char *end, bool *oom)
{
	char *s;

	if (*value != '"')
		return NULL;
	if (!(s = malloc((size_t)(end - value) + 1))) {
		*oom = true;
		return NULL;
	}
	if (!efa_json_string(value, s, (size_t)(end - value) + 1)) {
		free(s);
		return NULL;
	}
	return s;
}
