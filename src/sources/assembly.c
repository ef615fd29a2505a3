/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/strutil.h"
#include "http/http.h"
#include "assembly.h"
#include "ec2.h"
#include "kube.h"

void node_feature_updates_clear(struct node_feature_updates *u)
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

static int add_update(struct node_feature_updates *u, const char *node, char *const *from,
		      char *const *to)
{
	struct node_feature_update *grown = realloc(u->v, (u->n + 1) * sizeof(*grown));

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

static int failed(struct assembly_error *err, enum assembly_failed_at at, const char *why)
{
	/* libslurmrest's messages say where already */
	const char *source = at == ASSEMBLY_AT_KUBERNETES ? "kubernetes: " :
			     at == ASSEMBLY_AT_EC2 ? "ec2: " : "";

	err->at = at;
	snprintf(err->message, sizeof(err->message), "%s%.480s", source, why);
	return -1;
}

/* What the other sources say, for one read. */
struct placements {
	bool kube, ec2;
	struct kube_map map;
	struct ec2 *instances;	/* the assembly's */
	size_t unplaced, no_instance;
};

static void ec2_options_of(const struct efa_config *cfg, size_t nlayers, struct ec2_options *o)
{
	*o = (struct ec2_options){
		.region = cfg->ec2_region,
		.endpoint = cfg->ec2_endpoint,
		.max_age = cfg->ec2_max_age,
		.allow_plain_http = cfg->allow_plain_http == EFA_YES,
		.nlayers = cfg->topology_source == EFA_SOURCE_EC2 ? nlayers : 0,
	};
}

/* EC2's view of the nodes' addresses, kept in the assembly across reads. */
static int ec2_learn(struct assembly *a, size_t nlayers, const slurmrest_nodes *nodes,
		     struct efa_error *err)
{
	char **addresses = calloc(nodes->count + 1, sizeof(*addresses));
	struct ec2_options o;
	int rc;

	if (!addresses) {
		efa_error_set(err, "out of memory");
		return -1;
	}
	ec2_options_of(a->cfg, nlayers, &o);
	if (!a->ec2 && !(a->ec2 = ec2_open(&o, err))) {
		free(addresses);
		return -1;
	}
	for (size_t i = 0; i < nodes->count; i++)
		addresses[i] = nodes->nodes[i].address;
	rc = ec2_refresh(a->ec2, addresses, nodes->count, err);
	free(addresses);
	return rc;
}

static int read_placements(struct assembly *a, size_t nlayers, const slurmrest_nodes *nodes,
			   struct placements *p, struct assembly_error *err)
{
	const struct efa_config *cfg = a->cfg;
	struct kube_options ko;
	struct efa_error why;

	p->kube = cfg->zone_source == EFA_SOURCE_KUBERNETES ||
		  cfg->topology_source == EFA_SOURCE_KUBERNETES;
	p->ec2 = cfg->zone_source == EFA_SOURCE_EC2 || cfg->topology_source == EFA_SOURCE_EC2;
	kube_options_from_config(cfg, nlayers, &ko);
	if (p->kube && kube_read(&ko, &p->map, &why))
		return failed(err, ASSEMBLY_AT_KUBERNETES, why.msg);
	if (p->ec2 && ec2_learn(a, nlayers, nodes, &why))
		return failed(err, ASSEMBLY_AT_EC2, why.msg);
	p->instances = a->ec2;
	return 0;
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

/* One node into the cluster, with the features its sources give. */
static int add_node(const struct efa_config *cfg, struct placements *p, const slurmrest_node *n,
		    struct efa_cluster *cluster, struct node_feature_updates *updates)
{
	/* Active features: what the node has now (Slinky and changeable
	 * features may differ from the configured ones). */
	char *const *features = n->active_features[0] ? n->active_features : n->features;
	const struct kube_placement *pod = p->kube ? kube_find(&p->map, n->name) : NULL;
	const struct ec2_instance *in = p->ec2 ? ec2_find(p->instances, n->address) : NULL;
	char **placed = NULL;
	struct efa_error e;
	int rc;

	if (p->kube || p->ec2) {
		struct efa_placement where = {
			.zone = zone_from(cfg->zone_source, pod, in),
			.replace_zone = cfg->zone_source != EFA_SOURCE_FEATURES,
			.layers = layers_from(cfg->topology_source, pod, in),
			.block = cfg->topology_source == EFA_SOURCE_EC2 && in ? in->block : NULL,
			.replace_layers = cfg->topology_source != EFA_SOURCE_FEATURES,
		};

		p->unplaced += p->kube && (!pod || !pod->zone);
		p->no_instance += p->ec2 && !in;
		if (!(placed = efa_features_placed(features, cluster, &where)))
			return -1;
		if (updates && !same_features(features, placed) &&
		    add_update(updates, n->name, features, placed)) {
			efa_strv_free(placed);
			return -1;
		}
		features = placed;
	}
	rc = efa_cluster_add_node(cluster, n->name, features, n->state, n->partitions, &e);
	efa_strv_free(placed);
	return rc;
}

/* The cluster's own fields: where it came from and how features read. */
static int begin_cluster(const struct assembly *a, struct efa_cluster *cluster)
{
	const char *api = slurmrest_api_version(a->rest), *slurm = slurmrest_slurm_version(a->rest);

	cluster->generated = (int64_t)time(NULL);
	cluster->source = http_url_public(a->url);
	cluster->zone_prefix = strdup(a->cfg->zone_feature_prefix);
	cluster->api_version = api ? strdup(api) : NULL;
	cluster->slurm_version = slurm ? strdup(slurm) : NULL;
	if (!cluster->source || !cluster->zone_prefix)
		return -1;
	return efa_cluster_set_layers(cluster, a->cfg->topology_feature_prefixes,
				      a->cfg->capacity_block_feature_prefix);
}

static void say_unplaced(const struct placements *p, size_t count)
{
	if (p->unplaced)
		fprintf(stderr, "slurm-efa: kubernetes: %zu of %zu Slurm nodes have no pod in namespace %s on a node with a zone label (%s): their own features stand\n",
			p->unplaced, count, p->map.namespace, KUBE_ZONE_LABEL);
	if (p->no_instance)
		fprintf(stderr, "slurm-efa: ec2: %zu of %zu Slurm nodes have an address (NodeAddr=) no running instance in %s has as its private IPv4 address: their own features stand\n",
			p->no_instance, count, ec2_region(p->instances));
}

int assembly_read(struct assembly *a, bool conditional, struct efa_cluster *cluster,
		  int *not_modified, struct node_feature_updates *updates,
		  struct assembly_error *err)
{
	struct placements p = { 0 };
	slurmrest_nodes *nodes = NULL;
	int rc = -1;

	memset(cluster, 0, sizeof(*cluster));
	*not_modified = 0;
	if (slurmrest_get_nodes(a->rest, conditional ? a->since : 0, &nodes, &err->rest))
		return failed(err, ASSEMBLY_AT_SLURMRESTD, err->rest.message);
	for (const char *const *w = slurmrest_warnings(a->rest); *w; w++)
		fprintf(stderr, "slurm-efa: slurmrestd warns: %s\n", *w);
	if (nodes->not_modified) {
		*not_modified = 1;
		slurmrest_nodes_free(nodes);
		return 0;
	}
	if (conditional)
		a->since = nodes->update_time;
	if (begin_cluster(a, cluster)) {
		failed(err, ASSEMBLY_AT_MEMORY, "out of memory");
		goto out;
	}
	if (read_placements(a, cluster->nlayers, nodes, &p, err))
		goto out;
	for (size_t i = 0; i < nodes->count; i++) {
		if (add_node(a->cfg, &p, &nodes->nodes[i], cluster, updates)) {
			failed(err, ASSEMBLY_AT_MEMORY, "out of memory");
			goto out;
		}
	}
	say_unplaced(&p, nodes->count);
	rc = 0;
out:
	kube_map_clear(&p.map);
	slurmrest_nodes_free(nodes);
	if (rc) {
		efa_cluster_clear(cluster);
		if (updates)
			node_feature_updates_clear(updates);
	}
	return rc;
}

void assembly_clear(struct assembly *a)
{
	ec2_close(a->ec2);
	a->ec2 = NULL;
}
