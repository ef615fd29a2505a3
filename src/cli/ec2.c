/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <ctype.h>
#include <expat.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/strutil.h"
#include "ec2.h"
#include "http/http.h"
#include "imds.h"

#define EC2_CONNECT_MS 5000
#define EC2_TIMEOUT_MS 30000
#define EC2_MAX_RESPONSE (64u * 1024 * 1024)
/* EC2 answers RequestLimitExceeded with HTTP 503: back off and retry. */
#define EC2_RETRIES 5
#define EC2_RETRY_MS 500
/* DescribeInstanceTopology takes at most 100 instance IDs; filters take
 * as many values, kept the same. */
#define EC2_BATCH 100
#define EC2_PAGES_MAX 10000
#define IMDS_TIMEOUT_MS 2000
/* Role credentials are fetched again this long before they expire. */
#define CREDENTIALS_MARGIN 300
#define XML_DEPTH 16
#define XML_PATH_MAX 512
#define XML_TEXT_MAX 4096

struct ec2 {
	struct http_client *http;
	char *region;
	char *imds_url;
	size_t nlayers;
	struct ec2_instance *v;	/* sorted by address */
	size_t n;
	time_t role_expires;	/* 0: no role credentials yet */
	char **types_said;	/* types without topology, said once */
	size_t ntypes_said;
};

static void instance_clear(struct ec2_instance *in, size_t nlayers)
{
	free(in->address);
	free(in->id);
	free(in->type);
	free(in->zone);
	for (size_t i = 0; in->layers && i < nlayers; i++)
		free(in->layers[i]);
	free(in->layers);
	memset(in, 0, sizeof(*in));
}

static int by_address(const void *a, const void *b)
{
	return strcmp(((const struct ec2_instance *)a)->address,
		      ((const struct ec2_instance *)b)->address);
}

const struct ec2_instance *ec2_find(const struct ec2 *e, const char *address)
{
	struct ec2_instance key = { .address = (char *)address };

	return e->n && address ? bsearch(&key, e->v, e->n, sizeof(*e->v), by_address) : NULL;
}

const char *ec2_region(const struct ec2 *e)
{
	return e->region;
}

void ec2_close(struct ec2 *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		instance_clear(&e->v[i], e->nlayers);
	free(e->v);
	http_free(e->http);
	free(e->region);
	free(e->imds_url);
	for (size_t i = 0; i < e->ntypes_said; i++)
		free(e->types_said[i]);
	free(e->types_said);
	free(e);
}

/* ---- the instance metadata service: region and role credentials ---- */

static const char *imds_base(void)
{
	const char *env = getenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");

	return env && *env ? env : IMDS_DEFAULT_URL;
}

static int imds_region(const char *url, char **region, char *why, size_t size)
{
	char problem[IMDS_WHY_MAX];
	int usage, rc;
	struct imds *m = imds_open(url, IMDS_TIMEOUT_MS, &usage, problem, sizeof(problem));

	if (!m) {
		snprintf(why, size, "no region: set Ec2Region= (the instance metadata service: %s)",
			 problem);
		return -1;
	}
	rc = imds_get(m, "placement/region", region, problem, sizeof(problem));
	if (rc)
		snprintf(why, size, "no region: set Ec2Region= (the instance metadata service: %s)",
			 problem);
	imds_close(m);
	return rc;
}

static time_t parse_expiration(const char *s)
{
	struct tm tm = { 0 };
	const char *end = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;

	return end ? timegm(&tm) : 0;
}

