/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A job's EFA summary in its AdminComment (job_record.h): nodes adding
 * their parts of a step, once each however often they try; whatever the
 * site keeps there left as it was; the bounds slurmdbd sets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checkpoint/checkpoint.h"
#include "common/usage/job_record.h"
#include "failalloc.h"
#include "tap.h"

static struct efa_record_step part(uint32_t step, uint32_t index, uint32_t count, uint64_t bytes)
{
	struct efa_record_step p = { .step_id = step, .node_count = count, .node_index = index };

	snprintf(p.nodes, sizeof(p.nodes), "p5-[001-%03u]", count);
	p.bytes = bytes;
	p.tx_bytes = bytes / 2;
	p.rx_bytes = bytes - bytes / 2;
	p.retransmit_timeouts = index;
	p.seconds = 60 + index;
	return p;
}

/* comment with a node's part added; the old text freed. */
static char *add(char *comment, struct efa_record_step p)
{
	struct efa_error err = { 0 };
	char *out;

	if (efa_record_add(comment, &p, &out, &err)) {
		ok(0, "efa_record_add: %s", err.msg);
		return comment;
	}
	if (!out)
		return comment;
	free(comment);
	return out;
}

static void test_parts(void)
{
	struct efa_record_step p0 = part(0, 0, 6, 1000), p5 = part(0, 5, 6, 3000), *steps;
	struct efa_error err;
	unsigned long dropped;
	char *c = NULL, *out;
	size_t n;

	c = add(c, p0);
	is_str(c, "{\"efa\":{\"steps\":[{\"step\":0,\"nodes\":\"p5-[001-006]\",\"node_count\":6,\"reported\":\"10\",\"seconds\":60,\"fallback\":false,\"shared\":false,\"bytes\":1000,\"tx_bytes\":500,\"rx_bytes\":500,\"retransmitted_packets\":0,\"retransmit_timeouts\":0,\"unresponsive_remotes\":0,\"impaired_connections\":0}]}}",
	       "no AdminComment: the summary is the whole of it, node 0 in the first digit's bit 0");
	p5.shared = true;
	c = add(c, p5);
	has_str(c, "\"reported\":\"12\"", "node 5: the second digit's bit 1");
	ok(efa_record_add(c, &p5, &out, &err) == 0 && out == NULL,
	   "node 5 again: nothing to change (a retry after its write was seen)");
	ok(efa_record_add(c, &p0, &out, &err) == 0 && out == NULL, "  node 0 again: nothing either");
	require(ok(efa_record_steps(c, &steps, &n, &dropped, &err) == 0 && n == 1, "one step read back"));
	is_int((int)steps[0].reported, 2, "  two of its six nodes reported");
	is_int((int)steps[0].bytes, 4000, "  their bytes summed");
	is_int((int)steps[0].retransmit_timeouts, 5, "  and their retransmit timeouts");
	is_int((int)steps[0].seconds, 65, "  the longest a node saw it run");
	ok(steps[0].shared, "  shared when any node was");
	free(steps);

	p0 = part(1, 1, 2, 10);
	p0.fallback = true;
	c = add(c, p0);
	has_str(c, "\"step\":1,\"nodes\":\"p5-[001-002]\",\"node_count\":2,\"reported\":\"2\",\"seconds\":61,\"fallback\":false",
		"the fall-back is the first node's verdict: another node's does not set it");
	p0.node_index = 0;
	c = add(c, p0);
	has_str(c, "\"reported\":\"3\",\"seconds\":61,\"fallback\":true", "  the first node's does");
	c = add(c, part(3, 0, 2, 1));
	c = add(c, part(2, 0, 2, 1));
	require(ok(efa_record_steps(c, &steps, &n, &dropped, &err) == 0 && n == 4, "four steps"));
	ok(steps[0].step_id == 0 && steps[1].step_id == 1 && steps[2].step_id == 2 && steps[3].step_id == 3,
	   "  in step order, whatever order they ended in");
	free(steps);

	p0 = part(1, 1, 3, 1);
	ok(efa_record_add(c, &p0, &out, &err) == -1, "a step there with another node count is refused");
	p0 = part(9, 4, 4, 1);
	ok(efa_record_add(c, &p0, &out, &err) == -1, "  so is a node index past the step's nodes");
	has_str(err.msg, "node 4 of a step of 4 nodes", "  saying which");
	free(c);
}

