#include <stdlib.h>
#include <string.h>

#include "strutil.h"
#include "zones.h"

static bool has_prefix(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

const char *efa_zone_of(char *const *features, const char *prefix, const char **feature,
			bool *conflict)
{
	const char *zone = NULL;

	*feature = NULL;
	*conflict = false;
	for (char *const *f = features; f && *f; f++) {
		const char *name = *f;

		if (has_prefix(name, EFA_SLINKY_FEATURE_PREFIX) &&
		    !has_prefix(prefix, EFA_SLINKY_FEATURE_PREFIX))
			name += strlen(EFA_SLINKY_FEATURE_PREFIX);
		if (!has_prefix(name, prefix) || !name[strlen(prefix)])
			continue;
		if (!zone) {
			zone = name + strlen(prefix);
			*feature = *f;
		} else if (strcmp(zone, name + strlen(prefix))) {
			*conflict = true;
		}
	}
	return zone;
}

bool efa_state_usable(char *const *states)
{
	/* Base states and flags that keep a node from new work. */
	static const char *const blocked[] = {
		"down", "drain", "draining", "drained", "fail", "failing", "future",
		"maint", "not_responding", "unknown", "no_respond", "invalid_reg",
		"power_down", "powered_down", "powering_down", "reboot_issued",
		"reboot_requested", "inval", "invalid",
	};

	if (!states || !states[0])
		return false;
	for (char *const *s = states; *s; s++)
		for (size_t i = 0; i < sizeof(blocked) / sizeof(blocked[0]); i++)
			if (!strcmp(*s, blocked[i]))
				return false;
	return true;
}

/* "idle", "drain" -> "idle+drain", as sinfo writes it. */
static char *join_states(char *const *v)
{
	size_t len = 1;
	char *out;

	for (char *const *s = v; s && *s; s++)
		len += strlen(*s) + 1;
	if (!(out = calloc(1, len)))
		return NULL;
	for (char *const *s = v; s && *s; s++) {
		if (s != v)
			strcat(out, "+");
		strcat(out, *s);
	}
	return out;
}

const struct efa_cluster_zone *efa_cluster_zone(const struct efa_cluster *c, const char *name)
{
	for (size_t i = 0; i < c->nzones; i++)
		if (!strcmp(c->zones[i].name, name))
			return &c->zones[i];
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int zone_cmp(const void *a, const void *b)
{
	return strcmp(((const struct efa_cluster_zone *)a)->name,
		      ((const struct efa_cluster_zone *)b)->name);
}

static int zone_add_partition(struct efa_cluster_zone *z, const char *partition)
{
	size_t n = 0;
	char **grown;

	while (z->partitions && z->partitions[n]) {
		if (!strcmp(z->partitions[n], partition))
			return 0;
		n++;
	}
	grown = realloc(z->partitions, (n + 2) * sizeof(*grown));
	if (!grown)
		return -1;
	z->partitions = grown;
	if (!(grown[n] = strdup(partition)))
		return -1;
	grown[n + 1] = NULL;
	qsort(grown, n + 1, sizeof(*grown), cmp_str);
	return 0;
}

static struct efa_cluster_zone *zone_for(struct efa_cluster *c, const char *name,
					 const char *feature)
{
	struct efa_cluster_zone *grown, *z;

	for (size_t i = 0; i < c->nzones; i++)
		if (!strcmp(c->zones[i].name, name))
			return &c->zones[i];
	grown = realloc(c->zones, (c->nzones + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	c->zones = grown;
	z = &grown[c->nzones];
	memset(z, 0, sizeof(*z));
	z->name = strdup(name);
	z->feature = strdup(feature);
	if (!z->name || !z->feature) {
		free(z->name);
		free(z->feature);
		return NULL;
	}
	c->nzones++;
	return z;
}

int efa_cluster_add_node(struct efa_cluster *c, const char *name, char *const *features,
			 char *const *states, char *const *partitions, struct efa_error *err)
{
	struct efa_cluster_node *grown, *n;
	const char *zone, *feature;
	bool conflict;

	grown = realloc(c->nodes, (c->nnodes + 1) * sizeof(*grown));
	if (!grown)
		return efa_error_set(err, "out of memory");
	c->nodes = grown;
	n = &grown[c->nnodes];
	memset(n, 0, sizeof(*n));
	zone = efa_zone_of(features, c->zone_prefix ? c->zone_prefix : "", &feature, &conflict);
	n->name = strdup(name);
	n->state = join_states(states);
	n->partitions = efa_strv_dup(partitions);
	n->zone_conflict = conflict;
	n->usable = efa_state_usable(states) && !conflict;
	if (zone) {
		n->zone = strdup(zone);
		n->zone_feature = strdup(feature);
	}
	c->nnodes++;
	if (!n->name || !n->state || !n->partitions || (zone && (!n->zone || !n->zone_feature)))
		return efa_error_set(err, "out of memory");
	if (zone) {
		struct efa_cluster_zone *z = zone_for(c, zone, feature);

		if (!z)
			return efa_error_set(err, "out of memory");
		z->nodes++;
		z->usable += n->usable;
		for (char *const *p = partitions; p && *p; p++)
			if (zone_add_partition(z, *p))
				return efa_error_set(err, "out of memory");
		qsort(c->zones, c->nzones, sizeof(*c->zones), zone_cmp);
	}
	return 0;
}

void efa_cluster_clear(struct efa_cluster *c)
{
	for (size_t i = 0; i < c->nnodes; i++) {
		free(c->nodes[i].name);
		free(c->nodes[i].zone);
		free(c->nodes[i].zone_feature);
		free(c->nodes[i].state);
		efa_strv_free(c->nodes[i].partitions);
	}
	free(c->nodes);
	for (size_t i = 0; i < c->nzones; i++) {
		free(c->zones[i].name);
		free(c->zones[i].feature);
		efa_strv_free(c->zones[i].partitions);
	}
	free(c->zones);
	free(c->source);
	free(c->slurm_version);
	free(c->api_version);
	free(c->zone_prefix);
	memset(c, 0, sizeof(*c));
}
