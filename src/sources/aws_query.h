/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The AWS Query protocol that EC2 speaks: requests are POSTs to "/" whose
 * parameters are the form-encoded body, answers are XML (errors as
 * Response/Errors/Error with Code and Message).
 *
 * Why not a GET: Signature Version 4 signs the canonical query, its
 * parameters sorted by name and then by value (AWS's "Create a signed
 * AWS API request"), and libcurl signs the query itself, as sent up to
 * 8.2 and re-sorted as whole "name=value" strings, at most 64 pairs, from
 * 8.3: either way Filter.1.Value.10 goes before Filter.1.Value.1 and a
 * request naming ten instances or more is refused. A POST's canonical
 * query is empty and its body is signed by its SHA-256, whatever the
 * order.
 */
#ifndef EFA_SOURCES_AWS_QUERY_H
#define EFA_SOURCES_AWS_QUERY_H

#include <stddef.h>

#include "common/base/error.h"

struct aws_query {
	char **params;		/* "name=value", both encoded */
	size_t n;
};

/* Adds the parameter named by fmt with value. 0, or -1 (out of memory). */
int aws_query_add(struct aws_query *q, const char *value, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

void aws_query_clear(struct aws_query *q);

/* "a=1&b=2", the form body, in the order added. NULL when out of memory. */
char *aws_query_body(const struct aws_query *q);

/*
 * Walks the XML answer body: at the end of each element, fn(ctx, path,
 * text), with the path below the root ("instanceSet/item/instanceId")
 * and the element's own text. fn returns nonzero to stop (out of memory).
 * 0, or -1 with err filled when body is not XML; service names the server.
 */
int aws_xml_walk(const char *body, size_t len, int (*fn)(void *, const char *, const char *),
		 void *ctx, const char *service, struct efa_error *err);

struct aws_error {
	char code[128];		/* "" when the answer names none */
	char message[512];
};

/* The error an answer carries. */
void aws_error_read(const char *body, size_t len, struct aws_error *ae);

#endif
