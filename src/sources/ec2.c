/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/array.h"
#include "common/base/strutil.h"
#include "http/http.h"
#include "aws.h"
#include "aws_query.h"
#include "ec2.h"

#define EC2_CONNECT_MS 5000
#define EC2_TIMEOUT_MS 30000
#define EC2_MAX_RESPONSE (64u * 1024 * 1024)
/* EC2 answers RequestLimitExceeded with HTTP 503: back off and retry. */
#define EC2_RETRIES 5
#define EC2_RETRY_MS 500
/* DescribeInstanceTopology takes at most 100 instance IDs; filters take
 * as many values, kept the same. */
#define EC2_BATCH 100
#define EC2_SPARE_PAGES 20
#define EC2_TOKEN_MAX 1024

struct ec2 {
	struct http_client *http;
	char *region;
	struct aws_credentials credentials;
	size_t nlayers;
	long max_age;		/* seconds an answer is trusted */
	struct ec2_instance *v;	/* sorted by address */
	size_t n;
	char **types_said;	/* types without topology or with more layers
				 * than kept, said once */
	size_t ntypes_said;
};

static void instance_clear(struct ec2_instance *in, size_t nlayers)
{
	free(in->address);
	free(in->id);
	free(in->type);
	free(in->zone);
	free(in->block);
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
	aws_credentials_clear(&e->credentials);
	for (size_t i = 0; i < e->ntypes_said; i++)
		free(e->types_said[i]);
	free(e->types_said);
	free(e);
}

struct ec2 *ec2_open(const struct ec2_options *opts, struct efa_error *err)
{
	struct http_options o = {
		.service = "EC2",
		.url_key = "Ec2Endpoint=",
		.connect_ms = EC2_CONNECT_MS,
		.timeout_ms = EC2_TIMEOUT_MS,
		.max_response = EC2_MAX_RESPONSE,
		.retries = EC2_RETRIES,
		.retry_ms = EC2_RETRY_MS,
		.posts_are_reads = 1,
		.allow_plain_http = opts->allow_plain_http,
		.plain_http_key = "AllowPlainHTTP=yes in efa.conf",
	};
	char *url = NULL, *sigv4 = NULL;
	struct ec2 *e = calloc(1, sizeof(*e));

	if (!e || aws_credentials_init(&e->credentials))
		goto nomem;
	e->nlayers = opts->nlayers;
	e->max_age = opts->max_age;
	if (aws_region(opts->region, "Ec2Region=", &e->credentials, &e->region, err))
		goto fail;
	if (opts->endpoint)
		url = strdup(opts->endpoint);
	else if (asprintf(&url, "https://ec2.%s.amazonaws.com", e->region) < 0)
		url = NULL;
	if (!url || asprintf(&sigv4, "aws:amz:%s:ec2", e->region) < 0)
		goto nomem;
	o.url = url;
	o.aws_sigv4 = sigv4;
	if (!(e->http = http_new(&o, err)))
		goto fail;
	free(url);
	free(sigv4);
	return e;
nomem:
	efa_error_set(err, "out of memory");
fail:
	free(url);
	free(sigv4);
	ec2_close(e);
	return NULL;
}

/* One request; 0 with the answer's body, or -1 with err naming what to do. */
static int ec2_call(struct ec2 *e, const char *action, struct aws_query *q, struct http_answer *a,
		    struct efa_error *err)
{
	static const char *const form[] = {
		"Content-Type: application/x-www-form-urlencoded; charset=utf-8", NULL
	};
	struct aws_error ae;
	char *body;
	int rc;

