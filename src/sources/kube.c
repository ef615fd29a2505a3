/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa: Slurm nodes' zones and network layers from the Kubernetes API. */
#include <ctype.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "http/http.h"
#include "kube.h"

#define KUBE_PAGE 500
/*
 * Bounds on one list_all_pages, whatever the server answers: 1,000 full pages hold
 * 500,000 objects, 100 times the 5,000 nodes a Kubernetes cluster is
 * documented to scale to, so memory and time stay bounded when a server's
 * paging never ends and gives no remainingItemCount to bound it by.
 */
#define KUBE_MAX_PAGES 1000
#define KUBE_MAX_ITEMS (KUBE_MAX_PAGES * KUBE_PAGE)
#define KUBE_CONNECT_MS 5000
#define KUBE_TIMEOUT_MS 30000
#define KUBE_MAX_RESPONSE (256u * 1024 * 1024)
#define KUBE_RETRIES 3
#define KUBE_RETRY_MS 500
#define KUBE_NAMESPACE_MAX 253
/* How much of a continue token a message shows. */
#define KUBE_TOKEN_SHOWN 64

struct labels {
	char *node;
	char *zone;
	char **layers;
};

struct reader {
	struct http_client *http;
	const char *token_file;
	size_t nlayers;
	struct labels *nodes;	/* sorted by node name once read */
	size_t nnodes;
	struct efa_error *err;
};

/* The continue token in a query: RFC 3986 unreserved bytes kept. */
static char *escaped(const char *s)
{
	char *out = malloc(3 * strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (isalnum((unsigned char)*s) || strchr("-._~", *s))
			*o++ = *s;
		else
			o += sprintf(o, "%%%02X", (unsigned char)*s);
	}
	*o = '\0';
	return out;
}

static const char *label(json_t *item, const char *name)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(item, "metadata"),
								 "labels"), name));
}

/* Layer lists have holes (NULL where a label is missing). */
static void free_layers(char **layers, size_t n)
{
	for (size_t i = 0; layers && i < n; i++)
		free(layers[i]);
	free(layers);
}

/* Why a list answer other than 200 came, and what to do about it. */
static void refused(struct reader *r, const char *method, const char *path, const char *what,
		    const struct http_answer *a)
{
	json_t *st = a->data ? json_loadb(a->data, a->len, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(st, "message"));
	const char *reason = json_string_value(json_object_get(st, "reason"));
	char advice[EFA_ERROR_MAX / 2] = "";

	if (a->status == 401)
		snprintf(advice, sizeof(advice),
			 ": it does not accept the token in %s (expired, revoked or of another cluster): check KubernetesTokenFile=",
			 r->token_file);
	else if (a->status == 403)
		snprintf(advice, sizeof(advice),
			 ": the service account may not %s: add that rule to its role (deploy/slinky/rbac.yaml)",
			 what);
	else if (a->status == 410 || (reason && !strcmp(reason, "Expired")))
		snprintf(advice, sizeof(advice),
			 ": the list's continue token expired before its next page was asked for; the next sync lists again from the start");
	else if (a->status == 429)
		snprintf(advice, sizeof(advice),
			 ": the API server is throttling this client (asked %d times, waiting as Retry-After said); the next sync asks again",
			 1 + KUBE_RETRIES);
	efa_error_set(r->err, "the Kubernetes API at %s answered HTTP %ld to %s %s%s%.200s%s%s",
		      http_url(r->http), a->status, method, path, msg ? " (" : "", msg ? msg : "",
		      msg ? ")" : "", advice);
	json_decref(st);
}

/*
 * Paging that does not end is refused (rather than followed for ever, or
 * until memory runs out): a continue token answered with itself, more
 * pages than the objects the server said remain could fill at the size of
 * the page that said so (remainingItemCount: an estimate, absent with
 * selectors or from servers before 1.15, so only a bound), or more than
 * KUBE_MAX_PAGES pages or KUBE_MAX_ITEMS objects in all.
 * https://kubernetes.io/docs/reference/using-api/api-concepts/#retrieving-large-results-sets-in-chunks
 */