static void test_site_text(void)
{
	struct efa_record_step *steps;
	struct efa_error err;
	unsigned long dropped;
	char *c, *json;
	size_t n;

	c = add(strdup("{\"ticket\":\"OPS-12\",\"efa\":\"not ours\"}"), part(0, 0, 2, 5));
	has_str(c, "{\"ticket\":\"OPS-12\",\"efa\":{\"steps\":[{\"step\":0,", "a JSON AdminComment keeps its other keys");
	c = add(c, part(0, 1, 2, 5));
	has_str(c, "\"ticket\":\"OPS-12\"", "  through every node's part");
	has_str(c, "\"reported\":\"3\"", "  both parts in");
	free(c);

	c = add(strdup("requeued by admin: bad DIMM on p5-007"), part(7, 0, 2, 5));
	ok(!strncmp(c, "requeued by admin: bad DIMM on p5-007 {\"efa\":{\"steps\":[{\"step\":7,", 65),
	   "the site's text is kept, the summary after it: %s", c);
	c = add(c, part(7, 1, 2, 5));
	ok(!strncmp(c, "requeued by admin: bad DIMM on p5-007 {\"efa\":{\"steps\":[{\"step\":7,", 65),
	   "  the next node's part replaces the summary, the text stays");
	has_str(c, "\"reported\":\"3\"", "  with both parts");
	require(ok(efa_record_steps(c, &steps, &n, &dropped, &err) == 0 && n == 1, "  read back from after the text"));
	is_int((int)steps[0].bytes, 10, "  summed");
	free(steps);
	json = efa_record_json(c);
	ok(json && !strncmp(json, "{\"steps\":[{\"step\":7,", 20), "  its JSON, for slurm-efa stats --json");
	free(json);
	free(c);

	c = add(strdup("see {\"efa\": broken"), part(0, 0, 1, 1));
	ok(!strncmp(c, "see {\"efa\": broken {\"efa\":{", 26), "text that only looks like a summary is the site's: kept");
	free(c);
	ok(efa_record_steps("{\"efa\":{\"steps\":[{\"step\":1,\"nodes\":\"a1\",\"node_count\":1,\"reported\":\"3\"}]}}",
			    &steps, &n, &dropped, &err) == 0 && n == 0,
	   "a step whose reported bits name a node past its last is not ours: left out (found by fuzz_record)");
	free(steps);
	ok(efa_record_steps("{\"efa\":{\"steps\":[{\"step\":1,\"nodes\":\"a1\",\"node_count\":4294967295,\"reported\":\"\"}]}}",
			    &steps, &n, &dropped, &err) == 0 && n == 0,
	   "  nor one of 4294967295 nodes with no bits (their count wrapped around 32 bits)");
	free(steps);
	ok(efa_record_json("plain text") == NULL, "no summary: none to show");
	ok(efa_record_steps("[1,2]", &steps, &n, &dropped, &err) == 0 && n == 0 && !steps,
	   "  and no steps (a JSON array is the site's text)");
}

static void test_bounds(void)
{
	struct efa_record_step *steps, p;
	struct efa_error err;
	unsigned long dropped;
	char *c = NULL, *out, *big;
	size_t n;

	for (uint32_t s = 0; s < EFA_RECORD_STEPS_MAX + 3; s++)
		c = add(c, part(s, 0, 2, 1));
	require(ok(efa_record_steps(c, &steps, &n, &dropped, &err) == 0, "many steps read back"));
	is_int((int)n, EFA_RECORD_STEPS_MAX, "  the newest EFA_RECORD_STEPS_MAX kept");
	is_int((int)dropped, 3, "  the older counted as dropped");
	is_int((int)steps[0].step_id, 3, "  the oldest gone first");
	free(steps);
	p = part(0, 1, 2, 1);
	ok(efa_record_add(c, &p, &out, &err) == 0 && out == NULL,
	   "a late part of a dropped step changes nothing");
	free(c);

	p = part(0, 0, 4000, 1);
	c = add(NULL, p);
	has_str(c, "\"node_count\":4000,\"reported\":\"1000", "a step of 4000 nodes: 1000 hex digits");
	free(c);

	big = malloc(EFA_RECORD_COMMENT_MAX);
	memset(big, 'x', EFA_RECORD_COMMENT_MAX - 1);
	big[EFA_RECORD_COMMENT_MAX - 1] = '\0';
	p = part(0, 0, 2, 1);
	ok(efa_record_add(big, &p, &out, &err) == -1 && !out,
	   "the site's text leaves no room: refused, nothing written");
	has_str(err.msg, "would pass 60000 bytes", "  saying why");
	free(big);
}