/* The instance role's temporary credentials, through IMDSv2. */
static int role_credentials(struct ec2 *e, char *why, size_t size)
{
	char problem[IMDS_WHY_MAX], path[512], *role = NULL, *doc = NULL;
	const char *key, *secret, *token, *expiration;
	struct http_error herr;
	json_t *root = NULL;
	int usage, rc = -1;
	struct imds *m = imds_open(e->imds_url, IMDS_TIMEOUT_MS, &usage, problem, sizeof(problem));

	if (!m) {
		snprintf(why, size, "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and the instance metadata service cannot be had (%s)",
			 problem);
		return -1;
	}
	if (imds_get(m, "iam/security-credentials/", &role, problem, sizeof(problem))) {
		snprintf(why, size, "no AWS credentials: none in the environment and no instance role (%s): attach a role with ec2:DescribeInstances and ec2:DescribeInstanceTopology",
			 problem);
		goto out;
	}
	role[strcspn(role, "\n")] = '\0';
	snprintf(path, sizeof(path), "iam/security-credentials/%s", role);
	if (imds_get_document(m, path, &doc, problem, sizeof(problem))) {
		snprintf(why, size, "no credentials for the instance role %s: %s", role, problem);
		goto out;
	}
	root = json_loads(doc, 0, NULL);
	key = json_string_value(json_object_get(root, "AccessKeyId"));
	secret = json_string_value(json_object_get(root, "SecretAccessKey"));
	token = json_string_value(json_object_get(root, "Token"));
	expiration = json_string_value(json_object_get(root, "Expiration"));
	if (!key || !secret) {
		snprintf(why, size, "the credentials of the instance role %s have no AccessKeyId and SecretAccessKey",
			 role);
		goto out;
	}
	if (http_set_aws_credentials(e->http, key, secret, token, &herr)) {
		snprintf(why, size, "%s", herr.message);
		goto out;
	}
	e->role_expires = parse_expiration(expiration);
	if (!e->role_expires)
		e->role_expires = time(NULL) + CREDENTIALS_MARGIN + 60;
	rc = 0;
out:
	json_decref(root);
	http_wipe_free(doc);
	free(role);
	imds_close(m);
	return rc;
}

/* Credentials from the environment (read each round: they may be
 * renewed), else the instance role's, fetched again before they expire. */
static int credentials(struct ec2 *e, char *why, size_t size)
{
	const char *key = getenv("AWS_ACCESS_KEY_ID"), *secret = getenv("AWS_SECRET_ACCESS_KEY");
	const char *token = getenv("AWS_SESSION_TOKEN");
	struct http_error herr;

	if (key && *key && secret && *secret) {
		if (!http_set_aws_credentials(e->http, key, secret, token && *token ? token : NULL,
					      &herr))
			return 0;
		snprintf(why, size, "%s", herr.message);
		return -1;
	}
	if (e->role_expires && time(NULL) + CREDENTIALS_MARGIN < e->role_expires)
		return 0;
	return role_credentials(e, why, size);
}

struct ec2 *ec2_open(const struct efa_config *cfg, size_t nlayers, char *why, size_t size)
{
	struct http_options o = {
		.service = "EC2",
		.url_key = "Ec2Endpoint=",
		.connect_ms = EC2_CONNECT_MS,
		.timeout_ms = EC2_TIMEOUT_MS,
		.max_response = EC2_MAX_RESPONSE,
		.retries = EC2_RETRIES,
		.retry_ms = EC2_RETRY_MS,
	};
	const char *region = cfg->ec2_region;
	char *url = NULL, *sigv4 = NULL;
	struct http_error herr;
	struct ec2 *e = calloc(1, sizeof(*e));

	if (!e || !(e->imds_url = strdup(imds_base())))
		goto nomem;
	e->nlayers = nlayers;
	if (!region || !*region)
		region = getenv("AWS_REGION");
	if (!region || !*region)
		region = getenv("AWS_DEFAULT_REGION");
	if (region && *region) {
		if (!(e->region = strdup(region)))
			goto nomem;
	} else if (imds_region(e->imds_url, &e->region, why, size)) {
		goto fail;
	}
	if (cfg->ec2_endpoint)
		url = strdup(cfg->ec2_endpoint);
	else if (asprintf(&url, "https://ec2.%s.amazonaws.com", e->region) < 0)
		url = NULL;
	if (!url || asprintf(&sigv4, "aws:amz:%s:ec2", e->region) < 0)
		goto nomem;
	o.url = url;
	o.aws_sigv4 = sigv4;
	if (!(e->http = http_new(&o, &herr))) {
		snprintf(why, size, "%s", herr.message);
		goto fail;
	}
	free(url);
	free(sigv4);
	return e;
nomem:
	snprintf(why, size, "out of memory");
fail:
	free(url);
	free(sigv4);
	ec2_close(e);
	return NULL;
}

/* ---- the Query API: canonical query strings ---- */

struct query {
	char **params;		/* "name=value", both encoded */
	size_t n;
};

static void encode(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) || strchr("-_.~", ch))
			fputc(ch, out);
		else
			fprintf(out, "%%%02X", ch);
	}
}