struct paging {
	size_t pages;		/* answered so far */
	size_t items;
	size_t last_page;	/* 0: no remainingItemCount yet */
};

static bool paging_runs_away(struct reader *r, const char *path, struct paging *pg, json_t *meta,
		    size_t n, const char *sent, const char *next)
{
	json_t *left = json_object_get(meta, "remainingItemCount");
	const char *more = strlen(next) > KUBE_TOKEN_SHOWN ? "..." : "";

	pg->pages++;
	pg->items += n;
	if (sent && !strcmp(sent, next)) {
		efa_error_set(r->err,
			 "the Kubernetes API at %s answered page %zu of GET %s with the continue token it was sent (\"%.*s%s\"): its paging does not advance; the list is abandoned",
			 http_url(r->http), pg->pages, path, KUBE_TOKEN_SHOWN, next, more);
		return true;
	}
	if (json_is_integer(left) && json_integer_value(left) >= 0) {
		size_t rest = (size_t)json_integer_value(left), per = n ? n : 1;
		size_t bound = pg->pages + (rest ? (rest + per - 1) / per : 1);

		if (!pg->last_page || bound < pg->last_page)
			pg->last_page = bound;
	}
	if ((pg->last_page && pg->pages >= pg->last_page) || pg->pages >= KUBE_MAX_PAGES ||
	    pg->items >= KUBE_MAX_ITEMS) {
		efa_error_set(r->err,
			 "the Kubernetes API at %s asks for page %zu of GET %s (continue token \"%.*s%s\") after %zu objects, where %s%zu pages: its paging does not end; the list is abandoned",
			 http_url(r->http), pg->pages + 1, path, KUBE_TOKEN_SHOWN, next, more, pg->items,
			 pg->last_page ? "the remainingItemCount it gave needs at most " :
					 "a list is refused past ",
			 pg->last_page ? pg->last_page : (size_t)KUBE_MAX_PAGES);
		return true;
	}
	return false;
}

/*
 * GETs every page of a list; calls each(item) per item. 0, or -1 with err
 * filled.
 */
static int list_all_pages(struct reader *r, const char *path, int (*each)(struct reader *, json_t *),
		const char *what)
{
	static const char *const headers[] = { "Accept: application/json", NULL };
	struct paging pg = { 0 };
	char *token = NULL, *query = NULL;
	int rc = -1;

	do {
		struct http_answer a;
		json_t *root, *items, *meta;
		const char *next;
		char *esc = NULL;
		bool more;
		size_t i;

		if (token && !(esc = escaped(token)))
			goto nomem;
		free(query);
		if (asprintf(&query, "%s?limit=%d%s%s", path, KUBE_PAGE, esc ? "&continue=" : "",
			     esc ? esc : "") < 0) {
			query = NULL;
			free(esc);
			goto nomem;
		}
		free(esc);
		if (http_request(r->http, "GET", query, headers, NULL, &a, r->err))
			goto out;
		if (a.status != 200) {
			refused(r, "GET", path, what, &a);
			free(a.data);
			goto out;
		}
		root = a.data ? json_loadb(a.data, a.len, 0, NULL) : NULL;
		free(a.data);
		items = json_object_get(root, "items");
		if (!json_is_array(items)) {
			efa_error_set(r->err, "the Kubernetes API at %s answered GET %s with no list of items",
				 http_url(r->http), path);
			json_decref(root);
			goto out;
		}
		for (i = 0; i < json_array_size(items); i++)
			if (each(r, json_array_get(items, i))) {
				json_decref(root);
				goto nomem;
			}
		meta = json_object_get(root, "metadata");
		next = json_string_value(json_object_get(meta, "continue"));
		more = next && *next;
		if (more && paging_runs_away(r, path, &pg, meta, json_array_size(items), token, next)) {
			json_decref(root);
			goto out;
		}
		free(token);
		token = more ? strdup(next) : NULL;
		json_decref(root);
		if (more && !token)
			goto nomem;
	} while (token);
	rc = 0;
	goto out;
nomem:
	efa_error_set(r->err, "out of memory");
out:
	free(token);
	free(query);
	return rc;
}

