/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/cluster/zones.h"

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

/* Index of partition in the zone's sorted list, or where it would go. */
static size_t partition_slot(const struct efa_cluster_zone *z, size_t n, const char *partition,
			     bool *found)
{
	size_t lo = 0, hi = n;

	*found = false;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(z->partitions[mid], partition);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t count_strv(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* Counts a node of this zone in a partition, keeping the list sorted. */
static int zone_count_partition(struct efa_cluster_zone *z, const char *partition, bool usable)
{
	size_t n = count_strv(z->partitions), i;
	char **names, *copy;
	size_t *nodes, *usables;
	bool found;

	i = partition_slot(z, n, partition, &found);
	if (!found) {
		if (!(copy = strdup(partition)))
			return -1;
		names = realloc(z->partitions, (n + 2) * sizeof(*names));
		if (names)
			z->partitions = names;
		nodes = names ? realloc(z->part_nodes, (n + 1) * sizeof(*nodes)) : NULL;
		if (nodes)
			z->part_nodes = nodes;
		usables = nodes ? realloc(z->part_usable, (n + 1) * sizeof(*usables)) : NULL;
		if (!usables) {
			free(copy);
			return -1;
		}
		z->part_usable = usables;
		memmove(names + i + 1, names + i, (n - i) * sizeof(*names));
		names[n + 1] = NULL;
		memmove(nodes + i + 1, nodes + i, (n - i) * sizeof(*nodes));
		memmove(usables + i + 1, usables + i, (n - i) * sizeof(*usables));
		names[i] = copy;
		nodes[i] = usables[i] = 0;
	}
	z->part_nodes[i]++;
	z->part_usable[i] += usable;
	return 0;
}

void efa_zone_in_partition(const struct efa_cluster_zone *z, const char *partition,
			   size_t *nodes, size_t *usable)
{
	bool found;
	size_t i = partition_slot(z, count_strv(z->partitions), partition, &found);

	*nodes = found ? z->part_nodes[i] : 0;
	*usable = found ? z->part_usable[i] : 0;
}

/* The zone, added in name order when new: a cluster has few zones. */
static struct efa_cluster_zone *zone_for(struct efa_cluster *c, const char *name,
					 const char *feature)
{
	struct efa_cluster_zone *grown, *z;
	size_t i;

	for (i = 0; i < c->nzones; i++) {
		int cmp = strcmp(c->zones[i].name, name);

		if (!cmp)
			return &c->zones[i];
		if (cmp > 0)
			break;
	}
	grown = realloc(c->zones, (c->nzones + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	c->zones = grown;
	memmove(grown + i + 1, grown + i, (c->nzones - i) * sizeof(*grown));
	z = &grown[i];
	memset(z, 0, sizeof(*z));
	z->name = strdup(name);
	z->feature = strdup(feature);
	c->nzones++;
	return z->name && z->feature ? z : NULL;
}

int efa_cluster_set_layers(struct efa_cluster *c, char *const *prefixes, const char *block_prefix)
{
	efa_strv_free(c->layer_prefixes);
	free(c->block_prefix);
	c->nlayers = 0;
	c->block_prefix = NULL;
	if (!(c->layer_prefixes = efa_strv_dup(prefixes)) ||
	    (block_prefix && *block_prefix && !(c->block_prefix = strdup(block_prefix))))
		return -1;
	while (c->layer_prefixes[c->nlayers])
		c->nlayers++;
	return 0;
}

/* A node with two ids in one layer (or two blocks) has no place in the
 * tree (or no block): none kept. */
static int node_layers(struct efa_cluster_node *n, const struct efa_cluster *c,
		       char *const *features)
{
	if (c->block_prefix) {
		const char *feature;
		bool conflict;
		const char *id = efa_zone_of(features, c->block_prefix, &feature, &conflict);

		if (id && !conflict && !(n->block = strdup(id)))
			return -1;
	}
	if (!c->nlayers)
		return 0;
	if (!(n->layers = calloc(c->nlayers, sizeof(*n->layers))))
		return -1;
	for (size_t i = 0; i < c->nlayers; i++) {
		const char *feature;
		bool conflict;
		const char *id = efa_zone_of(features, c->layer_prefixes[i], &feature, &conflict);

		if (id && !conflict && !(n->layers[i] = strdup(id)))
			return -1;
	}
	return 0;
}

int efa_cluster_add_node(struct efa_cluster *c, const char *name, char *const *features,
			 char *const *states, char *const *partitions, struct efa_error *err)
{
	struct efa_cluster_node *grown, *n;
	const char *zone, *feature;
	bool conflict;

	if (c->nnodes == c->nodes_cap) {
		size_t cap = c->nodes_cap ? c->nodes_cap * 2 : 64;

		grown = realloc(c->nodes, cap * sizeof(*grown));
		if (!grown)
			return efa_error_set(err, "out of memory");
		c->nodes = grown;
		c->nodes_cap = cap;
	}
	n = &c->nodes[c->nnodes];
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
	if (!n->name || !n->state || !n->partitions || (zone && (!n->zone || !n->zone_feature)) ||
	    node_layers(n, c, features))
		return efa_error_set(err, "out of memory");
	if (zone) {
		struct efa_cluster_zone *z = zone_for(c, zone, feature);

		if (!z)
			return efa_error_set(err, "out of memory");
		z->nodes++;
		z->usable += n->usable;
		for (char *const *p = partitions; p && *p; p++)
			if (zone_count_partition(z, *p, n->usable))
				return efa_error_set(err, "out of memory");
	}
	return 0;
}

void efa_cluster_clear(struct efa_cluster *c)
{
	if (c->arena) {
		free(c->arena);
		memset(c, 0, sizeof(*c));
		return;
	}
	for (size_t i = 0; i < c->nnodes; i++) {
		free(c->nodes[i].name);
		free(c->nodes[i].zone);
		free(c->nodes[i].zone_feature);
		free(c->nodes[i].state);
		efa_strv_free(c->nodes[i].partitions);
		for (size_t l = 0; c->nodes[i].layers && l < c->nlayers; l++)
			free(c->nodes[i].layers[l]);
		free(c->nodes[i].layers);
		free(c->nodes[i].block);
	}
	free(c->nodes);
	for (size_t i = 0; i < c->nzones; i++) {
		free(c->zones[i].name);
		free(c->zones[i].feature);
		efa_strv_free(c->zones[i].partitions);
		free(c->zones[i].part_nodes);
		free(c->zones[i].part_usable);
	}
	free(c->zones);
	free(c->source);
	free(c->slurm_version);
	free(c->api_version);
	free(c->zone_prefix);
	efa_strv_free(c->layer_prefixes);
	free(c->block_prefix);
	memset(c, 0, sizeof(*c));
}

/* The feature is of prefix, also under Slinky's prefix. */
static bool of_prefix(const char *feature, const char *prefix)
{
	if (has_prefix(feature, EFA_SLINKY_FEATURE_PREFIX))
		feature += strlen(EFA_SLINKY_FEATURE_PREFIX);
	return has_prefix(feature, prefix);
}

static int push(char **v, size_t *n, const char *prefix, const char *value)
{
	size_t plen = strlen(prefix), vlen = strlen(value);

	if (!(v[*n] = malloc(plen + vlen + 1)))
		return -1;
	memcpy(v[*n], prefix, plen);
	memcpy(v[*n] + plen, value, vlen + 1);
	(*n)++;
	return 0;
}

/* What the placement says a feature of each prefix becomes. */
struct verdict {
	const char *value;	/* the new id; NULL: the node's own stands */
	bool drop;		/* the source says there is none */
	bool done;
};

static struct verdict *verdicts(const struct efa_cluster *c, const struct efa_placement *p)
{
	struct verdict *v = calloc(c->nlayers + 2, sizeof(*v));
	size_t depth = 0;

	if (!v)
		return NULL;
	if (p->replace_zone && p->zone)
		v[0].value = p->zone;
	for (size_t l = 0; p->replace_layers && p->layers && l < c->nlayers; l++)
		if (p->layers[l])
			depth = l + 1;
	/* Below the deepest layer the source gives there is none (EC2
	 * gives 3 or 4, a reservation 1 to 3); a layer missing above it is
	 * unknown. Whether a node is in a capacity block is known with its
	 * layers. */
	for (size_t l = 0; depth && l < c->nlayers; l++) {
		v[l + 1].value = l < depth ? p->layers[l] : NULL;
		v[l + 1].drop = l >= depth;
	}
	if (depth && c->block_prefix) {
		v[c->nlayers + 1].value = p->block;
		v[c->nlayers + 1].drop = !p->block;
	}
	return v;
}

/* Which verdict a feature falls under: 0 zone, 1.. layers, then the
 * block; -1 none. */
static long kind_of(const struct efa_cluster *c, const char *feature)
{
	if (c->zone_prefix && of_prefix(feature, c->zone_prefix))
		return 0;
	for (size_t l = 0; l < c->nlayers; l++)
		if (of_prefix(feature, c->layer_prefixes[l]))
			return (long)l + 1;
	if (c->block_prefix && of_prefix(feature, c->block_prefix))
		return (long)c->nlayers + 1;
	return -1;
}

static const char *prefix_of(const struct efa_cluster *c, size_t kind)
{
	return !kind ? c->zone_prefix : kind <= c->nlayers ? c->layer_prefixes[kind - 1] :
	       c->block_prefix;
}

char **efa_features_placed(char *const *features, const struct efa_cluster *c,
			   const struct efa_placement *p)
{
	size_t nfeatures = 0, nkinds = c->nlayers + 2, n = 0;
	struct verdict *v = verdicts(c, p);
	char **out;

	while (features && features[nfeatures])
		nfeatures++;
	out = calloc(nfeatures + nkinds + 1, sizeof(*out));
	if (!v || !out)
		goto fail;
	/* A replaced feature takes the place of the first it replaces, so
	 * that a node's list changes no more than it must. */
	for (size_t i = 0; i < nfeatures; i++) {
		long k = kind_of(c, features[i]);
		struct verdict *d = k < 0 ? NULL : &v[k];

		if (d && (d->value || d->drop)) {
			if (d->value && !d->done && push(out, &n, prefix_of(c, (size_t)k), d->value))
				goto fail;
			d->done = true;
			continue;
		}
		if (!(out[n++] = strdup(features[i])))
			goto fail;
	}
	for (size_t k = 0; k < nkinds; k++)
		if (v[k].value && !v[k].done && push(out, &n, prefix_of(c, k), v[k].value))
			goto fail;
	free(v);
	return out;
fail:
	free(v);
	efa_strv_free(out);
	return NULL;
}
