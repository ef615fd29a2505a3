/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa's use of libslurmrest: connecting as efa.conf says, and
 * reading the cluster's zones. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "cli.h"
#include "http/http.h"
#include "common/cluster/snapshot.h"
#include "common/base/strutil.h"
#include "sources/ec2.h"
#include "sources/kube.h"

int cli_rest_option(const char *arg, const char *next, struct cli_rest *opts, int *used)
{
	static const struct {
		const char *name;
		size_t offset;
	} options[] = {
		{ "--url", offsetof(struct cli_rest, url) },
		{ "--user", offsetof(struct cli_rest, user) },
		{ "--token-file", offsetof(struct cli_rest, token_file) },
		{ "--timeout", offsetof(struct cli_rest, timeout) },
		{ "--api-version", offsetof(struct cli_rest, api_version) },
	};

	*used = 0;
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		size_t len = strlen(options[i].name);
		const char **field = (const char **)((char *)opts + options[i].offset);

		if (strncmp(arg, options[i].name, len) || (arg[len] && arg[len] != '='))
			continue;
		if (arg[len] == '=') {
			*field = arg + len + 1;
			*used = 1;
		} else if (next) {
			*field = next;
			*used = 2;
		} else {
			fprintf(stderr, "slurm-efa: %s needs a value\n", arg);
			return -1;
		}
		return 0;
	}
	return 0;
}

slurmrest_t *cli_rest_open(const struct efa_config *cfg, const struct cli_rest *o)
{
	slurmrest_options opts = {
		.url = o->url ? o->url : cfg->rest_url,
		.user = o->user ? o->user : cfg->rest_user,
		.token_file = o->token_file ? o->token_file : cfg->rest_token_file,
		.ca_file = cfg->rest_ca_file,
		.api_version = o->api_version ? o->api_version : cfg->rest_api_version,
		.token_from_env = 1,
		.allow_plain_http = cfg->allow_plain_http == EFA_YES,
	};
	slurmrest_error err;
	slurmrest_t *rest;

	if (o->timeout) {
		char *end;

		opts.timeout_ms = strtol(o->timeout, &end, 10);
		if (*end || opts.timeout_ms <= 0) {
			fprintf(stderr, "slurm-efa: --timeout %s: use milliseconds, e.g. --timeout 5000\n",
				o->timeout);
			return NULL;
		}
		opts.connect_timeout_ms = opts.timeout_ms < 2000 ? opts.timeout_ms : 2000;
	}
	if (!opts.url) {
		fprintf(stderr, "slurm-efa: no slurmrestd to ask: set RestURL= in efa.conf or pass --url\n");
		return NULL;
	}
	/* A local socket authenticates by uid: a stray SLURM_JWT does not apply. */
	if (!strncmp(opts.url, "unix:", 5) && !o->token_file && !cfg->rest_token_file)
		opts.token_from_env = 0;
	rest = slurmrest_new(&opts, &err);
	if (!rest)
		fprintf(stderr, "slurm-efa: %s\n", err.message);
	return rest;
}

void cli_rest_warnings(slurmrest_t *rest)
{
	for (const char *const *w = slurmrest_warnings(rest); *w; w++)
		fprintf(stderr, "slurm-efa: slurmrestd warns: %s\n", *w);
}

void cli_feature_updates_clear(struct cli_feature_updates *u)
{
	for (size_t i = 0; i < u->n; i++) {
		free(u->v[i].node);
		efa_strv_free(u->v[i].from);
		efa_strv_free(u->v[i].to);
	}
	free(u->v);
	memset(u, 0, sizeof(*u));
}

/* Whether two feature lists hold the same features, in any order. */
static bool same_features(char *const *a, char *const *b)
{
	char **sa = efa_strv_dup(a), **sb = efa_strv_dup(b);
	size_t na = 0, nb = 0;
	bool same;

	if (!sa || !sb) {
		efa_strv_free(sa);
		efa_strv_free(sb);
		return false;	/* an update too many is harmless */
	}
	while (sa[na])
		na++;
	while (sb[nb])
		nb++;
	qsort(sa, na, sizeof(*sa), efa_str_ptr_cmp);
	qsort(sb, nb, sizeof(*sb), efa_str_ptr_cmp);
	same = na == nb;
	for (size_t i = 0; same && i < na; i++)
		same = !strcmp(sa[i], sb[i]);
	efa_strv_free(sa);
	efa_strv_free(sb);
	return same;
}

