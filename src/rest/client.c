/* SPDX-License-Identifier: Apache-2.0 */
/* libslurmrest: the handle, requests over the HTTP layer, version choice. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http/http.h"
#include "internal.h"

#define DEFAULT_CONNECT_MS 2000
#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_MAX_RESPONSE (64u * 1024 * 1024)
/* A loaded slurmrestd may drop a connection: GETs are tried again. */
#define REST_RETRIES 2
#define REST_RETRY_MS 200

struct slurmrest {
	struct http_client *http;
	const char *url;	/* the HTTP client's, for messages */
	char *user;
	char *user_header;	/* X-SLURM-USER-NAME with a token */
	int bearer;
	int api;		/* 0 until chosen */
	int api_checked;	/* the server answered with it */
	char api_name[16];
	char **warnings;	/* of the last answer, NULL-terminated */
	char *release;
};

void slurmrest_free(slurmrest_t *r)
{
	if (!r)
		return;
	http_free(r->http);
	free(r->user);
	free(r->user_header);
	free(r->release);
	rest_strv_free(r->warnings);
	free(r);
}

/* The public error at the library's edge, from the project's own. */
static int from_http(const struct efa_error *h, slurmrest_error *err)
{
	static const slurmrest_code codes[] = {
		[HTTP_E_USAGE] = SLURMREST_E_USAGE,
		[HTTP_E_NOMEM] = SLURMREST_E_NOMEM,
		[HTTP_E_TOKEN] = SLURMREST_E_TOKEN,
		[HTTP_E_CONNECT] = SLURMREST_E_CONNECT,
		[HTTP_E_TLS] = SLURMREST_E_TRANSPORT,
		[HTTP_E_TIMEOUT] = SLURMREST_E_TIMEOUT,
		[HTTP_E_TOO_LARGE] = SLURMREST_E_TOO_LARGE,
		[HTTP_E_TRANSPORT] = SLURMREST_E_TRANSPORT,
	};

	return rest_set_error(err, h->code > 0 && h->code <= HTTP_E_TRANSPORT ? codes[h->code]
									    : SLURMREST_E_TRANSPORT,
			      "%s", h->msg);
}

slurmrest_t *slurmrest_new(const slurmrest_options *o, slurmrest_error *err)
{
	struct http_options ho = {
		.service = "slurmrestd",
		.allow_unix = 1,
		.url_key = "RestURL=",
		.ca_key = "RestCAFile=",
		.token_private = 1,
		.token_prefix = "SLURM_JWT=",
		.retries = REST_RETRIES,
		.retry_ms = REST_RETRY_MS,
	};
	struct efa_error herr = { 0 };
	slurmrest_t *r;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!o || !o->url) {
		rest_set_error(err, SLURMREST_E_USAGE, "no slurmrestd URL given (RestURL= in efa.conf)");
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		return NULL;
	}
	r->bearer = o->auth_bearer;
	if (o->user && !(r->user = strdup(o->user))) {
		rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		goto fail;
	}
	if (o->api_version) {
		r->api = rest_api_parse(o->api_version);
		if (r->api < 0) {
			rest_set_error(err, SLURMREST_E_USAGE,
				       "API version %s is not one libslurmrest speaks (%s)",
				       o->api_version, rest_api_spoken);
			goto fail;
		}
		snprintf(r->api_name, sizeof(r->api_name), "v0.0.%d", r->api);
	}
	ho.url = o->url;
	ho.ca_file = o->ca_file;
	ho.connect_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : DEFAULT_CONNECT_MS;
	ho.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	ho.max_response = o->max_response ? o->max_response : DEFAULT_MAX_RESPONSE;
	ho.allow_plain_http = o->allow_plain_http;
	ho.plain_http_key = "AllowPlainHTTP=yes in efa.conf (allow_plain_http in slurmrest_options)";
	if (o->token)
		ho.token = o->token;
	else if (o->token_file)
		ho.token_file = o->token_file;
	else if (o->token_from_env)
		ho.token = getenv("SLURM_JWT");
	/*
	 * The token in exactly one form: slurmrestd (23.02 and later)
	 * refuses a request that carries both X-SLURM-USER-TOKEN and
	 * "Authorization: Bearer" as ambiguous.
	 */
	ho.token_header = r->bearer ? "Authorization: Bearer " : "X-SLURM-USER-TOKEN: ";
	if (!(r->http = http_new(&ho, &herr))) {
		from_http(&herr, err);
		goto fail;
	}
	r->url = http_url(r->http);
	if (http_has_token(r->http) && !r->bearer) {
		if (!r->user) {
			rest_set_error(err, SLURMREST_E_USAGE,
				       "a token needs the user it was issued for (RestUser=, X-SLURM-USER-NAME)");
			goto fail;
		}
		if (asprintf(&r->user_header, "X-SLURM-USER-NAME: %s", r->user) < 0) {
			r->user_header = NULL;
			rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
			goto fail;
		}
	}
	return r;
