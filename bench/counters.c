/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What MetricsDir= costs a step on a node: reading every EFA port's
 * hw_counters (hw_counters.h) when a step starts and when it ends, and
 * the step's whole part (both readings, the node's usage store, the
 * node_exporter file written when it ends).
 *
 *   bench/counters [--rounds R] ROOT DIR
 *
 * ROOT is a node tree whose EFA ports have hw_counters files; DIR an
 * empty directory for the store and the metrics file. Prints R rounds of
 * alternating samples (microseconds):
 *   read US     one reading of every port's counters (a step's start)
 *   again US    the same counters read again (a step's end)
 *   raw US      the baseline: open, read and close the same files, in a
 *               loop with nothing else
 *   step US     a step's whole part: at its start a reading and the
 *               store; at its end the same counters read again, the store
 *               and the file
 *   traffic US  one hang-detection sample's traffic (common/health/
 *               hang_probe.h): the counters read again and summed
 *   sample US   a whole sample: the traffic, and in a child with a
 *               deadline the job's output file, its checkpoint directory
 *               (DIR/ck, 64 saves of 8 files) and its heartbeat
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/health/hang_probe.h"
#include "common/node/hw_counters.h"
#include "common/node/node.h"
#include "common/usage/metrics.h"
#include "common/usage/usage.h"

#define WARMUP 20

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The paths one reading opens, for the baseline. */
static char **counter_paths(const char *root, const struct efa_hw_reading *r, size_t *n)
{
	char **paths = calloc(r->nports * EFA_HW_NCOUNTERS + 1, sizeof(*paths));

	*n = 0;
	for (size_t i = 0; paths && i < r->nports; i++)
		for (int c = 0; c < EFA_HW_NCOUNTERS; c++)
			if (r->ports[i].have & (1u << c) &&
			    asprintf(&paths[(*n)++], "%s/sys/class/infiniband/%s/ports/%s/hw_counters/%s",
				     root, r->ports[i].device, r->ports[i].port,
				     efa_hw_counter_info[c].file) < 0)
				return NULL;
	return paths;
}

static void raw_read(char **paths, size_t n)
{
	char buf[64];

	for (size_t i = 0; i < n; i++) {
		int fd = open(paths[i], O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			if (read(fd, buf, sizeof(buf)) < 0)
				buf[0] = '\0';
			close(fd);
		}
	}
}

/* Step step_id of one long job: its table stays one line. */
static int step(const struct efa_node *node, const char *root, const char *store,
		const char *metrics, uint32_t step_id)
{
	struct efa_hw_reading start, r = { 0 };
	struct efa_step_usage used;
	struct efa_error err;
	int rc = 0;

	/* As the plugin: the end reads again what the start found. */
	if (efa_hw_read(node, root, &start, &err) ||
	    efa_usage_step_begin(store, 1, step_id, true, "alice", "p5", &start, time(NULL), &err))
		rc = -1;
	if (rc || efa_hw_read_again(&start, root, EFA_HW_ALL, &r, &err)) {
		efa_hw_reading_clear(&start);
		goto fail;
	}
	efa_hw_reading_clear(&start);
	if (efa_usage_step_end(store, 1, step_id, true, &r, time(NULL), &used, NULL, 0, &err) ||
	    efa_metrics_update(metrics, store, "n1", &r, time(NULL), &err))
		rc = -1;
	else
		efa_step_usage_clear(&used);
	efa_hw_reading_clear(&r);
	if (!rc)
		return 0;
fail:
	fprintf(stderr, "bench/counters: %s\n", err.msg);
	return -1;
}

/* A job's files as a hang sample looks at them: an output file, a
 * checkpoint directory of 64 saves of 8 files each, a heartbeat. */