	if (aws_credentials_apply(&e->credentials, e->http, err))
		return -1;
	if (aws_query_add(q, action, "Action") || aws_query_add(q, EC2_API_VERSION, "Version") ||
	    !(body = aws_query_body(q))) {
		efa_error_set(err, "out of memory");
		return -1;
	}
	rc = http_request(e->http, "POST", "/", form, body, a, err);
	free(body);
	if (rc)
		return -1;
	if (a->status == 200)
		return 0;
	aws_error_read(a->data, a->len, &ae);
	if (!strcmp(ae.code, "UnauthorizedOperation") || a->status == 403)
		efa_error_set(err, "EC2 refused %s (%s%s%s): the credentials need the IAM permission ec2:%s",
			 action, ae.code[0] ? ae.code : "HTTP 403", ae.message[0] ? ": " : "", ae.message,
			 action);
	else if (!strcmp(ae.code, "RequestExpired"))
		efa_error_set(err, "EC2 refused %s as expired (RequestExpired%s%s): the session token (AWS_SESSION_TOKEN, or the instance role's) has expired, or this host's clock is more than 15 minutes off",
			 action, ae.message[0] ? ": " : "", ae.message);
	else if (a->status == 401 || !strcmp(ae.code, "AuthFailure"))
		efa_error_set(err, "EC2 did not accept the credentials for %s (%s%s%s): check the access key, its secret and the region (%s)",
			 action, ae.code[0] ? ae.code : "HTTP 401", ae.message[0] ? ": " : "", ae.message,
			 e->region);
	else
		efa_error_set(err, "EC2 answered %s with HTTP %ld (%s%s%s)", action, a->status,
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
	char next[EC2_TOKEN_MAX];
	size_t nlayers;
};

static int keep_instance(struct found *f)
{
	if (!f->cur.address || !f->cur.id) {
		instance_clear(&f->cur, f->nlayers);
		return 0;
	}
	if (efa_array_room(&f->v, f->n, sizeof(*f->v)))
		return -1;
	f->v[f->n++] = f->cur;
	memset(&f->cur, 0, sizeof(f->cur));
	return 0;
}

static int replace_text(char **field, const char *text)
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
		return keep_instance(f);
	else if (!strcmp(path, INSTANCE "/instanceId"))
		return replace_text(&f->cur.id, text);
	else if (!strcmp(path, INSTANCE "/instanceType"))
		return replace_text(&f->cur.type, text);
	else if (!strcmp(path, INSTANCE "/privateIpAddress"))
		return replace_text(&f->cur.address, text);
	else if (!strcmp(path, INSTANCE "/placement/availabilityZone"))
		return replace_text(&f->cur.zone, text);
	return 0;
}

static bool token_seen(char *const *seen, size_t n, const char *token)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(seen[i], token))
			return true;
	return false;
}

/*
 * Pages through action: each page's query is what params adds (plus the
 * page's NextToken), and its answer is walked by walk with ctx, which
 * leaves the next page's token (or "") in next (EC2_TOKEN_MAX bytes).
 * EC2 may give pages with fewer items than asked for, even none, so the
 * bound is one page per item asked about plus EC2_SPARE_PAGES; a token
 * given twice is paging that never ends.
 */
static int page_through(struct ec2 *e, const char *action, size_t nitems,
			int (*params)(struct aws_query *, const void *), const void *pctx,
			int (*walk)(void *, const char *, const char *), void *ctx, char *next,
			struct efa_error *err)
{
	size_t max_pages = nitems + EC2_SPARE_PAGES, npages;
	char **seen = calloc(max_pages, sizeof(*seen));
	int rc = -1;

	if (!seen) {
		efa_error_set(err, "out of memory");
		return -1;
	}
	for (npages = 0; npages < max_pages; npages++) {
		struct aws_query q = { 0 };
		struct http_answer a = { 0 };
		int failed = params(&q, pctx);

		if (!failed && npages)
			failed = aws_query_add(&q, next, "NextToken");
		if (failed) {
			aws_query_clear(&q);
			efa_error_set(err, "out of memory");
			goto out;
		}
		failed = ec2_call(e, action, &q, &a, err);
		aws_query_clear(&q);
		if (failed)
			goto out;
		next[0] = '\0';
		failed = aws_xml_walk(a.data, a.len, walk, ctx, "EC2", err);
		free(a.data);
		if (failed)
			goto out;
		if (!next[0]) {
			rc = 0;
			goto out;
		}
		if (token_seen(seen, npages, next)) {
			efa_error_set(err, "EC2 gave the NextToken \"%.64s\" twice for %s: its paging does not end, nothing was learned from it",
				 next, action);
			goto out;
		}
		if (!(seen[npages] = strdup(next))) {
			efa_error_set(err, "out of memory");
			goto out;
		}
	}
	efa_error_set(err, "EC2 did not end %s after %zu pages for %zu items (the last NextToken \"%.64s\"): nothing was learned from it",
		 action, npages, nitems, next);
out:
	for (size_t i = 0; i < max_pages; i++)
		free(seen[i]);
	free(seen);
	return rc;
}

