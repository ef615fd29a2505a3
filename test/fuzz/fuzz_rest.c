/* slurmrestd answers, in every version's shape: the first byte picks the
 * call and the API version, the rest is the body. */
#include "fuzz.h"
#include "rest/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int versions[] = { 38, 39, 40, 41, 42 };
	slurmrest_partitions *parts;
	slurmrest_nodes *nodes;
	slurmrest_job *job;
	slurmrest_error err;
	uint32_t id;
	char *msg = NULL, *release;
	json_t *root;
	int api;

	if (size < 1)
		return 0;
	api = versions[data[0] % 5];
	root = rest_parse_body((const char *)data + 1, size - 1, "fuzz", &err);
	if (!root)
		return 0;
	release = rest_parse_release(root);
	free(release);
	rest_parse_errors(root, &err);
	switch ((data[0] / 5) % 4) {
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
