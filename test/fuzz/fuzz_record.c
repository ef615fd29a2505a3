/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A job's AdminComment as a node finds it (job_record.h): whatever an
 * admin, a site's tool or another node left there. A node's part added to
 * it must keep every byte of the site's text in front, or every other key
 * of its JSON; added again, it must change nothing; and the steps read
 * back must count no more nodes than a step has.
 */
#include <assert.h>

#include "common/usage/job_record.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct efa_record_step part = { .step_id = 3, .node_count = 9, .node_index = 8,
					.nodes = "p5-[001-009]", .bytes = 1 };
	struct efa_record_step *steps = NULL;
	char *comment = fuzz_string(data, size), *out = NULL, *again = NULL, *json;
	unsigned long dropped;
	struct efa_error err;
	size_t n;

	if (!comment)
		return 0;
	if (!efa_record_steps(comment, &steps, &n, &dropped, &err)) {
		for (size_t i = 0; i < n; i++)
			assert(steps[i].reported <= steps[i].node_count);
		free(steps);
	}
	free(efa_record_json(comment));
	if (!efa_record_add(comment, &part, &out, &err) && out) {
		json = efa_record_json(out);
		assert(json);	/* the summary is where the next node looks */
		free(json);
		assert(!efa_record_add(out, &part, &again, &err) && !again);
	}
	free(out);
	free(comment);
	return 0;
}
