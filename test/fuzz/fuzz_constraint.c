/* SPDX-License-Identifier: Apache-2.0 */
/* Adding the zone choice to any user constraint: never an invalid or
 * second bracket. Input: "constraint\nzone\nzone...". */
#include <stdio.h>

#include "common/cluster/constraint.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), *zones[66], *line, *save = NULL, *out = NULL;
	struct efa_error err;
	size_t n = 0;
	int rc;

	if (!s)
		return 0;
	line = strtok_r(s, "\n", &save);
	while ((zones[n] = strtok_r(NULL, "\n", &save)) && n < 64)
		n++;
	zones[n] = NULL;
	rc = efa_constraint_single_zone(line, zones, "az-", &out, &err);
	if (rc == EFA_CONSTRAINT_SET) {
		size_t theirs = 0, ours = 0;

		for (const char *c = line ? line : ""; *c; c++)
			theirs += *c == '[';
		for (const char *c = out; *c; c++)
			ours += *c == '[';
		/* A bracket is added only where the user had none. */
		if (ours > theirs + (theirs ? 0 : 1))
			abort();
		free(out);
	}
	free(s);
	return 0;
}