fail:
	slurmrest_free(r);
	return NULL;
}

/*
 * One request. Returns 0 with resp->status set (any HTTP status), or a
 * transport error. The caller frees resp->data.
 */
static int request(slurmrest_t *r, const char *method, const char *path, const char *body,
		   struct http_answer *resp, slurmrest_error *err)
{
	const char *headers[4];
	struct efa_error herr = { 0 };
	size_t n = 0;

	headers[n++] = "Accept: application/json";
	if (body)
		headers[n++] = "Content-Type: application/json";
	if (r->user_header)
		headers[n++] = r->user_header;
	headers[n] = NULL;
	if (http_request(r->http, method, path, headers, body, resp, &herr))
		return from_http(&herr, err);
	if (err)
		err->http_status = resp->status;
	return 0;
}

static int auth_status(long status)
{
	/* 24.11 and later answer a token slurmctld refuses with 511. */
	return status == 401 || status == 403 || status == 511;
}

/* A failure status: Slurm's own errors when the body has them. */
static int status_error(const slurmrest_t *r, const char *what, const struct http_answer *resp,
			slurmrest_error *err)
{
	json_t *root;
	int rc = 0;

	if (auth_status(resp->status)) {
		if (http_is_unix(r->http) && !http_has_token(r->http))
			return rest_set_error(err, SLURMREST_E_AUTH,
					      "slurmrestd at %s refused the credentials (HTTP %ld) for %s: local auth needs the same uid as slurmrestd",
					      r->url, resp->status, what);
		if (!http_has_token(r->http))
			return rest_set_error(err, SLURMREST_E_AUTH,
					      "slurmrestd at %s refused the credentials (HTTP %ld) for %s: it needs a JWT: set RestUser= and RestTokenFile=",
					      r->url, resp->status, what);
		if (!r->user)
			return rest_set_error(err, SLURMREST_E_AUTH,
					      "slurmrestd at %s refused the credentials (HTTP %ld) for %s: the token is expired or invalid: renew it with scontrol token username=USER",
					      r->url, resp->status, what);
		return rest_set_error(err, SLURMREST_E_AUTH,
				      "slurmrestd at %s refused the credentials (HTTP %ld) for %s: the token is expired or not %s's: check RestUser= and renew it with scontrol token username=%s",
				      r->url, resp->status, what, r->user, r->user);
	}
	root = resp->data ? json_loadb(resp->data, resp->len, 0, NULL) : NULL;
	if (root)
		rc = rest_parse_errors(root, err);
	json_decref(root);
	/* slurmrestd 22.05 reports a token slurmctld rejects as a 500 with a
	 * generic Slurm error, not as a 401. */
	if (rc && http_has_token(r->http) && resp->status >= 500 && err) {
		size_t len = strlen(err->message);

		snprintf(err->message + len, sizeof(err->message) - len,
			 " [HTTP %ld; with a JWT this usually means the token is expired or not %s's: renew it with scontrol token username=%s]",
			 resp->status, r->user, r->user);
	}
	if (rc)
		return rc;
	return rest_set_error(err, SLURMREST_E_HTTP, "slurmrestd at %s answered HTTP %ld to %s",
			      r->url, resp->status, what);
}

/*
 * What slurmrestd serves, for a message: the /slurm/ versions its OpenAPI
 * description lists (newer than any this library knows included), newest
 * first; "none of <ours>" when it cannot tell.
 */