__attribute__((format(printf, 3, 4)))
static int query_add(struct query *q, const char *value, const char *fmt, ...)
{
	char name[128], *param = NULL, **grown;
	size_t len;
	va_list ap;
	FILE *out;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (!(out = open_memstream(&param, &len)))
		return -1;
	encode(out, name);
	fputc('=', out);
	encode(out, value);
	if (fclose(out))
		goto fail;
	if (!(grown = realloc(q->params, (q->n + 1) * sizeof(*grown))))
		goto fail;
	q->params = grown;
	q->params[q->n++] = param;
	return 0;
fail:
	free(param);
	return -1;
}

static void query_clear(struct query *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->params[i]);
	free(q->params);
	memset(q, 0, sizeof(*q));
}

static int param_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * "/?a=1&b=2", sorted as SigV4's canonical query string is, so that the
 * query libcurl signs is the one sent whichever libcurl sorts or not.
 */
static char *query_path(struct query *q)
{
	char *path = NULL;
	size_t len;
	FILE *out = open_memstream(&path, &len);

	if (!out)
		return NULL;
	qsort(q->params, q->n, sizeof(*q->params), param_cmp);
	fputs("/?", out);
	for (size_t i = 0; i < q->n; i++)
		fprintf(out, "%s%s", i ? "&" : "", q->params[i]);
	if (fclose(out)) {
		free(path);
		return NULL;
	}
	return path;
}

/* ---- answers: AWS's XML, walked by element path ---- */

struct walk {
	char path[XML_PATH_MAX];	/* below the root: "a/b/c" */
	size_t ends[XML_DEPTH];
	int depth;
	char text[XML_TEXT_MAX];
	size_t tlen;
	/* called at each element's end with its path and text */
	int (*on_end)(void *ctx, const char *path, const char *text);
	void *ctx;
	int failed;
	XML_Parser parser;
};

static void XMLCALL on_start(void *data, const XML_Char *name, const XML_Char **attrs)
{
	struct walk *w = data;
	size_t len = strlen(w->path);

	(void)attrs;
	if (w->depth >= XML_DEPTH) {
		w->failed = 1;
		XML_StopParser(w->parser, XML_FALSE);
		return;
	}
	w->ends[w->depth++] = len;
	if (w->depth > 1)	/* the root's name is not part of the path */
		snprintf(w->path + len, sizeof(w->path) - len, "%s%s", len ? "/" : "", name);
	w->tlen = 0;
	w->text[0] = '\0';
}

static void XMLCALL on_text(void *data, const XML_Char *s, int len)
{
	struct walk *w = data;
	size_t n = (size_t)len;

	if (w->tlen + n >= sizeof(w->text))
		n = sizeof(w->text) - 1 - w->tlen;
	memcpy(w->text + w->tlen, s, n);
	w->tlen += n;
	w->text[w->tlen] = '\0';
}

static void XMLCALL on_end(void *data, const XML_Char *name)
{
	struct walk *w = data;

	(void)name;
	if (w->on_end(w->ctx, w->path, w->text)) {
		w->failed = 1;
		XML_StopParser(w->parser, XML_FALSE);
		return;
	}
	w->path[w->ends[--w->depth]] = '\0';
	w->tlen = 0;
	w->text[0] = '\0';
}

/* -1 with why filled when body is no XML (or on_end failed). */
static int walk_xml(const char *body, size_t len, int (*fn)(void *, const char *, const char *),
		    void *ctx, char *why, size_t size)
{
	struct walk w = { .on_end = fn, .ctx = ctx };
	int rc = 0;

	if (!(w.parser = XML_ParserCreate("UTF-8"))) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	XML_SetUserData(w.parser, &w);
	XML_SetElementHandler(w.parser, on_start, on_end);
	XML_SetCharacterDataHandler(w.parser, on_text);
	if (XML_Parse(w.parser, body ? body : "", (int)len, XML_TRUE) != XML_STATUS_OK || w.failed) {
		snprintf(why, size, "EC2's answer is not the XML expected (%s): is Ec2Endpoint= an EC2 endpoint?",
			 w.failed ? "out of memory or too deep" :
			 XML_ErrorString(XML_GetErrorCode(w.parser)));
		rc = -1;
	}
	XML_ParserFree(w.parser);
	return rc;
}

struct aws_error {
	char code[128];
	char message[512];
};