static int add_node(struct reader *r, json_t *item)
{
	const char *name = json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));
	struct labels *grown, *l;

	if (!name)
		return 0;
	if (!(grown = realloc(r->nodes, (r->nnodes + 1) * sizeof(*grown))))
		return -1;
	r->nodes = grown;
	l = &r->nodes[r->nnodes];
	memset(l, 0, sizeof(*l));
	if (!(l->layers = calloc(r->nlayers + 1, sizeof(*l->layers))))
		return -1;
	r->nnodes++;
	if (!(l->node = strdup(name)))
		return -1;
	if (label(item, KUBE_ZONE_LABEL) && !(l->zone = strdup(label(item, KUBE_ZONE_LABEL))))
		return -1;
	for (size_t i = 0; i < r->nlayers; i++) {
		char key[64];

		snprintf(key, sizeof(key), KUBE_LAYER_LABEL "%zu", i + 1);
		if (label(item, key) && !(l->layers[i] = strdup(label(item, key))))
			return -1;
	}
	return 0;
}

static int labels_cmp(const void *a, const void *b)
{
	return strcmp(((const struct labels *)a)->node, ((const struct labels *)b)->node);
}

/*
 * By Slurm node name; where several pods claim one name (a pod being
 * deleted beside its replacement), the one that is staying and scheduled
 * first, so that kube_find() finds it.
 */
static int placement_cmp(const void *a, const void *b)
{
	const struct kube_placement *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (x->deleting != y->deleting)
		return x->deleting ? 1 : -1;
	if (!x->node != !y->node)
		return x->node ? -1 : 1;
	return strcmp(x->pod, y->pod);
}

struct pod_reader {
	struct reader r;
	struct kube_map *map;
};

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

/*
 * The Slurm node a pod runs: Slinky's slurm-operator (1.2.1) names a
 * NodeSet pod after the NodeSet ("slurm-worker-p5-0"), while slurmd takes
 * the pod's hostname as its node name ("p5-0"): the NodeSet controller
 * sets spec.hostname (the chart's "<nodeset>-" plus the ordinal; in
 * DaemonSet mode the Kubernetes node's short name or its
 * nodeset.slinky.slurm.net/hostname-override annotation) and copies it
 * into the label nodeset.slinky.slurm.net/pod-hostname ("the pod hostname
 * (used as Slurm node name)"): internal/controller/nodeset/utils/utils.go
 * (initIdentity, GetSlurmNodeName) and api/v1beta1/well_known.go
 * (LabelNodeSetPodHostname) of SlinkyProject/slurm-operator v1.2.1. So
 * spec.hostname, else that label, else (pods made otherwise, with no
 * hostname: Kubernetes then uses the pod's name) the pod's name.
 */
static const char *slurm_name(json_t *item, const char *pod)
{
	const char *host = json_string_value(json_object_get(json_object_get(item, "spec"),
							     "hostname"));

	if (nonempty(host))
		return host;
	if (nonempty(label(item, KUBE_POD_HOSTNAME_LABEL)))
		return label(item, KUBE_POD_HOSTNAME_LABEL);
	return pod;
}

