/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for the EC2 Query API on 127.0.0.1 (plain HTTP), written from
 * AWS's documents (the EC2 API Reference, "Create a signed AWS API
 * request" for Signature Version 4), not from slurm-efa's client:
 *   fakeec2 SECONDS REGION CREDENTIALS INSTANCES
 * prints the port it listens on, then for SECONDS answers
 * DescribeInstances and DescribeInstanceTopology (API version 2016-11-15)
 * in AWS's XML, from INSTANCES, read again at every request so that
 * instances come and go: one line per running instance,
 *   INSTANCE-ID PRIVATE-IP ZONE TYPE [LAYER1,LAYER2,... [CAPACITY-BLOCK-ID]]
 * (no layers: a type DescribeInstanceTopology does not cover; "-": none
 * but a capacity block, an UltraServer's, follows).
 *   fakeec2 verify REGION SERVICE CREDENTIALS
 * checks the signature of the one request on standard input and prints
 * "ok" or why not (exit 0 or 1): the tests check this implementation
 * against AWS's published example.
 *
 * As EC2 does, it takes the parameters from the query string of a GET or
 * from the form-encoded body of a POST. Every request must be signed with
 * AWS Signature Version 4 for REGION and service ec2 by a key of
 * CREDENTIALS (lines "KEY-ID SECRET [SESSION-TOKEN [EXPIRES]]"; with a
 * session token, X-Amz-Security-Token must carry it and be signed; past
 * EXPIRES, epoch seconds, it is refused as EC2 refuses an expired one,
 * 400 RequestExpired). The signature
 * is computed here from the request as received: the canonical query of
 * the URL (each name and value URI-encoded, sorted by name, then by
 * value), the signed headers (sorted, lower case, values trimmed with
 * inner runs of spaces made one), the SHA-256 of the body. An unsigned
 * request, a wrong signature, an unknown key, another region or service
 * is refused with 401 AuthFailure, an x-amz-date more than 15 minutes off
 * the clock (FAKEEC2_NOW=YYYYMMDDTHHMMSSZ sets it) with 400 RequestExpired.
 *
 * DescribeInstances takes Filter.N.Name=private-ip-address with its
 * Filter.N.Value.M (other filters are accepted, every instance here is
 * running) and MaxResults (5 to 1000); DescribeInstanceTopology takes up
 * to 100 InstanceId.N, and refuses MaxResults beside them, as EC2 does.
 * Both page with NextToken ("pg/N+a=b": a token that must be encoded in
 * the body and in the signature): FAKEEC2_PAGE items a page at most
 * (default 1000 and 20, EC2's defaults). FAKEEC2_THROTTLE=N answers the
 * first N requests of each kind 503 RequestLimitExceeded.
 * FAKEEC2_TOKEN=same gives the same NextToken forever, =new a new one at
 * every page, never ending: paging as a broken service would.
 * FAKEEC2_BROKEN=1 cuts every answer short: XML that does not parse.
 *
 * Each request is logged to stderr as "ACTION STATUS ITEMS key=KEY-ID
 * params=N" or "ACTION STATUS why".
 */
#include <ctype.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

#define PARAMS_MAX 4096
#define HEAD_MAX 16384
#define REQUEST_BODY_MAX (1 << 20)
#define ANSWER_MAX (4 << 20)

struct server {
	const char *region;
	const char *credentials;
	const char *instances;
	int throttled[2];	/* per action: how many were refused */
	unsigned long tokens;	/* FAKEEC2_TOKEN=new: tokens given */
};

struct param {
	char *name;		/* decoded */
	char *value;
};

struct request {
	char method[16];
	char path[1024];
	char *query;		/* as received, without '?' */
	char head[HEAD_MAX];	/* the request line and headers */
	char *body;
	size_t body_len;
	struct param params[PARAMS_MAX];
	size_t nparams;
};

static void request_clear(struct request *r)
{
	for (size_t i = 0; i < r->nparams; i++) {
		free(r->params[i].name);
		free(r->params[i].value);
	}
	free(r->query);
	free(r->body);
	r->query = r->body = NULL;
	r->nparams = r->body_len = 0;
}

static void reply(int fd, const char *status, const char *body)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: text/xml;charset=UTF-8\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, strlen(body));

	(void)!write(fd, head, (size_t)n);
	(void)!write(fd, body, strlen(body));
}

