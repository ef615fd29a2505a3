/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The grammar is Slurm's (slurmctld's build_feature_list, job_scheduler.c,
 * 22.05 and _feature_string2list in 26.05): features joined by '&' (',' is
 * read as '&') and '|'; one level of parentheses, with no bracket inside;
 * at most one [...] set, holding a matching OR ("[a|b]": every node takes
 * the same alternative) or multiple counts ("[a*2&b*1]"); "*N" after a
 * feature outside brackets only when it is the constraint's only feature
 * (26.05 refuses more). There is no negation: '!' and white space are
 * read as part of a feature's name. Outside the bracket slurmctld combines
 * features left to right without precedence (valid_feature_counts,
 * node_scheduler.c: "a|b&c" is "(a|b)&c"), a parenthesised group counting
 * as one feature. Forms the two releases read differently are refused
 * here as malformed.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster/constraint.h"
#include "common/cluster/zones.h"

#define ZONES_MAX 64	/* Slurm's limit of alternatives in one bracket */
#define UNITS_MAX 256	/* features and groups in one constraint */
#define COUNT_MAX 100000

/* A feature or a parenthesised group of features. */
struct unit {
	const char *name;	/* a feature: its name; a group: NULL */
	size_t len;
	size_t first, n;	/* a group: its features in form.feats */
	unsigned long count;	/* "*N", 0 when none */
	char op;		/* the operator after it: '&', '|' or 0 */
};

struct form {
	struct unit feats[UNITS_MAX];	/* the features inside groups */
	struct unit outer[UNITS_MAX];	/* outside the bracket, in order */
	struct unit alts[UNITS_MAX];	/* inside the bracket */
	size_t nfeats, nouter, nalts;
	bool bracket, paren, count;
	char bracket_op;	/* '|', '&', or 0 for a one-unit bracket */
	bool bracket_or;	/* the bracket is joined to the rest by '|' */
	bool top_or;		/* a '|' outside parentheses and the bracket */
	const char *prefix;
};

static bool is_op(char c)
{
	return c == '&' || c == ',' || c == '|';
}

/* The zone a feature names, without Slinky's "k8s/"; NULL when not one. */
static const char *zone_of(const char *name, size_t len, const char *prefix, size_t *zlen)
{
	const char *slinky = EFA_SLINKY_FEATURE_PREFIX;
	size_t plen = strlen(prefix), slen = strlen(slinky);

	if (len > slen && !strncmp(name, slinky, slen)) {
		name += slen;
		len -= slen;
	}
	if (len <= plen || strncmp(name, prefix, plen))
		return NULL;
	*zlen = len;
	return name;
}

static int syntax(struct efa_error *err, const char *user, const char *why)
{
	efa_error_set(err, "the constraint '%s' is malformed (%s): write features joined by & or |, with at most one [...] set and no nested parentheses, e.g. -C 'efa&gpu' or -C '[p5|p5e]'",
		      user, why);
	return EFA_CONSTRAINT_REFUSE;
}

/* A feature's name at *c; NULL with *why set when it is not one. */
static const char *read_name(const char **c, size_t *len, const char **why)
{
	const char *name = *c;

	*len = strcspn(name, "&,|()[]*");
	if (!*len) {
		*why = "an operator or bracket where a feature should be";
		return NULL;
	}
	if (strcspn(name, " \t\n\r") < *len) {
		*why = "white space, which Slurm reads as part of a feature's name";
		return NULL;
	}
	if (*name == '!') {
		*why = "Slurm has no negation: '!' is read as part of a feature's name";
		return NULL;
	}
	*c += *len;
	return name;
}

static bool read_count(const char **c, unsigned long *count, const char **why)
{
	char *end;

	if (**c != '*')
		return true;
	if ((*c)[1] < '1' || (*c)[1] > '9') {
		*why = "'*' not followed by a positive count";
		return false;
	}
	*count = strtoul(*c + 1, &end, 10);
	if (*count > COUNT_MAX) {
		*why = "a count too large";
		return false;
	}
	*c = end;
	return true;
}

