/* SPDX-License-Identifier: Apache-2.0 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aws.h"
#include "imds.h"

#define IMDS_TIMEOUT_MS 2000
/* Role credentials are fetched again this long before they expire. */
#define CREDENTIALS_MARGIN 300

int aws_credentials_init(struct aws_credentials *cr)
{
	memset(cr, 0, sizeof(*cr));
	return (cr->imds_url = strdup(imds_base_url())) ? 0 : -1;
}

void aws_credentials_clear(struct aws_credentials *cr)
{
	free(cr->imds_url);
	memset(cr, 0, sizeof(*cr));
}

int aws_region(const char *configured, const char *key, const struct aws_credentials *cr,
	       char **region, struct efa_error *err)
{
	const char *given = configured && *configured ? configured : getenv("AWS_REGION");
	struct efa_error problem;
	struct imds *m;
	int usage, rc;

	if (!given || !*given)
		given = getenv("AWS_DEFAULT_REGION");
	if (given && *given) {
		if (!(*region = strdup(given))) {
			efa_error_set(err, "out of memory");
			return -1;
		}
		return 0;
	}
	if (imds_disabled()) {
		efa_error_set(err, "no region: set %s or AWS_REGION (the instance metadata service is off: AWS_EC2_METADATA_DISABLED=true)",
			 key);
		return -1;
	}
	if (!(m = imds_open(cr->imds_url, IMDS_TIMEOUT_MS, &usage, &problem))) {
		efa_error_set(err, "no region: set %s or AWS_REGION (the instance metadata service: %s)",
			 key, problem.msg);
		return -1;
	}
	rc = imds_get(m, "placement/region", region, &problem);
	if (rc)
		efa_error_set(err, "no region: set %s or AWS_REGION (the instance metadata service: %s)",
			 key, problem.msg);
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
static int role_credentials(struct aws_credentials *cr, struct http_client *http, struct efa_error *err)
{
	struct efa_error problem;
	char path[512], *role = NULL, *doc = NULL;
	const char *key, *secret, *token, *expiration;
	json_t *root = NULL;
	int usage, rc = -1;
	struct imds *m;

	if (imds_disabled()) {
		efa_error_set(err, "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and the instance metadata service is off (AWS_EC2_METADATA_DISABLED=true)");
		return -1;
	}
	if (!(m = imds_open(cr->imds_url, IMDS_TIMEOUT_MS, &usage, &problem))) {
		efa_error_set(err, "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY) and the instance metadata service cannot be had (%s)",
			 problem.msg);
		return -1;
	}
	if (imds_get(m, "iam/security-credentials/", &role, &problem)) {
		efa_error_set(err, "no AWS credentials: none in the environment and no instance role (%s): attach a role to the instance, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
			 problem.msg);
		goto out;
	}
	snprintf(path, sizeof(path), "iam/security-credentials/%s", role);
	if (imds_get_document(m, path, &doc, &problem)) {
		efa_error_set(err, "no credentials for the instance role %s: %s", role, problem.msg);
		goto out;
	}
	root = json_loads(doc, 0, NULL);
	key = json_string_value(json_object_get(root, "AccessKeyId"));
	secret = json_string_value(json_object_get(root, "SecretAccessKey"));
	token = json_string_value(json_object_get(root, "Token"));
	expiration = json_string_value(json_object_get(root, "Expiration"));
	if (!key || !secret) {
		efa_error_set(err, "the credentials of the instance role %s have no AccessKeyId and SecretAccessKey",
			 role);
		goto out;
	}
	if (http_set_aws_credentials(http, key, secret, token, err))
		goto out;
	cr->role_expires = parse_expiration(expiration);
	if (!cr->role_expires)
		cr->role_expires = time(NULL) + CREDENTIALS_MARGIN + 60;
	rc = 0;
out:
	/* The document held the secret key and the session token. */
	json_decref(root);
	http_wipe_free(doc);
	free(role);
	imds_close(m);
	return rc;
}

int aws_credentials_apply(struct aws_credentials *cr, struct http_client *http, struct efa_error *err)
{
	const char *key = getenv("AWS_ACCESS_KEY_ID"), *secret = getenv("AWS_SECRET_ACCESS_KEY");
	const char *token = getenv("AWS_SESSION_TOKEN");

	if (key && *key && secret && *secret) {
		cr->role_expires = 0;
		return http_set_aws_credentials(http, key, secret, token && *token ? token : NULL, err);
	}
	if (cr->role_expires && time(NULL) + CREDENTIALS_MARGIN < cr->role_expires)
		return 0;
	return role_credentials(cr, http, err);
}
