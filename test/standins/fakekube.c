/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in Kubernetes API server on 127.0.0.1, over TLS:
 *   fakekube SECONDS DIR CERT KEY TOKENFILE [FORBIDDEN]
 * prints the port it listens on, then for SECONDS answers
 *   GET /api/v1/nodes                    from DIR/nodes.json (a NodeList)
 *   GET /api/v1/namespaces/NS/pods       from DIR/pods.json, the pods of NS
 * (each file read at every request, so a test can change it), as the
 * Kubernetes API documents list calls ("Retrieving large results sets in
 * chunks", kubernetes.io/docs/reference/using-api/api-concepts/, and
 * ListMeta in the API reference):
 * - items in storage key order (by name within a namespace);
 * - ?limit=N: at most N items (all without it; fewer, as a server may
 *   return, with FAKEKUBE_PAGE=N in the environment); while more remain,
 *   metadata.continue holds an opaque token and metadata.remainingItemCount
 *   how many; both absent on the last page;
 * - ?continue=TOKEN: the next page of the same list. Tokens are shaped as
 *   the API server's (base64url, no padding, of {"v","rv","start"}); one
 *   that does not decode is answered 400 BadRequest ("invalid continue
 *   token"), one whose list has changed since (this server keeps one
 *   revision: a change to the file is a compaction) or, with
 *   FAKEKUBE_COMPACT=1, any token at all, 410 Gone with reason Expired;
 * - metadata.resourceVersion: the file's, else one from its mtime.
 * Selectors (labelSelector=, fieldSelector=) are answered 400: slurm-efa
 * sends none, and a client that starts to would learn so here.
 * Two writes, as the repair ladder's replace makes them, each changing
 * the file so that the next list shows it:
 *   PATCH /api/v1/nodes/NAME             a strategic merge (or merge) patch
 *                                        of spec.unschedulable (kubectl
 *                                        cordon's); other Content-Types 415
 *                                        UnsupportedMediaType
 *   DELETE /api/v1/namespaces/NS/pods/NAME  a graceful delete: the pod gets
 *                                        metadata.deletionTimestamp (the
 *                                        kubelet removes it later: here the
 *                                        test) and is answered 200 with it
 * both answered 404 NotFound (a Status with details.name and kind) for an
 * object that is not there.
 * Errors are Status objects (kind Status, status Failure, message,
 * reason, code). A request must carry "Authorization: Bearer <TOKENFILE's
 * content>", read at each request so a test can renew it; otherwise 401
 * Unauthorized. FORBIDDEN ("nodes" or "pods") is answered 403 Forbidden,
 * as for a service account without that RBAC rule. Broken servers, for
 * the client's limits:
 * - FAKEKUBE_CONTINUE=same: a continued page carries the token it was
 *   asked with (its paging never advances); =new: a continued page is
 *   the same page again under a new token every time (it never ends);
 * - FAKEKUBE_THROTTLE=N: the first N authenticated requests are answered
 *   429 TooManyRequests with Retry-After: FAKEKUBE_RETRY_AFTER (1 s by
 *   default), as API Priority and Fairness rejects a request.
 * Every request line goes to stderr.
 */
#include <ctype.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "serve.h"

#define TOKEN_VERSION "meta.k8s.io/v1"

struct server {
	SSL_CTX *tls;
	const char *dir;
	const char *token_file;
	const char *forbidden;
	long throttled;		/* requests still to answer 429 */
	unsigned long issued;	/* tokens made, for FAKEKUBE_CONTINUE=new */
};

static void reply(SSL *ssl, int code, const char *reason, const char *extra, json_t *body)
{
	char *text = json_dumps(body, JSON_COMPACT);
	char head[512];
	size_t len = text ? strlen(text) : 0;
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%s"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", code, reason,
			 extra ? extra : "", len);

	SSL_write(ssl, head, n);
	if (len)
		SSL_write(ssl, text, (int)len);
	free(text);
}

/* A Status object, as the API server answers a failed request. */
static void status(SSL *ssl, int code, const char *phrase, const char *reason, const char *message,
		   const char *extra, json_t *details)
{
	json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status",
			       "apiVersion", "v1", "metadata", "status", "Failure", "message", message,
			       "reason", reason, "code", code);

	if (details)
		json_object_set_new(st, "details", details);
	reply(ssl, code, phrase, extra, st);
	json_decref(st);
}