/* One feature, or a group "(a&b|c)" (no count: Slurm refuses '*' in one). */
static bool read_unit(const char **c, struct form *f, struct unit *u, const char **why)
{
	memset(u, 0, sizeof(*u));
	if (**c != '(') {
		u->name = read_name(c, &u->len, why);
		return u->name != NULL;
	}
	f->paren = true;
	(*c)++;
	u->first = f->nfeats;
	for (;;) {
		struct unit *feat;

		if (f->nfeats == UNITS_MAX) {
			*why = "too many features";
			return false;
		}
		feat = &f->feats[f->nfeats];
		memset(feat, 0, sizeof(*feat));
		if (**c == '(' || **c == '[') {
			*why = "a bracket or parenthesis inside parentheses";
			return false;
		}
		if (!(feat->name = read_name(c, &feat->len, why)))
			return false;
		f->nfeats++;
		u->n++;
		if (**c == ')')
			break;
		if (!is_op(**c)) {
			*why = **c == '*' ? "a count inside parentheses" : "unbalanced parentheses";
			return false;
		}
		feat->op = **c == '|' ? '|' : '&';
		(*c)++;
	}
	(*c)++;
	return true;
}

/* The bracket's contents, after '['. */
static bool read_bracket(const char **c, struct form *f, const char **why)
{
	f->bracket = true;
	for (;;) {
		struct unit *u;

		if (f->nalts == UNITS_MAX) {
			*why = "too many features";
			return false;
		}
		u = &f->alts[f->nalts];
		if (**c == '[') {
			*why = "a bracket inside a bracket";
			return false;
		}
		if (!read_unit(c, f, u, why) || !read_count(c, &u->count, why))
			return false;
		f->count = f->count || u->count;
		f->nalts++;
		if (**c == ']')
			break;
		if (!is_op(**c)) {
			*why = "unbalanced brackets";
			return false;
		}
		u->op = **c == '|' ? '|' : '&';
		if (f->bracket_op && f->bracket_op != u->op) {
			*why = "both & and | inside [...]";
			return false;
		}
		f->bracket_op = u->op;
		(*c)++;
	}
	(*c)++;
	/* Slurm's _valid_feature_list: multiple counts each need one, a
	 * matching OR takes none. */
	for (size_t i = 0; i < f->nalts && f->bracket_op; i++) {
		if (f->bracket_op == '&' && !f->alts[i].count) {
			*why = "& inside [...] without a count (*N) on each feature";
			return false;
		}
		if (f->bracket_op == '|' && f->alts[i].count) {
			*why = "a count inside a matching OR [...|...]";
			return false;
		}
	}
	return true;
}

static bool parse(const char *c, struct form *f, const char **why)
{
	char before = 0;

	for (;;) {
		struct unit *u;

		if (*c == '[') {
			if (f->bracket) {
				*why = "more than one [...] set: Slurm allows one per job";
				return false;
			}
			c++;
			if (!read_bracket(&c, f, why))
				return false;
			f->bracket_or = f->bracket_or || before == '|' || *c == '|';
		} else {
			if (f->nouter == UNITS_MAX) {
				*why = "too many features";
				return false;
			}
			u = &f->outer[f->nouter];
			if (!read_unit(&c, f, u, why) || !read_count(&c, &u->count, why))
				return false;
			if (u->count && !u->name) {
				*why = "a count after parentheses";
				return false;
			}
			f->count = f->count || u->count;
			f->nouter++;
		}
		if (!*c)
			break;
		if (!is_op(*c)) {
			if (*c == ')' || *c == ']')
				*why = *c == ')' ? "unbalanced parentheses" : "unbalanced brackets";
			else
				*why = *c == '*' ? "a count after ] or )" : "no operator after a feature, ] or )";
			return false;
		}
		before = *c == '|' ? '|' : '&';
		if (before == '|')
			f->top_or = true;
		if (f->nouter && (f->nouter > 1 || !f->bracket || c[-1] != ']'))
			f->outer[f->nouter - 1].op = before;
		if (!*++c) {
			*why = "an operator at the end";
			return false;
		}
	}
	if (f->count && !f->bracket && f->nouter > 1) {
		*why = "a count (*N) outside [...] on one feature of several";
		return false;
	}
	return true;
}

