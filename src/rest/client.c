/* libslurmrest: the handle, the transport (libcurl) and version choice. */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "internal.h"

#define DEFAULT_CONNECT_MS 2000
#define DEFAULT_TIMEOUT_MS 10000
#define DEFAULT_MAX_RESPONSE (64u * 1024 * 1024)
#define TOKEN_MAX 16384
#define UNIX_PREFIX "unix:"

struct slurmrest {
	char *url;		/* as given, for messages */
	char *base;		/* scheme://host:port, "http://localhost" on a socket */
	char *unix_path;
	char *user;
	char *token;		/* secret: never in a message */
	char *token_file;	/* re-read when it changes */
	struct stat token_st;	/* the token file when last read */
	int bearer;
	char *ca_file;
	long connect_ms;
	long timeout_ms;
	size_t max_response;
	int api;		/* 0 until chosen */
	int api_checked;	/* the server answered with it */
	char api_name[16];
	char **warnings;	/* of the last answer, NULL-terminated */
	char *release;
	CURL *curl;		/* kept for connection reuse */
};

struct response {
	char *data;
	size_t len;
	size_t max;
	int too_large;
	long status;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void init_curl(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static char *trimmed(const char *s)
{
	size_t len;

	if (!strncmp(s, "SLURM_JWT=", 10))	/* as "scontrol token" prints it */
		s += 10;
	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	return strndup(s, len);
}

static void wipe_free(char *secret)
{
	if (secret) {
		/* Do not leave the secret in freed memory. */
		volatile char *p = secret;

		while (*p)
			*p++ = '\0';
	}
	free(secret);
}

static int read_token_file(const char *path, char **token, struct stat *st_out,
			   slurmrest_error *err)
{
	char buf[TOKEN_MAX + 1];
	struct stat st;
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return rest_set_error(err, SLURMREST_E_TOKEN, "cannot read token file %s: %s",
				      path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return rest_set_error(err, SLURMREST_E_TOKEN, "token file %s is not a regular file", path);
	}
	if (st.st_mode & 077) {
		fclose(f);
		return rest_set_error(err, SLURMREST_E_TOKEN,
				      "token file %s is readable by group or others (mode %04o): chmod 600 %s",
				      path, (unsigned)(st.st_mode & 07777), path);
	}
	n = fread(buf, 1, TOKEN_MAX, f);
	fclose(f);
	buf[n] = '\0';
	*token = trimmed(buf);
	memset(buf, 0, sizeof(buf));
	if (!*token)
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	if (!**token) {
		free(*token);
		*token = NULL;
		return rest_set_error(err, SLURMREST_E_TOKEN, "token file %s is empty", path);
	}
	*st_out = st;
	return 0;
}

/* A token renewed in its file (scontrol token has a lifespan) is used from
 * the next request on: a long-running client needs no restart. */
static int refresh_token(slurmrest_t *r, slurmrest_error *err)
{
	struct stat st;
	char *token;

	if (stat(r->token_file, &st))
		return rest_set_error(err, SLURMREST_E_TOKEN, "cannot read token file %s: %s",
				      r->token_file, strerror(errno));
	if (st.st_dev == r->token_st.st_dev && st.st_ino == r->token_st.st_ino &&
	    st.st_size == r->token_st.st_size &&
	    st.st_mtim.tv_sec == r->token_st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == r->token_st.st_mtim.tv_nsec)
		return 0;
	if (read_token_file(r->token_file, &token, &st, err))
		return -1;
	wipe_free(r->token);
	r->token = token;
	r->token_st = st;
	return 0;
}

static int set_url(slurmrest_t *r, const char *url, slurmrest_error *err)
{
	size_t len;

	if (!strncmp(url, UNIX_PREFIX, strlen(UNIX_PREFIX))) {
		const char *path = url + strlen(UNIX_PREFIX);

		if (path[0] != '/')
			return rest_set_error(err, SLURMREST_E_USAGE,
					      "URL %s: a unix socket needs an absolute path (unix:/run/slurmrestd.sock)",
					      url);
		r->unix_path = strdup(path);
		r->base = strdup("http://localhost");
		return r->unix_path && r->base ? 0 : rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	}
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return rest_set_error(err, SLURMREST_E_USAGE,
				      "URL %s: use unix:/path/to/socket, http://host:port or https://host:port",
				      url);
	if (strchr(strchr(url, ':') + 3, '/') && strcmp(strchr(strchr(url, ':') + 3, '/'), "/"))
		return rest_set_error(err, SLURMREST_E_USAGE,
				      "URL %s: give only scheme, host and port; the API paths are added", url);
	len = strlen(url);
	while (len && url[len - 1] == '/')
		len--;
	if (len <= strlen("https://"))
		return rest_set_error(err, SLURMREST_E_USAGE, "URL %s has no host", url);
	r->base = strndup(url, len);
	return r->base ? 0 : rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
}

void slurmrest_free(slurmrest_t *r)
{
	if (!r)
		return;
	if (r->curl)
		curl_easy_cleanup(r->curl);
	wipe_free(r->token);
	free(r->token_file);
	free(r->url);
	free(r->base);
	free(r->unix_path);
	free(r->user);
	free(r->ca_file);
	free(r->release);
	rest_strv_free(r->warnings);
	free(r);
}

slurmrest_t *slurmrest_new(const slurmrest_options *o, slurmrest_error *err)
{
	slurmrest_t *r;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!o || !o->url) {
		rest_set_error(err, SLURMREST_E_USAGE, "no slurmrestd URL given (RestURL= in efa.conf)");
		return NULL;
	}
	pthread_once(&curl_once, init_curl);
	if (curl_init_rc != CURLE_OK) {
		rest_set_error(err, SLURMREST_E_TRANSPORT, "libcurl failed to start: %s",
			       curl_easy_strerror(curl_init_rc));
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		return NULL;
	}
	r->connect_ms = o->connect_timeout_ms > 0 ? o->connect_timeout_ms : DEFAULT_CONNECT_MS;
	r->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : DEFAULT_TIMEOUT_MS;
	r->max_response = o->max_response ? o->max_response : DEFAULT_MAX_RESPONSE;
	r->bearer = o->auth_bearer;
	r->url = strdup(o->url);
	if (!r->url || set_url(r, o->url, err))
		goto fail;
	if ((o->user && !(r->user = strdup(o->user))) || (o->ca_file && !(r->ca_file = strdup(o->ca_file)))) {
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
	if (o->token) {
		if (!(r->token = trimmed(o->token))) {
			rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
			goto fail;
		}
	} else if (o->token_file) {
		if (!(r->token_file = strdup(o->token_file))) {
			rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
			goto fail;
		}
		if (read_token_file(o->token_file, &r->token, &r->token_st, err))
			goto fail;
	} else if (o->token_from_env && getenv("SLURM_JWT")) {
		if (!(r->token = trimmed(getenv("SLURM_JWT")))) {
			rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
			goto fail;
		}
	}
	if (r->token && !r->user && !r->bearer) {
		rest_set_error(err, SLURMREST_E_USAGE,
			       "a token needs the user it was issued for (RestUser=, X-SLURM-USER-NAME)");
		goto fail;
	}
	r->curl = curl_easy_init();
	if (!r->curl) {
		rest_set_error(err, SLURMREST_E_NOMEM, "out of memory (curl_easy_init)");
		goto fail;
	}
	return r;
fail:
	slurmrest_free(r);
	return NULL;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct response *resp = userdata;
	size_t n = size * nmemb;
	char *grown;

	if (resp->len + n > resp->max) {
		resp->too_large = 1;
		return 0;	/* makes libcurl stop with CURLE_WRITE_ERROR */
	}
	grown = realloc(resp->data, resp->len + n + 1);
	if (!grown)
		return 0;
	resp->data = grown;
	memcpy(resp->data + resp->len, ptr, n);
	resp->len += n;
	resp->data[resp->len] = '\0';
	return n;
}

static int transport_error(const slurmrest_t *r, CURLcode rc, const struct response *resp,
			   const char *what, slurmrest_error *err)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		return rest_set_error(err, SLURMREST_E_CONNECT,
				      "cannot connect to slurmrestd at %s (%s): is it running, and is RestURL= right?",
				      r->url, curl_easy_strerror(rc));
	case CURLE_PEER_FAILED_VERIFICATION:
		return rest_set_error(err, SLURMREST_E_TRANSPORT,
				      "slurmrestd at %s has a certificate that cannot be verified (%s): give the CA that signed it with RestCAFile=",
				      r->url, curl_easy_strerror(rc));
	case CURLE_SSL_CACERT_BADFILE:
		return rest_set_error(err, SLURMREST_E_TRANSPORT,
				      "cannot use the CA file %s for %s (%s): is RestCAFile= a PEM file?",
				      r->ca_file ? r->ca_file : "(the system's)", r->url,
				      curl_easy_strerror(rc));
	case CURLE_OPERATION_TIMEDOUT:
		return rest_set_error(err, SLURMREST_E_TIMEOUT,
				      "no complete answer from slurmrestd at %s to %s within %ld ms (connect limit %ld ms): is slurmrestd or slurmctld overloaded?",
				      r->url, what, r->timeout_ms, r->connect_ms);
	case CURLE_WRITE_ERROR:
		if (resp->too_large)
			return rest_set_error(err, SLURMREST_E_TOO_LARGE,
					      "slurmrestd's answer to %s is larger than %zu bytes: raise the limit if the cluster is that large",
					      what, resp->max);
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory reading the answer to %s",
				      what);
	default:
		return rest_set_error(err, SLURMREST_E_TRANSPORT, "talking to slurmrestd at %s (%s): %s",
				      r->url, what, curl_easy_strerror(rc));
	}
}