/* One node's add to comment, and the steps read back from what it gave. */
struct add_run {
	const char *comment;
	struct efa_record_step part;
	char *whole;		/* the comment the run without failures gave */
	size_t nsteps;
	uint64_t bytes;
};

static enum failalloc_result add_once(void *ctx, long n)
{
	struct add_run *r = ctx;
	struct efa_record_step *steps;
	struct efa_error err;
	unsigned long dropped;
	bool same;
	char *out;
	size_t k;

	if (efa_record_add(r->comment, &r->part, &out, &err))
		return FAILALLOC_FAILED;
	if (!out)
		return FAILALLOC_OTHER;	/* "nothing to change": it had to */
	if (!n) {
		r->whole = out;
		return FAILALLOC_SAME;
	}
	same = !strcmp(out, r->whole);
	free(out);
	if (efa_record_steps(r->whole, &steps, &k, &dropped, &err))
		return FAILALLOC_FAILED;
	same = same && k == r->nsteps && steps[k - 1].bytes == r->bytes;
	free(steps);
	return same ? FAILALLOC_SAME : FAILALLOC_OTHER;
}

/*
 * A node's add to comment, and the read of the result, with each of
 * their allocations failing in turn: they fail, or give what they give
 * without failures; never a summary taken for the site's text (the part
 * then added to a second summary) or steps read as none, nothing leaked.
 */
static void add_failing(const char *what, const char *comment, size_t nsteps, uint64_t bytes)
{
	struct add_run r = { .comment = comment, .part = part(1, 1, 2, 7), .nsteps = nsteps,
			     .bytes = bytes };
	struct failalloc_tally t;
	int rc = failalloc_each(add_once, &r, &t);

	if (!ok(!rc, "%s: a part added with %ld allocations", what, t.total)) {
		free(r.whole);
		return;
	}
	is_int(t.failed, t.total, "  each of the %ld failures failed the add or the read", t.total);
	is_int(t.other, 0, "  none gave another comment or other steps");
	is_int(t.leaked, 0, "  none left memory allocated");
	free(r.whole);
}

/* comment with a requeued run added; the old text freed. */
static char *add_rq(char *comment, uint32_t run, enum efa_requeue_cause cause)
{
	struct efa_record_requeue rq = { run, cause };
	struct efa_error err = { 0 };
	char *out;

	if (efa_record_add_requeue(comment, &rq, &out, &err)) {
		ok(0, "efa_record_add_requeue: %s", err.msg);
		return comment;
	}
	if (!out)
		return comment;
	free(comment);
	return out;
}

/*
 * The runs of a resumable job requeued while its nodes were healthy:
 * written beside the steps, each run once, kept when nodes add their
 * steps' parts, the site's text untouched, and read back; a forged or
 * foreign entry is not one.
 */
static void test_requeues(void)
{
	struct efa_record_requeue *rq;
	struct efa_record_step *steps;
	struct efa_record_requeue one = { 1, EFA_REQUEUE_PREEMPTION };
	unsigned long dropped;
	struct efa_error err;
	char *c, *out;
	size_t n;

	c = add_rq(strdup("ticket OPS-7"), 0, EFA_REQUEUE_PREEMPTION);
	is_str(c, "ticket OPS-7 {\"efa\":{\"steps\":[],\"requeues\":[{\"run\":0,\"cause\":\"preemption\"}]}}",
	       "a requeued run beside the site's text: no steps, the run and its cause");
	c = add(c, part(2, 0, 2, 100));
	has_str(c, "\"requeues\":[{\"run\":0,\"cause\":\"preemption\"}]",
		"  kept when a node adds its part of a step");
	c = add_rq(c, 3, EFA_REQUEUE_REQUEST);
	c = add_rq(c, 1, EFA_REQUEUE_PREEMPTION);
	ok(efa_record_add_requeue(c, &one, &out, &err) == 0 && out == NULL,
	   "run 1 again: nothing to change (each run once)");
	require(ok(efa_record_requeues(c, &rq, &n, &err) == 0 && n == 3, "three runs read back"));
	ok(rq[0].run == 0 && rq[1].run == 3 && rq[1].cause == EFA_REQUEUE_REQUEST && rq[2].run == 1,
	   "  in the order added, with their causes");
	free(rq);
	require(ok(efa_record_steps(c, &steps, &n, &dropped, &err) == 0 && n == 1,
		   "  the step is there too"));
	free(steps);
	has_str(c, "ticket OPS-7 {", "  the site's text as it was");
	free(c);

	c = strdup("{\"efa\":{\"steps\":[],\"requeues\":[{\"run\":-1,\"cause\":\"preemption\"},"
		   "{\"run\":2,\"cause\":\"reboot\"},{\"run\":4},\"x\",{\"run\":5,\"cause\":\"request\"},"
		   "{\"run\":5,\"cause\":\"preemption\"}]}}");
	require(ok(efa_record_requeues(c, &rq, &n, &err) == 0 && n == 1,
		   "entries not of this shape (a run below 0, an unknown cause, none, not an object) are not read"));
	ok(rq[0].run == 5 && rq[0].cause == EFA_REQUEUE_REQUEST, "  a run given twice: the first");
	free(rq);
	free(c);

	c = NULL;
	for (uint32_t run = 0; run < EFA_RECORD_REQUEUES_MAX + 10; run++)
		c = add_rq(c, run, EFA_REQUEUE_REQUEST);
	require(ok(efa_record_requeues(c, &rq, &n, &err) == 0 && n == EFA_RECORD_REQUEUES_MAX,
		   "at most EFA_RECORD_REQUEUES_MAX runs kept"));
	ok(rq[0].run == 10 && rq[n - 1].run == EFA_RECORD_REQUEUES_MAX + 9, "  the newest");
	free(rq);
	free(c);
}