static int on_error_end(void *ctx, const char *path, const char *text)
{
	struct aws_error *ae = ctx;

	if (!strcmp(path, "Errors/Error/Code"))
		snprintf(ae->code, sizeof(ae->code), "%s", text);
	else if (!strcmp(path, "Errors/Error/Message"))
		snprintf(ae->message, sizeof(ae->message), "%s", text);
	return 0;
}

/* One request; 0 with the answer's body, or -1 with why naming what to do. */
static int ec2_get(struct ec2 *e, const char *action, struct query *q, struct http_answer *a,
		   char *why, size_t size)
{
	struct aws_error ae = { "", "" };
	struct http_error herr;
	char ignored[8];
	char *path;
	int rc;

	if (credentials(e, why, size))
		return -1;
	if (query_add(q, action, "Action") || query_add(q, EC2_API_VERSION, "Version") ||
	    !(path = query_path(q))) {
		snprintf(why, size, "out of memory");
		return -1;
	}
	rc = http_request(e->http, "GET", path, NULL, NULL, a, &herr);
	free(path);
	if (rc) {
		snprintf(why, size, "%s", herr.message);
		return -1;
	}
	if (a->status == 200)
		return 0;
	walk_xml(a->data, a->len, on_error_end, &ae, ignored, sizeof(ignored));
	if (!strcmp(ae.code, "UnauthorizedOperation") || a->status == 403)
		snprintf(why, size, "EC2 refused %s (%s%s%s): the credentials need the IAM permission ec2:%s",
			 action, ae.code[0] ? ae.code : "HTTP 403", ae.message[0] ? ": " : "", ae.message,
			 action);
	else if (a->status == 401 || !strcmp(ae.code, "AuthFailure"))
		snprintf(why, size, "EC2 did not accept the credentials for %s (%s%s%s): check the access key, its secret and the region (%s)",
			 action, ae.code[0] ? ae.code : "HTTP 401", ae.message[0] ? ": " : "", ae.message,
			 e->region);
	else
		snprintf(why, size, "EC2 answered %s with HTTP %ld (%s%s%s)", action, a->status,
			 ae.code[0] ? ae.code : "no error code", ae.message[0] ? ": " : "", ae.message);
	free(a->data);
	memset(a, 0, sizeof(*a));
	return -1;
}

/* ---- DescribeInstances: address -> instance and zone ---- */

struct found {
	struct ec2_instance *v;
	size_t n;
	struct ec2_instance cur;
	char next[1024];
	size_t nlayers;
};

static int keep(struct found *f)
{
	struct ec2_instance *grown;

	if (!f->cur.address || !f->cur.id) {
		instance_clear(&f->cur, f->nlayers);
		return 0;
	}
	if (!(grown = realloc(f->v, (f->n + 1) * sizeof(*grown))))
		return -1;
	f->v = grown;
	f->v[f->n++] = f->cur;
	memset(&f->cur, 0, sizeof(f->cur));
	return 0;
}

static int set(char **field, const char *text)
{
	free(*field);
	return (*field = strdup(text)) ? 0 : -1;
}

#define INSTANCE "reservationSet/item/instancesSet/item"

static int on_instances_end(void *ctx, const char *path, const char *text)
{
	struct found *f = ctx;

	if (!strcmp(path, "nextToken"))
		snprintf(f->next, sizeof(f->next), "%s", text);
	else if (!strcmp(path, INSTANCE))
		return keep(f);
	else if (!strcmp(path, INSTANCE "/instanceId"))
		return set(&f->cur.id, text);
	else if (!strcmp(path, INSTANCE "/instanceType"))
		return set(&f->cur.type, text);
	else if (!strcmp(path, INSTANCE "/privateIpAddress"))
		return set(&f->cur.address, text);
	else if (!strcmp(path, INSTANCE "/placement/availabilityZone"))
		return set(&f->cur.zone, text);
	return 0;
}