/*
 * The token in exactly one form, the same for every request: slurmrestd
 * (23.02 and later) refuses a request that carries both X-SLURM-USER-TOKEN
 * and "Authorization: Bearer" as ambiguous.
 */
static int add_credentials(const slurmrest_t *r, struct curl_slist **headers)
{
	struct curl_slist *h;
	char *line = NULL;
	int rc = -1;

	if (r->bearer) {
		if (asprintf(&line, "Authorization: Bearer %s", r->token) < 0)
			return -1;
		if ((h = curl_slist_append(*headers, line))) {
			*headers = h;
			rc = 0;
		}
		goto out;
	}
	if (asprintf(&line, "X-SLURM-USER-NAME: %s", r->user) < 0)
		return -1;
	if (!(h = curl_slist_append(*headers, line)))
		goto out;
	*headers = h;
	wipe_free(line);
	if (asprintf(&line, "X-SLURM-USER-TOKEN: %s", r->token) < 0)
		return -1;
	if ((h = curl_slist_append(*headers, line))) {
		*headers = h;
		rc = 0;
	}
out:
	wipe_free(line);
	return rc;
}

/*
 * One request. Returns 0 with resp->status set (any HTTP status), or a
 * transport error. The caller frees resp->data.
 */
static int request(slurmrest_t *r, const char *method, const char *path, const char *body,
		   struct response *resp, slurmrest_error *err)
{
	struct curl_slist *headers = NULL, *h;
	char *url = NULL;
	char what[256];
	CURLcode rc;
	int ret = 0;