/* The quiet bits a node sets and clears, and the hangs found. */
static char *quiet(char *c, uint32_t run, uint32_t step, uint32_t count, uint32_t node, bool on)
{
	struct efa_error err;
	char *out;

	if (efa_record_mark_quiet(c, run, step, count, node, on, &out, &err)) {
		fprintf(stderr, "# %s\n", err.msg);
		return c;
	}
	if (!out)
		return c;
	free(c);
	return out;
}

static void test_hangs(void)
{
	struct efa_record_hang h = { .run = 1, .step = 3, .action = EFA_HANG_REQUEUE,
				     .quiet_seconds = 610, .nodes = "p5-[001-002],p5-\"x\"" };
	struct efa_record_hang *list;
	struct efa_record_step *steps;
	unsigned long dropped;
	struct efa_error err;
	char *c, *out;
	size_t n;

	c = add(strdup("ticket OPS-9"), part(3, 0, 2, 100));
	ok(!efa_record_all_quiet(c, 1, 3, 2), "no quiet bits: not all quiet");
	c = quiet(c, 1, 3, 2, 1, true);
	has_str(c, "\"quiet\":[{\"run\":1,\"step\":3,\"node_count\":2,\"nodes\":\"2\"}]",
		"node 1's quiet bit set");
	ok(!efa_record_all_quiet(c, 1, 3, 2), "  one of two: not all quiet");
	ok(efa_record_mark_quiet(c, 1, 3, 2, 1, true, &out, &err) == 0 && !out,
	   "  set again: nothing to change");
	c = quiet(c, 1, 3, 2, 0, true);
	ok(efa_record_all_quiet(c, 1, 3, 2), "both set: all quiet");
	ok(!efa_record_all_quiet(c, 0, 3, 2) && !efa_record_all_quiet(c, 1, 3, 3),
	   "  not for another run, nor another node count");
	c = quiet(c, 1, 3, 2, 0, false);
	ok(!efa_record_all_quiet(c, 1, 3, 2), "node 0 active again: cleared");
	has_str(c, "\"nodes\":\"2\"", "  node 1's bit stays");
	c = add(c, part(3, 1, 2, 50));
	has_str(c, "\"quiet\":[{", "  kept when a node adds its part of a step");
	c = quiet(c, 2, 0, 2, 0, true);
	ok(!strstr(c, "\"run\":1,\"step\":3"), "a new run's bit drops the old run's bits");
	ok(efa_record_mark_quiet(c, 2, 0, 2, 2, true, &out, &err) == -1,
	   "a node past the step's count is refused");

	c = quiet(c, 1, 3, 2, 1, true);
	require(ok(efa_record_add_hang(c, &h, &out, &err) == 0 && out, "a hang added"));
	free(c);
	c = out;
	has_str(c, "\"hangs\":[{\"run\":1,\"step\":3,\"action\":\"requeue\",\"quiet_seconds\":610,\"nodes\":\"p5-[001-002],p5-\\\"x\\\"\"}]",
		"  with what was done, for how long, on which nodes (quoted)");
	ok(!strstr(c, "\"run\":1,\"step\":3,\"node_count\""), "  its step's quiet bits dropped");
	ok(efa_record_add_hang(c, &h, &out, &err) == 0 && !out, "  the same run and step again: nothing to change");
	ok(efa_record_hung(c, 1, 3, EFA_HANG_ACTION_UNSET) && efa_record_hung(c, 1, 3, EFA_HANG_REQUEUE) &&
	   efa_record_hung(c, 1, EFA_RECORD_ANY_STEP, EFA_HANG_REQUEUE), "  found by run and step, or any step, and action");
	ok(!efa_record_hung(c, 1, 4, EFA_HANG_ACTION_UNSET) && !efa_record_hung(c, 0, 3, EFA_HANG_ACTION_UNSET) &&
	   !efa_record_hung(c, 1, 3, EFA_HANG_CANCEL), "  not for another step, run or action");
	require(ok(efa_record_hangs(c, &list, &n, &err) == 0 && n == 1, "read back"));
	ok(list[0].run == 1 && list[0].step == 3 && list[0].action == EFA_HANG_REQUEUE &&
	   list[0].quiet_seconds == 610 && !strcmp(list[0].nodes, h.nodes), "  as written");
	free(list);
	require(ok(efa_record_steps(c, &steps, &n, &dropped, &err) == 0 && n == 1 &&
		   steps[0].reported == 2, "the step's figures are there still"));
	free(steps);
	has_str(c, "ticket OPS-9 {", "  the site's text as it was");
	for (uint32_t run = 2; run < EFA_RECORD_HANGS_MAX + 5; run++) {
		h.run = run;
		require(ok(efa_record_add_hang(c, &h, &out, &err) == 0 && out, "hang of run %u", run));
		free(c);
		c = out;
	}
	require(ok(efa_record_hangs(c, &list, &n, &err) == 0 && n == EFA_RECORD_HANGS_MAX,
		   "at most EFA_RECORD_HANGS_MAX hangs kept"));
	ok(list[0].run == 5 && list[n - 1].run == EFA_RECORD_HANGS_MAX + 4, "  the newest");
	free(list);
	free(c);

	c = strdup("{\"efa\":{\"steps\":[],\"hangs\":[{\"run\":1,\"step\":0,\"action\":\"reboot\",\"quiet_seconds\":1},"
		   "{\"run\":1,\"step\":0,\"quiet_seconds\":1},{\"run\":2,\"step\":0,\"action\":\"cancel\",\"quiet_seconds\":9}],"
		   "\"quiet\":[{\"run\":2,\"step\":0,\"node_count\":2,\"nodes\":\"7\"}]}}");
	require(ok(efa_record_hangs(c, &list, &n, &err) == 0 && n == 1 && list[0].run == 2,
		   "hangs not of this shape (an unknown action, none) are not read"));
	free(list);
	ok(!efa_record_all_quiet(c, 2, 0, 2), "quiet bits past the node count are not read");
	free(c);
}