static void error_reply(int fd, const char *status, const char *code, const char *message)
{
	char body[1024];

	snprintf(body, sizeof(body),
		 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>fake-request</RequestID></Response>",
		 code, message);
	reply(fd, status, body);
}

/*
 * The value of header name (case-insensitive), trimmed, with inner runs
 * of spaces made one as SigV4's canonical headers want; several headers
 * of that name are joined with commas. NULL if absent.
 */
static const char *header(const char *head, const char *name, char *value, size_t size)
{
	size_t len = strlen(name), o = 0;
	bool found = false;

	value[0] = '\0';
	for (const char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
		const char *v = line + 2;
		size_t n;

		if (strncasecmp(v, name, len) || v[len] != ':')
			continue;
		v += len + 1;
		n = strcspn(v, "\r\n");
		if (found && o + 1 < size)
			value[o++] = ',';
		found = true;
		while (n && (*v == ' ' || *v == '\t'))
			v++, n--;
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		for (size_t i = 0; i < n && o + 1 < size; i++) {
			if ((v[i] == ' ' || v[i] == '\t') && o && value[o - 1] == ' ')
				continue;
			value[o++] = v[i] == '\t' ? ' ' : v[i];
		}
		value[o] = '\0';
	}
	return found ? value : NULL;
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* Form and query decoding: %XX, and '+' for a space. */
static char *url_decode(const char *in, size_t len)
{
	char *out = malloc(len + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (in[i] == '%' && i + 2 < len && isxdigit((unsigned char)in[i + 1]) &&
		    isxdigit((unsigned char)in[i + 2])) {
			out[o++] = (char)(hexval(in[i + 1]) * 16 + hexval(in[i + 2]));
			i += 2;
		} else {
			out[o++] = in[i] == '+' ? ' ' : in[i];
		}
	}
	out[o] = '\0';
	return out;
}

/* RFC 3986 encoding, every octet but the unreserved ones, as SigV4 wants. */
static char *uri_encode(const char *in)
{
	char *out = malloc(3 * strlen(in) + 1);
	size_t o = 0;

	if (!out)
		return NULL;
	for (; *in; in++) {
		unsigned char c = (unsigned char)*in;

		if (isalnum(c) || strchr("-_.~", c))
			out[o++] = (char)c;
		else
			o += (size_t)sprintf(out + o, "%%%02X", c);
	}
	out[o] = '\0';
	return out;
}

static int add_params(struct request *r, const char *s)
{
	while (*s) {
		size_t len = strcspn(s, "&"), nlen = strcspn(s, "=&");
		struct param *pa;

		if (len) {
			if (r->nparams == PARAMS_MAX)
				return -1;
			pa = &r->params[r->nparams++];
			pa->name = url_decode(s, nlen);
			pa->value = url_decode(nlen < len ? s + nlen + 1 : "",
					       nlen < len ? len - nlen - 1 : 0);
			if (!pa->name || !pa->value)
				return -1;
		}
		s += len + (s[len] == '&');
	}
	return 0;
}

/* Reads the request line, headers and body from fd. */
static int read_request(int fd, struct request *r)
{
	char target[sizeof(r->path) + 8192], value[64], *end, *q;
	size_t len = 0, have, want;
	ssize_t n;

	while (len < sizeof(r->head) - 1 &&
	       (n = read(fd, r->head + len, sizeof(r->head) - 1 - len)) > 0) {
		len += (size_t)n;
		r->head[len] = '\0';
		if (strstr(r->head, "\r\n\r\n"))
			break;
	}
	r->head[len] = '\0';
	if (!(end = strstr(r->head, "\r\n\r\n")))
		return -1;
	have = len - (size_t)(end + 4 - r->head);
	want = header(r->head, "Content-Length", value, sizeof(value)) ? strtoul(value, NULL, 10) : 0;
	if (want > REQUEST_BODY_MAX || have > want || !(r->body = malloc(want + 1)))
		return -1;
	memcpy(r->body, end + 4, have);
	while (have < want && (n = read(fd, r->body + have, want - have)) > 0)
		have += (size_t)n;
	if (have < want)
		return -1;
	r->body[want] = '\0';
	r->body_len = want;
	end[2] = '\0';	/* the head ends with its last header's CRLF */
	if (sscanf(r->head, "%15s %9215s", r->method, target) != 2)
		return -1;
	q = strchr(target, '?');
	snprintf(r->path, sizeof(r->path), "%.*s", q ? (int)(q - target) : (int)strlen(target),
		 target);
	if (!(r->query = strdup(q ? q + 1 : "")) || add_params(r, r->query))
		return -1;
	if (!strcmp(r->method, "POST") && header(r->head, "Content-Type", value, sizeof(value)) &&
	    !strncasecmp(value, "application/x-www-form-urlencoded", 33))
		return add_params(r, r->body);
	return 0;
}

static const char *param(const struct request *r, const char *name)
{
	for (size_t i = 0; i < r->nparams; i++)
		if (!strcmp(r->params[i].name, name))
			return r->params[i].value;
	return NULL;
}

/* ---- Signature Version 4, computed here from the request received ---- */

static void hex(const unsigned char *d, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void sha256_hex(const void *data, size_t len, char out[65])
{
	unsigned char d[SHA256_DIGEST_LENGTH];

	SHA256(data, len, d);
	hex(d, sizeof(d), out);
}

static void hmac(const unsigned char *key, size_t klen, const char *msg, unsigned char out[32])
{
	unsigned int len = 32;

	HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

struct encoded_param {
	char *name, *value;
};

/* SigV4: by encoded name, then (same names) by encoded value. */
static int canonical_order(const void *a, const void *b)
{
	const struct encoded_param *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->value, y->value);
}

/* The canonical query of the URL's own query string (not of a body). */
static char *canonical_query(const char *query)
{
	struct request q = { 0 };
	struct encoded_param *v = NULL;
	char *out = NULL;
	size_t len;
	FILE *f = NULL;
	bool failed = add_params(&q, query) ||
		      !(v = calloc(q.nparams + 1, sizeof(*v)));

	for (size_t i = 0; !failed && i < q.nparams; i++)
		failed = !(v[i].name = uri_encode(q.params[i].name)) ||
			 !(v[i].value = uri_encode(q.params[i].value));
	if (!failed) {
		qsort(v, q.nparams, sizeof(*v), canonical_order);
		failed = !(f = open_memstream(&out, &len));
	}
	for (size_t i = 0; f && i < q.nparams; i++)
		fprintf(f, "%s%s=%s", i ? "&" : "", v[i].name, v[i].value);
	if (f && fclose(f))
		failed = true;
	for (size_t i = 0; v && i < q.nparams; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
	request_clear(&q);
	if (failed) {
		free(out);
		return NULL;
	}
	return out;
}

/* The secret, session token and its expiry (0: none) of key, from the
 * credentials file. */
static bool find_key(const char *file, const char *key, char *secret, size_t ssize, char *token,
		     size_t tsize, long *expires)
{
	char line[1024], k[256], s[256], t[512];
	FILE *f = fopen(file, "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		long e = 0;
		int n = sscanf(line, "%255s %255s %511s %ld", k, s, t, &e);

		if (n >= 2 && !strcmp(k, key)) {
			snprintf(secret, ssize, "%s", s);
			snprintf(token, tsize, "%s", n >= 3 ? t : "");
			*expires = n == 4 ? e : 0;
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static time_t now(void)
{
	const char *env = getenv("FAKEEC2_NOW");
	struct tm tm = { 0 };

	return env && strptime(env, "%Y%m%dT%H%M%SZ", &tm) ? timegm(&tm) : time(NULL);
}

/* Signed header names: lower case, sorted, unique, host among them. */
static bool signed_headers_valid(const char *list)
{
	char prev[128] = "", name[128];
	bool host = false;

	for (const char *h = list; *h;) {
		size_t len = strcspn(h, ";");

		if (!len || len >= sizeof(name))
			return false;
		snprintf(name, sizeof(name), "%.*s", (int)len, h);
		for (char *c = name; *c; c++)
			if (isupper((unsigned char)*c))
				return false;
		if (prev[0] && strcmp(prev, name) >= 0)
			return false;
		host |= !strcmp(name, "host");
		snprintf(prev, sizeof(prev), "%s", name);
		h += len + (h[len] == ';');
	}
	return host;
}

enum refusal { SIGNED, AUTH_FAILURE, INCOMPLETE, EXPIRED };

/* SIGNED when the request is signed right, else why not (in why). */
static enum refusal check_signature(const char *region_want, const char *service_want,
				    const char *credentials, const struct request *r, char *why,
				    size_t wsize)
{
	char auth[2048], cred[512], signed_headers[512], signature[128], amz_date[32];
	char key_id[256], date[16], region[64], service[32], term[32], secret[256], token[512];
	char value[4096], name[128], sts[1024], creq_hash[65], mine[65], payload[65];
	unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
	struct tm tm = { 0 };
	long expires;
	char *creq = NULL, *ksecret = NULL, *cquery;
	size_t clen;
	FILE *out;

	if (!header(r->head, "Authorization", auth, sizeof(auth))) {
		snprintf(why, wsize, "unsigned (no Authorization header)");
		return AUTH_FAILURE;
	}
	if (sscanf(auth, "AWS4-HMAC-SHA256 Credential=%511[^,], SignedHeaders=%511[^,], Signature=%127s",
		   cred, signed_headers, signature) != 3 ||
	    sscanf(cred, "%255[^/]/%15[^/]/%63[^/]/%31[^/]/%31s", key_id, date, region, service,
		   term) != 5 || strcmp(term, "aws4_request") || !signed_headers_valid(signed_headers)) {
		snprintf(why, wsize, "a malformed Authorization header: %.200s", auth);
		return INCOMPLETE;
	}
	if (strcmp(region, region_want) || strcmp(service, service_want)) {
		snprintf(why, wsize, "signed for %s/%s", region, service);
		return AUTH_FAILURE;
	}
	if (!find_key(credentials, key_id, secret, sizeof(secret), token, sizeof(token), &expires)) {
		snprintf(why, wsize, "an unknown access key");
		return AUTH_FAILURE;
	}
	if (!header(r->head, "X-Amz-Date", amz_date, sizeof(amz_date)) ||
	    !strptime(amz_date, "%Y%m%dT%H%M%SZ", &tm) || strncmp(amz_date, date, 8) ||
	    !strstr(signed_headers, "x-amz-date")) {
		snprintf(why, wsize, "no signed x-amz-date matching the scope");
		return INCOMPLETE;
	}
	if (labs((long)(now() - timegm(&tm))) > 15 * 60) {
		snprintf(why, wsize, "x-amz-date more than 15 minutes off");
		return EXPIRED;
	}
	if (token[0] && (!header(r->head, "X-Amz-Security-Token", value, sizeof(value)) ||
			 strcmp(value, token) || !strstr(signed_headers, "x-amz-security-token"))) {
		snprintf(why, wsize, "no (or the wrong, or an unsigned) session token");
		return AUTH_FAILURE;
	}
	if (expires && now() > expires) {
		snprintf(why, wsize, "the session token expired");
		return EXPIRED;
	}

	/* The canonical request, from what arrived. */
	if (!(cquery = canonical_query(r->query)) || !(out = open_memstream(&creq, &clen))) {
		free(cquery);
		snprintf(why, wsize, "out of memory");
		return AUTH_FAILURE;
	}
	fprintf(out, "%s\n%s\n%s\n", r->method, r->path, cquery);
	free(cquery);
	for (const char *h = signed_headers; *h;) {
		size_t len = strcspn(h, ";");

		snprintf(name, sizeof(name), "%.*s", (int)len, h);
		if (!header(r->head, name, value, sizeof(value))) {
			fclose(out);
			free(creq);
			snprintf(why, wsize, "the signed header %s missing", name);
			return AUTH_FAILURE;
		}
		fprintf(out, "%s:%s\n", name, value);
		h += len + (h[len] == ';');
	}
	sha256_hex(r->body, r->body_len, payload);
	fprintf(out, "\n%s\n%s", signed_headers, payload);
	fclose(out);
	sha256_hex(creq, strlen(creq), creq_hash);
	free(creq);
	snprintf(sts, sizeof(sts), "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", amz_date, date,
		 region, service, creq_hash);
	if (asprintf(&ksecret, "AWS4%s", secret) < 0) {
		snprintf(why, wsize, "out of memory");
		return AUTH_FAILURE;
	}
	hmac((unsigned char *)ksecret, strlen(ksecret), date, k1);
	free(ksecret);
	hmac(k1, 32, region, k2);
	hmac(k2, 32, service, k3);
	hmac(k3, 32, "aws4_request", k4);
	hmac(k4, 32, sts, sig);
	hex(sig, 32, mine);
	if (strcmp(mine, signature)) {
		snprintf(why, wsize, "signature mismatch (got %.16s..., computed %.16s...)",
			 signature, mine);
		return AUTH_FAILURE;
	}
	return SIGNED;
}

/* ---- the instances ---- */

struct instance {
	char id[64], ip[64], zone[64], type[64], layers[512], block[128];
};

static size_t load(const char *file, struct instance *v, size_t max)
{
	char line[1024];
	size_t n = 0;
	FILE *f = fopen(file, "r");

	while (f && n < max && fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		v[n].layers[0] = v[n].block[0] = '\0';
		if (sscanf(line, "%63s %63s %63s %63s %511s %127s", v[n].id, v[n].ip, v[n].zone,
			   v[n].type, v[n].layers, v[n].block) >= 4) {
			if (!strcmp(v[n].layers, "-"))
				v[n].layers[0] = '\0';
			n++;
		}
	}
	if (f)
		fclose(f);
	return n;
}

static size_t page_size(size_t dflt)
{
	const char *env = getenv("FAKEEC2_PAGE");

	return env && atoi(env) > 0 ? (size_t)atoi(env) : dflt;
}

/* Whether instance i is asked for: by Filter.N private-ip-address values. */
static bool wanted_by_ip(const struct request *r, const struct instance *in)
{
	char name[64];
	bool filtered = false;

	for (int f = 1; f < 50; f++) {
		const char *fname;

		snprintf(name, sizeof(name), "Filter.%d.Name", f);
		if (!(fname = param(r, name)))
			break;
		if (strcmp(fname, "private-ip-address"))
			continue;
		filtered = true;
		for (int v = 1; v <= 1000; v++) {
			const char *val;

			snprintf(name, sizeof(name), "Filter.%d.Value.%d", f, v);
			if (!(val = param(r, name)))
				break;
			if (!strcmp(val, in->ip))
				return true;
		}
	}
	return !filtered;
}

static bool wanted_by_id(const struct request *r, const struct instance *in, size_t *nids)
{
	char name[64];
	bool listed = false;

	*nids = 0;
	for (int i = 1; i <= PARAMS_MAX; i++) {
		const char *val;

		snprintf(name, sizeof(name), "InstanceId.%d", i);
		if (!(val = param(r, name)))
			break;
		(*nids)++;
		listed |= !strcmp(val, in->id);
	}
	return listed || !*nids;
}

/* The access key the request was signed with, for the log. */
static const char *key_of(const struct request *r, char *key, size_t size)
{
	char auth[2048];

	if (!header(r->head, "Authorization", auth, sizeof(auth)) ||
	    sscanf(auth, "AWS4-HMAC-SHA256 Credential=%255[^/]", key) != 1)
		snprintf(key, size, "-");
	return key;
}

static void describe(int fd, struct server *sv, const struct request *r, bool topology)
{
	const char *token_mode = getenv("FAKEEC2_TOKEN");
	static struct instance v[4096];
	static char body[ANSWER_MAX];
	size_t n = load(sv->instances, v, sizeof(v) / sizeof(v[0])), len = 0, nids = 0, shown = 0;
	const char *token = param(r, "NextToken"), *max = param(r, "MaxResults");
	size_t start = token ? (size_t)atol(token + strlen("pg/")) : 0, limit;
	size_t matched = 0;
	char key[256];

	if (topology) {
		wanted_by_id(r, v, &nids);
		if (nids > 100) {
			error_reply(fd, "400 Bad Request", "InvalidParameterValue", "at most 100 instance IDs");
			fprintf(stderr, "DescribeInstanceTopology 400 more than 100 ids\n");
			return;
		}
		if (nids && max) {
			error_reply(fd, "400 Bad Request", "InvalidParameterCombination",
				    "MaxResults cannot be given with InstanceIds");
			fprintf(stderr, "DescribeInstanceTopology 400 MaxResults with ids\n");
			return;
		}
	}
	if (max && (atoi(max) < 5 || atoi(max) > 1000)) {
		error_reply(fd, "400 Bad Request", "InvalidParameterValue", "MaxResults must be 5 to 1000");
		fprintf(stderr, "%s 400 MaxResults\n", topology ? "DescribeInstanceTopology" : "DescribeInstances");
		return;
	}
	limit = page_size(max ? (size_t)atoi(max) : topology ? 20 : 1000);
	len += (size_t)snprintf(body + len, sizeof(body) - len,
				"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%s xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\">\n<requestId>fake-request</requestId>\n<%s>\n",
				topology ? "DescribeInstanceTopologyResponse" : "DescribeInstancesResponse",
				topology ? "instanceSet" : "reservationSet");
	for (size_t i = 0; i < n && len < sizeof(body) - 4096; i++) {
		if (!(topology ? wanted_by_id(r, &v[i], &nids) : wanted_by_ip(r, &v[i])))
			continue;
		if (matched++ < start || shown == limit)
			continue;
		shown++;
		if (topology) {
			len += (size_t)snprintf(body + len, sizeof(body) - len,
						"<item><instanceId>%s</instanceId><instanceType>%s</instanceType><groupName>efa-pg</groupName><networkNodeSet>",
						v[i].id, v[i].type);
			for (char *l = v[i].layers; *l;) {
				size_t ll = strcspn(l, ",");

				len += (size_t)snprintf(body + len, sizeof(body) - len, "<item>%.*s</item>",
							(int)ll, l);
				l += ll + (l[ll] == ',');
			}
			len += (size_t)snprintf(body + len, sizeof(body) - len,
						"</networkNodeSet><availabilityZone>%s</availabilityZone><zoneId>usw2-az9</zoneId>",
						v[i].zone);
			if (v[i].block[0])
				len += (size_t)snprintf(body + len, sizeof(body) - len,
							"<capacityBlockId>%s</capacityBlockId>", v[i].block);
			len += (size_t)snprintf(body + len, sizeof(body) - len, "</item>\n");
		} else {
			/* A second address on a network interface, deeper down:
			 * only the instance's own counts. */
			len += (size_t)snprintf(body + len, sizeof(body) - len,
						"<item><reservationId>r-%s</reservationId><ownerId>123456789012</ownerId><groupSet/><instancesSet><item>"
						"<instanceId>%s</instanceId><imageId>ami-0fake</imageId><instanceState><code>16</code><name>running</name></instanceState>"
						"<privateDnsName>ip-%s.%s.compute.internal</privateDnsName><instanceType>%s</instanceType>"
						"<placement><availabilityZone>%s</availabilityZone><groupName>efa-pg</groupName><tenancy>default</tenancy></placement>"
						"<privateIpAddress>%s</privateIpAddress>"
						"<networkInterfaceSet><item><networkInterfaceId>eni-1</networkInterfaceId><privateIpAddress>192.0.2.%zu</privateIpAddress>"
						"<privateIpAddressesSet><item><privateIpAddress>192.0.2.%zu</privateIpAddress><primary>false</primary></item></privateIpAddressesSet></item></networkInterfaceSet>"
						"</item></instancesSet></item>\n",
						v[i].id, v[i].id, v[i].ip, sv->region, v[i].type, v[i].zone, v[i].ip,
						i + 10, i + 10);
		}
	}
	len += (size_t)snprintf(body + len, sizeof(body) - len, "</%s>\n",
				topology ? "instanceSet" : "reservationSet");
	if (token_mode && !strcmp(token_mode, "same"))
		len += (size_t)snprintf(body + len, sizeof(body) - len,
					"<nextToken>pg/0+same</nextToken>\n");
	else if (token_mode && !strcmp(token_mode, "new"))
		len += (size_t)snprintf(body + len, sizeof(body) - len,
					"<nextToken>pg/0+new%lu</nextToken>\n", ++sv->tokens);
	else if (matched > start + shown)
		len += (size_t)snprintf(body + len, sizeof(body) - len, "<nextToken>pg/%zu+a=b</nextToken>\n",
					start + shown);
	snprintf(body + len, sizeof(body) - len, "</%s>\n",
		 topology ? "DescribeInstanceTopologyResponse" : "DescribeInstancesResponse");
	if (getenv("FAKEEC2_BROKEN"))
		body[len / 2] = '\0';
	reply(fd, "200 OK", body);
	fprintf(stderr, "%s 200 %zu key=%s params=%zu\n",
		topology ? "DescribeInstanceTopology" : "DescribeInstances", shown,
		key_of(r, key, sizeof(key)), r->nparams);
}

static void answer(int fd, void *ctx)
{
	static const char *const status[] = {
		[AUTH_FAILURE] = "401 Unauthorized", [INCOMPLETE] = "400 Bad Request",
		[EXPIRED] = "400 Bad Request",
	};
	static const char *const code[] = {
		[AUTH_FAILURE] = "AuthFailure", [INCOMPLETE] = "IncompleteSignature",
		[EXPIRED] = "RequestExpired",
	};
	struct server *sv = ctx;
	static struct request r;
	const char *action, *version, *throttle = getenv("FAKEEC2_THROTTLE");
	enum refusal refused;
	char why[512];
	bool topology;

	if (read_request(fd, &r)) {
		error_reply(fd, "400 Bad Request", "MalformedQueryString", "the request could not be read");
		fprintf(stderr, "- 400 unreadable request\n");
		goto out;
	}
	action = param(&r, "Action");
	version = param(&r, "Version");
	if ((refused = check_signature(sv->region, "ec2", sv->credentials, &r, why, sizeof(why)))) {
		error_reply(fd, status[refused], code[refused],
			    refused == EXPIRED ? "Request has expired." :
			    "AWS was not able to validate the provided access credentials");
		fprintf(stderr, "%s %.3s refused: %s\n", action ? action : "-", status[refused], why);
		goto out;
	}
	if (!action || strcmp(r.path, "/")) {
		error_reply(fd, "400 Bad Request", "MissingAction", "The request must contain the parameter Action.");
		fprintf(stderr, "- 400 no action\n");
		goto out;
	}
	if (!version || strcmp(version, "2016-11-15")) {
		error_reply(fd, "400 Bad Request", "InvalidParameterValue", "Version=2016-11-15, please");
		fprintf(stderr, "%s 400 version\n", action);
		goto out;
	}
	topology = !strcmp(action, "DescribeInstanceTopology");
	if (!topology && strcmp(action, "DescribeInstances")) {
		error_reply(fd, "400 Bad Request", "InvalidAction", "only DescribeInstances and DescribeInstanceTopology here");
		fprintf(stderr, "%s 400 unknown action\n", action);
		goto out;
	}
	if (throttle && sv->throttled[topology] < atoi(throttle)) {
		sv->throttled[topology]++;
		error_reply(fd, "503 Service Unavailable", "RequestLimitExceeded", "Request limit exceeded.");
		fprintf(stderr, "%s 503 throttled\n", action);
		goto out;
	}
	describe(fd, sv, &r, topology);
out:
	request_clear(&r);
}

/* fakeec2 verify REGION SERVICE CREDENTIALS < REQUEST */
static int verify(const char *region, const char *service, const char *credentials)
{
	static struct request r;
	char why[512];
	int rc = 1;

	if (read_request(0, &r))
		printf("refused: the request could not be read\n");
	else if (check_signature(region, service, credentials, &r, why, sizeof(why)))
		printf("refused: %s\n", why);
	else {
		printf("ok\n");
		rc = 0;
	}
	request_clear(&r);
	return rc;
}

int main(int argc, char **argv)
{
	static struct server sv;

	setvbuf(stderr, NULL, _IOLBF, 0);
	if (argc == 5 && !strcmp(argv[1], "verify"))
		return verify(argv[2], argv[3], argv[4]);
	if (argc != 5) {
		fprintf(stderr, "usage: fakeec2 SECONDS REGION CREDENTIALS INSTANCES\n"
			"       fakeec2 verify REGION SERVICE CREDENTIALS < REQUEST\n");
		return 2;
	}
	sv.region = argv[2];
	sv.credentials = argv[3];
	sv.instances = argv[4];
	return serve_loopback("fakeec2", (unsigned)atoi(argv[1]), answer, &sv);
}