static char *token_of(const char *path)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	return strdup(buf);
}

static int authorized(const char *head, const char *token_file)
{
	const char *line = strcasestr(head, "\r\nAuthorization: Bearer ");
	char *want = token_of(token_file);
	size_t len;
	int ok;

	if (!line || !want) {
		free(want);
		return 0;
	}
	line += strlen("\r\nAuthorization: Bearer ");
	len = strcspn(line, "\r\n");
	ok = len == strlen(want) && !strncmp(line, want, len);
	free(want);
	return ok;
}

/* The value of a query parameter, %XX decoded; NULL when absent. */
static char *param(const char *query, const char *name)
{
	size_t nlen = strlen(name);

	for (const char *p = query; p && *p; p = strchr(p, '&') ? strchr(p, '&') + 1 : NULL) {
		if (!strncmp(p, name, nlen) && p[nlen] == '=') {
			const char *v = p + nlen + 1;
			size_t len = strcspn(v, "&");
			char *out = malloc(len + 1), *o = out;

			for (size_t i = 0; out && i < len; i++) {
				unsigned c;

				if (v[i] == '%' && i + 2 < len && sscanf(v + i + 1, "%2x", &c) == 1) {
					*o++ = (char)c;
					i += 2;
				} else {
					*o++ = v[i];
				}
			}
			if (out)
				*o = '\0';
			return out;
		}
	}
	return NULL;
}

/* base64url without padding (RFC 4648 section 5), as the API server's
 * tokens are. */
static char *b64url(const char *in)
{
	size_t len = strlen(in);
	char *out = malloc(4 * (len / 3 + 1) + 1);
	int n;

	if (!out)
		return NULL;
	n = EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)in, (int)len);
	while (n > 0 && out[n - 1] == '=')
		n--;
	out[n] = '\0';
	for (char *c = out; *c; c++)
		*c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
	return out;
}