struct addresses {
	char *const *v;
	size_t n;
};

/* The running (or starting) instances at these addresses. */
static int instances_params(struct aws_query *q, const void *ctx)
{
	const struct addresses *ad = ctx;
	int rc = aws_query_add(q, "private-ip-address", "Filter.1.Name") ||
		 aws_query_add(q, "instance-state-name", "Filter.2.Name") ||
		 aws_query_add(q, "pending", "Filter.2.Value.1") ||
		 aws_query_add(q, "running", "Filter.2.Value.2") || aws_query_add(q, "1000", "MaxResults");

	for (size_t i = 0; !rc && i < ad->n; i++)
		rc = aws_query_add(q, ad->v[i], "Filter.1.Value.%zu", i + 1);
	return rc;
}

static int describe_instances(struct ec2 *e, char *const *addresses, size_t n, struct found *f,
			      struct efa_error *err)
{
	struct addresses ad = { addresses, n };

	return page_through(e, "DescribeInstances", n, instances_params, &ad, on_instances_end, f,
			    f->next, err);
}

/* Instance types, said once each. */
static bool type_said(const struct ec2 *e, const char *type)
{
	for (size_t i = 0; i < e->ntypes_said; i++)
		if (!strcmp(e->types_said[i], type))
			return true;
	return false;
}

static void say_type(struct ec2 *e, const char *type)
{
	char **grown = realloc(e->types_said, (e->ntypes_said + 1) * sizeof(*grown));

	if (!grown)
		return;
	e->types_said = grown;
	if ((e->types_said[e->ntypes_said] = strdup(type)))
		e->ntypes_said++;
}

/* ---- DescribeInstanceTopology: instance -> network layers ---- */

struct topology_page {
	struct ec2 *e;
	struct found *f;
	size_t from, to;	/* the instances asked about */
	char id[64];
	char block[256];
	char **nodes;		/* the current instance's, top first */
	size_t nnodes;
	char next[EC2_TOKEN_MAX];
};

static struct ec2_instance *by_id(const struct topology_page *t, const char *id)
{
	for (size_t i = t->from; i < t->to; i++)
		if (!strcmp(t->f->v[i].id, id))
			return &t->f->v[i];
	return NULL;
}

static void nodes_clear(struct topology_page *t)
{
	for (size_t i = 0; i < t->nnodes; i++)
		free(t->nodes[i]);
	free(t->nodes);
	t->nodes = NULL;
	t->nnodes = 0;
	t->id[0] = t->block[0] = '\0';
}

/*
 * The instance's layers, as many as EC2 gives (3 or 4 by type, 1 to 3 in
 * some capacity reservations) up to those kept, and its capacity block.
 */
