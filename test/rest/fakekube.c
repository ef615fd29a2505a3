/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in Kubernetes API server on 127.0.0.1, over TLS:
 *   fakekube SECONDS DIR CERT KEY TOKENFILE [FORBIDDEN]
 * prints the port it listens on, then for SECONDS answers
 *   GET /api/v1/nodes                    from DIR/nodes.json (a NodeList)
 *   GET /api/v1/namespaces/NS/pods       from DIR/pods.json, the pods of NS
 * paged as the API server pages: at most ?limit= items (500 without one;
 * fewer, as a server may return, with FAKEKUBE_PAGE=N in the environment),
 * metadata.continue set while more remain, ?continue= taking it back (an
 * opaque token that needs escaping in a query). A request must carry
 * "Authorization: Bearer <TOKENFILE's content>", read at each request so a
 * test can renew it; otherwise 401. FORBIDDEN ("nodes" or "pods") is
 * answered 403, as for a service account without that RBAC rule. Every
 * request line goes to stderr.
 */
#include <ctype.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve.h"

#define PAGE_DEFAULT 500

struct server {
	SSL_CTX *tls;
	const char *dir;
	const char *token_file;
	const char *forbidden;
};

static void reply(SSL *ssl, int code, const char *reason, json_t *body)
{
	char *text = json_dumps(body, JSON_COMPACT);
	char head[256];
	size_t len = text ? strlen(text) : 0;
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", code, reason, len);

	SSL_write(ssl, head, n);
	if (len)
		SSL_write(ssl, text, (int)len);
	free(text);
}

static void status(SSL *ssl, int code, const char *reason, const char *message)
{
	json_t *st = json_pack("{s:s, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion", "v1",
			       "status", "Failure", "message", message, "code", code);

	reply(ssl, code, reason, st);
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
			size_t len = strcspn(v, "& ");
			char *out = malloc(len + 1), *o = out;

			for (size_t i = 0; out && i < len; i++) {
				unsigned c;

				if (v[i] == '%' && i + 2 < len + 1 && sscanf(v + i + 1, "%2x", &c) == 1) {
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

/* One page of the items of file (those of namespace ns, when given). */
static void list(SSL *ssl, const struct server *srv, const char *file, const char *ns,
		 const char *query)
{
	char path[4096], *limit_s = param(query, "limit"), *cont = param(query, "continue");
	json_t *all, *items, *page, *out;
	size_t limit = limit_s ? strtoul(limit_s, NULL, 10) : PAGE_DEFAULT, from = 0, start, i;

	if (getenv("FAKEKUBE_PAGE") && (size_t)atol(getenv("FAKEKUBE_PAGE")) < limit)
		limit = (size_t)atol(getenv("FAKEKUBE_PAGE"));
	snprintf(path, sizeof(path), "%s/%s", srv->dir, file);
	all = json_load_file(path, 0, NULL);
	if (cont && sscanf(cont, "offset/%zu+=", &from) != 1) {
		status(ssl, 410, "Gone", "The provided continue parameter is too old or malformed");
		goto out;
	}
	start = from;
	items = json_object_get(all, "items");
	page = json_array();
	out = json_pack("{s:s, s:s, s:{}, s:o}", "kind", json_string_value(json_object_get(all, "kind")),
			"apiVersion", "v1", "metadata", "items", page);
	for (i = 0; i < json_array_size(items); i++) {
		json_t *item = json_array_get(items, i);
		const char *its = json_string_value(json_object_get(json_object_get(item, "metadata"),
								    "namespace"));

		if (ns && (!its || strcmp(its, ns)))
			continue;
		if (from) {
			from--;
			continue;
		}
		if (limit && json_array_size(page) == limit) {
			char next[64];

			/* '/', '+' and '=': a client must escape the token. */
			snprintf(next, sizeof(next), "offset/%zu+=", start + limit);
			json_object_set_new(json_object_get(out, "metadata"), "continue", json_string(next));
			break;
		}
		json_array_append(page, item);
	}
	reply(ssl, 200, "OK", out);
	json_decref(out);
out:
	json_decref(all);
	free(limit_s);
	free(cont);
}

static void answer(int fd, void *ctx)
{
	const struct server *srv = ctx;
	char head[16384], method[16], target[4096], ns[256];
	const char *query;
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
	if (sscanf(head, "%15s %4095s", method, target) != 2)
		goto out;
	fprintf(stderr, "%s %s\n", method, target);
	query = strchr(target, '?') ? strchr(target, '?') + 1 : "";
	if (!authorized(head, srv->token_file)) {
		status(ssl, 401, "Unauthorized", "Unauthorized");
	} else if (strcmp(method, "GET")) {
		status(ssl, 405, "Method Not Allowed", "read-only stand-in");
	} else if (!strncmp(target, "/api/v1/nodes", 13) && strchr("?", target[13])) {
		if (srv->forbidden && !strcmp(srv->forbidden, "nodes"))
			status(ssl, 403, "Forbidden",
			       "nodes is forbidden: User \"system:serviceaccount:slurm:slurm-efa\" cannot list resource \"nodes\" in API group \"\" at the cluster scope");
		else
			list(ssl, srv, "nodes.json", NULL, query);
	} else if (sscanf(target, "/api/v1/namespaces/%255[^/]/pods", ns) == 1 &&
		   strstr(target, "/pods") && strchr("?", strstr(target, "/pods")[5])) {
		if (srv->forbidden && !strcmp(srv->forbidden, "pods"))
			status(ssl, 403, "Forbidden",
			       "pods is forbidden: User \"system:serviceaccount:slurm:slurm-efa\" cannot list resource \"pods\" in API group \"\" in the namespace");
		else
			list(ssl, srv, "pods.json", ns, query);
	} else {
		status(ssl, 404, "Not Found", "the server could not find the requested resource");
	}
	SSL_shutdown(ssl);
out:
	SSL_free(ssl);
}

int main(int argc, char **argv)
{
	struct server srv;

	if (argc < 6) {
		fprintf(stderr, "usage: fakekube SECONDS DIR CERT KEY TOKENFILE [nodes|pods]\n");
		return 2;
	}
	srv.dir = argv[2];
	srv.token_file = argv[5];
	srv.forbidden = argc > 6 ? argv[6] : NULL;
	srv.tls = SSL_CTX_new(TLS_server_method());
	if (!srv.tls || SSL_CTX_use_certificate_chain_file(srv.tls, argv[3]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(srv.tls, argv[4], SSL_FILETYPE_PEM) != 1) {
		ERR_print_errors_fp(stderr);
		return 1;
	}
	return serve_loopback("fakekube", (unsigned)atoi(argv[1]), answer, &srv);
}