/*
 * Whether a feature holds on a node of zone z (z NULL: a zone no feature
 * of the constraint names). Slurm has no negation, so a constraint holds
 * on some node of a zone exactly when it holds with every other feature
 * present.
 */
static bool feature_holds(const struct form *f, const struct unit *u, const char *z, size_t zlen)
{
	size_t len;
	const char *zone = zone_of(u->name, u->len, f->prefix, &len);

	return !zone || (z && len == zlen && !strncmp(zone, z, len));
}

static bool unit_holds(const struct form *f, const struct unit *u, const char *z, size_t zlen)
{
	bool v = true;
	char op = '&';

	if (u->name)
		return feature_holds(f, u, z, zlen);
	for (size_t i = u->first; i < u->first + u->n; i++) {
		bool x = feature_holds(f, &f->feats[i], z, zlen);

		v = op == '&' ? v && x : v || x;
		op = f->feats[i].op;
	}
	return v;
}

/* The features outside the bracket, left to right, and alternative alt. */
static bool holds(const struct form *f, const struct unit *alt, const char *z, size_t zlen)
{
	bool v = true;
	char op = '&';

	for (size_t i = 0; i < f->nouter; i++) {
		bool x = unit_holds(f, &f->outer[i], z, zlen);

		v = op == '&' ? v && x : v || x;
		op = f->outer[i].op;
	}
	return v && (!alt || unit_holds(f, alt, z, zlen));
}

/* Every zone named in the constraint, once; *n of them. */
static size_t zones_named(const struct form *f, const char **z, size_t *zl, size_t max)
{
	const struct unit *lists[] = { f->feats, f->outer, f->alts };
	size_t counts[] = { f->nfeats, f->nouter, f->nalts }, n = 0;

	for (size_t l = 0; l < 3; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			const struct unit *u = &lists[l][i];
			const char *zone;
			size_t len, k;

			if (!u->name || !(zone = zone_of(u->name, u->len, f->prefix, &len)))
				continue;
			for (k = 0; k < n && (zl[k] != len || strncmp(z[k], zone, len)); k++)
				;
			if (k == n && n < max) {
				z[n] = zone;
				zl[n++] = len;
			}
		}
	}
	return n;
}

/*
 * Where nodes meeting the constraint and alternative alt can be: the
 * number of zones among those named (or any other zone, counted once).
 */
static size_t zones_allowed(const struct form *f, const struct unit *alt, const char **z,
			    const size_t *zl, size_t nz)
{
	size_t n = holds(f, alt, NULL, 0);

	for (size_t i = 0; i < nz; i++)
		n += holds(f, alt, z[i], zl[i]);
	return n;
}

/* KEEP when every placement Slurm can make stays in one zone. */
static int judge_zones(const char *user, const struct form *f, const char **z, const size_t *zl,
		       size_t nz, struct efa_error *err)
{
	size_t most = 0;

	if (f->count) {
		efa_error_set(err, "the constraint '%s' lets nodes of one job come from different Availability Zones: a count (*N) asks only that N of its nodes have a feature, the others may be anywhere, and EFA does not cross zones: drop the count and use one zone (-C %.*s) or a matching OR ([%.*s|...])",
			      user, (int)zl[0], z[0], (int)zl[0], z[0]);
		return EFA_CONSTRAINT_REFUSE;
	}
	if (f->bracket_or) {
		efa_error_set(err, "the constraint '%s' joins its [...] set with '|', which lets nodes of one job come from different Availability Zones: join it with & (e.g. -C '[%.*s|...]&efa')",
			      user, (int)zl[0], z[0]);
		return EFA_CONSTRAINT_REFUSE;
	}
	for (size_t i = 0; i < (f->nalts ? f->nalts : 1); i++) {
		size_t n = zones_allowed(f, f->nalts ? &f->alts[i] : NULL, z, zl, nz);

		most = n > most ? n : most;
	}
	if (f->bracket_op == '&')
		most = zones_allowed(f, NULL, z, zl, nz) > 1 ? 2 : most;
	if (most > 1) {
		efa_error_set(err, "the constraint '%s' lets nodes of one job come from different Availability Zones, and EFA does not cross zones: use one zone (-C %.*s) or a matching OR ([%.*s|...])",
			      user, (int)zl[0], z[0], (int)zl[0], z[0]);
		return EFA_CONSTRAINT_REFUSE;
	}
	/* An alternative no node can meet is Slurm's to skip; none at all
	 * is a request for two zones at once. */
	if (!most) {
		efa_error_set(err, "the constraint '%s' asks for nodes in more than one Availability Zone at once, and a node is in one: use one zone (-C %.*s) or a matching OR ([%.*s|%.*s])",
			      user, (int)zl[0], z[0], (int)zl[0], z[0], (int)zl[nz - 1], z[nz - 1]);
		return EFA_CONSTRAINT_REFUSE;
	}
	return EFA_CONSTRAINT_KEEP;
}

