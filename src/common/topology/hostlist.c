/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/topology/hostlist.h"

/* Longer digit runs would not fit the number: such names stay whole. */
#define MAX_DIGITS 18

/* A name as prefix + number; width 0 when it has no number to range over. */
struct item {
	const char *name;
	size_t plen;
	unsigned long long num;
	int width;
};

static void split(const char *name, struct item *it)
{
	size_t len = strlen(name), d = len;

	while (d > 0 && isdigit((unsigned char)name[d - 1]))
		d--;
	it->name = name;
	it->plen = len;
	it->num = 0;
	it->width = 0;
	/* "123" alone has no prefix to hang a range on. */
	if (d == 0 || d == len || len - d > MAX_DIGITS)
		return;
	it->plen = d;
	it->width = (int)(len - d);
	it->num = strtoull(name + d, NULL, 10);
}

static int prefix_cmp(const struct item *a, const struct item *b)
{
	size_t n = a->plen < b->plen ? a->plen : b->plen;
	int c = memcmp(a->name, b->name, n);

	if (c)
		return c;
	return (a->plen > b->plen) - (a->plen < b->plen);
}

static int item_cmp(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	int c = prefix_cmp(a, b);

	if (c)
		return c;
	if (!a->width || !b->width)
		return (a->width != 0) - (b->width != 0);
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	return a->width - b->width;
}

/*
 * Whether x reads back from a range of width w: Slurm prints every number
 * of "[lo-hi]" zero-padded to the width of lo, so "n[08-10]" is n08..n10
 * and "n[8-10]" is n8..n10.
 */
static bool fits(const struct item *x, int w)
{
	bool padded = x->width > 1 && x->name[x->plen] == '0';

	return padded ? x->width == w : x->width >= w;
}

static void put_ranges(FILE *out, const struct item *it, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		size_t lo = k;
		int w = it[k].width;

		while (k + 1 < n && it[k + 1].num == it[k].num + 1 && fits(&it[k + 1], w))
			k++;
		fprintf(out, "%s%0*llu", lo ? "," : "", w, it[lo].num);
		if (k > lo)
			fprintf(out, "-%0*llu", w, it[k].num);
	}
}

char *efa_hostlist_compress(char *const *names, size_t n)
{
	struct item *it = calloc(n ? n : 1, sizeof(*it));
	char *text = NULL;
	size_t size, m = 0;
	bool failed;
	FILE *out;

	if (!it)
		return NULL;
	for (size_t i = 0; i < n; i++)
		split(names[i], &it[i]);
	qsort(it, n, sizeof(*it), item_cmp);
	for (size_t i = 0; i < n; i++)
		if (!m || item_cmp(&it[m - 1], &it[i]))
			it[m++] = it[i];
	out = open_memstream(&text, &size);
	if (!out)
		goto out;
	for (size_t i = 0, j; i < m; i = j) {
		j = i + 1;
		while (it[i].width && j < m && it[j].width && !prefix_cmp(&it[i], &it[j]))
			j++;
		if (i)
			fputc(',', out);
		if (j - i == 1) {
			fputs(it[i].name, out);
			continue;
		}
		fprintf(out, "%.*s[", (int)it[i].plen, it[i].name);
		put_ranges(out, &it[i], j - i);
		fputc(']', out);
	}
	/* A write the stream could not grow for leaves a hole, not an end:
	 * such a list is no list. */
	failed = ferror(out);
	if (fclose(out) || failed) {
		free(text);
		text = NULL;
	}
out:
	free(it);
	return text;
}

struct names {
	char **v;
	size_t n, cap;
};

static int push(struct names *l, char *name)
{
	if (!name)
		return -1;
	if (l->n + 1 >= l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		char **grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown) {
			free(name);
			return -1;
		}
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n++] = name;
	l->v[l->n] = NULL;
	return 0;
}

static int parse_number(const char **p, unsigned long long *num, int *width)
{
	const char *s = *p;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	*num = strtoull(s, &end, 10);
	if (errno || end - s > MAX_DIGITS)
		return -1;
	*width = (int)(end - s);
	*p = end;
	return 0;
}

/*
 * prefix, num zero-padded to width digits, suffix: a malloc'd name, or
 * NULL. By hand, not asprintf: a 1,024-node list is 1,024 of them, and
 * every node of a step expands it.
 */
static char *range_name(const char *prefix, int plen, unsigned long long num, int width,
			const char *suffix, int slen)
{
	char digits[24], *name;
	int nd = 0;

	do {
		digits[sizeof(digits) - 1 - nd++] = (char)('0' + num % 10);
		num /= 10;
	} while (num);
	while (nd < width && nd < (int)sizeof(digits))
		digits[sizeof(digits) - 1 - nd++] = '0';
	name = malloc((size_t)plen + (size_t)nd + (size_t)slen + 1);
	if (!name)
		return NULL;
	memcpy(name, prefix, (size_t)plen);
	memcpy(name + plen, digits + sizeof(digits) - nd, (size_t)nd);
	memcpy(name + plen + nd, suffix, (size_t)slen);
	name[plen + nd + slen] = '\0';
	return name;
}

