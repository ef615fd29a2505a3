/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/topology/hostlist.h"
#include "common/base/strutil.h"
#include "tap.h"

static void compressed(const char *want, const char *what, size_t n, ...)
{
	char *names[64], *got;
	va_list ap;

	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		names[i] = va_arg(ap, char *);
	va_end(ap);
	got = efa_hostlist_compress(names, n);
	is_str(got, want, "%s", what);
	free(got);
}

/* expr expands to exactly the names in want (comma-separated). */
static void expands(const char *expr, const char *want)
{
	struct efa_error err = { 0 };
	char **names, joined[1024] = "";
	size_t n;

	require(ok(!efa_hostlist_expand(expr, &names, &n, &err), "expand %s (%s)", expr, err.msg));
	for (size_t i = 0; i < n; i++)
		efa_strlcatf(joined, sizeof(joined), "%s%s", i ? "," : "", names[i]);
	is_str(joined, want, "  the names it stands for");
	efa_strv_free(names);
}

static void test_compress(void)
{
	compressed("n[1-3]", "n1,n2,n3", 3, "n1", "n2", "n3");
	compressed("gpu-[001-004]", "zero padding kept", 4, "gpu-003", "gpu-001", "gpu-004", "gpu-002");
	compressed("a[1-3],b[1-2],login", "mixed prefixes, sorted", 6, "b1", "a2", "login", "a1", "a3", "b2");
	compressed("head,login", "names without numbers stay whole", 2, "login", "head");
	compressed("n5", "one name has no brackets", 1, "n5");
	compressed("n[1-3,5,7-8]", "gaps", 6, "n7", "n1", "n2", "n3", "n5", "n8");
	compressed("n[1-2]", "duplicates dropped", 3, "n1", "n2", "n1");
	compressed("n[8-10]", "n8..n10: an unpadded range grows a digit", 3, "n8", "n9", "n10");
	compressed("gpu-[099-100]", "a padded range runs into wider numbers", 2, "gpu-099", "gpu-100");
	compressed("n[08,9]", "n9 does not read back from n[08-09]", 2, "n9", "n08");
	compressed("n[9,09]", "nor n09 from n[9-...]", 2, "n09", "n9");
	compressed("ip-10-0-1-[5-6]", "only the last number ranges", 2, "ip-10-0-1-6", "ip-10-0-1-5");
	compressed("123,124", "a name that is only digits stays whole", 2, "124", "123");
	compressed("n,n[1-2]", "the bare prefix is a name of its own", 3, "n2", "n", "n1");
	compressed("n1234567890123456789,n1234567890123456790", "19 digits do not range", 2,
		   "n1234567890123456790", "n1234567890123456789");
	compressed("", "no names", 0);
}

static void test_expand(void)
{
	struct efa_error err = { 0 };
	char **names;
	size_t n;

	expands("n[1-3],gpu-[001-002],login", "n1,n2,n3,gpu-001,gpu-002,login");
	expands("n[8-10]", "n8,n9,n10");
	expands("n[08,9]", "n08,n9");
	expands("rack[1-2]-a", "rack1-a,rack2-a");
	expands("x", "x");
	/* hostlist_create()'s separators, empty names skipped */
	expands(",a,,b c\tn[1-2]\n", "a,b,c,n1,n2");
	/* Slurm's hostlist.c: the last [ranges] counts fastest */
	expands("r[1-2]-n[1-2]", "r1-n1,r1-n2,r2-n1,r2-n2");
	expands("a[1,3]b[0-1]c[7],z", "a1b0c7,a1b1c7,a3b0c7,a3b1c7,z");
	ok(efa_hostlist_expand("a[1-2]b[1-", &names, &n, &err) < 0, "  an open last bracket is an error");
	ok(efa_hostlist_expand("a[1-x]b[1-2]", &names, &n, &err) < 0, "  so is a bad range before it");
	ok(efa_hostlist_expand("a[1-1000]b[1-1000]", &names, &n, &err) < 0, "  and too many names in all");
	ok(efa_hostlist_expand("n[3-1]", &names, &n, &err) < 0, "a backwards range is an error");
	has_str(err.msg, "n[3-1]", "  naming it");
	ok(efa_hostlist_expand("n[1-", &names, &n, &err) < 0, "an open bracket is an error");
	ok(efa_hostlist_expand("n[a]", &names, &n, &err) < 0, "letters in a range are an error");
	/* What Slurm's hostlist refuses (scontrol show hostnames: "Invalid
	 * hostlist"), not a shorter list. */
	ok(efa_hostlist_expand("n[]", &names, &n, &err) < 0, "an empty range is an error");
	ok(efa_hostlist_expand("n[1-2,]", &names, &n, &err) < 0, "  so is an empty one after a comma");
	ok(efa_hostlist_expand("n[,1]", &names, &n, &err) < 0, "  or before one");
	ok(efa_hostlist_expand("n[1,,2]", &names, &n, &err) < 0, "  or between two");
	ok(efa_hostlist_expand("n[1-2]]", &names, &n, &err) < 0 && strstr(err.msg, "']' without '['"),
	   "a ']' left over is an error (%s)", err.msg);
	ok(efa_hostlist_expand("n]1[1-2]", &names, &n, &err) < 0, "  in the prefix too");
	ok(efa_hostlist_expand("n1]", &names, &n, &err) < 0, "  and in a name without brackets");
	ok(efa_hostlist_expand("n[1]2]", &names, &n, &err) < 0, "  and after the last range");
	ok(efa_hostlist_expand("n[0-99999999]", &names, &n, &err) < 0, "a huge range is refused");
	has_str(err.msg, "more than", "  saying why");
	ok(efa_hostlist_expand("a[1-200000],b[1-200000]", &names, &n, &err) < 0,
	   "so are ranges that only together name too many");
	require(ok(efa_hostlist_expand("a[1-100000],b[1-100000]", &names, &n, &err) == 0 && n == 200000,
		   "200,000 names are fine"));
	efa_strv_free(names);
}

/* Whatever the names, compress then expand gives them back. */
static void test_round_trip(void)
{
	enum { N = 3000 };
	static const char *const prefixes[] = { "gpu-", "n", "p5-", "ip-10-0-", "login" };
	char *names[N], **back, *hl;
	struct efa_error err = { 0 };
	size_t n, unique = 0, found = 0;

	srand(7);
	for (size_t i = 0; i < N; i++) {
		const char *p = prefixes[rand() % 5];
		int num = rand() % 1500;

		if (asprintf(&names[i], rand() % 4 ? "%s%d" : "%s%04d", p, num) < 0)
			names[i] = NULL;
	}
	hl = efa_hostlist_compress(names, N);
	require(ok(hl && strlen(hl) < N * 6, "3000 names compress (%zu bytes)", hl ? strlen(hl) : 0));
	require(ok(!efa_hostlist_expand(hl, &back, &n, &err), "and expand (%s)", err.msg));
	for (size_t i = 0; i < N; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(names[i], names[j]);
		unique += !seen;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < N; j++)
			if (!strcmp(back[i], names[j])) {
				found++;
				break;
			}
	is_int(n, unique, "  into as many names as were distinct");
	is_int(found, n, "  every one of them given");
	efa_strv_free(back);
	free(hl);
	for (size_t i = 0; i < N; i++)
		free(names[i]);
}

int main(void)
{
	test_compress();
	test_expand();
	test_round_trip();
	return done_testing();
}
