/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cluster/constraint.h"
#include "common/cluster/zones.h"

#define ZONES_MAX 64	/* Slurm's limit of alternatives in one bracket */

/* What the user's constraint says about zones and structure. */
struct shape {
	bool bracket;		/* has a [...] set */
	bool top_or;		/* a '|' outside brackets and parentheses */
	bool zone_in_bracket;	/* a zone feature inside [...] */
	bool other_in_bracket;	/* a non-zone feature inside [...] */
	bool zone_outside;	/* a zone feature outside [...] */
	bool zone_under_or;	/* a zone feature next to a plain '|' */
	bool and_in_bracket;	/* '&' inside [...]: Slurm's multiple counts,
				 * which want nodes of every feature named */
	char first_zone[256];
	int zones;		/* distinct zone features (at most 2 counted) */
};

static bool is_zone(const char *name, size_t len, const char *prefix)
{
	const char *slinky = EFA_SLINKY_FEATURE_PREFIX;
	size_t plen = strlen(prefix);

	if (len > strlen(slinky) && !strncmp(name, slinky, strlen(slinky))) {
		name += strlen(slinky);
		len -= strlen(slinky);
	}
	return len > plen && !strncmp(name, prefix, plen);
}

static void note_zone(struct shape *s, const char *name, size_t len)
{
	if (!s->zones) {
		snprintf(s->first_zone, sizeof(s->first_zone), "%.*s", (int)len, name);
		s->zones = 1;
	} else if (strlen(s->first_zone) != len || strncmp(s->first_zone, name, len)) {
		s->zones = 2;
	}
}

static void read_shape(const char *c, const char *prefix, struct shape *s)
{
	int bracket = 0, paren = 0;
	bool or_before = false;

	memset(s, 0, sizeof(*s));
	while (*c) {
		size_t len;

		switch (*c) {
		case '[': bracket++; s->bracket = true; c++; continue;
		case ']': bracket--; c++; continue;
		case '(': paren++; c++; continue;
		case ')': paren--; c++; continue;
		case '&':
			or_before = false;
			s->and_in_bracket = s->and_in_bracket || bracket;
			c++;
			continue;
		case '|':
			if (!bracket && !paren)
				s->top_or = true;
			or_before = !bracket;
			c++;
			continue;
		}
		/* A feature name, maybe with a "*count" or ":count". */
		len = strcspn(c, "[]()&|*:");
		if (is_zone(c, len, prefix)) {
			note_zone(s, c, len);
			if (bracket) {
				s->zone_in_bracket = true;
			} else {
				s->zone_outside = true;
				if (or_before || c[len] == '|')
					s->zone_under_or = true;
			}
		} else if (len && bracket) {
			s->other_in_bracket = true;
		}
		c += len;
		while (*c == '*' || *c == ':' || (*c >= '0' && *c <= '9'))
			c++;
	}
}

/* A feature name that cannot break the constraint's syntax. */
static bool plain_feature(const char *name)
{
	return *name && !strpbrk(name, "[]()|&*:, \t\n");
}

int efa_constraint_single_zone(const char *user, char *const *zones, const char *prefix,
			       char **out, struct efa_error *err)
{
	char *usable[ZONES_MAX + 1];
	struct shape s;
	size_t len = 3, n = 0;
	char *bracket, *p;
	int rc;

	*out = NULL;
	for (char *const *z = zones; *z && n < ZONES_MAX; z++) {
		if (!plain_feature(*z))
			continue;
		usable[n++] = *z;
		len += strlen(*z) + 1;
	}
	usable[n] = NULL;
	zones = usable;
	if (!n) {
		efa_error_set(err, "no zone feature usable in a constraint (names with [, ], |, &, ... are not)");
		return EFA_CONSTRAINT_REFUSE;
	}
	if (user && *user) {
		read_shape(user, prefix, &s);
		if (s.zones) {
			/* The user chose zones: keep a choice that stays in one. */
			if (s.zone_in_bracket && !s.zone_outside && !s.other_in_bracket &&
			    !(s.and_in_bracket && s.zones > 1))
				return EFA_CONSTRAINT_KEEP;
			if (s.zones == 1 && !s.zone_under_or && !s.zone_in_bracket)
				return EFA_CONSTRAINT_KEEP;
			efa_error_set(err, "the constraint '%s' lets nodes of one job come from different Availability Zones, and EFA does not cross zones: use one zone (-C %s) or a matching OR ([%s|...])",
				      user, s.first_zone, s.first_zone);
			return EFA_CONSTRAINT_REFUSE;
		}
		if (s.bracket) {
			/* Slurm allows one bracket per job: only a single zone
			 * can be added, as a plain AND. */
			if (n == 1) {
				rc = asprintf(out, "%s&%s", user, zones[0]);
				return rc < 0 ? efa_error_set(err, "out of memory") : EFA_CONSTRAINT_SET;
			}
			efa_error_set(err, "the constraint '%s' already has a [...] set and Slurm allows one per job, so slurm-efa cannot add the zone choice: add one zone yourself (e.g. -C '%s&%s')",
				      user, user, zones[0]);
			return EFA_CONSTRAINT_REFUSE;
		}
	}
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
	/* "a|b&[..]" would let a|(b&[..]) through: group the user's part. */
	rc = asprintf(out, s.top_or ? "(%s)&%s" : "%s&%s", user, bracket);
	free(bracket);
	return rc < 0 ? efa_error_set(err, "out of memory") : EFA_CONSTRAINT_SET;
}