static char *link_rate(char *c, uint32_t run, uint32_t step, uint32_t count, uint32_t node,
		       double rate)
{
	struct efa_error err;
	char *out;

	if (efa_record_set_link(c, run, step, count, node, rate, &out, &err)) {
		fprintf(stderr, "# %s\n", err.msg);
		return c;
	}
	if (!out)
		return c;
	free(c);
	return out;
}

static void test_links(void)
{
	struct efa_record_sick k = { .run = 0, .step = 2, .node = "n2", .rate = 0.25, .peers = 0.01,
				     .drained = true };
	struct efa_record_sick *list;
	struct efa_error err;
	double rates[3];
	char *c, *out;
	size_t n;

	c = link_rate(strdup("{\"ticket\":\"OPS-3\"}"), 0, 2, 3, 1, 0.25);
	has_str(c, "\"links\":[{\"run\":0,\"step\":2,\"node_count\":3,\"above\":[[1,0.25]]}]",
		"a node's link rate above the floor is recorded");
	has_str(c, "{\"ticket\":\"OPS-3\",\"efa\":", "  beside the site's keys");
	ok(efa_record_set_link(c, 0, 2, 3, 1, 0.25, &out, &err) == 0 && !out, "  the same again: nothing to change");
	c = link_rate(c, 0, 2, 3, 1, 0.5);
	c = link_rate(c, 0, 2, 3, 0, 0.02);
	require(ok(!efa_record_links(c, 0, 2, 3, rates), "read back"));
	ok(rates[0] == 0.02 && rates[1] == 0.5 && rates[2] == -1, "  each node's latest, -1 for one that set none");
	ok(!efa_record_links(c, 0, 3, 3, rates) && rates[0] == -1 && rates[1] == -1,
	   "  none for another step");
	c = link_rate(c, 1, 0, 3, 2, 0.1);
	ok(!strstr(c, "\"run\":0,\"step\":2"), "a new run's rate drops the old run's");
	ok(efa_record_set_link(c, 1, 0, 3, 3, 0.1, &out, &err) == -1, "a node past the count is refused");
	ok(efa_record_set_link(c, 1, 0, 3, 0, -1, &out, &err) == -1, "  so is a rate below 0");

	require(ok(!efa_record_add_sick(c, &k, &out, &err) && out, "a sick node is added"));
	free(c);
	c = out;
	has_str(c, "\"sick\":[{\"run\":0,\"step\":2,\"node\":\"n2\",\"rate\":0.25,\"peers\":0.01,\"drained\":true}]",
		"  with its rate, its peers' and whether it was drained");
	ok(!efa_record_add_sick(c, &k, &out, &err) && !out, "  the same node of the same step again: nothing");
	require(ok(!efa_record_sick_links(c, &list, &n, &err) && n == 1, "read back"));
	ok(!strcmp(list[0].node, "n2") && list[0].rate == 0.25 && list[0].peers == 0.01 && list[0].drained,
	   "  as written");
	free(list);
	free(c);

	c = strdup("{\"efa\":{\"steps\":[],\"links\":[{\"run\":0,\"step\":0,\"node_count\":2,"
		   "\"above\":[[0,-1],[5,0.2],[1,\"x\"],[1,0.3],[1,0.4]]}],"
		   "\"sick\":[{\"run\":0,\"step\":0,\"node\":\"n1\",\"rate\":\"high\",\"peers\":0}]}}");
	require(ok(!efa_record_links(c, 0, 0, 2, rates), "a hand-edited record"));
	ok(rates[0] == -1 && rates[1] == 0.3, "  rates below 0, past the nodes, not numbers, or given twice (the first kept) are not read");
	ok(!efa_record_sick_links(c, &list, &n, &err) && n == 0, "  nor a sick node whose rate is no number");
	free(list);
	free(c);
}