static int add_update(struct cli_feature_updates *u, const char *node, char *const *from,
		      char *const *to)
{
	struct cli_feature_update *grown = realloc(u->v, (u->n + 1) * sizeof(*grown));

	if (!grown)
		return -1;
	u->v = grown;
	grown = &u->v[u->n];
	grown->node = strdup(node);
	grown->from = efa_strv_dup(from);
	grown->to = efa_strv_dup(to);
	u->n++;
	return grown->node && grown->from && grown->to ? 0 : -1;
}

static int cluster_failed(struct cli_cluster_error *err, enum cli_failed_at at, const char *why)
{
	/* libslurmrest's messages say where already */
	const char *source = at == CLI_AT_KUBERNETES ? "kubernetes: " : at == CLI_AT_EC2 ? "ec2: " : "";

	err->at = at;
	snprintf(err->message, sizeof(err->message), "%s%.480s", source, why);
	return -1;
}

/* EC2's view of the nodes' addresses, kept in *cache across calls (or
 * for this call when cache is NULL). */
static int ec2_learn(const struct efa_config *cfg, size_t nlayers, const slurmrest_nodes *nodes,
		     struct ec2 **cache, struct ec2 **e, char *why, size_t size)
{
	char **addresses = calloc(nodes->count + 1, sizeof(*addresses));
	int rc;

	if (!addresses) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	*e = cache ? *cache : NULL;
	if (!*e && !(*e = ec2_open(cfg, nlayers, why, size))) {
		free(addresses);
		return -1;
	}
	if (cache)
		*cache = *e;
	for (size_t i = 0; i < nodes->count; i++)
		addresses[i] = nodes->nodes[i].address;
	rc = ec2_refresh(*e, addresses, nodes->count, why, size);
	free(addresses);
	return rc;
}

/* What a source other than the node's features says of it; NULL: nothing
 * (the features stand). */
static const char *zone_from(enum efa_source source, const struct kube_placement *pod,
			     const struct ec2_instance *in)
{
	if (source == EFA_SOURCE_KUBERNETES)
		return pod ? pod->zone : NULL;
	if (source == EFA_SOURCE_EC2)
		return in ? in->zone : NULL;
	return NULL;
}

static char **layers_from(enum efa_source source, const struct kube_placement *pod,
			  const struct ec2_instance *in)
{
	if (source == EFA_SOURCE_KUBERNETES)
		return pod ? pod->layers : NULL;
	if (source == EFA_SOURCE_EC2)
		return in ? in->layers : NULL;
	return NULL;
}

int cli_rest_cluster(slurmrest_t *rest, const struct efa_config *cfg, const char *url,
		     int64_t *since, struct efa_cluster *cluster, int *not_modified,
		     struct cli_feature_updates *updates, struct ec2 **ec2_cache,
		     struct cli_cluster_error *err)
{
	bool kube = cfg->zone_source == EFA_SOURCE_KUBERNETES ||
		    cfg->topology_source == EFA_SOURCE_KUBERNETES;
	bool ec2 = cfg->zone_source == EFA_SOURCE_EC2 || cfg->topology_source == EFA_SOURCE_EC2;
	struct kube_map map = { 0 };
	struct ec2 *instances = NULL;
	slurmrest_nodes *nodes = NULL;
	char why[KUBE_WHY_MAX];
	size_t unplaced = 0, no_instance = 0;
	struct efa_error e;
	int rc;

