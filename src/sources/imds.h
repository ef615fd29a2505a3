/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A small client for the EC2 instance metadata service, version 2 only:
 * a session token from PUT /latest/api/token, then GETs that carry it.
 * Short time limits, no proxy, no redirects, small answers.
 */
#ifndef EFA_SOURCES_IMDS_H
#define EFA_SOURCES_IMDS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"

#define IMDS_DEFAULT_URL "http://169.254.169.254"

struct imds;

/* $AWS_EC2_METADATA_SERVICE_ENDPOINT, as the AWS SDKs read it, else
 * IMDS_DEFAULT_URL. */
const char *imds_base_url(void);

/* Whether AWS_EC2_METADATA_DISABLED=true forbids asking it, as it does the
 * AWS SDKs. */
bool imds_disabled(void);

/*
 * Checks base ("http://host[:port]") and asks for a session token.
 * NULL with err filled when the URL is bad (*usage set) or the service
 * cannot be had.
 */
struct imds *imds_open(const char *base, long timeout_ms, int *usage, struct efa_error *err);

/*
 * GETs /latest/meta-data/<path>; *value (malloc'd, trimmed) on 0, err
 * filled on -1.
 */
int imds_get(struct imds *m, const char *path, char **value, struct efa_error *err);

/* The same, the whole answer (a JSON document, say); wipe it with
 * http_wipe_free when it holds a secret. */
int imds_get_document(struct imds *m, const char *path, char **value, struct efa_error *err);

void imds_close(struct imds *m);

#endif