/* The decoded bytes of a base64url token, NULL when it is not one. */
static char *unb64url(const char *in, size_t *len)
{
	size_t n = strlen(in), pad = (4 - n % 4) % 4;
	char *std = malloc(n + pad + 1), *out = malloc(3 * ((n + pad) / 4) + 1);
	int got;

	if (!std || !out || pad == 3 || strspn(in, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != n)
		goto fail;
	for (size_t i = 0; i < n; i++)
		std[i] = in[i] == '-' ? '+' : in[i] == '_' ? '/' : in[i];
	memset(std + n, '=', pad);
	std[n + pad] = '\0';
	got = EVP_DecodeBlock((unsigned char *)out, (unsigned char *)std, (int)(n + pad));
	if (got < 0)
		goto fail;
	*len = (size_t)got - pad;
	out[*len] = '\0';
	free(std);
	return out;
fail:
	free(std);
	free(out);
	return NULL;
}

/* A token for the list at revision rv, going on after the item named
 * last: its storage key with a NUL, the next key there can be. */
static char *make_token(struct server *srv, long long rv, const char *last, int fresh)
{
	json_t *t = json_pack("{s:s, s:I, s:s%}", "v", TOKEN_VERSION, "rv", (json_int_t)rv, "start",
			      last, strlen(last) + 1);
	char *text, *out;

	if (fresh)
		json_object_set_new(t, "n", json_integer((json_int_t)++srv->issued));
	text = json_dumps(t, JSON_COMPACT | JSON_ENCODE_ANY);
	out = text ? b64url(text) : NULL;
	free(text);
	json_decref(t);
	return out;
}

/* The name a token starts after, and its revision; NULL: not a token. */
static char *read_token(const char *token, long long *rv)
{
	size_t len;
	char *text = unb64url(token, &len), *start = NULL;
	json_t *t = text ? json_loadb(text, len, JSON_ALLOW_NUL, NULL) : NULL;
	const char *v = json_string_value(json_object_get(t, "v"));
	const char *s = json_string_value(json_object_get(t, "start"));

	*rv = json_integer_value(json_object_get(t, "rv"));
	if (v && !strcmp(v, TOKEN_VERSION) && *rv > 0 && s && *s)
		start = strdup(s);
	json_decref(t);
	free(text);
	return start;
}

static const char *name_of(json_t *item)
{
	const char *n = json_string_value(json_object_get(json_object_get(item, "metadata"), "name"));

	return n ? n : "";
}

static int by_name(const void *a, const void *b)
{
	return strcmp(name_of(*(json_t *const *)a), name_of(*(json_t *const *)b));
}

/* The list's revision: the file's resourceVersion, else its mtime. */
static long long revision(json_t *all, const char *path)
{
	const char *v = json_string_value(json_object_get(json_object_get(all, "metadata"),
							  "resourceVersion"));
	struct stat st;

	if (v && atoll(v) > 0)
		return atoll(v);
	if (stat(path, &st))
		return 1;
	return (long long)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000 + 1;
}

/* One page of the items of file (those of namespace ns, when given). */
static void list(SSL *ssl, struct server *srv, const char *file, const char *ns, const char *query)
{
	char path[4096], *limit_s = param(query, "limit"), *cont = param(query, "continue");
	char *start = NULL, *next = NULL, rvs[32], *label_sel = param(query, "labelSelector");
	char *field_sel = param(query, "fieldSelector");
	const char *broken = getenv("FAKEKUBE_CONTINUE"), *page_env = getenv("FAKEKUBE_PAGE");
	long long rv, token_rv = 0;
	size_t limit = limit_s ? strtoul(limit_s, NULL, 10) : 0, n = 0, first, last, i;
	json_t *all, *items, *page, *out, **sorted = NULL;

	snprintf(path, sizeof(path), "%s/%s", srv->dir, file);
	all = json_load_file(path, 0, NULL);
	items = json_object_get(all, "items");
	rv = revision(all, path);
	if (label_sel || field_sel) {
		status(ssl, 400, "Bad Request", "BadRequest", "fakekube serves no selectors", NULL, NULL);
		goto out;
	}
	if (page_env && atol(page_env) > 0 && (!limit || (size_t)atol(page_env) < limit))
		limit = (size_t)atol(page_env);
	if (cont && !(start = read_token(cont, &token_rv))) {
		status(ssl, 400, "Bad Request", "BadRequest",
		       "invalid continue token: the token does not decode", NULL, NULL);
		goto out;
	}
	if (cont && (token_rv != rv || getenv("FAKEKUBE_COMPACT"))) {
		status(ssl, 410, "Gone", "Expired",
		       "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
		       NULL, NULL);
		goto out;
	}
	sorted = calloc(json_array_size(items) + 1, sizeof(*sorted));
	for (i = 0; sorted && i < json_array_size(items); i++) {
		json_t *item = json_array_get(items, i);
		const char *its = json_string_value(json_object_get(json_object_get(item, "metadata"),
								    "namespace"));

		if (!ns || (its && !strcmp(its, ns)))
			sorted[n++] = item;
	}
	qsort(sorted, n, sizeof(*sorted), by_name);
	for (first = 0; start && first < n && strcmp(name_of(sorted[first]), start) <= 0; first++)
		;
	last = limit && n - first > limit ? first + limit : n;
	page = json_array();
	for (i = first; i < last; i++)
		json_array_append(page, sorted[i]);
	snprintf(rvs, sizeof(rvs), "%lld", rv);
	out = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind",
			json_string_value(json_object_get(all, "kind")) ?
			json_string_value(json_object_get(all, "kind")) : "List",
			"apiVersion", "v1", "metadata", "resourceVersion", rvs, "items", page);
	if (last < n) {
		json_t *meta = json_object_get(out, "metadata");

		if (cont && broken && !strcmp(broken, "same"))
			next = strdup(cont);
		else if (cont && broken && !strcmp(broken, "new"))
			next = make_token(srv, rv, start, 1);
		else
			next = make_token(srv, rv, name_of(sorted[last - 1]), 0);
		json_object_set_new(meta, "continue", json_string(next ? next : ""));
		json_object_set_new(meta, "remainingItemCount", json_integer((json_int_t)(n - last)));
	}
	reply(ssl, 200, "OK", NULL, out);
	json_decref(out);
out:
	json_decref(all);
	free(sorted);
	free(next);
	free(start);
	free(limit_s);
	free(cont);
	free(label_sel);
	free(field_sel);
}

/* The item of file named name (in namespace ns, when given), and the
 * whole file in *all; NULL when there is none. */
