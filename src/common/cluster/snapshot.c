/* SPDX-License-Identifier: Apache-2.0 */
#include <jansson.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/atomic_write.h"
#include "common/base/strutil.h"
#include "common/cluster/snapshot.h"

#define MAX_LAYERS 16

static json_t *strv_json(char *const *v)
{
	json_t *a = json_array();

	for (char *const *s = v; a && s && *s; s++)
		if (json_array_append_new(a, json_string(*s))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* The node's layer ids in prefix order, null where it has none. */
static json_t *layers_json(const struct efa_cluster_node *n, size_t nlayers)
{
	json_t *a;

	if (!n->layers || !(a = json_array()))
		return NULL;
	for (size_t i = 0; i < nlayers; i++)
		if (json_array_append_new(a, n->layers[i] ? json_string(n->layers[i]) : json_null())) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/*
 * Every value is required ("s:o"): a part that could not be built (an
 * allocation failed) makes the whole document NULL, never a snapshot
 * without it. Optional strings are "s:s?"; a node's layers are optional
 * only when it has none.
 */
static json_t *to_json(const struct efa_cluster *c)
{
	json_t *zones = json_array(), *nodes = json_array(), *prefixes = NULL;

	for (size_t i = 0; zones && i < c->nzones; i++) {
		const struct efa_cluster_zone *z = &c->zones[i];

		if (json_array_append_new(zones, json_pack("{s:s, s:s, s:I, s:I, s:o}", "name", z->name,
							   "feature", z->feature, "nodes", (json_int_t)z->nodes,
							   "usable", (json_int_t)z->usable,
							   "partitions", strv_json(z->partitions)))) {
			json_decref(zones);
			zones = NULL;
		}
	}
	for (size_t i = 0; nodes && i < c->nnodes; i++) {
		const struct efa_cluster_node *n = &c->nodes[i];
		json_t *layers = layers_json(n, c->nlayers);

		if ((n->layers && !layers) ||
		    json_array_append_new(nodes, json_pack("{s:s, s:s?, s:s?, s:s, s:b, s:o, s:o*, s:s*}",
							   "name", n->name, "zone", n->zone,
							   "feature", n->zone_feature, "state", n->state,
							   "usable", n->usable,
							   "partitions", strv_json(n->partitions),
							   "layers", layers, "block", n->block))) {
			json_decref(nodes);
			nodes = NULL;
		}
	}
	if (c->layer_prefixes && !(prefixes = strv_json(c->layer_prefixes))) {
		json_decref(zones);
		json_decref(nodes);
		return NULL;
	}
	return json_pack("{s:i, s:I, s:s?, s:s?, s:s?, s:s?, s:o*, s:s*, s:o, s:o}",
			 "format", EFA_SNAPSHOT_FORMAT, "generated", (json_int_t)c->generated,
			 "source", c->source, "slurm_version", c->slurm_version,
			 "api_version", c->api_version, "zone_prefix", c->zone_prefix,
			 "layer_prefixes", prefixes, "block_prefix", c->block_prefix,
			 "zones", zones, "nodes", nodes);
}

/*
 * The text of a document, built through a callback of our own: Jansson
 * 2.14 does not check every write it makes while dumping (an object's
 * keys), so a failure inside its own buffer could yield a document with a
 * key missing; here any failed write is remembered.
 */
struct text {
	char *buf;
	size_t len, cap;
	bool failed;
};

static int append_text(const char *data, size_t size, void *ctx)
{
	struct text *t = ctx;

	if (!t->failed && t->len + size + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		char *grown;

		while (cap < t->len + size + 1)
			cap *= 2;
		grown = realloc(t->buf, cap);
		if (!grown)
			t->failed = true;
		else
			t->buf = grown, t->cap = cap;
	}
	if (t->failed)
		return -1;
	memcpy(t->buf + t->len, data, size);
	t->len += size;
	t->buf[t->len] = '\0';
	return 0;
}

int efa_snapshot_write(const struct efa_cluster *c, const char *path, struct efa_error *err)
{
	json_t *doc = to_json(c);
	struct text t = { 0 };
	int rc = -1;

	if (!doc || json_dump_callback(doc, append_text, &t, JSON_INDENT(1) | JSON_PRESERVE_ORDER) ||
	    t.failed || !t.buf)
		efa_error_set(err, "out of memory");
	else
		/* Readers (slurmctld) are another user: 0644. */
		rc = efa_write_atomic(path, t.buf, t.len, 0644, err);
	free(t.buf);
	json_decref(doc);
	return rc;
}

static char *opt_string(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? strdup(s) : NULL;
}

/* "idle+drain" -> {"idle", "drain"}. */
static char **split_states(const char *state)
{
	size_t n = 1;
	char **v;

	for (const char *c = state; *c; c++)
		n += *c == '+';
	if (!(v = calloc(n + 1, sizeof(*v))))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t len = strcspn(state, "+");

		if (!(v[i] = strndup(state, len))) {
			efa_strv_free(v);
			return NULL;
		}
		state += len + (state[len] == '+');
	}
	return v;
}

/* A JSON array of strings as a NULL-terminated list (copied). */
static char **strv_from(json_t *a)
{
	size_t n = json_array_size(a);
	char **v = calloc(n + 1, sizeof(*v));

	for (size_t i = 0; v && i < n; i++) {
		const char *s = json_string_value(json_array_get(a, i));

		if (!s || !(v[i] = strdup(s))) {
			efa_strv_free(v);
			return NULL;
		}
	}
	return v;
}

/*
 * Snapshots before layers were recorded, or with a malformed list, have
 * none. EC2 has three or four layers: far more would only multiply every
 * node's memory.
 */
static int set_layer_prefixes(struct efa_cluster *c, json_t *a, const char *block_prefix)
{
	char **prefixes;
	int rc;

	if (!json_is_array(a) || json_array_size(a) > MAX_LAYERS || !(prefixes = strv_from(a)))
		return 0;
	rc = efa_cluster_set_layers(c, prefixes, block_prefix);
	efa_strv_free(prefixes);
	return rc;
}

/*
 * The features a node had as far as the snapshot recorded them: its zone
 * feature, "<prefix><id>" for each layer (what is not a string is no
 * layer) and its block.
 */
static char **node_features(const struct efa_cluster *c, json_t *node)
{
	const char *zone = json_string_value(json_object_get(node, "feature"));
	const char *block = json_string_value(json_object_get(node, "block"));
	json_t *layers = json_object_get(node, "layers");
	char **v = calloc(c->nlayers + 3, sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	if (zone && !(v[n++] = strdup(zone)))
		goto fail;
	if (block && c->block_prefix && asprintf(&v[n++], "%s%s", c->block_prefix, block) < 0) {
		v[--n] = NULL;
		goto fail;
	}
	for (size_t i = 0; i < c->nlayers; i++) {
		const char *id = json_string_value(json_array_get(layers, i));

		if (id && asprintf(&v[n++], "%s%s", c->layer_prefixes[i], id) < 0) {
			v[--n] = NULL;
			goto fail;
		}
	}
	return v;
fail:
	efa_strv_free(v);
	return NULL;
}

int efa_snapshot_parse(const char *text, size_t len, const char *name, struct efa_cluster *c,
		       struct efa_error *err)
{
	json_error_t jerr;
	json_t *doc = json_loadb(text, len, 0, &jerr), *nodes, *node;
	json_int_t format = 0, generated = 0;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (!doc)
		return efa_error_set(err, "%s: not a snapshot (line %d: %s): run slurm-efa sync", name,
				     jerr.line, jerr.text);
	if (json_unpack(doc, "{s:I, s:I, s:o}", "format", &format, "generated", &generated,
			"nodes", &nodes) || !json_is_array(nodes)) {
		efa_error_set(err, "%s: not a slurm-efa snapshot (no format, generated or nodes)", name);
		goto fail;
	}
	if (format != EFA_SNAPSHOT_FORMAT) {
		efa_error_set(err, "%s: snapshot format %lld, this slurm-efa reads %d: upgrade both together",
			      name, (long long)format, EFA_SNAPSHOT_FORMAT);
		goto fail;
	}
	c->generated = generated;
	c->source = opt_string(doc, "source");
	c->slurm_version = opt_string(doc, "slurm_version");
	c->api_version = opt_string(doc, "api_version");
	c->zone_prefix = opt_string(doc, "zone_prefix");
	if (set_layer_prefixes(c, json_object_get(doc, "layer_prefixes"),
			       json_string_value(json_object_get(doc, "block_prefix")))) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	json_array_foreach(nodes, i, node) {
		const char *node_name = json_string_value(json_object_get(node, "name"));
		const char *state = json_string_value(json_object_get(node, "state"));
		json_t *parts = json_object_get(node, "partitions");
		char **partitions, **states, **features;
		int rc;

		if (!node_name || !state || !json_is_array(parts)) {
			efa_error_set(err, "%s: node %zu lacks name, state or partitions", name, i);
			goto fail;
		}
		if (!(partitions = strv_from(parts))) {
			efa_error_set(err, "%s: node %s: partitions must be strings", name, node_name);
			goto fail;
		}
		states = split_states(state);
		features = node_features(c, node);
		if (!states || !features) {
			efa_strv_free(partitions);
			efa_strv_free(states);
			efa_strv_free(features);
			efa_error_set(err, "out of memory");
			goto fail;
		}
		/* Usability and layers are decided again, by the same rules. */
		rc = efa_cluster_add_node(c, node_name, features, states, partitions, err);
		efa_strv_free(partitions);
		efa_strv_free(states);
		efa_strv_free(features);
		if (rc)
			goto fail;
	}
	json_decref(doc);
	return 0;
fail:
	json_decref(doc);
	efa_cluster_clear(c);
	return -1;
}

int efa_snapshot_read(const char *path, struct efa_cluster *c, struct efa_error *err)
{
	char *text;
	size_t len;
	int rc;

	if (efa_read_file(path, EFA_SNAPSHOT_MAX_SIZE, &text, &len, err))
		return -1;
	rc = efa_snapshot_parse(text, len, path, c, err);
	free(text);
	return rc;
}