static int add_pod(struct reader *r, json_t *item)
{
	struct kube_map *map = ((struct pod_reader *)r)->map;
	json_t *meta = json_object_get(item, "metadata");
	const char *pod = nonempty(json_string_value(json_object_get(meta, "name")));
	const char *node = nonempty(json_string_value(json_object_get(json_object_get(item, "spec"),
								       "nodeName")));
	struct labels key = { .node = (char *)node }, *l;
	struct kube_placement *grown, *p;

	if (!pod)
		return 0;
	if (!(grown = realloc(map->pods, (map->npods + 1) * sizeof(*grown))))
		return -1;
	map->pods = grown;
	p = &map->pods[map->npods];
	memset(p, 0, sizeof(*p));
	if (!(p->layers = calloc(r->nlayers + 1, sizeof(*p->layers))))
		return -1;
	map->npods++;
	p->deleting = json_object_get(meta, "deletionTimestamp") != NULL;
	l = node ? bsearch(&key, r->nodes, r->nnodes, sizeof(*r->nodes), labels_cmp) : NULL;
	if (!(p->name = strdup(slurm_name(item, pod))) || !(p->pod = strdup(pod)) ||
	    (node && !(p->node = strdup(node))))
		return -1;
	if (!l)
		return 0;
	if (l->zone && !(p->zone = strdup(l->zone)))
		return -1;
	for (size_t i = 0; i < r->nlayers; i++)
		if (l->layers[i] && !(p->layers[i] = strdup(l->layers[i])))
			return -1;
	return 0;
}

/* The namespace: efa.conf's, else the service account's, else "slurm". */
static char *namespace_of(const struct kube_options *opts)
{
	char *text = NULL, *ns;
	size_t len;

	if (opts->namespace)
		return strdup(opts->namespace);
	if (efa_read_file(KUBE_SERVICE_ACCOUNT "/namespace", KUBE_NAMESPACE_MAX, &text, &len, NULL))
		return strdup("slurm");
	len = strcspn(text, " \t\r\n");
	ns = strndup(text, len);
	free(text);
	return ns;
}

void kube_options_from_config(const struct efa_config *cfg, size_t nlayers, struct kube_options *o)
{
	*o = (struct kube_options){
		.url = cfg->kubernetes_url,
		.token_file = cfg->kubernetes_token_file,
		.ca_file = cfg->kubernetes_ca_file,
		.namespace = cfg->kubernetes_namespace,
		.allow_plain_http = cfg->allow_plain_http == EFA_YES,
		.nlayers = nlayers,
	};
}

/* The one way every request of this file reaches the API. */
static void http_options_of(const struct kube_options *opts, struct http_options *o)
{
	*o = (struct http_options){
		.service = "the Kubernetes API",
		.url = opts->url ? opts->url : KUBE_DEFAULT_URL,
		.url_key = "KubernetesURL=",
		.ca_key = "KubernetesCAFile=",
		.ca_file = opts->ca_file ? opts->ca_file : KUBE_SERVICE_ACCOUNT "/ca.crt",
		.connect_ms = KUBE_CONNECT_MS,
		.timeout_ms = KUBE_TIMEOUT_MS,
		.max_response = KUBE_MAX_RESPONSE,
		.retries = KUBE_RETRIES,	/* the API server throttles with 429 */
		.retry_ms = KUBE_RETRY_MS,
		/* Projected service account tokens are renewed in place and
		 * are mode 0644 by default. */
		.token_file = opts->token_file ? opts->token_file : KUBE_SERVICE_ACCOUNT "/token",
		.allow_plain_http = opts->allow_plain_http,
		.plain_http_key = "AllowPlainHTTP=yes in efa.conf",
	};
}