static void served_versions(slurmrest_t *r, char *buf, size_t size)
{
	int versions[REST_SERVED_MAX];
	struct http_answer resp;
	size_t n = 0, len = 0;
	json_t *root = NULL;

	if (!request(r, "GET", "/openapi/v3", NULL, &resp, NULL)) {
		if (resp.status == 200 && resp.data)
			root = json_loadb(resp.data, resp.len, 0, NULL);
		free(resp.data);
	}
	if (root)
		n = rest_parse_served(root, versions, REST_SERVED_MAX);
	json_decref(root);
	if (!n) {
		snprintf(buf, size, "none of %s", rest_api_spoken);
		return;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%sv0.0.%d", i ? ", " : "", versions[i]);
}

/* Pings one version: 0 when served, 1 when not (404), else an error. */
static int ping_version(slurmrest_t *r, int api, slurmrest_error *err)
{
	struct http_answer resp;
	char path[64];
	int rc;

	snprintf(path, sizeof(path), "/slurm/v0.0.%d/ping", api);
	if ((rc = request(r, "GET", path, NULL, &resp, err)))
		return rc;
	if (resp.status == 404) {
		free(resp.data);
		return 1;
	}
	rc = auth_status(resp.status) ? status_error(r, path, &resp, err) : 0;
	free(resp.data);
	return rc;
}

/*
 * Chooses the newest API version both sides speak, or checks that the
 * server serves the pinned one, on first use.
 */
static int negotiate(slurmrest_t *r, slurmrest_error *err)
{
	char served[256];
	int rc;

	if (r->api_checked)
		return 0;
	if (r->api) {
		if ((rc = ping_version(r, r->api, err)) <= 0) {
			r->api_checked = !rc;
			return rc;
		}
		served_versions(r, served, sizeof(served));
		return rest_set_error(err, SLURMREST_E_VERSION,
				      "slurmrestd at %s does not serve the pinned API version %s: it serves %s; libslurmrest speaks %s: pin a version both serve, or none",
				      r->url, r->api_name, served, rest_api_spoken);
	}
	for (size_t i = 0; i < rest_api_nversions; i++) {
		if ((rc = ping_version(r, rest_api_versions[i], err)) < 0)
			return rc;
		if (rc)
			continue;
		r->api = rest_api_versions[i];
		r->api_checked = 1;
		snprintf(r->api_name, sizeof(r->api_name), "v0.0.%d", r->api);
		return 0;
	}
	served_versions(r, served, sizeof(served));
	return rest_set_error(err, SLURMREST_E_VERSION,
			      "slurmrestd at %s serves %s; libslurmrest speaks %s: no version in common: use a libslurmrest that speaks one it serves",
			      r->url, served, rest_api_spoken);
}

/*
 * GET or POST under /TREE/<version>/ (slurm: slurmctld's; slurmdb:
 * slurmdbd's). Returns 0 with *root (NULL when *not_modified), or an
 * error; Slurm errors in a 2xx answer are left to the parser of each call.
 * With a listing, only what its parser reads of the listed objects is
 * built.
 */
static int call_tree(slurmrest_t *r, const char *tree, const char *method, const char *rel,
		     const char *body, const struct rest_listing *listing, json_t **root,
		     int *not_modified, slurmrest_error *err)
{
	struct http_answer resp;
	char path[512], what[600];
	const char *text;
	int rc;

	*root = NULL;
	rest_strv_free(r->warnings);
	r->warnings = NULL;
	if ((rc = negotiate(r, err)))
		return rc;
	snprintf(path, sizeof(path), "/%s/%s/%s", tree, r->api_name, rel);
	snprintf(what, sizeof(what), "%s %s", method, path);
	if ((rc = request(r, method, path, body, &resp, err)))
		return rc;
	if (resp.status == 304 && not_modified) {
		*not_modified = 1;
		free(resp.data);
		return 0;
	}
	if (resp.status < 200 || resp.status > 299) {
		rc = status_error(r, what, &resp, err);
		free(resp.data);
		return rc;
	}
	text = resp.data ? resp.data : "";
	*root = listing ? rest_parse_listing(text, resp.len, what, listing, err)
			: rest_parse_body(text, resp.len, what, err);
	free(resp.data);
	if (!*root)
		return SLURMREST_E_PARSE;
	if (!r->release)
		r->release = rest_parse_release(*root);
	rest_strv_free(r->warnings);
	if (!(r->warnings = rest_parse_warnings(*root))) {
		json_decref(*root);
		*root = NULL;
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	}
	return 0;
}

static int call(slurmrest_t *r, const char *method, const char *rel, const char *body,
		const struct rest_listing *listing, json_t **root, int *not_modified,
		slurmrest_error *err)
{
	return call_tree(r, "slurm", method, rel, body, listing, root, not_modified, err);
}

const char *slurmrest_api_version(const slurmrest_t *r)
{
	return r->api ? r->api_name : NULL;
}

const char *slurmrest_slurm_version(const slurmrest_t *r)
{
	return r->release;
}

const char *const *slurmrest_warnings(const slurmrest_t *r)
{
	static const char *const none[] = { NULL };

	return r->warnings ? (const char *const *)r->warnings : none;
}

int slurmrest_ping(slurmrest_t *r, slurmrest_error *err)
{
	json_t *root;
	int rc = call(r, "GET", "ping", NULL, NULL, &root, NULL, err);

	if (!rc)
		rc = rest_parse_errors(root, err);
	json_decref(root);
	return rc;
}

/*
 * GET of a listing, conditional on since (> 0): *root is the answer, or
 * NULL with *not_modified set. *asked is when the request was made: v0.0.38
 * does not say when its data changed, so that time (less a second) is a
 * safe lower bound for the next conditional call.
 */
static int conditional_get(slurmrest_t *r, const char *what, const struct rest_listing *listing,
			   int64_t since, json_t **root, int *not_modified, int64_t *asked,
			   slurmrest_error *err)
{
	char rel[64];
	int rc;

	*asked = (int64_t)time(NULL);
	*not_modified = 0;
	/* The data_parser versions (v0.0.39 on) read the query's time with
	 * Slurm's parse_time(), where "uts<seconds>" is a Unix time whatever
	 * the time zone; 24.11's v0.0.40 and v0.0.41 refuse plain seconds
	 * (HTTP 500), its v0.0.42 and 26.05's take both. v0.0.38 reads plain
	 * seconds. */
	if (since > 0)
		snprintf(rel, sizeof(rel), "%s?update_time=%s%lld", what, r->api >= 39 ? "uts" : "",
			 (long long)since);
	else
		snprintf(rel, sizeof(rel), "%s", what);
	rc = call(r, "GET", rel, NULL, listing, root, not_modified, err);
	if (!rc && *root && (rc = rest_parse_errors(*root, err))) {
		json_decref(*root);
		*root = NULL;
	}
	return rc;
}

/* A listing's answer when nothing changed since since: empty, marked so,
 * and since stays the time to pass next. */
static int listing_unchanged(int *not_modified, int64_t *update_time, int64_t since)
{
	*not_modified = 1;
	*update_time = since;
	return 0;
}

/* The time to pass next: slurmctld's last change, or (v0.0.38, which does
 * not say) just before the request was made (conditional_get). */
static void listing_stamp(int64_t *update_time, int64_t asked)
{
	if (!*update_time)
		*update_time = asked - 1;
}

int slurmrest_get_nodes(slurmrest_t *r, int64_t since, slurmrest_nodes **out,
			slurmrest_error *err)
{
	struct rest_nodes_taker taker = { 0 };
	struct rest_listing listing = rest_nodes_listing;
	int not_modified, rc;
	int64_t asked;
	json_t *root;

	*out = NULL;
	/* Each node to the model as the parse reaches it: the answer, the
	 * nodes and a tree of them are never all held at once. */
	listing.take = rest_take_node;
	listing.arg = &taker;
	if ((rc = conditional_get(r, "nodes", &listing, since, &root, &not_modified, &asked, err))) {
		rest_nodes_taker_clear(&taker);
		return rc;
	}
	if (not_modified) {
		if (!(*out = calloc(1, sizeof(**out))))
			return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		return listing_unchanged(&(*out)->not_modified, &(*out)->update_time, since);
	}
	rc = rest_nodes_taken(&taker, root, out, err);
	if (!rc)
		listing_stamp(&(*out)->update_time, asked);
	json_decref(root);
	return rc;
}

int slurmrest_get_partitions(slurmrest_t *r, int64_t since, slurmrest_partitions **out,
			     slurmrest_error *err)
{
	int not_modified, rc;
	int64_t asked;
	json_t *root;

	*out = NULL;
	if ((rc = conditional_get(r, "partitions", NULL, since, &root, &not_modified, &asked, err)))
		return rc;
	if (not_modified) {
		if (!(*out = calloc(1, sizeof(**out))))
			return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		return listing_unchanged(&(*out)->not_modified, &(*out)->update_time, since);
	}
	rc = rest_parse_partitions(root, r->api, out, err);
	if (!rc)
		listing_stamp(&(*out)->update_time, asked);
	json_decref(root);
	return rc;
}

int slurmrest_submit(slurmrest_t *r, const slurmrest_job_desc *job, uint32_t *job_id,
		     char **user_msg, slurmrest_error *err)
{
	json_t *body, *root;
	char *text;
	int rc;

	if (user_msg)
		*user_msg = NULL;
	if ((rc = negotiate(r, err)))
		return rc;
	if (!(body = rest_build_submit(job, r->api, err)))
		return err ? err->code : SLURMREST_E_USAGE;
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!text)
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	rc = call(r, "POST", "job/submit", text, NULL, &root, NULL, err);
	free(text);
	if (rc)
		return rc;
	rc = rest_parse_submit(root, job_id, user_msg, err);
	json_decref(root);
	return rc;
}