	memset(cluster, 0, sizeof(*cluster));
	*not_modified = 0;
	if (slurmrest_get_nodes(rest, since ? *since : 0, &nodes, &err->rest))
		return cluster_failed(err, CLI_AT_SLURMRESTD, err->rest.message);
	cli_rest_warnings(rest);
	if (nodes->not_modified) {
		*not_modified = 1;
		slurmrest_nodes_free(nodes);
		return 0;
	}
	if (since)
		*since = nodes->update_time;
	cluster->generated = (int64_t)time(NULL);
	cluster->source = http_url_public(url);
	cluster->zone_prefix = strdup(cfg->zone_feature_prefix);
	cluster->api_version = slurmrest_api_version(rest) ? strdup(slurmrest_api_version(rest)) : NULL;
	cluster->slurm_version = slurmrest_slurm_version(rest) ? strdup(slurmrest_slurm_version(rest)) : NULL;
	if (!cluster->source || !cluster->zone_prefix ||
	    efa_cluster_set_layers(cluster, cfg->topology_feature_prefixes,
				   cfg->capacity_block_feature_prefix))
		goto nomem;
	if (kube && kube_read(cfg, cluster->nlayers, &map, why, sizeof(why))) {
		rc = cluster_failed(err, CLI_AT_KUBERNETES, why);
		goto fail;
	}
	if (ec2 && ec2_learn(cfg, cfg->topology_source == EFA_SOURCE_EC2 ? cluster->nlayers : 0, nodes,
			     ec2_cache, &instances, why, sizeof(why))) {
		rc = cluster_failed(err, CLI_AT_EC2, why);
		goto fail;
	}
	for (size_t i = 0; i < nodes->count; i++) {
		const slurmrest_node *n = &nodes->nodes[i];
		/* Active features: what the node has now (Slinky and
		 * changeable features may differ from the configured ones). */
		char *const *features = n->active_features[0] ? n->active_features : n->features;
		const struct kube_placement *pod = kube ? kube_find(&map, n->name) : NULL;
		const struct ec2_instance *in = ec2 ? ec2_find(instances, n->address) : NULL;
		char **placed = NULL;

		if (kube || ec2) {
			struct efa_placement where = {
				.zone = zone_from(cfg->zone_source, pod, in),
				.replace_zone = cfg->zone_source != EFA_SOURCE_FEATURES,
				.layers = layers_from(cfg->topology_source, pod, in),
				.block = cfg->topology_source == EFA_SOURCE_EC2 && in ? in->block : NULL,
				.replace_layers = cfg->topology_source != EFA_SOURCE_FEATURES,
			};

			unplaced += kube && (!pod || !pod->zone);
			no_instance += ec2 && !in;
			placed = efa_features_placed(features, cluster, &where);
			if (!placed)
				goto nomem;
			if (updates && !same_features(features, placed) &&
			    add_update(updates, n->name, features, placed)) {
				efa_strv_free(placed);
				goto nomem;
			}
			features = placed;
		}
		rc = efa_cluster_add_node(cluster, n->name, features, n->state, n->partitions, &e);
		efa_strv_free(placed);
		if (rc)
			goto nomem;
	}
	if (unplaced)
		fprintf(stderr, "slurm-efa: kubernetes: %zu of %zu Slurm nodes have no pod in namespace %s on a node with a zone label (%s): their own features stand\n",
			unplaced, nodes->count, map.namespace, KUBE_ZONE_LABEL);
	if (no_instance)
		fprintf(stderr, "slurm-efa: ec2: %zu of %zu Slurm nodes have an address (NodeAddr=) no running instance in %s has as its private IPv4 address: their own features stand\n",
			no_instance, nodes->count, ec2_region(instances));
	kube_map_clear(&map);
	if (!ec2_cache)
		ec2_close(instances);
	slurmrest_nodes_free(nodes);
	return 0;
nomem:
	rc = cluster_failed(err, CLI_AT_MEMORY, "out of memory");
fail:
	kube_map_clear(&map);
	if (!ec2_cache)
		ec2_close(instances);
	slurmrest_nodes_free(nodes);
	efa_cluster_clear(cluster);
	if (updates)
		cli_feature_updates_clear(updates);
	return rc;
}

int cli_source_option(const char *arg, const char *next, struct cli_source *src, int *used)
{
	if (strcmp(arg, "--snapshot"))
		return cli_rest_option(arg, next, &src->rest, used);
	src->snapshot = 1;
	*used = 1;
	return 0;
}

int cli_cluster_load(const struct cli_common *common, const struct cli_source *src,
		     struct efa_config **cfg, struct efa_cluster *cluster)
{
	struct cli_cluster_error rerr;
	struct efa_error err;
	slurmrest_t *rest;
	int not_modified, rc;

	if (efa_config_find_and_load(common->config, cfg, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (src->snapshot) {
		char note[EFA_ERROR_MAX + 128], *compact;
		struct stat st;

		rc = efa_snapshot_load((*cfg)->snapshot, cluster, note, sizeof(note), &err);
		/* A compact form that is there but not used is worth a word;
		 * none at all (a snapshot written by hand) is not. */
		compact = note[0] ? efa_snapshot_compact_path((*cfg)->snapshot) : NULL;
		if (compact && !stat(compact, &st))
			fprintf(stderr, "slurm-efa: %s\n", note);
		free(compact);
		if (!rc)
			return 0;
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		return EXIT_REFUSED;
	}
	if (!(rest = cli_rest_open(*cfg, &src->rest)))
		return EXIT_USAGE;
	rc = cli_rest_cluster(rest, *cfg, src->rest.url ? src->rest.url : (*cfg)->rest_url, NULL,
			      cluster, &not_modified, NULL, NULL, &rerr);
	if (rc)
		fprintf(stderr, "slurm-efa: %s\n", rerr.message);
	slurmrest_free(rest);
	return rc ? EXIT_REFUSED : 0;
}
