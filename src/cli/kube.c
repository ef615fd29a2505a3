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
#define KUBE_CONNECT_MS 5000
#define KUBE_TIMEOUT_MS 30000
#define KUBE_MAX_RESPONSE (256u * 1024 * 1024)
#define KUBE_RETRIES 3
#define KUBE_RETRY_MS 500
#define KUBE_NAMESPACE_MAX 253

struct labels {
	char *node;
	char *zone;
	char **layers;
};

struct reader {
	struct http_client *http;
	size_t nlayers;
	struct labels *nodes;	/* sorted by node name once read */
	size_t nnodes;
	char *why;
	size_t size;
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

/*
 * GETs every page of a list; calls each(item) per item. 0, or -1 with why
 * filled.
 */
static int list(struct reader *r, const char *path, int (*each)(struct reader *, json_t *),
		const char *what)
{
	static const char *const headers[] = { "Accept: application/json", NULL };
	char *token = NULL, *query = NULL;
	int rc = -1;

	do {
		struct http_answer a;
		struct http_error err;
		json_t *root, *items;
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
		if (http_request(r->http, "GET", query, headers, NULL, &a, &err)) {
			snprintf(r->why, r->size, "%s", err.message);
			goto out;
		}
		root = a.data && a.status == 200 ? json_loadb(a.data, a.len, 0, NULL) : NULL;
		if (a.status != 200) {
			json_t *st = a.data ? json_loadb(a.data, a.len, 0, NULL) : NULL;
			const char *msg = json_string_value(json_object_get(st, "message"));

			snprintf(r->why, r->size, "the Kubernetes API at %s answered HTTP %ld to GET %s%s%s%s",
				 http_url(r->http), a.status, path, msg ? " (" : "", msg ? msg : "",
				 msg ? ")" : "");
			if (a.status == 401)
				snprintf(r->why + strlen(r->why), r->size - strlen(r->why),
					 ": the token is not accepted: check KubernetesTokenFile=");
			else if (a.status == 403)
				snprintf(r->why + strlen(r->why), r->size - strlen(r->why),
					 ": the service account may not %s: grant get and list on nodes and pods (deploy/slinky/rbac.yaml)",
					 what);
			json_decref(st);
			free(a.data);
			goto out;
		}
		free(a.data);
		items = json_object_get(root, "items");
		if (!json_is_array(items)) {
			snprintf(r->why, r->size, "the Kubernetes API at %s answered GET %s with no list of items",
				 http_url(r->http), path);
			json_decref(root);
			goto out;
		}
		for (i = 0; i < json_array_size(items); i++)
			if (each(r, json_array_get(items, i))) {
				json_decref(root);
				goto nomem;
			}
		next = json_string_value(json_object_get(json_object_get(root, "metadata"), "continue"));
		more = next && *next;
		free(token);
		token = more ? strdup(next) : NULL;
		json_decref(root);
		if (more && !token)
			goto nomem;
	} while (token);
	rc = 0;
	goto out;
nomem:
	snprintf(r->why, r->size, "out of memory");
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

static int placement_cmp(const void *a, const void *b)
{
	return strcmp(((const struct kube_placement *)a)->pod, ((const struct kube_placement *)b)->pod);
}

struct pod_reader {
	struct reader r;
	struct kube_map *map;
};

static int add_pod(struct reader *r, json_t *item)
{
	struct kube_map *map = ((struct pod_reader *)r)->map;
	const char *name = json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));
	const char *node = json_string_value(json_object_get(json_object_get(item, "spec"), "nodeName"));
	struct labels key = { .node = (char *)node }, *l;
	struct kube_placement *grown, *p;

	if (!name)
		return 0;
	if (!(grown = realloc(map->pods, (map->npods + 1) * sizeof(*grown))))
		return -1;
	map->pods = grown;
	p = &map->pods[map->npods];
	memset(p, 0, sizeof(*p));
	if (!(p->layers = calloc(r->nlayers + 1, sizeof(*p->layers))))
		return -1;
	map->npods++;
	l = node ? bsearch(&key, r->nodes, r->nnodes, sizeof(*r->nodes), labels_cmp) : NULL;
	if (!(p->pod = strdup(name)) || (node && !(p->node = strdup(node))))
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
static char *namespace_of(const struct efa_config *cfg)
{
	char *text = NULL, *ns;
	size_t len;

	if (cfg->kubernetes_namespace)
		return strdup(cfg->kubernetes_namespace);
	if (efa_read_file(KUBE_SERVICE_ACCOUNT "/namespace", KUBE_NAMESPACE_MAX, &text, &len, NULL))
		return strdup("slurm");
	len = strcspn(text, " \t\r\n");
	ns = strndup(text, len);
	free(text);
	return ns;
}

int kube_read(const struct efa_config *cfg, size_t nlayers, struct kube_map *map, char *why,
	      size_t size)
{
	struct http_options o = {
		.service = "the Kubernetes API",
		.url = cfg->kubernetes_url ? cfg->kubernetes_url : KUBE_DEFAULT_URL,
		.url_key = "KubernetesURL=",
		.ca_key = "KubernetesCAFile=",
		.ca_file = cfg->kubernetes_ca_file ? cfg->kubernetes_ca_file : KUBE_SERVICE_ACCOUNT "/ca.crt",
		.connect_ms = KUBE_CONNECT_MS,
		.timeout_ms = KUBE_TIMEOUT_MS,
		.max_response = KUBE_MAX_RESPONSE,
		.retries = KUBE_RETRIES,	/* the API server throttles with 429 */
		.retry_ms = KUBE_RETRY_MS,
		/* Projected service account tokens are renewed in place and
		 * are mode 0644 by default. */
		.token_file = cfg->kubernetes_token_file ? cfg->kubernetes_token_file :
			      KUBE_SERVICE_ACCOUNT "/token",
		.allow_plain_http = cfg->allow_plain_http == EFA_YES,
		.plain_http_key = "AllowPlainHTTP=yes in efa.conf",
	};
	struct pod_reader pr = { .r = { .nlayers = nlayers, .why = why, .size = size }, .map = map };
	struct http_error err;
	char *path = NULL;
	int rc = -1;

	memset(map, 0, sizeof(*map));
	map->nlayers = nlayers;
	if (!(map->namespace = namespace_of(cfg))) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	if (!(pr.r.http = http_new(&o, &err))) {
		snprintf(why, size, "%s", err.message);
		goto out;
	}
	if (list(&pr.r, "/api/v1/nodes", add_node, "list nodes"))
		goto out;
	qsort(pr.r.nodes, pr.r.nnodes, sizeof(*pr.r.nodes), labels_cmp);
	if (asprintf(&path, "/api/v1/namespaces/%s/pods", map->namespace) < 0) {
		path = NULL;
		snprintf(why, size, "out of memory");
		goto out;
	}
	if (list(&pr.r, path, add_pod, "list pods"))
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

const struct kube_placement *kube_find(const struct kube_map *map, const char *pod)
{
	struct kube_placement key = { .pod = (char *)pod };

	return map->npods ? bsearch(&key, map->pods, map->npods, sizeof(*map->pods), placement_cmp) :
			    NULL;
}

void kube_map_clear(struct kube_map *map)
{
	for (size_t i = 0; i < map->npods; i++) {
		free(map->pods[i].pod);
		free(map->pods[i].node);
		free(map->pods[i].zone);
		free_layers(map->pods[i].layers, map->nlayers);
	}
	free(map->pods);
	free(map->namespace);
	memset(map, 0, sizeof(*map));
}
