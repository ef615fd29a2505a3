/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Adding the zone choice to any user constraint, checked against a
 * reference written from slurmctld's own reading of a constraint
 * (build_feature_list in 22.05's job_scheduler.c, _feature_string2list and
 * _valid_feature_list in 26.05's, valid_feature_counts in node_scheduler.c),
 * not from constraint.c: what slurm-efa keeps or writes must be a form
 * both releases accept, and every node set it allows must be in one zone;
 * what it writes must allow exactly the user's nodes, per zone; a form
 * the reference finds valid and single-zone (or zone-free) must not be
 * refused, except for the forms slurm-efa refuses on purpose (counts, a
 * bracket joined by '|', an operator at the end, names with white space or
 * '!'). Input: "constraint\nzone\nzone...".
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster/constraint.h"
#include "fuzz.h"

#define REF_MAX 32
#define REF_NAME 64
#define REF_VARS 10	/* distinct non-zone features enumerated */

/* One feature as slurmctld lists it. */
struct ref_feat {
	char name[REF_NAME];
	unsigned long count;
	int group;		/* its parentheses (1, 2, ...), 0 outside any */
	bool bracket;		/* inside the bracket where the name started */
	char op;		/* the operator that ended it ('&', '|') or 0 */
	bool xand, mor;		/* that operator within the bracket, outside
				 * parentheses: Slurm's XAND or MOR */
};

struct ref {
	struct ref_feat f[REF_MAX];
	int n;
	bool count, bracket_or, odd_name, trailing_op;
	bool beyond;		/* past this reference's limits: no verdict */
};

/*
 * slurmctld's character loop: release 22 or 26. False when that release
 * refuses the form (or it is beyond this reference's limits).
 */
static bool ref_parse(const char *s, int release, struct ref *r)
{
	int bracket = 0, paren = 0, sets = 0, start = -1, groups = 0;
	bool has_xand = false, has_mor = false;
	bool after_close = false, asterisk = false;
	unsigned long count = 0;

	memset(r, 0, sizeof(*r));
	for (int i = 0;; i++) {
		char c = s[i];

		if (c == '*') {
			char *end;

			if (start < 0 || paren || s[i + 1] < '0' || s[i + 1] > '9')
				return false;
			count = strtoul(s + i + 1, &end, 10);
			if (!count || count > 1000000)
				return false;
			asterisk = asterisk || !bracket;
			r->count = true;
			i = end - s - 1;
			continue;
		}
		if (c == '&' || c == ',' || c == '|' || c == 0) {
			if (start >= 0) {
				struct ref_feat *f;
				int len = 0;

				if (r->n == REF_MAX)
					return !(r->beyond = true);
				f = &r->f[r->n++];
				for (int k = start; s[k] && !strchr("&,|*()[]", s[k]); k++)
					len++;
				if (len >= REF_NAME)
					return !(r->beyond = true);
				memcpy(f->name, s + start, len);
				f->count = count;
				f->op = c == ',' ? '&' : c;
				f->xand = bracket && !paren && f->op == '&';
				f->mor = bracket && !paren && f->op == '|';
				r->odd_name = r->odd_name || strpbrk(f->name, " \t\n\r") || *f->name == '!';
			} else if (c) {
				return false;	/* an operator without a feature */
			}
			if (!c)
				break;
			start = -1;
			count = 0;
			after_close = false;
			if (!s[i + 1])
				r->trailing_op = true;
			continue;
		}
		if (c == '[') {
			if (start >= 0 || bracket || (release == 26 && paren) || ++sets > 1)
				return false;
			bracket++;
			continue;
		}
		if (c == ']') {
			if (start < 0 || !bracket || (release == 26 && paren))
				return false;
			bracket--;
			after_close = true;
			continue;
		}
		if (c == '(') {
			if (start >= 0 || paren)
				return false;
			paren++;
			groups++;
			continue;
		}
		if (c == ')') {
			if (start < 0 || !paren)
				return false;
			paren--;
			after_close = true;
			continue;
		}
		if (start < 0) {
			if (r->n == REF_MAX)
				return !(r->beyond = true);
			start = i;
			r->f[r->n].group = paren ? groups : 0;
			r->f[r->n].bracket = bracket;
		} else if (after_close) {
			if (release == 26)
				return false;	/* 26.05: "unexpected character" */
			after_close = false;	/* 22.05 ignores it */
		}
	}
	if (bracket || paren)
		return false;
	if (release == 26 && asterisk && r->n > 1)
		return false;
	/* _valid_feature_list: multiple counts need one on each, a matching
	 * OR none, the bracket's last feature included. */
	for (int i = 0; i < r->n; i++) {
		const struct ref_feat *f = &r->f[i];

		if ((f->xand && !f->count) || (f->mor && f->count))
			return false;
		if (!f->xand && !f->mor && (has_xand || has_mor) &&
		    (i + 1 == r->n || !r->f[i + 1].group || r->f[i + 1].group != f->group)) {
			if ((has_xand && !f->count) || (has_mor && f->count))
				return false;
			has_xand = has_mor = false;
		}
		has_xand = has_xand || f->xand;
		has_mor = has_mor || f->mor;
	}
	r->bracket_or = strstr(s, "|[") || strstr(s, "][") || strstr(s, "]|");
	return true;
}

/* The zone a feature names (Slinky's "k8s/" aside), or NULL. */
static const char *ref_zone(const char *name)
{
	if (!strncmp(name, "k8s/", 4))
		name += 4;
	return !strncmp(name, "az-", 3) && name[3] ? name : NULL;
}

/* A node: its zone ("" for one the constraint does not name) and which of
 * the other features it has. */
struct node {
	const char *zone;
	const char *vars[REF_VARS];
	int nvars;
	unsigned bits;
};

static bool has(const struct node *n, const char *name)
{
	const char *z = ref_zone(name);

	if (z)
		return !strcmp(z, n->zone);
	for (int i = 0; i < n->nvars; i++)
		if (!strcmp(n->vars[i], name))
			return n->bits >> i & 1;
	return false;
}

/* Features combined left to right, a parenthesised group as one. */
static bool eval(const struct ref *r, bool in_bracket, int from, int to, const struct node *n)
{
	bool v = true;
	char op = '&';

	for (int i = from; i < to; i++) {
		const struct ref_feat *f = &r->f[i];
		bool x;
		char after;

		if (f->bracket != in_bracket)
			continue;
		x = has(n, f->name);
		after = f->op;
		while (f->group && i + 1 < to && r->f[i + 1].group == f->group) {
			bool y = has(n, r->f[++i].name);

			x = after == '&' ? x && y : x || y;
			after = r->f[i].op;
		}
		v = op == '&' ? v && x : v || x;
		op = after;
	}
	return v;
}

/* The bracket's alternatives (a group counts as one): [from, to) of each. */
static int alternatives(const struct ref *r, int *from, int *to)
{
	int n = 0;

	for (int i = 0; i < r->n; i++) {
		if (!r->f[i].bracket)
			continue;
		from[n] = i;
		while (r->f[i].group && i + 1 < r->n && r->f[i + 1].group == r->f[i].group)
			i++;
		to[n++] = i + 1;
	}
	return n;
}

static bool allowed(const struct ref *r, int alt, const struct node *n)
{
	int from[REF_MAX], to[REF_MAX], nalts = alternatives(r, from, to);

	return eval(r, false, 0, r->n, n) &&
	       (!nalts || eval(r, true, from[alt], to[alt], n));
}

/* Every node the enumeration covers: the zones named, one more, and each
 * set of the other features; false when there are too many features. */
static bool nodes_of(const struct ref *a, const struct ref *b, const char **zones, int *nz,
		     struct node *proto)
{
	const struct ref *both[] = { a, b };

	*nz = 0;
	zones[(*nz)++] = "";
	proto->nvars = 0;
	for (int k = 0; k < 2 && both[k]; k++) {
		for (int i = 0; i < both[k]->n; i++) {
			const char *name = both[k]->f[i].name, *z = ref_zone(name);
			int j;

			if (z) {
				for (j = 0; j < *nz && strcmp(zones[j], z); j++)
					;
				if (j == *nz)
					zones[(*nz)++] = z;
				continue;
			}
			for (j = 0; j < proto->nvars && strcmp(proto->vars[j], name); j++)
				;
			if (j == proto->nvars) {
				if (proto->nvars == REF_VARS)
					return false;
				proto->vars[proto->nvars++] = name;
			}
		}
	}
	return true;
}

/* How many zones alternative alt's nodes can be in. */
static int zones_of(const struct ref *r, int alt, const char **zones, int nz, struct node *n)
{
	int in = 0;

	for (int z = 0; z < nz; z++) {
		n->zone = zones[z];
		for (n->bits = 0; n->bits < 1u << n->nvars; n->bits++) {
			if (allowed(r, alt, n)) {
				in++;
				break;
			}
		}
	}
	return in;
}

static bool zone_named(const struct ref *r)
{
	for (int i = 0; i < r->n; i++)
		if (ref_zone(r->f[i].name))
			return true;
	return false;
}

/* 1 when both releases accept s, 0 when one refuses it, -1 when it is
 * past the reference's limits. */
static int valid(const char *s, struct ref *r)
{
	struct ref other;
	bool ok22 = ref_parse(s, 22, &other), ok26 = ref_parse(s, 26, r);

	if (other.beyond || r->beyond)
		return -1;
	return ok22 && ok26;
}

/* Kept: every alternative within one zone, one at least somewhere. */
static void check_single_zone(const struct ref *r, const char *s)
{
	const char *zones[REF_MAX + 1];
	int from[REF_MAX], to[REF_MAX], nalts = alternatives(r, from, to), nz, some = 0;
	struct node n;

	if (!nodes_of(r, NULL, zones, &nz, &n))
		return;
	for (int a = 0; a < (nalts ? nalts : 1); a++) {
		int in = zones_of(r, a, zones, nz, &n);

		if (in > 1) {
			fprintf(stderr, "'%s': alternative %d reaches %d zones\n", s, a, in);
			abort();
		}
		some += in;
	}
	if (!some) {
		fprintf(stderr, "'%s' kept, but no node of any zone meets it\n", s);
		abort();
	}
}

/* Written: out allows, per zone alternative, exactly the user's nodes in
 * that zone (user had no bracket), or each of the user's alternatives
 * within the zone added. */
static void check_rewrite(const struct ref *user, const struct ref *out, const char *u, const char *o)
{
	const char *zones[2 * REF_MAX + 1];
	int from[REF_MAX], to[REF_MAX], ufrom[REF_MAX], uto[REF_MAX];
	int nalts = alternatives(out, from, to), ualts = alternatives(user, ufrom, uto), nz;
	const char *added = out->f[out->n - 1].name;
	struct node n;

	if (!nodes_of(user, out, zones, &nz, &n))
		return;	/* too many features to enumerate */
	if (!nalts || (ualts && ualts != nalts))
		goto bad;
	for (int a = 0; a < nalts; a++) {
		const char *zone = ualts ? ref_zone(added) : ref_zone(out->f[from[a]].name);

		if (!zone || (!ualts && to[a] != from[a] + 1))
			goto bad;
		for (int z = 0; z < nz; z++) {
			n.zone = zones[z];
			for (n.bits = 0; n.bits < 1u << n.nvars; n.bits++) {
				bool want = allowed(user, ualts ? a : 0, &n) && !strcmp(zones[z], zone);

				if (allowed(out, a, &n) != want)
					goto bad;
			}
		}
	}
	return;
bad:
	fprintf(stderr, "'%s' became '%s', which allows other nodes\n", u, o);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), *zones[66], *line, *save = NULL, *out = NULL;
	struct efa_error err = { 0 };
	struct ref user, written;
	const char *c;
	size_t n = 0;
	int rc, v;

	if (!s)
		return 0;
	line = strtok_r(s, "\n", &save);
	/* The snapshot's zone features all carry the prefix. */
	while ((zones[n] = strtok_r(NULL, "\n", &save)) && n < 64)
		n += !strncmp(zones[n], "az-", 3) && zones[n][3];
	zones[n] = NULL;
	rc = efa_constraint_single_zone(line, zones, "az-", &out, &err);
	c = line ? line : "";
	if (rc == EFA_CONSTRAINT_KEEP && (v = valid(c, &user)) >= 0) {
		if (!v || user.count) {
			fprintf(stderr, "'%s' kept, but Slurm refuses it or it has a count\n", c);
			abort();
		}
		check_single_zone(&user, c);
	} else if (rc == EFA_CONSTRAINT_SET && (v = valid(out, &written)) >= 0) {
		if (!v || written.count) {
			fprintf(stderr, "'%s' became '%s', which Slurm refuses\n", c, out);
			abort();
		}
		if (!*c)
			memset(&user, 0, sizeof(user));
		if ((!*c || valid(c, &user) == 1) && !zone_named(&user))
			check_rewrite(&user, &written, c, out);
		check_single_zone(&written, out);
	} else if (rc == EFA_CONSTRAINT_REFUSE && *c && valid(c, &user) == 1 && !user.count &&
		   !user.bracket_or && !user.odd_name && !user.trailing_op &&
		   !strstr(err.msg, "no zone feature usable")) {
		const char *names[REF_MAX + 1];
		int from[REF_MAX], to[REF_MAX], nalts = alternatives(&user, from, to), nz, most = 0;
		struct node nd;

		if (zone_named(&user) && nodes_of(&user, NULL, names, &nz, &nd)) {
			for (int a = 0; a < (nalts ? nalts : 1); a++) {
				int in = zones_of(&user, a, names, nz, &nd);

				most = in > most ? in : most;
			}
			if (most == 1) {
				fprintf(stderr, "'%s' is single-zone in Slurm but refused: %s\n", c, err.msg);
				abort();
			}
		} else if (!zone_named(&user) && !nalts) {
			fprintf(stderr, "'%s' names no zone, has no bracket, but is refused: %s\n", c, err.msg);
			abort();
		}
	}
	free(out);
	free(s);
	return 0;
}
