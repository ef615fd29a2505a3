/* SPDX-License-Identifier: Apache-2.0 */
/* The summary of a topology.conf change, from a file on disk (which an
 * admin may have edited) to the one sync writes. Input: "before\0after". */
#include "common/topology/topology_file.h"
#include "fuzz.h"

/* Ranges of hundreds of thousands of names make a run take a second
 * under ASan; fuzz_hostlist covers the expander's limits. */
static int has_long_number(const uint8_t *data, size_t size)
{
	size_t run = 0;

	for (size_t i = 0; i < size; i++) {
		run = data[i] >= '0' && data[i] <= '9' ? run + 1 : 0;
		if (run > 4)
			return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t split = nul ? (size_t)(nul - data) : 0;
	char summary[200], *before, *after;

	if (has_long_number(data, size))
		return 0;
	before = fuzz_string(data, split);
	after = nul ? fuzz_string(nul + 1, size - split - 1) : fuzz_string(data, size);
	if (!before || !after)
		goto out;
	memset(summary, 'x', sizeof(summary));
	efa_topology_diff(before, after, summary, sizeof(summary));
	if (!memchr(summary, '\0', sizeof(summary)))
		abort();
	efa_topology_diff(after, after, summary, sizeof(summary));
	/* The same text twice moves nothing, whatever it holds. */
	if (strcmp(summary, "no switch or node moved") &&
	    strcmp(summary, "(no summary: out of memory)"))
		abort();
out:
	free(before);
	free(after);
	return 0;
}
