/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa: the EC2 instance metadata service (IMDSv2) over the HTTP layer. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http/http.h"
#include "imds.h"

#define IMDS_ANSWER_MAX 4096
#define IMDS_RETRIES 2
#define IMDS_RETRY_MS 100
#define IMDS_TOKEN_TTL "21600"	/* seconds; the session is used at once */

struct imds {
	struct http_client *http;
	char *token;
};

/* One request; returns the HTTP status, or -1 with err filled (err also
 * says what an answer other than 200 was). */
static long request(struct imds *m, const char *method, const char *path,
		    const char *header, struct http_answer *a, struct efa_error *err)
{
	const char *headers[] = { header, NULL };

	if (http_request(m->http, method, path, headers, NULL, a, err))
		return -1;
	if (a->status != 200)
		efa_error_set(err, "the metadata service at %s answered %s %s with HTTP %ld",
			 http_url(m->http), method, path, a->status);
	return a->status;
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

struct imds *imds_open(const char *base, long timeout_ms, int *usage, struct efa_error *err)
{
	struct http_options o = {
		.service = "the metadata service",
		.url = base,
		.connect_ms = timeout_ms,
		.timeout_ms = timeout_ms,
		.max_response = IMDS_ANSWER_MAX,
		.no_proxy = 1,	/* link-local: never a proxy */
		.retries = IMDS_RETRIES,
		.retry_ms = IMDS_RETRY_MS,
	};
	struct http_answer a = { 0 };
	struct imds *m;
	long status;

	*usage = 0;
	if (!(m = calloc(1, sizeof(*m)))) {
		efa_error_set(err, "out of memory");
		return NULL;
	}
	if (!(m->http = http_new(&o, err))) {
		*usage = err->code == HTTP_E_USAGE;
		efa_error_wrap(err, "metadata service ", *usage ? ", e.g. " IMDS_DEFAULT_URL : "");
		goto fail;
	}
	status = request(m, "PUT", "/latest/api/token",
			 "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL, &a, err);
	if (status != 200) {
		if (status == 403 || status == 405)
			efa_error_wrap(err, NULL, " to the IMDSv2 token request (the metadata service may be disabled for this instance)");
		goto fail;
	}
	if (!(m->token = first_word(a.data ? a.data : "")) || !token_ok(m->token)) {
		efa_error_set(err, "the metadata service at %s answered a session token that is empty or not printable",
			 base);
		goto fail;
	}
	http_wipe_free(a.data);
	return m;
fail:
	http_wipe_free(a.data);
	imds_close(m);
	return NULL;
}

static int get(struct imds *m, const char *path, bool whole, char **value, struct efa_error *err)
{
	char header[1024], full[256];
	struct http_answer a = { 0 };

	*value = NULL;
	snprintf(header, sizeof(header), "X-aws-ec2-metadata-token: %s", m->token);
	snprintf(full, sizeof(full), "/latest/meta-data/%s", path);
	if (request(m, "GET", full, header, &a, err) == 200 &&
	    !(*value = whole ? strdup(a.data ? a.data : "") : first_word(a.data ? a.data : "")))
		efa_error_set(err, "out of memory");
	http_wipe_free(a.data);
	return *value ? 0 : -1;
}

const char *imds_base_url(void)
{
	const char *env = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");

	return env && *env ? env : IMDS_DEFAULT_URL;
}

bool imds_disabled(void)
{
	const char *off = getenv("AWS_EC2_METADATA_DISABLED");

	return off && !strcasecmp(off, "true");
}

int imds_get(struct imds *m, const char *path, char **value, struct efa_error *err)
{
	return get(m, path, false, value, err);
}

int imds_get_document(struct imds *m, const char *path, char **value, struct efa_error *err)
{
	return get(m, path, true, value, err);
}

void imds_close(struct imds *m)
{
	if (!m)
		return;
	http_free(m->http);
	http_wipe_free(m->token);
	free(m);
}