/* Pages through the instances at these addresses, into f. */
static int describe_instances(struct ec2 *e, char *const *addresses, size_t n, struct found *f,
			      char *why, size_t size)
{
	for (size_t page = 0; page < EC2_PAGES_MAX; page++) {
		struct query q = { 0 };
		struct http_answer a = { 0 };
		char token[sizeof(f->next)];
		int rc = query_add(&q, "private-ip-address", "Filter.1.Name") ||
			 query_add(&q, "instance-state-name", "Filter.2.Name") ||
			 query_add(&q, "pending", "Filter.2.Value.1") ||
			 query_add(&q, "running", "Filter.2.Value.2") ||
			 query_add(&q, "1000", "MaxResults");

		for (size_t i = 0; !rc && i < n; i++)
			rc = query_add(&q, addresses[i], "Filter.1.Value.%zu", i + 1);
		if (!rc && page)
			rc = query_add(&q, f->next, "NextToken");
		if (rc) {
			query_clear(&q);
			snprintf(why, size, "out of memory");
			return -1;
		}
		rc = ec2_get(e, "DescribeInstances", &q, &a, why, size);
		query_clear(&q);
		if (rc)
			return -1;
		snprintf(token, sizeof(token), "%s", f->next);
		f->next[0] = '\0';
		rc = walk_xml(a.data, a.len, on_instances_end, f, why, size);
		free(a.data);
		if (rc)
			return -1;
		if (!f->next[0])
			return 0;
		if (!strcmp(token, f->next)) {
			snprintf(why, size, "EC2 gave the same NextToken twice for DescribeInstances");
			return -1;
		}
	}
	snprintf(why, size, "DescribeInstances did not end after %d pages", EC2_PAGES_MAX);
	return -1;
}

/* ---- DescribeInstanceTopology: instance -> network layers ---- */

struct topology_page {
	struct found *f;
	char id[64];
	char **nodes;		/* the current instance's, top first */
	size_t nnodes;
	char next[1024];
};

static struct ec2_instance *by_id(struct found *f, const char *id)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->v[i].id, id))
			return &f->v[i];
	return NULL;
}

static void nodes_clear(struct topology_page *t)
{
	for (size_t i = 0; i < t->nnodes; i++)
		free(t->nodes[i]);
	free(t->nodes);
	t->nodes = NULL;
	t->nnodes = 0;
	t->id[0] = '\0';
}

/* The instance's layers, when EC2 gave at least as many as are kept. */
static int topology_done(struct topology_page *t)
{
	struct ec2_instance *in = by_id(t->f, t->id);
	size_t nlayers = t->f->nlayers;

	if (in && nlayers && t->nnodes >= nlayers && !in->layers) {
		if (!(in->layers = calloc(nlayers, sizeof(*in->layers))))
			return -1;
		for (size_t i = 0; i < nlayers; i++)
			if (!(in->layers[i] = strdup(t->nodes[i])))
				return -1;
	}
	nodes_clear(t);
	return 0;
}

static int on_topology_end(void *ctx, const char *path, const char *text)
{
	struct topology_page *t = ctx;
	char **grown;

	if (!strcmp(path, "nextToken")) {
		snprintf(t->next, sizeof(t->next), "%s", text);
	} else if (!strcmp(path, "instanceSet/item")) {
		return topology_done(t);
	} else if (!strcmp(path, "instanceSet/item/instanceId")) {
		snprintf(t->id, sizeof(t->id), "%s", text);
	} else if (!strcmp(path, "instanceSet/item/networkNodeSet/item")) {
		if (!(grown = realloc(t->nodes, (t->nnodes + 1) * sizeof(*grown))))
			return -1;
		t->nodes = grown;
		if (!(t->nodes[t->nnodes] = strdup(text)))
			return -1;
		t->nnodes++;
	}
	return 0;
}

static int describe_topology(struct ec2 *e, struct found *f, size_t from, size_t to, char *why,
			     size_t size)
{
	struct topology_page t = { .f = f };

	for (size_t page = 0; page < EC2_PAGES_MAX; page++) {
		struct query q = { 0 };
		struct http_answer a = { 0 };
		char token[sizeof(t.next)];
		int rc = 0;

		for (size_t i = from; !rc && i < to; i++)
			rc = query_add(&q, f->v[i].id, "InstanceId.%zu", i - from + 1);
		if (!rc && page)
			rc = query_add(&q, t.next, "NextToken");
		if (rc) {
			query_clear(&q);
			snprintf(why, size, "out of memory");
			return -1;
		}
		rc = ec2_get(e, "DescribeInstanceTopology", &q, &a, why, size);
		query_clear(&q);
		if (rc)
			return -1;
		snprintf(token, sizeof(token), "%s", t.next);
		t.next[0] = '\0';
		rc = walk_xml(a.data, a.len, on_topology_end, &t, why, size);
		nodes_clear(&t);
		free(a.data);
		if (rc)
			return -1;
		if (!t.next[0])
			return 0;
		if (!strcmp(token, t.next)) {
			snprintf(why, size, "EC2 gave the same NextToken twice for DescribeInstanceTopology");
			return -1;
		}
	}
	snprintf(why, size, "DescribeInstanceTopology did not end after %d pages", EC2_PAGES_MAX);
	return -1;
}

