/* SPDX-License-Identifier: Apache-2.0 */
/* The HTTP layer: one libcurl handle per client, set up in one place. */
#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "http.h"

#define TOKEN_MAX 16384
#define UNIX_PREFIX "unix:"

struct http_client {
	char *service;
	char *url;		/* as given, for messages */
	char *base;		/* scheme://host[:port]; "http://localhost" on a socket */
	char *unix_path;
	char *url_key;
	char *ca_key;
	char *ca_file;
	long connect_ms;
	long timeout_ms;
	size_t max_response;
	int no_proxy;
	int retries;
	long retry_ms;
	int posts_are_reads;
	uint64_t jitter;	/* xorshift state: this client's own, no lock */
	char *token;		/* secret: never in a message */
	char *token_file;
	struct stat token_st;	/* the token file when last read */
	int token_private;
	char *token_prefix;
	char *token_header;
	char *aws_sigv4;
	char *aws_key_id;
	char *aws_secret;	/* secret */
	char *aws_session;	/* secret: "X-Amz-Security-Token: ..." */
	CURL *curl;
};

struct sink {
	struct http_answer *answer;
	size_t max;
	int too_large;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void init_curl(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

void http_wipe_free(char *secret)
{
	if (secret) {
		/* Do not leave the secret in freed memory. */
		volatile char *p = secret;

		while (*p)
			*p++ = '\0';
	}
	free(secret);
}

static char *trimmed(const struct http_client *c, const char *s)
{
	size_t len;

	if (c->token_prefix && !strncmp(s, c->token_prefix, strlen(c->token_prefix)))
		s += strlen(c->token_prefix);
	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	return strndup(s, len);
}

/* A token goes into a header line: nothing that could end it or start
 * another. */
static bool one_line(const char *token)
{
	for (const unsigned char *p = (const unsigned char *)token; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

static int read_token_file(const struct http_client *c, char **token, struct stat *st_out,
			   struct efa_error *err)
{
	const char *path = c->token_file;
	char buf[TOKEN_MAX + 1];
	struct stat st;
	size_t n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return efa_error_code_set(err, HTTP_E_TOKEN, "cannot read token file %s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) {
		fclose(f);
		return efa_error_code_set(err, HTTP_E_TOKEN, "token file %s is not a regular file", path);
	}
	/* The group may read it: Kubernetes gives a Secret's files to the
	 * pod's fsGroup (mode 0440 from defaultMode 0400). */
	if (c->token_private && (st.st_mode & 007)) {
		fclose(f);
		return efa_error_code_set(err, HTTP_E_TOKEN,
			    "token file %s is readable by others (mode %04o): chmod 600 %s",
			    path, (unsigned)(st.st_mode & 07777), path);
	}
	n = fread(buf, 1, TOKEN_MAX, f);
	fclose(f);
	buf[n] = '\0';
	*token = trimmed(c, buf);
	explicit_bzero(buf, sizeof(buf));
	if (!*token)
		return efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
	if (!**token) {
		free(*token);
		*token = NULL;
		return efa_error_code_set(err, HTTP_E_TOKEN, "token file %s is empty", path);
	}
	if (!one_line(*token)) {
		http_wipe_free(*token);
		*token = NULL;
		return efa_error_code_set(err, HTTP_E_TOKEN,
			    "token file %s holds more than one line (or control characters): put the token alone in it",
			    path);
	}
	*st_out = st;
	return 0;
}

static int refresh_token(struct http_client *c, struct efa_error *err)
{
	struct stat st;
	char *token;

	if (stat(c->token_file, &st))
		return efa_error_code_set(err, HTTP_E_TOKEN, "cannot read token file %s: %s", c->token_file,
			    strerror(errno));
	if (c->token && st.st_dev == c->token_st.st_dev && st.st_ino == c->token_st.st_ino &&
	    st.st_size == c->token_st.st_size &&
	    st.st_mtim.tv_sec == c->token_st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == c->token_st.st_mtim.tv_nsec)
		return 0;
	if (read_token_file(c, &token, &st, err))
		return -1;
	http_wipe_free(c->token);
	c->token = token;
	c->token_st = st;
	return 0;
}

char *http_url_public(const char *url)
{
	const char *host = strstr(url, "://"), *at;
	char *out;

	if (!host)
		return strdup(url);
	host += 3;
	at = memrchr(host, '@', strcspn(host, "/?#"));
	if (!at)
		return strdup(url);
	out = malloc(strlen(url) + 1);
	if (!out)
		return NULL;
	memcpy(out, url, (size_t)(host - url));
	strcpy(out + (host - url), at + 1);
	return out;
}

/* Whether the URL's host is this machine: its loopback names. */
static bool loopback(const char *url)
{
	const char *host = strstr(url, "://"), *at;
	char name[256];
	size_t len;
	struct in_addr a4;

	if (!host)
		return false;
	host += 3;
	len = strcspn(host, "/?#");
	at = memrchr(host, '@', len);
	if (at)
		host = at + 1;
	if (*host == '[')
		return !strncmp(host, "[::1]", 5);
	len = strcspn(host, ":/?#");
	if (len >= sizeof(name))
		return false;
	memcpy(name, host, len);
	name[len] = '\0';
	if (!strcasecmp(name, "localhost"))
		return true;
	return inet_pton(AF_INET, name, &a4) == 1 && (ntohl(a4.s_addr) >> 24) == 127;
}

static int set_url(struct http_client *c, const char *url, int allow_unix, struct efa_error *err)
{
	const char *host, *slash;
	size_t len;

	if (allow_unix && !strncmp(url, UNIX_PREFIX, strlen(UNIX_PREFIX))) {
		const char *path = url + strlen(UNIX_PREFIX);

		if (path[0] != '/')
			return efa_error_code_set(err, HTTP_E_USAGE,
				    "URL %s: a unix socket needs an absolute path (unix:/run/%s.sock)",
				    url, c->service);
		c->unix_path = strdup(path);
		c->base = strdup("http://localhost");
		return c->unix_path && c->base ? 0 : efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
	}
	if (!strncmp(url, "http://", 7))
		host = url + 7;
	else if (!strncmp(url, "https://", 8))
		host = url + 8;
	else
		return efa_error_code_set(err, HTTP_E_USAGE, "URL %s: use %shttp://host:port or https://host:port",
			    url, allow_unix ? "unix:/path/to/socket, " : "");
	if (strpbrk(host, " \t\r\n"))
		return efa_error_code_set(err, HTTP_E_USAGE, "URL %s has white space in it", url);
	if ((slash = strchr(host, '/')) && strcmp(slash, "/"))
		return efa_error_code_set(err, HTTP_E_USAGE,
			    "URL %s: give only scheme, host and port; the API paths are added", url);
	len = strlen(url);
	while (len && url[len - 1] == '/')
		len--;
	if (len <= (size_t)(host - url))
		return efa_error_code_set(err, HTTP_E_USAGE, "URL %s has no host", url);
	c->base = strndup(url, len);
	return c->base ? 0 : efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
}

void http_free(struct http_client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	http_wipe_free(c->token);
	free(c->token_file);
	free(c->token_prefix);
	free(c->aws_sigv4);
	free(c->aws_key_id);
	http_wipe_free(c->aws_secret);
	http_wipe_free(c->aws_session);
	free(c->token_header);
	free(c->service);
	free(c->url);
	free(c->base);
	free(c->unix_path);
	free(c->url_key);
	free(c->ca_key);
	free(c->ca_file);
	free(c);
}

int http_set_aws_credentials(struct http_client *c, const char *key_id, const char *secret,
			     const char *session_token, struct efa_error *err)
{
	free(c->aws_key_id);
	http_wipe_free(c->aws_secret);
	http_wipe_free(c->aws_session);
	c->aws_session = NULL;
	c->aws_key_id = strdup(key_id);
	c->aws_secret = strdup(secret);
	if (session_token && asprintf(&c->aws_session, "X-Amz-Security-Token: %s", session_token) < 0)
		c->aws_session = NULL;
	if (!c->aws_key_id || !c->aws_secret || (session_token && !c->aws_session))
		return efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
	return 0;
}

static uint64_t seed_jitter(const struct http_client *c)
{
	struct timespec ts;
	uint64_t x;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	x = (uint64_t)(uintptr_t)c ^ ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^
	    ((uint64_t)getpid() << 40);
	return x ? x : 0x9e3779b97f4a7c15ULL;
}

static int dup_opt(char **dst, const char *src)
{
	return src && !(*dst = strdup(src)) ? -1 : 0;
}

struct http_client *http_new(const struct http_options *o, struct efa_error *err)
{
	struct http_client *c;

	pthread_once(&curl_once, init_curl);
	if (curl_init_rc != CURLE_OK) {
		efa_error_code_set(err, HTTP_E_TRANSPORT, "libcurl failed to start: %s",
		     curl_easy_strerror(curl_init_rc));
		return NULL;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
		return NULL;
	}
	c->connect_ms = o->connect_ms;
	c->timeout_ms = o->timeout_ms;
	c->max_response = o->max_response;
	c->no_proxy = o->no_proxy;
	c->retries = o->retries;
	c->retry_ms = o->retry_ms;
	c->posts_are_reads = o->posts_are_reads;
	c->token_private = o->token_private;
	if (o->url && !(c->url = http_url_public(o->url))) {
		efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
		goto fail;
	}
	if (dup_opt(&c->service, o->service ? o->service : "the server") ||
	    dup_opt(&c->url_key, o->url_key) ||
	    dup_opt(&c->ca_key, o->ca_key) || dup_opt(&c->ca_file, o->ca_file) ||
	    dup_opt(&c->token_prefix, o->token_prefix) || dup_opt(&c->aws_sigv4, o->aws_sigv4) ||
	    dup_opt(&c->token_header, o->token_header ? o->token_header : "Authorization: Bearer ")) {
		efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
		goto fail;
	}
	if (!o->url || set_url(c, o->url, o->allow_unix, err))
		goto fail;
	if (o->retries < 0 || (o->retries > 0 && o->retry_ms <= 0)) {
		efa_error_code_set(err, HTTP_E_USAGE, "retries need a positive first wait");
		goto fail;
	}
	c->jitter = seed_jitter(c);
	if (o->token) {
		if (!(c->token = trimmed(c, o->token))) {
			efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
			goto fail;
		}
	} else if (o->token_file) {
		if (dup_opt(&c->token_file, o->token_file)) {
			efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
			goto fail;
		}
		if (read_token_file(c, &c->token, &c->token_st, err))
			goto fail;
	}
	if (c->token && !one_line(c->token)) {
		efa_error_code_set(err, HTTP_E_TOKEN, "the token for %s holds more than one line (or control characters)",
		     c->service);
		goto fail;
	}
	/* A bearer token, and a SigV4 signature with its session token, are
	 * credentials alike: neither crosses the network in clear. */
	if ((c->token || o->aws_sigv4) && !c->unix_path && !strncmp(c->base, "http://", 7) &&
	    !loopback(c->base) && !o->allow_plain_http) {
		efa_error_code_set(err, HTTP_E_USAGE,
		     "%s at %s is plain http:// on another host: its %s would cross the network in clear. Use https://%s%s",
		     c->service, c->url,
		     c->token ? "token" : "signed requests and AWS session token",
		     o->plain_http_key ? ", or allow it with " : "",
		     o->plain_http_key ? o->plain_http_key : "");
		goto fail;
	}
	if (!(c->curl = curl_easy_init())) {
		efa_error_code_set(err, HTTP_E_NOMEM, "out of memory (curl_easy_init)");
		goto fail;
	}
	return c;
fail:
	http_free(c);
	return NULL;
}

const char *http_url(const struct http_client *c)
{
	return c->url;
}

int http_is_unix(const struct http_client *c)
{
	return c->unix_path != NULL;
}

int http_has_token(const struct http_client *c)
{
	return c->token != NULL;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct sink *s = userdata;
	struct http_answer *a = s->answer;
	size_t n = size * nmemb;
	char *grown;

	if (a->len + n > s->max) {
		s->too_large = 1;
		return 0;	/* makes libcurl stop with CURLE_WRITE_ERROR */
	}
	grown = realloc(a->data, a->len + n + 1);
	if (!grown)
		return 0;
	a->data = grown;
	memcpy(a->data + a->len, ptr, n);
	a->len += n;
	a->data[a->len] = '\0';
	return n;
}

static int transport_error(const struct http_client *c, CURLcode rc, const struct sink *s,
			   const char *what, struct efa_error *err)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		if (c->url_key)
			return efa_error_code_set(err, HTTP_E_CONNECT,
				    "cannot connect to %s at %s (%s): is it running, and is %s right?",
				    c->service, c->url, curl_easy_strerror(rc), c->url_key);
		return efa_error_code_set(err, HTTP_E_CONNECT, "cannot connect to %s at %s (%s)", c->service,
			    c->url, curl_easy_strerror(rc));
	case CURLE_PEER_FAILED_VERIFICATION:
		return efa_error_code_set(err, HTTP_E_TLS,
			    "%s at %s has a certificate that cannot be verified (%s): give the CA that signed it with %s",
			    c->service, c->url, curl_easy_strerror(rc),
			    c->ca_key ? c->ca_key : "a CA file");
	case CURLE_SSL_CACERT_BADFILE:
		return efa_error_code_set(err, HTTP_E_TLS, "cannot use the CA file %s for %s (%s): is %s a PEM file?",
			    c->ca_file ? c->ca_file : "(the system's)", c->url,
			    curl_easy_strerror(rc), c->ca_key ? c->ca_key : "it");
	case CURLE_OPERATION_TIMEDOUT:
		return efa_error_code_set(err, HTTP_E_TIMEOUT,
			    "no complete answer from %s at %s to %s within %ld ms (connect limit %ld ms): is it overloaded or unreachable?",
			    c->service, c->url, what, c->timeout_ms, c->connect_ms);
	case CURLE_WRITE_ERROR:
		if (s->too_large)
			return efa_error_code_set(err, HTTP_E_TOO_LARGE,
				    "the answer of %s to %s is larger than %zu bytes", c->service, what,
				    s->max);
		return efa_error_code_set(err, HTTP_E_NOMEM, "out of memory reading the answer to %s", what);
	default:
		return efa_error_code_set(err, HTTP_E_TRANSPORT, "talking to %s at %s (%s): %s", c->service, c->url,
			    what, curl_easy_strerror(rc));
	}
}

/* The credential header; NULL when out of memory. */
static struct curl_slist *add_token(const struct http_client *c, struct curl_slist *headers)
{
	struct curl_slist *h;
	char *line = NULL;

	if (asprintf(&line, "%s%s", c->token_header, c->token) < 0)
		return NULL;
	h = curl_slist_append(headers, line);
	http_wipe_free(line);
	return h;
}

/* The connection broke before a whole answer came: worth another try. */
static int broken_connection(CURLcode rc)
{
	switch (rc) {
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

static int busy_status(long status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

/* The wait before try number `attempt` (1 = the first retry), in ms. */
static long retry_wait_ms(struct http_client *c, int attempt, curl_off_t retry_after)
{
	long wait = c->retry_ms;
	uint64_t x = c->jitter;

	if (retry_after > 0)
		return retry_after > HTTP_RETRY_AFTER_MAX_MS / 1000 ? HTTP_RETRY_AFTER_MAX_MS
								     : (long)retry_after * 1000;
	for (int i = 1; i < attempt && wait < HTTP_RETRY_AFTER_MAX_MS; i++)
		wait *= 2;
	if (wait > HTTP_RETRY_AFTER_MAX_MS)
		wait = HTTP_RETRY_AFTER_MAX_MS;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	c->jitter = x;
	return wait - (long)(x % (uint64_t)(wait / 2 + 1));
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static CURLcode perform(struct http_client *c, const char *method, const char *url,
			struct curl_slist *list, const char *body, struct sink *sink)
{
	CURLcode rc;

	curl_easy_reset(c->curl);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, list);
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, c->timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, sink);
	curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c->curl, CURLOPT_SSL_VERIFYHOST, 2L);
	if (c->no_proxy)
		curl_easy_setopt(c->curl, CURLOPT_NOPROXY, "*");
	if (c->ca_file)
		curl_easy_setopt(c->curl, CURLOPT_CAINFO, c->ca_file);
	if (c->unix_path)
		curl_easy_setopt(c->curl, CURLOPT_UNIX_SOCKET_PATH, c->unix_path);
	if (c->aws_sigv4) {
		curl_easy_setopt(c->curl, CURLOPT_AWS_SIGV4, c->aws_sigv4);
		curl_easy_setopt(c->curl, CURLOPT_USERNAME, c->aws_key_id);
		curl_easy_setopt(c->curl, CURLOPT_PASSWORD, c->aws_secret);
	}
	if (body) {
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	rc = curl_easy_perform(c->curl);
	/* The request held the token: clear it from libcurl's copy of the
	 * options too. */
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	if (c->aws_sigv4)
		curl_easy_setopt(c->curl, CURLOPT_PASSWORD, "");
	return rc;
}

int http_request(struct http_client *c, const char *method, const char *path,
		 const char *const *headers, const char *body, struct http_answer *answer,
		 struct efa_error *err)
{
	struct curl_slist *list = NULL, *h;
	struct sink sink = { .answer = answer, .max = c->max_response };
	int read_only = !strcmp(method, "GET") || (c->posts_are_reads && !strcmp(method, "POST"));
	int tries = read_only ? 1 + c->retries : 1;
	curl_off_t retry_after;
	char *url = NULL;
	char what[256];
	CURLcode rc;
	int ret = -1;

	memset(answer, 0, sizeof(*answer));
	snprintf(what, sizeof(what), "%s %s", method, path);
	if (c->token_file && refresh_token(c, err))
		return -1;
	if (asprintf(&url, "%s%s", c->base, path) < 0)
		return efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
	for (size_t i = 0; headers && headers[i]; i++) {
		if (!(h = curl_slist_append(list, headers[i])))
			goto nomem;
		list = h;
	}
	if (c->token) {
		if (!(h = add_token(c, list)))
			goto nomem;
		list = h;
	}
	if (c->aws_sigv4 && !c->aws_key_id) {
		efa_error_code_set(err, HTTP_E_USAGE, "no AWS credentials to sign the request to %s with", c->service);
		goto out;
	}
	if (c->aws_session) {
		if (!(h = curl_slist_append(list, c->aws_session)))
			goto nomem;
		list = h;
	}
	for (int attempt = 1;; attempt++) {
		rc = perform(c, method, url, list, body, &sink);
		retry_after = 0;
		if (rc == CURLE_OK) {
			curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &answer->status);
			if (attempt == tries || !busy_status(answer->status))
				break;
			curl_easy_getinfo(c->curl, CURLINFO_RETRY_AFTER, &retry_after);
		} else if (attempt == tries || !broken_connection(rc)) {
			break;
		}
		free(answer->data);
		memset(answer, 0, sizeof(*answer));
		sleep_ms(retry_wait_ms(c, attempt, retry_after));
	}
	if (rc != CURLE_OK) {
		transport_error(c, rc, &sink, what, err);
		if (tries > 1 && broken_connection(rc) && err) {
			size_t n = strlen(err->msg);

			snprintf(err->msg + n, sizeof(err->msg) - n, "; tried %d times",
				 tries);
		}
		free(answer->data);
		memset(answer, 0, sizeof(*answer));
		goto out;
	}
	ret = 0;
	goto out;
nomem:
	efa_error_code_set(err, HTTP_E_NOMEM, "out of memory");
out:
	curl_slist_free_all(list);
	free(url);
	return ret;
}
