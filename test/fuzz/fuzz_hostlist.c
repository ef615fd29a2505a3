/* SPDX-License-Identifier: Apache-2.0 */
/* Host lists read back from topology.conf and written into it: expanding
 * what we compressed gives the same names. */
#include "common/topology/hostlist.h"
#include "common/base/strutil.h"
#include "fuzz.h"

#define ROUND_TRIP_MAX 4096

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorts v and drops repeats; the new count. */
static size_t unique(char **v, size_t n)
{
	size_t m = 0;

	qsort(v, n, sizeof(*v), name_cmp);
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(v[m - 1], v[i])) {
			free(v[i]);
			continue;
		}
		v[m++] = v[i];
	}
	v[m] = NULL;
	return m;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), **names = NULL, **again = NULL, *text = NULL;
	struct efa_error err;
	size_t n, m;

	if (!s)
		return 0;
	/* The round trip of a quarter million names takes a second under
	 * ASan: such lists exercise the expander and its limit only. */
	if (efa_hostlist_expand(s, &names, &n, &err) || n > ROUND_TRIP_MAX)
		goto out;
	n = unique(names, n);
	text = efa_hostlist_compress(names, n);
	if (!text)
		goto out;
	if (efa_hostlist_expand(text, &again, &m, &err))
		abort();
	m = unique(again, m);
	if (m != n)
		abort();
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], again[i]))
			abort();
out:
	efa_strv_free(names);
	efa_strv_free(again);
	free(text);
	free(s);
	return 0;
}