static json_t *find_item(struct server *srv, const char *file, const char *ns, const char *name,
			 json_t **all, char *path, size_t size)
{
	json_t *items;

	snprintf(path, size, "%s/%s", srv->dir, file);
	*all = json_load_file(path, 0, NULL);
	items = json_object_get(*all, "items");
	for (size_t i = 0; i < json_array_size(items); i++) {
		json_t *item = json_array_get(items, i);
		const char *its = json_string_value(json_object_get(json_object_get(item, "metadata"),
								    "namespace"));

		if (!strcmp(name_of(item), name) && (!ns || (its && !strcmp(its, ns))))
			return item;
	}
	return NULL;
}

/* The file written whole, as a list read beside it sees it, and the
 * changed item answered. */
static void save_and_reply(SSL *ssl, json_t *all, const char *path, json_t *item)
{
	char tmp[4200];

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	if (json_dump_file(all, tmp, JSON_INDENT(1)) || rename(tmp, path))
		status(ssl, 500, "Internal Server Error", "InternalError", "cannot save", NULL, NULL);
	else
		reply(ssl, 200, "OK", NULL, item);
}

static void not_found(SSL *ssl, const char *kind, const char *name)
{
	char msg[512];

	snprintf(msg, sizeof(msg), "%s \"%s\" not found", kind, name);
	status(ssl, 404, "Not Found", "NotFound", msg, NULL,
	       json_pack("{s:s, s:s}", "name", name, "kind", kind));
}

static void patch_node(SSL *ssl, struct server *srv, const char *head, const char *body,
		       const char *name)
{
	char path[4096];
	const char *type = strcasestr(head, "\r\nContent-Type: ");
	json_t *all = NULL, *node, *patch, *unschedulable;

	if (!type || (strncasecmp(type + 16, "application/strategic-merge-patch+json", 38) &&
		      strncasecmp(type + 16, "application/merge-patch+json", 28))) {
		status(ssl, 415, "Unsupported Media Type", "UnsupportedMediaType",
		       "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json",
		       NULL, NULL);
		return;
	}
	if (!(node = find_item(srv, "nodes.json", NULL, name, &all, path, sizeof(path)))) {
		not_found(ssl, "nodes", name);
		goto out;
	}
	patch = json_loads(body, 0, NULL);
	unschedulable = json_object_get(json_object_get(patch, "spec"), "unschedulable");
	if (!json_is_boolean(unschedulable)) {
		status(ssl, 422, "Unprocessable Entity", "Invalid",
		       "fakekube patches spec.unschedulable alone", NULL, NULL);
		json_decref(patch);
		goto out;
	}
	if (!json_object_get(node, "spec"))
		json_object_set_new(node, "spec", json_object());
	json_object_set(json_object_get(node, "spec"), "unschedulable", unschedulable);
	json_decref(patch);
	save_and_reply(ssl, all, path, node);
out:
	json_decref(all);
}

static void delete_pod(SSL *ssl, struct server *srv, const char *ns, const char *name)
{
	char path[4096], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	json_t *all = NULL, *pod;

	if (!(pod = find_item(srv, "pods.json", ns, name, &all, path, sizeof(path)))) {
		not_found(ssl, "pods", name);
		goto out;
	}
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp", json_string(stamp));
	save_and_reply(ssl, all, path, pod);
out:
	json_decref(all);
}

static void forbidden(SSL *ssl, const char *resource, const char *ns)
{
	char msg[512];

	snprintf(msg, sizeof(msg),
		 "%s is forbidden: User \"system:serviceaccount:slurm:slurm-efa\" cannot list resource \"%s\" in API group \"\" %s%s%s",
		 resource, resource, ns ? "in the namespace \"" : "at the cluster scope", ns ? ns : "",
		 ns ? "\"" : "");
	status(ssl, 403, "Forbidden", "Forbidden", msg, NULL, json_pack("{s:s}", "kind", resource));
}

