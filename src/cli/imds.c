/* slurm-efa: the EC2 instance metadata service (IMDSv2) over libcurl. */
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "imds.h"

#define IMDS_ANSWER_MAX 4096
#define IMDS_TOKEN_TTL "21600"	/* seconds; the session is used at once */

struct imds {
	int curl_started;	/* curl_global_init done: undone by imds_close */
	CURL *curl;
	char *base;
	char *token;
	long timeout_ms;
};

struct answer {
	char buf[IMDS_ANSWER_MAX + 1];
	size_t len;
};

static size_t on_data(char *data, size_t size, size_t n, void *ctx)
{
	struct answer *a = ctx;
	size_t len = size * n;

	if (len > IMDS_ANSWER_MAX - a->len)
		return 0;	/* too large: libcurl stops with a write error */
	memcpy(a->buf + a->len, data, len);
	a->len += len;
	a->buf[a->len] = '\0';
	return len;
}

static void explain(const struct imds *m, const char *what, CURLcode rc, long status,
		    char *why, size_t size)
{
	if (rc == CURLE_OPERATION_TIMEDOUT)
		snprintf(why, size, "the metadata service at %s did not answer %s within %ld ms",
			 m->base, what, m->timeout_ms);
	else if (rc == CURLE_COULDNT_CONNECT)
		snprintf(why, size, "cannot connect to the metadata service at %s", m->base);
	else if (rc == CURLE_WRITE_ERROR)
		snprintf(why, size, "the metadata service at %s answered %s with more than %d bytes",
			 m->base, what, IMDS_ANSWER_MAX);
	else if (rc != CURLE_OK)
		snprintf(why, size, "the metadata service at %s failed %s: %s", m->base, what,
			 curl_easy_strerror(rc));
	else
		snprintf(why, size, "the metadata service at %s answered %s with HTTP %ld", m->base,
			 what, status);
}

/* One request; returns the HTTP status, or -1 with why filled. */
static long request(struct imds *m, const char *method, const char *path,
		    const char *header, struct answer *a, char *why, size_t size)
{
	struct curl_slist *headers = NULL;
	char url[1024], what[256];
	long status = 0;
	CURLcode rc;

	a->len = 0;
	a->buf[0] = '\0';
	snprintf(url, sizeof(url), "%s%s", m->base, path);
	snprintf(what, sizeof(what), "%s %s", method, path);
	if (header && !(headers = curl_slist_append(NULL, header))) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	curl_easy_reset(m->curl);
	curl_easy_setopt(m->curl, CURLOPT_URL, url);
	curl_easy_setopt(m->curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(m->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(m->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(m->curl, CURLOPT_NOPROXY, "*");	/* link-local: never a proxy */
	curl_easy_setopt(m->curl, CURLOPT_CONNECTTIMEOUT_MS, m->timeout_ms);
	curl_easy_setopt(m->curl, CURLOPT_TIMEOUT_MS, m->timeout_ms);
	curl_easy_setopt(m->curl, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(m->curl, CURLOPT_WRITEDATA, a);
	rc = curl_easy_perform(m->curl);
	curl_slist_free_all(headers);
	if (rc == CURLE_OK)
		curl_easy_getinfo(m->curl, CURLINFO_RESPONSE_CODE, &status);
	if (rc != CURLE_OK || status != 200) {
		explain(m, what, rc, status, why, size);
		return rc == CURLE_OK ? status : -1;
	}
	return status;
}

/* IMDS values are one word (a zone, a type, a token): the first one. */
static char *first_word(const char *s)
{
	s += strspn(s, " \t\r\n");
	return strndup(s, strcspn(s, " \t\r\n"));
}

static int token_ok(const char *t)
{
	if (!*t)
		return 0;
	for (; *t; t++)
		if (!isgraph((unsigned char)*t))
			return 0;
	return 1;
}

static int url_ok(const char *base)
{
	const char *host;

	if (!strncmp(base, "http://", 7))
		host = base + 7;
	else if (!strncmp(base, "https://", 8))
		host = base + 8;
	else
		return 0;
	/* Scheme and host[:port] only; one trailing "/" is dropped. */
	return *host && *host != '/' && (!strchr(host, '/') || !strcmp(strchr(host, '/'), "/")) &&
	       !strpbrk(host, " \t\r\n");
}

struct imds *imds_open(const char *base, long timeout_ms, int *usage, char *why, size_t size)
{
	struct imds *m = NULL;
	struct answer *a = NULL;
	long status;

	*usage = 0;
	if (!url_ok(base)) {
		*usage = 1;
		snprintf(why, size, "metadata service URL '%s': use http://host[:port], e.g. %s",
			 base, IMDS_DEFAULT_URL);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	a = malloc(sizeof(*a));
	if (!m || !a || !(m->base = strdup(base))) {
		snprintf(why, size, "out of memory");
		goto fail;
	}
	if (m->base[strlen(m->base) - 1] == '/')
		m->base[strlen(m->base) - 1] = '\0';
	m->curl_started = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
	if (!m->curl_started || !(m->curl = curl_easy_init())) {
		snprintf(why, size, "libcurl failed to start");
		goto fail;
	}
	m->timeout_ms = timeout_ms;
	status = request(m, "PUT", "/latest/api/token",
			 "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL, a, why, size);
	if (status != 200) {
		if (status == 403 || status == 405)
			snprintf(why + strlen(why), size - strlen(why),
				 " to the IMDSv2 token request (the metadata service may be disabled for this instance)");
		goto fail;
	}
	if (!(m->token = first_word(a->buf)) || !token_ok(m->token)) {
		snprintf(why, size, "the metadata service at %s answered a session token that is empty or not printable",
			 base);
		goto fail;
	}
	free(a);
	return m;
fail:
	free(a);
	imds_close(m);
	return NULL;
}

int imds_get(struct imds *m, const char *path, char **value, char *why, size_t size)
{
	char header[1024], full[256];
	struct answer *a = malloc(sizeof(*a));
	long status;

	*value = NULL;
	if (!a) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	snprintf(header, sizeof(header), "X-aws-ec2-metadata-token: %s", m->token);
	snprintf(full, sizeof(full), "/latest/meta-data/%s", path);
	status = request(m, "GET", full, header, a, why, size);
	if (status == 200 && !(*value = first_word(a->buf)))
		snprintf(why, size, "out of memory");
	free(a);
	return *value ? 0 : -1;
}

void imds_close(struct imds *m)
{
	if (!m)
		return;
	if (m->curl)
		curl_easy_cleanup(m->curl);
	free(m->base);
	free(m->token);
	if (m->curl_started)
		curl_global_cleanup();
	free(m);
}