static void test_allocation_failures(void)
{
	char *json = add(strdup("{\"ticket\":\"OPS-12\"}"), part(1, 0, 2, 5));
	char *text = add(strdup("requeued by admin"), part(1, 0, 2, 5));

	add_failing("a JSON AdminComment with the summary", json, 1, 12);
	add_failing("the site's text with the summary after it", text, 1, 12);
	add_failing("no AdminComment", "", 1, 7);
	free(json);
	free(text);
}

/*
 * The bridge's note holds a path the user chose: written as
 * efa_checkpoint_note writes it, no path can pass for a summary (a forged
 * one would tell the nodes their parts are recorded, and stats would show
 * its figures).
 */
static void test_forged_note(void)
{
	const char *forged = "/fsx/alice/{\"efa\":{\"steps\":[{\"step\":0,\"nodes\":\"n[1-2]\",\"node_count\":2,\"reported\":\"3\",\"bytes\":99}]}}";
	char note[1024], plain[1024], *json;

	snprintf(plain, sizeof(plain), "slurm-efa: checkpoints in %s", forged);
	json = efa_record_json(plain);
	ok(json != NULL, "a path written as it is would pass for a summary (what the note must avoid)");
	free(json);
	efa_checkpoint_note(forged, note, sizeof(note));
	is_str(note, "slurm-efa: checkpoints in /fsx/alice/%7B\"efa\":%7B\"steps\":[%7B\"step\":0,\"nodes\":\"n[1-2]\",\"node_count\":2,\"reported\":\"3\",\"bytes\":99%7D]%7D%7D",
	       "the note writes '{' and '}' of the path as %%XX");
	ok(efa_record_json(note) == NULL, "  so it holds no summary");
	efa_checkpoint_note("/fsx/sweep_%a\nc", note, sizeof(note));
	is_str(note, "slurm-efa: checkpoints in /fsx/sweep_%a%0Ac",
	       "  control characters too; a job array's %%a stays as it is");
	efa_checkpoint_note("/fsx/{{{{", note, 40);
	is_str(note, "slurm-efa: checkpoints in /fsx/%7B%7B", "  a buffer too small cuts it short, never mid-escape");
}

int main(void)
{
	test_forged_note();
	test_parts();
	test_requeues();
	test_hangs();
	test_links();
	test_site_text();
	test_bounds();
	test_allocation_failures();
	return done_testing();
}
