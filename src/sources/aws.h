/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a client of an AWS API signs with: the region, and the credentials
 * as the AWS SDKs find them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
 * AWS_SESSION_TOKEN in the environment, else the instance role's
 * temporary credentials from the instance metadata service, IMDSv2).
 * The signing itself is the HTTP layer's (aws_sigv4).
 */
#ifndef EFA_SOURCES_AWS_H
#define EFA_SOURCES_AWS_H

#include <stddef.h>
#include <time.h>

#include "common/base/error.h"
#include "http/http.h"

struct aws_credentials {
	char *imds_url;
	time_t role_expires;	/* 0: no role credentials fetched yet */
};

/* 0, or -1 (out of memory). */
int aws_credentials_init(struct aws_credentials *cr);
void aws_credentials_clear(struct aws_credentials *cr);

/*
 * Gives http the credentials to sign its next requests with: the
 * environment's (read at every call, as they may be renewed), else the
 * instance role's, fetched again shortly before they expire. 0, or -1
 * with err naming what to set up.
 */
int aws_credentials_apply(struct aws_credentials *cr, struct http_client *http, struct efa_error *err);

/*
 * configured (an efa.conf key, named in messages as key), else
 * AWS_REGION, else AWS_DEFAULT_REGION, else the instance's region from
 * the metadata service. *region malloc'd; 0, or -1 with err filled.
 */
int aws_region(const char *configured, const char *key, const struct aws_credentials *cr,
	       char **region, struct efa_error *err);

#endif
