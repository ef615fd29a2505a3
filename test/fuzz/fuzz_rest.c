/* SPDX-License-Identifier: Apache-2.0 */
/* slurmrestd answers, in every version's shape: the first byte picks the
 * call and the API version (call * 8 + index in rest_api_versions; seeds
 * from test/fuzz/rest-seeds), the rest is the body. A nodes answer is also
 * read the way GET nodes reads it (rest_parse_listing): whatever the whole
 * parser reads into nodes, the sparse one must read into the same nodes.
 * Not compared: answers with a NUL byte, which JSON does not allow and the
 * sparse parser refuses, where Jansson's lexer passes over one that follows
 * a number. */
#include <stdio.h>

#include "fuzz.h"
#include "rest/internal.h"

static int same_list(char **a, char **b)
{
	for (; *a && *b; a++, b++)
		if (strcmp(*a, *b))
			return 0;
	return !*a && !*b;
}

static int same_nodes(const slurmrest_nodes *a, const slurmrest_nodes *b)
{
	if (a->count != b->count || a->update_time != b->update_time)
		return 0;
	for (size_t i = 0; i < a->count; i++) {
		const slurmrest_node *x = &a->nodes[i], *y = &b->nodes[i];

		if (strcmp(x->name, y->name) || strcmp(x->address, y->address) ||
		    strcmp(x->reason, y->reason) || !same_list(x->features, y->features) ||
		    !same_list(x->active_features, y->active_features) ||
		    !same_list(x->state, y->state) || !same_list(x->partitions, y->partitions))
			return 0;
	}
	return 1;
}

/*
 * The nodes read from the whole tree, and as GET nodes reads them (the
 * sparse parse handing each node over as it reaches it), are the same.
 */
static void nodes_both_ways(json_t *whole, const char *body, size_t len)
{
	struct rest_nodes_taker from_tree = { 0 }, taker = { 0 };
	struct rest_listing listing = rest_nodes_listing;
	slurmrest_nodes *from_whole = NULL, *from_sparse = NULL;
	slurmrest_error err;
	json_t *sparse;

	listing.take = rest_take_node;
	listing.arg = &taker;
	sparse = rest_parse_listing(body, len, "fuzz", &listing, &err);
	if (whole && !memchr(body, '\0', len) && !rest_nodes_taken(&from_tree, whole, &from_whole, &err)) {
		if (!sparse || rest_nodes_taken(&taker, sparse, &from_sparse, &err) ||
		    !same_nodes(from_whole, from_sparse)) {
			fprintf(stderr, "the sparse parse of a nodes answer differs: %s\n",
				sparse ? "other nodes" : err.message);
			abort();
		}
	}
	rest_nodes_taker_clear(&taker);
	slurmrest_nodes_free(from_whole);
	slurmrest_nodes_free(from_sparse);
	json_decref(sparse);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	slurmrest_partitions *parts;
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
	if (call == 0)
		nodes_both_ways(root, (const char *)data + 1, size - 1);
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
		break;	/* nodes_both_ways read them */
	case 1:
		if (!rest_parse_partitions(root, api, &parts, &err))
			slurmrest_partitions_free(parts);
		break;
	case 2:
		if (!rest_parse_job(root, api, &job, &err))
			slurmrest_job_free(job);
		/* and as slurmdbd's record of a job (/slurmdb/) */
		if (!rest_parse_db_job(root, 1, &job, &err))
			slurmrest_job_free(job);
		break;
	default:
		if (!rest_parse_submit(root, &id, &msg, &err))
			free(msg);
	}
	json_decref(root);
	return 0;
}
