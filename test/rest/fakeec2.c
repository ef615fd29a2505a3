/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for the EC2 Query API on 127.0.0.1 (plain HTTP):
 *   fakeec2 SECONDS REGION CREDENTIALS INSTANCES
 * prints the port it listens on, then for SECONDS answers GET requests
 * DescribeInstances and DescribeInstanceTopology (API version 2016-11-15)
 * in AWS's XML, from INSTANCES, read again at every request so that
 * instances come and go: one line per running instance,
 *   INSTANCE-ID PRIVATE-IP ZONE TYPE [LAYER1,LAYER2,LAYER3]
 * (no layers: a type DescribeInstanceTopology does not cover).
 *
 * Every request must be signed with AWS Signature Version 4 for REGION
 * and service ec2 by a key of CREDENTIALS (lines "KEY-ID SECRET
 * [SESSION-TOKEN]"; with a session token, X-Amz-Security-Token must carry
 * it and be signed). The signature is computed here from the request as
 * received, as EC2 does, and compared; an unsigned request, a wrong
 * signature, an unknown key, another region or service, or an x-amz-date
 * more than 15 minutes off is refused with 401 AuthFailure.
 *
 * DescribeInstances takes Filter.N.Name=private-ip-address with its
 * Filter.N.Value.M (other filters are accepted, every instance here is
 * running) and MaxResults (5 to 1000); DescribeInstanceTopology takes up
 * to 100 InstanceId.N, and refuses MaxResults beside them, as EC2 does.
 * Both page with NextToken ("pg/N+a=b": a token that must be encoded in
 * the query and in the signature): FAKEEC2_PAGE items a page at most
 * (default 1000 and 20, EC2's defaults). With FAKEEC2_THROTTLE=1, the first
 * request of each kind is answered 503 RequestLimitExceeded.
 *
 * Each request is logged to stderr as "ACTION STATUS [ITEMS key=KEY-ID]"
 * or "ACTION STATUS why".
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

#define PARAMS_MAX 512
#define BODY_MAX (1 << 20)

struct server {
	const char *region;
	const char *credentials;
	const char *instances;
	int throttled[2];	/* per action: the first was refused */
};

struct param {
	char name[128];
	char value[256];
};

struct request {
	char method[16];
	char path[64];
	char query[8192];
	struct param params[PARAMS_MAX];
	size_t nparams;
	char head[16384];
};

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

/* The value of header name (case-insensitive), trimmed; NULL if absent. */
static const char *header(const char *head, const char *name, char *value, size_t size)
{
	size_t len = strlen(name);

	for (const char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
		const char *v = line + 2;
		size_t n;

		if (strncasecmp(v, name, len) || v[len] != ':')
			continue;
		v += len + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		n = strcspn(v, "\r\n");
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		snprintf(value, size, "%.*s", (int)n, v);
		return value;
	}
	return NULL;
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

static void url_decode(const char *in, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < size; i++) {
		if (in[i] == '%' && i + 2 < len && isxdigit((unsigned char)in[i + 1]) &&
		    isxdigit((unsigned char)in[i + 2])) {
			out[o++] = (char)(hexval(in[i + 1]) * 16 + hexval(in[i + 2]));
			i += 2;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
}

/* RFC 3986 encoding, as SigV4's canonical query wants it. */
static void encode(const char *in, char *out, size_t size)
{
	size_t o = 0;

	for (; *in && o + 4 < size; in++) {
		unsigned char c = (unsigned char)*in;

		if (isalnum(c) || strchr("-_.~", c))
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, size - o, "%%%02X", c);
	}
	out[o] = '\0';
}

static int parse_request(const char *head, struct request *r)
{
	char target[8192], *q;

	if (sscanf(head, "%15s %8191s", r->method, target) != 2)
		return -1;
	q = strchr(target, '?');
	snprintf(r->path, sizeof(r->path), "%.*s", q ? (int)(q - target) : (int)strlen(target),
		 target);
	snprintf(r->query, sizeof(r->query), "%s", q ? q + 1 : "");
	r->nparams = 0;
	for (char *p = r->query; *p && r->nparams < PARAMS_MAX;) {
		size_t len = strcspn(p, "&"), nlen = strcspn(p, "=&");
		struct param *pa = &r->params[r->nparams++];

		url_decode(p, nlen, pa->name, sizeof(pa->name));
		if (nlen < len)
			url_decode(p + nlen + 1, len - nlen - 1, pa->value, sizeof(pa->value));
		else
			pa->value[0] = '\0';
		p += len + (p[len] == '&');
	}
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

static void sha256_hex(const char *s, char out[65])
{
	unsigned char d[SHA256_DIGEST_LENGTH];

	SHA256((const unsigned char *)s, strlen(s), d);
	hex(d, sizeof(d), out);
}

static void hmac(const unsigned char *key, size_t klen, const char *msg, unsigned char out[32])
{
	unsigned int len = 32;

	HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)msg, strlen(msg), out, &len);
}

static int canonical_param_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The secret (and session token) of key, from the credentials file. */
static bool find_key(const char *file, const char *key, char *secret, size_t ssize, char *token,
		     size_t tsize)
{
	char line[1024], k[256], s[256], t[512];
	FILE *f = fopen(file, "r");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		int n = sscanf(line, "%255s %255s %511s", k, s, t);

		if (n >= 2 && !strcmp(k, key)) {
			snprintf(secret, ssize, "%s", s);
			snprintf(token, tsize, "%s", n == 3 ? t : "");
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* NULL when the request is signed right, else why not. */
static const char *check_signature(const struct server *sv, const struct request *r)
{
	static char why[256];
	char auth[2048], cred[512], signed_headers[512], signature[128], amz_date[32];
	char key_id[256], date[16], region[64], service[32], term[32], secret[256], token[512];
	char value[1024], name[128], sts[1024], creq_hash[65], mine[65], *params[PARAMS_MAX];
	char enc_name[512], enc_value[1024];
	unsigned char k1[32], k2[32], k3[32], k4[32], sig[32];
	struct tm tm = { 0 };
	char *creq = NULL, *ksecret = NULL;
	size_t clen;
	FILE *out;
	time_t when;

	if (!header(r->head, "Authorization", auth, sizeof(auth)))
		return "unsigned (no Authorization header)";
	if (sscanf(auth, "AWS4-HMAC-SHA256 Credential=%511[^,], SignedHeaders=%511[^,], Signature=%127s",
		   cred, signed_headers, signature) != 3)
		return "not an AWS4-HMAC-SHA256 Authorization header";
	if (sscanf(cred, "%255[^/]/%15[^/]/%63[^/]/%31[^/]/%31s", key_id, date, region, service,
		   term) != 5 || strcmp(term, "aws4_request"))
		return "a malformed credential scope";
	if (strcmp(region, sv->region) || strcmp(service, "ec2"))
		return "signed for another region or service";
	if (!find_key(sv->credentials, key_id, secret, sizeof(secret), token, sizeof(token)))
		return "an unknown access key";
	if (!header(r->head, "X-Amz-Date", amz_date, sizeof(amz_date)) ||
	    !strptime(amz_date, "%Y%m%dT%H%M%SZ", &tm) || strncmp(amz_date, date, 8))
		return "no x-amz-date matching the scope";
	when = timegm(&tm);
	if (labs((long)(time(NULL) - when)) > 15 * 60)
		return "x-amz-date more than 15 minutes off";
	if (!strstr(signed_headers, "host") || !strstr(signed_headers, "x-amz-date"))
		return "host or x-amz-date not signed";
	if (token[0]) {
		if (!header(r->head, "X-Amz-Security-Token", value, sizeof(value)) ||
		    strcmp(value, token))
			return "no (or the wrong) session token";
		if (!strstr(signed_headers, "x-amz-security-token"))
			return "the session token not signed";
	}

	/* The canonical request, from what arrived. */
	if (!(out = open_memstream(&creq, &clen)))
		return "out of memory";
	fprintf(out, "%s\n%s\n", r->method, r->path);
	for (size_t i = 0; i < r->nparams; i++) {
		encode(r->params[i].name, enc_name, sizeof(enc_name));
		encode(r->params[i].value, enc_value, sizeof(enc_value));
		if (asprintf(&params[i], "%s=%s", enc_name, enc_value) < 0)
			params[i] = NULL;
	}
	qsort(params, r->nparams, sizeof(*params), canonical_param_cmp);
	for (size_t i = 0; i < r->nparams; i++) {
		fprintf(out, "%s%s", i ? "&" : "", params[i] ? params[i] : "");
		free(params[i]);
	}
	fputc('\n', out);
	for (const char *h = signed_headers; *h;) {
		size_t len = strcspn(h, ";");

		snprintf(name, sizeof(name), "%.*s", (int)len, h);
		if (!header(r->head, name, value, sizeof(value))) {
			fclose(out);
			free(creq);
			return "a signed header missing";
		}
		for (char *c = name; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		fprintf(out, "%s:%s\n", name, value);
		h += len + (h[len] == ';');
	}
	sha256_hex("", value);	/* a GET has no body */
	fprintf(out, "\n%s\n%s", signed_headers, value);
	fclose(out);
	sha256_hex(creq, creq_hash);
	free(creq);
	snprintf(sts, sizeof(sts), "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", amz_date, date,
		 region, service, creq_hash);
	if (asprintf(&ksecret, "AWS4%s", secret) < 0)
		return "out of memory";
	hmac((unsigned char *)ksecret, strlen(ksecret), date, k1);
	free(ksecret);
	hmac(k1, 32, region, k2);
	hmac(k2, 32, service, k3);
	hmac(k3, 32, "aws4_request", k4);
	hmac(k4, 32, sts, sig);
	hex(sig, 32, mine);
	if (strcmp(mine, signature)) {
		snprintf(why, sizeof(why), "signature mismatch (got %.16s..., computed %.16s...)",
			 signature, mine);
		return why;
	}
	return NULL;
}

/* ---- the instances ---- */

struct instance {
	char id[64], ip[64], zone[64], type[64], layers[512];
};

static size_t load(const char *file, struct instance *v, size_t max)
{
	char line[1024];
	size_t n = 0;
	FILE *f = fopen(file, "r");

	while (f && n < max && fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		v[n].layers[0] = '\0';
		if (sscanf(line, "%63s %63s %63s %63s %511s", v[n].id, v[n].ip, v[n].zone, v[n].type,
			   v[n].layers) >= 4)
			n++;
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

static void describe(int fd, const struct server *sv, const struct request *r, bool topology)
{
	static struct instance v[4096];
	static char body[BODY_MAX];
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
						"</networkNodeSet><availabilityZone>%s</availabilityZone><zoneId>usw2-az9</zoneId></item>\n",
						v[i].zone);
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
	if (matched > start + shown)
		len += (size_t)snprintf(body + len, sizeof(body) - len, "<nextToken>pg/%zu+a=b</nextToken>\n",
					start + shown);
	snprintf(body + len, sizeof(body) - len, "</%s>\n",
		 topology ? "DescribeInstanceTopologyResponse" : "DescribeInstancesResponse");
	reply(fd, "200 OK", body);
	fprintf(stderr, "%s 200 %zu key=%s\n", topology ? "DescribeInstanceTopology" : "DescribeInstances",
		shown, key_of(r, key, sizeof(key)));
}

static void answer(int fd, void *ctx)
{
	struct server *sv = ctx;
	static struct request r;
	const char *action, *why, *throttle = getenv("FAKEEC2_THROTTLE");
	size_t len = 0;
	ssize_t n;
	bool topology;

	while (len < sizeof(r.head) - 1 && (n = read(fd, r.head + len, sizeof(r.head) - 1 - len)) > 0) {
		len += (size_t)n;
		r.head[len] = '\0';
		if (strstr(r.head, "\r\n\r\n"))
			break;
	}
	r.head[len] = '\0';
	if (parse_request(r.head, &r))
		return;
	action = param(&r, "Action");
	if ((why = check_signature(sv, &r))) {
		error_reply(fd, "401 Unauthorized", "AuthFailure",
			    "AWS was not able to validate the provided access credentials");
		fprintf(stderr, "%s 401 refused: %s\n", action ? action : "-", why);
		return;
	}
	if (strcmp(r.method, "GET") || !action || !param(&r, "Version") ||
	    strcmp(param(&r, "Version"), "2016-11-15")) {
		error_reply(fd, "400 Bad Request", "InvalidAction", "a GET with Action and Version=2016-11-15, please");
		fprintf(stderr, "%s 400 bad request\n", action ? action : "-");
		return;
	}
	topology = !strcmp(action, "DescribeInstanceTopology");
	if (!topology && strcmp(action, "DescribeInstances")) {
		error_reply(fd, "400 Bad Request", "InvalidAction", "only DescribeInstances and DescribeInstanceTopology here");
		fprintf(stderr, "%s 400 unknown action\n", action);
		return;
	}
	if (throttle && !strcmp(throttle, "1") && !sv->throttled[topology]) {
		sv->throttled[topology] = 1;
		error_reply(fd, "503 Service Unavailable", "RequestLimitExceeded", "Request limit exceeded.");
		fprintf(stderr, "%s 503 throttled\n", action);
		return;
	}
	describe(fd, sv, &r, topology);
}

int main(int argc, char **argv)
{
	static struct server sv;

	if (argc != 5) {
		fprintf(stderr, "usage: fakeec2 SECONDS REGION CREDENTIALS INSTANCES\n");
		return 2;
	}
	setvbuf(stderr, NULL, _IOLBF, 0);
	sv.region = argv[2];
	sv.credentials = argv[3];
	sv.instances = argv[4];
	return serve_loopback("fakeec2", (unsigned)atoi(argv[1]), answer, &sv);
}