static int topology_done(struct topology_page *t)
{
	struct ec2_instance *in = by_id(t, t->id);
	size_t nlayers = t->f->nlayers, kept = t->nnodes < nlayers ? t->nnodes : nlayers;

	if (in && kept && !in->layers) {
		if (!(in->layers = calloc(nlayers, sizeof(*in->layers))))
			return -1;
		for (size_t i = 0; i < kept; i++)
			if (!(in->layers[i] = strdup(t->nodes[i])))
				return -1;
		if (t->block[0] && !(in->block = strdup(t->block)))
			return -1;
		if (t->nnodes > nlayers && in->type && !type_said(t->e, in->type)) {
			fprintf(stderr, "slurm-efa: ec2: DescribeInstanceTopology gives %zu network layers for %s (%s), TopologyFeaturePrefixes= names %zu: the bottom %zu are left out; name one prefix per layer\n",
				t->nnodes, in->type, in->id, nlayers, t->nnodes - nlayers);
			say_type(t->e, in->type);
		}
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
	} else if (!strcmp(path, "instanceSet/item/capacityBlockId")) {
		snprintf(t->block, sizeof(t->block), "%s", text);
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

struct instance_ids {
	const struct found *f;
	size_t from, to;
};

static int topology_params(struct aws_query *q, const void *ctx)
{
	const struct instance_ids *ids = ctx;
	int rc = 0;

	for (size_t i = ids->from; !rc && i < ids->to; i++)
		rc = aws_query_add(q, ids->f->v[i].id, "InstanceId.%zu", i - ids->from + 1);
	return rc;
}

static int describe_topology(struct ec2 *e, struct found *f, size_t from, size_t to, struct efa_error *err)
{
	struct instance_ids ids = { f, from, to };
	struct topology_page t = { .e = e, .f = f, .from = from, .to = to };
	int rc = page_through(e, "DescribeInstanceTopology", to - from, topology_params, &ids,
			      on_topology_end, &t, t.next, err);

	nodes_clear(&t);
	return rc;
}

/* ---- the cache ---- */

static bool is_ipv4(const char *s)
{
	struct in_addr a;

	return s && inet_pton(AF_INET, s, &a) == 1;
}



/* Instance types EC2 gives no topology for, said once each. */
static void say_untopologized(struct ec2 *e, const struct found *f)
{
	for (size_t i = 0; e->nlayers && i < f->n; i++) {
		const char *type = f->v[i].type ? f->v[i].type : "(unknown)";

		if (f->v[i].layers || type_said(e, type))
			continue;
		say_type(e, type);
		fprintf(stderr, "slurm-efa: ec2: DescribeInstanceTopology gives no network layers for %s (%s, %s): such nodes sit under their zone only\n",
			type, f->v[i].id, f->v[i].address);
	}
}

/* Known, and learned recently enough to be trusted. */
static const struct ec2_instance *fresh(const struct ec2 *e, const char *address, time_t now)
{
	const struct ec2_instance *in = ec2_find(e, address);

	return in && now - in->learned < e->max_age ? in : NULL;
}

int ec2_refresh(struct ec2 *e, char *const *addresses, size_t n, struct efa_error *err)
{
	char **wanted = calloc(n + 1, sizeof(*wanted)), **missing = calloc(n + 1, sizeof(*missing));
	struct found f = { .nlayers = e->nlayers };
	struct ec2_instance *merged = NULL;
	size_t nwanted = 0, nmissing = 0, nmerged = 0;
	time_t now = time(NULL);
	int rc = -1;

	if (!wanted || !missing)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		if (is_ipv4(addresses[i]))
			wanted[nwanted++] = addresses[i];
	if (nwanted)
		qsort(wanted, nwanted, sizeof(*wanted), efa_str_ptr_cmp);
	for (size_t i = 0; i < nwanted; i++)
		if ((!i || strcmp(wanted[i], wanted[i - 1])) && !fresh(e, wanted[i], now))
			missing[nmissing++] = wanted[i];
	for (size_t i = 0; i < nmissing; i += EC2_BATCH)
		if (describe_instances(e, missing + i, nmissing - i < EC2_BATCH ? nmissing - i : EC2_BATCH,
				       &f, err))
			goto out;
	for (size_t i = 0; e->nlayers && i < f.n; i += EC2_BATCH)
		if (describe_topology(e, &f, i, f.n - i < EC2_BATCH ? f.n : i + EC2_BATCH, err))
			goto out;
	say_untopologized(e, &f);
	/* What stays: the known instances still wanted and learned lately,
	 * and the new answers. */
	if (!(merged = calloc(e->n + f.n + 1, sizeof(*merged))))
		goto nomem;
	for (size_t i = 0; i < e->n; i++) {
		if (now - e->v[i].learned < e->max_age &&
		    bsearch(&e->v[i].address, wanted, nwanted, sizeof(*wanted), efa_str_ptr_cmp))
			merged[nmerged++] = e->v[i];
		else
			instance_clear(&e->v[i], e->nlayers);
	}
	for (size_t i = 0; i < f.n; i++) {
		f.v[i].learned = now;
		merged[nmerged++] = f.v[i];
	}
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
	efa_error_set(err, "out of memory");
out:
	for (size_t i = 0; i < f.n; i++)
		instance_clear(&f.v[i], e->nlayers);
	free(f.v);
	instance_clear(&f.cur, e->nlayers);
	free(wanted);
	free(missing);
	return rc;
}