static int job_files(const char *dir, char *out, char *ck, char *beat, size_t size)
{
	char path[4096 + 64];
	FILE *f;

	snprintf(out, size, "%s/job.out", dir);
	snprintf(ck, size, "%s/ck", dir);
	snprintf(beat, size, "%s/heartbeat", dir);
	if (mkdir(ck, 0755) || !(f = fopen(out, "w")))
		return -1;
	fputs("step 1 loss 2.0\n", f);
	fclose(f);
	if (!(f = fopen(beat, "w")))
		return -1;
	fclose(f);
	for (int save = 0; save < 64; save++) {
		snprintf(path, sizeof(path), "%s/checkpoint-%d", ck, save * 100);
		if (mkdir(path, 0755))
			return -1;
		for (int file = 0; file < 8; file++) {
			snprintf(path, sizeof(path), "%s/checkpoint-%d/shard-%d", ck, save * 100, file);
			if (!(f = fopen(path, "w")))
				return -1;
			fclose(f);
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct efa_node *node = NULL;
	struct efa_hw_reading r;
	struct efa_error err;
	char store[4096], metrics[4096], **paths;
	char out[4096], ck[4096], beat[4096];
	const char *outputs[2] = { out, NULL };
	struct efa_hang_probe probe = { .outputs = outputs, .checkpoint_dir = ck,
					.heartbeat = beat, .timeout_ms = 5000 };
	struct efa_hang_sample sample;
	const char *root, *dir;
	long rounds = 200;
	size_t npaths;

	if (argc == 5 && !strcmp(argv[1], "--rounds"))
		rounds = atol(argv[2]);
	if ((argc != 3 && argc != 5) || rounds < 1) {
		fprintf(stderr, "usage: bench/counters [--rounds R] ROOT DIR\n");
		return 2;
	}
	root = argv[argc - 2];
	dir = argv[argc - 1];
	snprintf(metrics, sizeof(metrics), "%s/metrics", dir);
	if (efa_node_discover(root, NULL, &node, &err) || mkdir(metrics, 0755) ||
	    efa_usage_dir(dir, "n1", store, sizeof(store), &err) ||
	    efa_hw_read(node, root, &r, &err)) {
		fprintf(stderr, "bench/counters: %s\n", err.msg);
		return 1;
	}
	if (job_files(dir, out, ck, beat, sizeof(out))) {
		fprintf(stderr, "bench/counters: cannot make the job's files in %s\n", dir);
		return 1;
	}
	probe.heartbeat_owner = getuid();
	probe.root = root;
	paths = counter_paths(root, &r, &npaths);
	fprintf(stderr, "bench/counters: %zu EFA ports, %zu counter files\n", r.nports, npaths);
	efa_hw_reading_clear(&r);
	if (!paths || !npaths)
		return 1;
	for (long i = 0; i < WARMUP + rounds; i++) {
		struct efa_hw_reading again, start;
		struct efa_hang_probe traffic_only = { 0 };
		double t0 = now_us(), t1, t2, t3, t4, t5, t6, t7;

		if (efa_hw_read(node, root, &r, &err))
			return 1;
		t1 = now_us();
		if (efa_hw_read_again(&r, root, EFA_HW_ALL, &again, &err))
			return 1;
		t2 = now_us();
		efa_hw_reading_clear(&again);
		efa_hw_reading_clear(&r);
		raw_read(paths, npaths);
		t3 = now_us();
		if (step(node, root, store, metrics, (uint32_t)(i + 1)))
			return 1;
		t4 = now_us();
		/* A hang sample reads again from the step's start reading. */
		if (efa_hw_read(node, root, &start, &err))
			return 1;
		traffic_only = (struct efa_hang_probe){ .start = &start, .root = root };
		probe.start = &start;
		t5 = now_us();
		if (efa_hang_probe_take(&traffic_only, 1, &sample, &err) || !sample.traffic_known)
			return 1;
		t6 = now_us();
		if (efa_hang_probe_take(&probe, 1, &sample, &err) || !sample.output_known ||
		    !sample.checkpoint_known || !sample.heartbeat_known) {
			fprintf(stderr, "bench/counters: a hang sample did not read everything\n");
			return 1;
		}
		t7 = now_us();
		efa_hw_reading_clear(&start);
		if (i >= WARMUP)
			printf("read %.1f\nagain %.1f\nraw %.1f\nstep %.1f\ntraffic %.1f\nsample %.1f\n",
			       t1 - t0, t2 - t1, t3 - t2, t4 - t3, t6 - t5, t7 - t6);
	}
	for (size_t i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	efa_node_free(node);
	return 0;
}