static void answer(int fd, void *ctx)
{
	struct server *srv = ctx;
	char head[16384], method[16], target[4096], ns[256], name[256];
	const char *query, *pods, *body, *clen;
	size_t len = 0;
	SSL *ssl = SSL_new(srv->tls);
	int n;

	if (!ssl)
		return;
	SSL_set_fd(ssl, fd);
	if (SSL_accept(ssl) <= 0)
		goto out;	/* a client that does not trust us: its problem */
	while (len + 1 < sizeof(head) && (n = SSL_read(ssl, head + len, (int)(sizeof(head) - 1 - len))) > 0) {
		len += (size_t)n;
		head[len] = '\0';
		if (strstr(head, "\r\n\r\n"))
			break;
	}
	head[len] = '\0';
	/* A body: read up to its Content-Length. */
	body = strstr(head, "\r\n\r\n");
	clen = strcasestr(head, "\r\nContent-Length: ");
	if (body && clen && clen < body) {
		size_t want = (size_t)(body + 4 - head) + strtoul(clen + 18, NULL, 10);

		while (len < want && len + 1 < sizeof(head) &&
		       (n = SSL_read(ssl, head + len, (int)(sizeof(head) - 1 - len))) > 0)
			len += (size_t)n;
		head[len] = '\0';
	}
	body = strstr(head, "\r\n\r\n");
	body = body ? body + 4 : "";
	if (sscanf(head, "%15s %4095s", method, target) != 2)
		goto out;
	fprintf(stderr, "%s %s\n", method, target);
	query = strchr(target, '?') ? strchr(target, '?') + 1 : "";
	pods = strstr(target, "/pods");
	if (!authorized(head, srv->token_file)) {
		status(ssl, 401, "Unauthorized", "Unauthorized", "Unauthorized", NULL, NULL);
	} else if (srv->throttled > 0) {
		char extra[64];

		srv->throttled--;
		snprintf(extra, sizeof(extra), "Retry-After: %s\r\n",
			 getenv("FAKEKUBE_RETRY_AFTER") ? getenv("FAKEKUBE_RETRY_AFTER") : "1");
		status(ssl, 429, "Too Many Requests", "TooManyRequests",
		       "Too many requests, please try again later.", extra,
		       json_pack("{s:i}", "retryAfterSeconds",
				 getenv("FAKEKUBE_RETRY_AFTER") ? atoi(getenv("FAKEKUBE_RETRY_AFTER")) : 1));
	} else if (!strcmp(method, "PATCH") && sscanf(target, "/api/v1/nodes/%255[^/?]", name) == 1) {
		patch_node(ssl, srv, head, body, name);
	} else if (!strcmp(method, "DELETE") &&
		   sscanf(target, "/api/v1/namespaces/%255[^/]/pods/%255[^/?]", ns, name) == 2) {
		delete_pod(ssl, srv, ns, name);
	} else if (strcmp(method, "GET")) {
		status(ssl, 405, "Method Not Allowed", "MethodNotAllowed",
		       "fakekube: GET of nodes and pods, PATCH of a node, DELETE of a pod", NULL, NULL);
	} else if (!strncmp(target, "/api/v1/nodes", 13) && strchr("?", target[13])) {
		if (srv->forbidden && !strcmp(srv->forbidden, "nodes"))
			forbidden(ssl, "nodes", NULL);
		else
			list(ssl, srv, "nodes.json", NULL, query);
	} else if (sscanf(target, "/api/v1/namespaces/%255[^/]/pods", ns) == 1 && pods &&
		   strchr("?", pods[5])) {
		if (srv->forbidden && !strcmp(srv->forbidden, "pods"))
			forbidden(ssl, "pods", ns);
		else
			list(ssl, srv, "pods.json", ns, query);
	} else {
		status(ssl, 404, "Not Found", "NotFound", "the server could not find the requested resource",
		       NULL, NULL);
	}
	SSL_shutdown(ssl);
out:
	SSL_free(ssl);
}

int main(int argc, char **argv)
{
	struct server srv = { 0 };

	if (argc < 6) {
		fprintf(stderr, "usage: fakekube SECONDS DIR CERT KEY TOKENFILE [nodes|pods]\n");
		return 2;
	}
	srv.dir = argv[2];
	srv.token_file = argv[5];
	srv.forbidden = argc > 6 ? argv[6] : NULL;
	srv.throttled = getenv("FAKEKUBE_THROTTLE") ? atol(getenv("FAKEKUBE_THROTTLE")) : 0;
	srv.tls = SSL_CTX_new(TLS_server_method());
	if (!srv.tls || SSL_CTX_use_certificate_chain_file(srv.tls, argv[3]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(srv.tls, argv[4], SSL_FILETYPE_PEM) != 1) {
		ERR_print_errors_fp(stderr);
		return 1;
	}
	return serve_loopback("fakekube", (unsigned)atoi(argv[1]), answer, &srv);
}