/*
 * prefix, each number of the ranges between open and close (the
 * brackets' insides), then suffix: pushed onto l. As in Slurm's
 * hostlist.c, every range between the commas holds a number: "n[]",
 * "n[1,]" and "n[1,,2]" are errors, not fewer names.
 */
static int push_ranges(struct names *l, const char *prefix, int plen, const char *open,
		       const char *close, const char *suffix, int slen, const char *item, size_t len,
		       struct efa_error *err)
{
	const char *p = open + 1;

	for (;;) {
		unsigned long long lo, hi;
		int w, hw;

		if (parse_number(&p, &lo, &w))
			return efa_error_set(err, "'%.*s': a range must be NUMBER or LO-HI", (int)len, item);
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_number(&p, &hi, &hw) || hi < lo)
				return efa_error_set(err, "'%.*s': a range must be NUMBER or LO-HI", (int)len, item);
		}
		if (*p != ',' && p != close)
			return efa_error_set(err, "'%.*s': a range must be NUMBER or LO-HI", (int)len, item);
		if (hi - lo >= EFA_HOSTLIST_MAX - l->n)
			return efa_error_set(err, "'%.*s' names more than %d hosts", (int)len, item,
					     EFA_HOSTLIST_MAX);
		for (unsigned long long i = lo; i <= hi; i++)
			if (push(l, range_name(prefix, plen, i, w, suffix, slen)))
				return efa_error_set(err, "out of memory");
		if (p == close)
			return 0;
		p++;
	}
}

/*
 * What is wrong with item's brackets, or NULL: each '[' is closed by a ']'
 * before the next '[', and every ']' closes one. Slurm's hostlist refuses
 * the rest ("n[1-2]]" is no n1] and n2]).
 */
static const char *bracket_error(const char *item, size_t len)
{
	bool open = false;

	for (size_t i = 0; i < len; i++) {
		if (item[i] == '[' && open)
			return "'[' inside '[...]'";
		if (item[i] == ']' && !open)
			return "']' without '['";
		if (item[i] == '[' || item[i] == ']')
			open = item[i] == '[';
	}
	return open ? "'[' without ']'" : NULL;
}

/*
 * "pre[1-3,7]suf" from item (len bytes): every name it stands for. As
 * Slurm's hostlist.c reads a name, its last [ranges] counts fastest and
 * the prefix before it may hold ranges of its own: "r[1-2]-n[1-2]" is
 * r1-n1, r1-n2, r2-n1, r2-n2. Its brackets pair (bracket_error).
 */
static int expand_item(const char *item, size_t len, struct names *l, struct efa_error *err)
{
	const char *open = memrchr(item, '[', len), *close;
	struct names prefixes = { 0 };
	int plen, slen, rc = 0;

	if (!open)
		return push(l, strndup(item, len)) ? efa_error_set(err, "out of memory") : 0;
	close = memchr(open, ']', len - (size_t)(open - item));
	plen = (int)(open - item);
	slen = (int)(len - (size_t)(close + 1 - item));
	if (!memchr(item, '[', (size_t)plen))
		return push_ranges(l, item, plen, open, close, close + 1, slen, item, len, err);
	if (expand_item(item, (size_t)plen, &prefixes, err)) {
		efa_strv_free(prefixes.v);
		return -1;
	}
	for (size_t i = 0; !rc && i < prefixes.n; i++)
		rc = push_ranges(l, prefixes.v[i], (int)strlen(prefixes.v[i]), open, close, close + 1,
				 slen, item, len, err);
	efa_strv_free(prefixes.v);
	return rc;
}

/* What separates names in hostlist_create(): ", \t\n". */
static bool is_separator(char c)
{
	return c == ',' || c == ' ' || c == '\t' || c == '\n';
}

int efa_hostlist_expand(const char *expr, char ***names, size_t *n, struct efa_error *err)
{
	struct names l = { 0 };
	const char *p = expr, *why;

	for (;;) {
		size_t len = 0;
		int depth = 0;

		/* As Slurm's, empty names between separators are none. */
		while (is_separator(*p))
			p++;
		if (!*p)
			break;
		/* A comma inside brackets separates ranges, not names. */
		while (p[len] && (depth || !is_separator(p[len]))) {
			if (p[len] == '[')
				depth++;
			else if (p[len] == ']' && depth)
				depth--;
			len++;
		}
		if ((why = bracket_error(p, len))) {
			efa_error_set(err, "'%.*s': %s", (int)len, p, why);
			goto fail;
		}
		if (expand_item(p, len, &l, err))
			goto fail;
		p += len;
	}
	if (!l.v && !(l.v = calloc(1, sizeof(*l.v)))) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	*names = l.v;
	*n = l.n;
	return 0;
fail:
	efa_strv_free(l.v);
	return -1;
}