/* One job, from slurmctld's tree (slurm) or slurmdbd's (slurmdb). */
static int get_one_job(slurmrest_t *r, const char *tree, uint32_t job_id, slurmrest_job **out,
		       slurmrest_error *err)
{
	char rel[32];
	json_t *root;
	int rc;

	*out = NULL;
	snprintf(rel, sizeof(rel), "job/%u", job_id);
	if ((rc = call_tree(r, tree, "GET", rel, NULL, NULL, &root, NULL, err)))
		return rc;
	rc = strcmp(tree, "slurmdb") ? rest_parse_job(root, r->api, out, err)
				     : rest_parse_db_job(root, job_id, out, err);
	json_decref(root);
	return rc;
}

int slurmrest_get_job(slurmrest_t *r, uint32_t job_id, slurmrest_job **out,
		      slurmrest_error *err)
{
	return get_one_job(r, "slurm", job_id, out, err);
}

int slurmrest_get_db_job(slurmrest_t *r, uint32_t job_id, slurmrest_job **out,
			 slurmrest_error *err)
{
	return get_one_job(r, "slurmdb", job_id, out, err);
}

static bool node_name_ok(const char *node)
{
	if (!*node)
		return false;
	for (; *node; node++)
		if (!isalnum((unsigned char)*node) && !strchr("-_.", *node))
			return false;
	return true;
}