	memset(resp, 0, sizeof(*resp));
	resp->max = r->max_response;
	snprintf(what, sizeof(what), "%s %s", method, path);
	if (r->token_file && refresh_token(r, err))
		return -1;
	if (asprintf(&url, "%s%s", r->base, path) < 0)
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	curl_easy_reset(r->curl);
	h = curl_slist_append(headers, "Accept: application/json");
	if (h && body)
		h = curl_slist_append(headers = h, "Content-Type: application/json");
	if (h && r->token) {
		headers = h;
		if (add_credentials(r, &headers))
			goto nomem;
		h = headers;
	}
	if (!h)
		goto nomem;
	headers = h;
	curl_easy_setopt(r->curl, CURLOPT_URL, url);
	curl_easy_setopt(r->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(r->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(r->curl, CURLOPT_CONNECTTIMEOUT_MS, r->connect_ms);
	curl_easy_setopt(r->curl, CURLOPT_TIMEOUT_MS, r->timeout_ms);
	curl_easy_setopt(r->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(r->curl, CURLOPT_WRITEDATA, resp);
	curl_easy_setopt(r->curl, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(r->curl, CURLOPT_SSL_VERIFYHOST, 2L);
	if (r->ca_file)
		curl_easy_setopt(r->curl, CURLOPT_CAINFO, r->ca_file);
	if (r->unix_path)
		curl_easy_setopt(r->curl, CURLOPT_UNIX_SOCKET_PATH, r->unix_path);
	if (body) {
		curl_easy_setopt(r->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(r->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	rc = curl_easy_perform(r->curl);
	if (rc != CURLE_OK) {
		ret = transport_error(r, rc, resp, what, err);
		free(resp->data);
		resp->data = NULL;
	} else {
		curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &resp->status);
		if (err)
			err->http_status = resp->status;
	}
	/* The request held the token: clear it from libcurl's copy of the
	 * options too. */
	curl_easy_setopt(r->curl, CURLOPT_HTTPHEADER, NULL);
	goto out;
nomem:
	ret = rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
out:
	curl_slist_free_all(headers);
	free(url);
	return ret;
}

static int auth_status(long status)
{
	/* 24.11 and later answer a token slurmctld refuses with 511. */
	return status == 401 || status == 403 || status == 511;
}

/* A failure status: Slurm's own errors when the body has them. */
static int status_error(const slurmrest_t *r, const char *what, const struct response *resp,
			slurmrest_error *err)
{
	json_t *root;
	int rc = 0;

	if (auth_status(resp->status)) {
		if (r->unix_path && !r->token)
			return rest_set_error(err, SLURMREST_E_AUTH,
					      "slurmrestd at %s refused the credentials (HTTP %ld) for %s: local auth needs the same uid as slurmrestd",
					      r->url, resp->status, what);
		if (!r->token)
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
	if (rc && r->token && resp->status >= 500 && err) {
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
	struct response resp;
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
	struct response resp;
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
 * GET or POST under /slurm/<version>/. Returns 0 with *root (NULL when
 * *not_modified), or an error; Slurm errors in a 2xx answer are left to
 * the parser of each call.
 */
static int call(slurmrest_t *r, const char *method, const char *rel, const char *body,
		json_t **root, int *not_modified, slurmrest_error *err)
{
	struct response resp;
	char path[512], what[600];
	int rc;

	*root = NULL;
	rest_strv_free(r->warnings);
	r->warnings = NULL;
	if ((rc = negotiate(r, err)))
		return rc;
	snprintf(path, sizeof(path), "/slurm/%s/%s", r->api_name, rel);
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
	*root = rest_parse_body(resp.data ? resp.data : "", resp.len, what, err);
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
	int rc = call(r, "GET", "ping", NULL, &root, NULL, err);

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
static int conditional_get(slurmrest_t *r, const char *what, int64_t since, json_t **root,
			   int *not_modified, int64_t *asked, slurmrest_error *err)
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
	rc = call(r, "GET", rel, NULL, root, not_modified, err);
	if (!rc && *root && (rc = rest_parse_errors(*root, err))) {
		json_decref(*root);
		*root = NULL;
	}
	return rc;
}

int slurmrest_get_nodes(slurmrest_t *r, int64_t since, slurmrest_nodes **out,
			slurmrest_error *err)
{
	int not_modified, rc;
	int64_t asked;
	json_t *root;

	*out = NULL;
	if ((rc = conditional_get(r, "nodes", since, &root, &not_modified, &asked, err)))
		return rc;
	if (not_modified) {
		if (!(*out = calloc(1, sizeof(**out))))
			return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		(*out)->not_modified = 1;
		(*out)->update_time = since;
		return 0;
	}
	rc = rest_parse_nodes(root, r->api, out, err);
	if (!rc && !(*out)->update_time)
		(*out)->update_time = asked - 1;
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
	if ((rc = conditional_get(r, "partitions", since, &root, &not_modified, &asked, err)))
		return rc;
	if (not_modified) {
		if (!(*out = calloc(1, sizeof(**out))))
			return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		(*out)->not_modified = 1;
		(*out)->update_time = since;
		return 0;
	}
	rc = rest_parse_partitions(root, r->api, out, err);
	if (!rc && !(*out)->update_time)
		(*out)->update_time = asked - 1;
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
	rc = call(r, "POST", "job/submit", text, &root, NULL, err);
	free(text);
	if (rc)
		return rc;
	rc = rest_parse_submit(root, job_id, user_msg, err);
	json_decref(root);
	return rc;
}

int slurmrest_get_job(slurmrest_t *r, uint32_t job_id, slurmrest_job **out,
		      slurmrest_error *err)
{
	char rel[32];
	json_t *root;
	int rc;

	*out = NULL;
	snprintf(rel, sizeof(rel), "job/%u", job_id);
	if ((rc = call(r, "GET", rel, NULL, &root, NULL, err)))
		return rc;
	rc = rest_parse_job(root, r->api, out, err);
	json_decref(root);
	return rc;
}
