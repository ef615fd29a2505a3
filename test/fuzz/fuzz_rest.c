/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrestd answers, in every version's shape: the first byte picks the
 * call and the API version (call * 8 + index in rest_api_versions; seeds
 * from test/fuzz/rest-seeds), the rest is the body. */
#include "fuzz.h"
#include "rest/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	slurmrest_partitions *parts;
	slurmrest_nodes *nodes;
	slurmrest_job *job;
	slurmrest_error err;
	uint32_t id;
	int served[REST_SERVED_MAX];
	char *msg = NULL, *release, **warnings;
	json_t *root;
	size_t call;
	int api;

	if (size < 1)
		return 0;
	api = rest_api_versions[data[0] % rest_api_nversions];
	call = (data[0] / rest_api_nversions) % 4;
	root = rest_parse_body((const char *)data + 1, size - 1, "fuzz", &err);
	if (!root)
		return 0;
	release = rest_parse_release(root);
	free(release);
	warnings = rest_parse_warnings(root);
	rest_strv_free(warnings);
	rest_parse_served(root, served, REST_SERVED_MAX);
	rest_parse_errors(root, &err);
	switch (call) {
	case 0:
		if (!rest_parse_nodes(root, api, &nodes, &err))
			slurmrest_nodes_free(nodes);
		break;
	case 1:
		if (!rest_parse_partitions(root, api, &parts, &err))
			slurmrest_partitions_free(parts);
		break;
	case 2:
		if (!rest_parse_job(root, api, &job, &err))
			slurmrest_job_free(job);
		break;
	default:
		if (!rest_parse_submit(root, &id, &msg, &err))
			free(msg);
	}
	json_decref(root);
	return 0;
}