/* POST node/NODE with body (taken), for the node updates of v0.0.40 on. */
static int update_node(slurmrest_t *r, const char *node, json_t *body, slurmrest_error *err)
{
	json_t *root;
	char rel[300], *text;
	int rc;

	if (!node || strlen(node) > 256 || !node_name_ok(node)) {
		json_decref(body);
		return rest_set_error(err, SLURMREST_E_USAGE,
				      "node name '%.64s' cannot be part of a URL path", node ? node : "");
	}
	if (!body)
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	if ((rc = negotiate(r, err))) {
		json_decref(body);
		return rc;
	}
	if (r->api < 40) {
		json_decref(body);
		return rest_set_error(err, SLURMREST_E_VERSION,
				      "slurmrestd's %s cannot update nodes: that needs v0.0.40 or later (Slurm 23.11 on)",
				      r->api_name);
	}
	text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!text)
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	snprintf(rel, sizeof(rel), "node/%s", node);
	rc = call(r, "POST", rel, text, NULL, &root, NULL, err);
	free(text);
	if (rc)
		return rc;
	rc = rest_parse_errors(root, err);
	json_decref(root);
	return rc;
}

int slurmrest_update_node_features(slurmrest_t *r, const char *node,
				   const char *const *features, slurmrest_error *err)
{
	json_t *list = json_array();

	for (const char *const *f = features; list && f && *f; f++)
		if (json_array_append_new(list, json_string(*f))) {
			json_decref(list);
			list = NULL;
		}
	if (!list)
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	/* Slurm refuses active features that are not available ones. */
	return update_node(r, node, json_pack("{s:O, s:o}", "features", list, "features_act", list),
			   err);
}

int slurmrest_drain_node(slurmrest_t *r, const char *node, const char *reason, slurmrest_error *err)
{
	if (!reason || !*reason)
		return rest_set_error(err, SLURMREST_E_USAGE, "a drain needs a reason");
	return update_node(r, node, json_pack("{s:[s], s:s}", "state", "DRAIN", "reason", reason),
			   err);
}