int kube_read(const struct kube_options *opts, struct kube_map *map, struct efa_error *err)
{
	size_t nlayers = opts->nlayers;
	struct http_options o;
	struct pod_reader pr = {
		.r = { .nlayers = nlayers, .err = err },
		.map = map,
	};
	char *path = NULL;
	int rc = -1;

	http_options_of(opts, &o);
	pr.r.token_file = o.token_file;
	memset(map, 0, sizeof(*map));
	map->nlayers = nlayers;
	if (!(map->namespace = namespace_of(opts))) {
		efa_error_set(err, "out of memory");
		return -1;
	}
	if (!(pr.r.http = http_new(&o, err)))
		goto out;
	if (list_all_pages(&pr.r, "/api/v1/nodes", add_node, "list nodes"))
		goto out;
	qsort(pr.r.nodes, pr.r.nnodes, sizeof(*pr.r.nodes), labels_cmp);
	if (asprintf(&path, "/api/v1/namespaces/%s/pods", map->namespace) < 0) {
		path = NULL;
		efa_error_set(err, "out of memory");
		goto out;
	}
	if (list_all_pages(&pr.r, path, add_pod, "list pods"))
		goto out;
	qsort(map->pods, map->npods, sizeof(*map->pods), placement_cmp);
	rc = 0;
out:
	for (size_t i = 0; i < pr.r.nnodes; i++) {
		free(pr.r.nodes[i].node);
		free(pr.r.nodes[i].zone);
		free_layers(pr.r.nodes[i].layers, nlayers);
	}
	free(pr.r.nodes);
	free(path);
	http_free(pr.r.http);
	if (rc)
		kube_map_clear(map);
	return rc;
}

const struct kube_placement *kube_find(const struct kube_map *map, const char *name)
{
	size_t lo = 0, hi = map->npods;

	/* The first of the pods of that name: the preferred one. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(map->pods[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < map->npods && !strcmp(map->pods[lo].name, name) ? &map->pods[lo] : NULL;
}

void kube_map_clear(struct kube_map *map)
{
	for (size_t i = 0; i < map->npods; i++) {
		free(map->pods[i].name);
		free(map->pods[i].pod);
		free(map->pods[i].node);
		free(map->pods[i].zone);
		free_layers(map->pods[i].layers, map->nlayers);
	}
	free(map->pods);
	free(map->namespace);
	memset(map, 0, sizeof(*map));
}

/* One write: 0 when the API answered one of the statuses wanted (ok2 may
 * be 0), -1 with r->err saying what it answered. */
static int write_request(struct reader *r, const char *method, const char *path,
			 const char *const *headers, const char *body, long ok1, long ok2,
			 const char *what)
{
	struct http_answer a;

	if (http_request(r->http, method, path, headers, body, &a, r->err))
		return -1;
	if (a.status != ok1 && a.status != ok2) {
		refused(r, method, path, what, &a);
		free(a.data);
		return -1;
	}
	free(a.data);
	return 0;
}

int kube_replace(const struct kube_options *opts, const struct kube_placement *p,
		 struct efa_error *err)
{
	/* kubectl cordon's patch (a strategic merge patch of spec). */
	static const char *const patch_headers[] = {
		"Accept: application/json", "Content-Type: application/strategic-merge-patch+json", NULL
	};
	static const char *const delete_headers[] = { "Accept: application/json", NULL };
	struct http_options o;
	struct reader r = { .err = err };
	char *ns = NULL, *path = NULL;
	int rc = -1;

	if (!p->node) {
		efa_error_set(err, "pod %s is not scheduled on a Kubernetes node: nothing to cordon", p->pod);
		return -1;
	}
	http_options_of(opts, &o);
	r.token_file = o.token_file;
	if (!(ns = namespace_of(opts)) || asprintf(&path, "/api/v1/nodes/%s", p->node) < 0) {
		path = NULL;
		efa_error_set(err, "out of memory");
		goto out;
	}
	if (!(r.http = http_new(&o, err)))
		goto out;
	if (write_request(&r, "PATCH", path, patch_headers, "{\"spec\":{\"unschedulable\":true}}", 200,
			  0, "patch nodes (cordon)"))
		goto out;
	free(path);
	if (asprintf(&path, "/api/v1/namespaces/%s/pods/%s", ns, p->pod) < 0) {
		path = NULL;
		efa_error_set(err, "out of memory");
		goto out;
	}
	/* 404: gone already, which is what was asked. */
	if (write_request(&r, "DELETE", path, delete_headers, NULL, 200, 404, "delete pods"))
		goto out;
	rc = 0;
out:
	http_free(r.http);
	free(path);
	free(ns);
	return rc;
}