/* ---- the cache ---- */

static bool is_ipv4(const char *s)
{
	struct in_addr a;

	return s && inet_pton(AF_INET, s, &a) == 1;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool type_said(const struct ec2 *e, const char *type)
{
	for (size_t i = 0; i < e->ntypes_said; i++)
		if (!strcmp(e->types_said[i], type))
			return true;
	return false;
}

/* Instance types EC2 gives no topology for, said once each. */
static void say_untopologized(struct ec2 *e, const struct found *f)
{
	for (size_t i = 0; e->nlayers && i < f->n; i++) {
		const char *type = f->v[i].type ? f->v[i].type : "(unknown)";
		char **grown;

		if (f->v[i].layers || type_said(e, type))
			continue;
		if (!(grown = realloc(e->types_said, (e->ntypes_said + 1) * sizeof(*grown))))
			return;
		e->types_said = grown;
		if (!(e->types_said[e->ntypes_said] = strdup(type)))
			return;
		e->ntypes_said++;
		fprintf(stderr, "slurm-efa: ec2: DescribeInstanceTopology gives no network layers for %s (%s, %s): such nodes sit under their zone only\n",
			type, f->v[i].id, f->v[i].address);
	}
}

int ec2_refresh(struct ec2 *e, char *const *addresses, size_t n, char *why, size_t size)
{
	char **wanted = calloc(n + 1, sizeof(*wanted)), **missing = calloc(n + 1, sizeof(*missing));
	struct found f = { .nlayers = e->nlayers };
	struct ec2_instance *merged = NULL;
	size_t nwanted = 0, nmissing = 0, nmerged = 0;
	int rc = -1;

	if (!wanted || !missing)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (is_ipv4(addresses[i]))
			wanted[nwanted++] = addresses[i];
	if (nwanted)
		qsort(wanted, nwanted, sizeof(*wanted), str_cmp);
	for (size_t i = 0; i < nwanted; i++)
		if ((!i || strcmp(wanted[i], wanted[i - 1])) && !ec2_find(e, wanted[i]))
			missing[nmissing++] = wanted[i];
	for (size_t i = 0; i < nmissing; i += EC2_BATCH)
		if (describe_instances(e, missing + i, nmissing - i < EC2_BATCH ? nmissing - i : EC2_BATCH,
				       &f, why, size))
			goto out;
	for (size_t i = 0; e->nlayers && i < f.n; i += EC2_BATCH)
		if (describe_topology(e, &f, i, f.n - i < EC2_BATCH ? f.n : i + EC2_BATCH, why, size))
			goto out;
	say_untopologized(e, &f);
	/* What stays: the known instances still wanted, and the new ones. */
	if (!(merged = calloc(e->n + f.n + 1, sizeof(*merged))))
		goto nomem;
	for (size_t i = 0; i < e->n; i++) {
		if (bsearch(&e->v[i].address, wanted, nwanted, sizeof(*wanted), str_cmp))
			merged[nmerged++] = e->v[i];
		else
			instance_clear(&e->v[i], e->nlayers);
	}
	for (size_t i = 0; i < f.n; i++)
		merged[nmerged++] = f.v[i];
	f.n = 0;
	free(e->v);
	e->v = merged;
	e->n = nmerged;
	if (e->n)
		qsort(e->v, e->n, sizeof(*e->v), by_address);
	/* Two instances cannot share an address; should EC2 say so (or
	 * answer for an address not asked about twice), the first stays. */
	for (size_t i = 1; i < e->n; i++)
		if (!strcmp(e->v[i].address, e->v[i - 1].address)) {
			instance_clear(&e->v[i], e->nlayers);
			memmove(&e->v[i], &e->v[i + 1], (e->n - i - 1) * sizeof(*e->v));
			e->n--;
			i--;
		}
	rc = 0;
	goto out;
nomem:
	snprintf(why, size, "out of memory");
out:
	for (size_t i = 0; i < f.n; i++)
		instance_clear(&f.v[i], e->nlayers);
	free(f.v);
	instance_clear(&f.cur, e->nlayers);
	free(wanted);
	free(missing);
	return rc;
}