/* A feature name that cannot break the constraint's syntax. */
static bool plain_feature(const char *name)
{
	return *name && *name != '!' && !strpbrk(name, "[]()|&*,: \t\n\r");
}

static int add_zones(const char *user, const struct form *f, char *const *zones, size_t n,
		     char **out, struct efa_error *err)
{
	size_t len = 3;
	char *bracket, *p;
	int rc;

	if (f->count) {
		efa_error_set(err, "the constraint '%s' has a count (*N), and slurm-efa cannot add the zone choice to it (Slurm allows a count outside [...] only on a lone feature, and a count leaves the job's other nodes free to be anywhere): drop the count, or name one zone in a matching OR yourself (e.g. -C '[%s|...]')",
			      user, zones[0]);
		return EFA_CONSTRAINT_REFUSE;
	}
	if (f->bracket) {
		/* Slurm allows one bracket per job: only a single zone can be
		 * added, as a plain AND. */
		if (n == 1 && !f->bracket_or) {
			rc = asprintf(out, "%s&%s", user, zones[0]);
			return rc < 0 ? efa_error_set(err, "out of memory") : EFA_CONSTRAINT_SET;
		}
		efa_error_set(err, "the constraint '%s' already has a [...] set and Slurm allows one per job, so slurm-efa cannot add the zone choice: add one zone yourself (e.g. -C '%s&%s')",
			      user, user, zones[0]);
		return EFA_CONSTRAINT_REFUSE;
	}
	for (size_t i = 0; i < n; i++)
		len += strlen(zones[i]) + 1;
	bracket = malloc(len);
	if (!bracket)
		return efa_error_set(err, "out of memory");
	p = bracket;
	*p++ = '[';
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, "%s%s", i ? "|" : "", zones[i]);
	strcpy(p, "]");
	if (!user || !*user) {
		*out = bracket;
		return EFA_CONSTRAINT_SET;
	}
	/* Slurm reads "a|b&[..]" as "(a|b)&[..]" already; the parentheses say
	 * so to the reader, where the user's own do not forbid them (Slurm
	 * refuses nested ones). */
	rc = asprintf(out, f->top_or && !f->paren ? "(%s)&%s" : "%s&%s", user, bracket);
	free(bracket);
	return rc < 0 ? efa_error_set(err, "out of memory") : EFA_CONSTRAINT_SET;
}

int efa_constraint_single_zone(const char *user, char *const *zones, const char *prefix,
			       char **out, struct efa_error *err)
{
	char *usable[ZONES_MAX + 1];
	const char *named[ZONES_MAX], *why = NULL;
	size_t named_len[ZONES_MAX], n = 0, nz;
	struct form *f;
	int rc;

	*out = NULL;
	for (char *const *z = zones; *z && n < ZONES_MAX; z++)
		if (plain_feature(*z))
			usable[n++] = *z;
	usable[n] = NULL;
	if (!n) {
		efa_error_set(err, "no zone feature usable in a constraint (names with [, ], |, &, ... are not)");
		return EFA_CONSTRAINT_REFUSE;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return efa_error_set(err, "out of memory");
	f->prefix = prefix;
	if (user && *user && !parse(user, f, &why)) {
		rc = syntax(err, user, why);
		goto out;
	}
	nz = zones_named(f, named, named_len, ZONES_MAX);
	if (nz)
		rc = judge_zones(user, f, named, named_len, nz, err);
	else
		rc = add_zones(user, f, usable, n, out, err);
out:
	free(f);
	return rc;
}
