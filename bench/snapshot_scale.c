/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The zone snapshot at scale: what slurm-efa sync does with one nodes
 * answer (parse it, build the cluster, write the snapshot) and what the
 * job_submit bridge does with the snapshot (load it once, decide jobs).
 *
 *   snapshot_scale [--rounds N] [--decisions N] [--seconds S] NODES.json SNAPSHOT
 *
 * With --rounds 0 --decisions 0, parse, build, efa_snapshot_write,
 * efa_snapshot_write_compact, efa_snapshot_load and efa_policy_decide
 * each run exactly once (for counting their instructions with callgrind).
 * SNAPSHOT is the JSON; its compact form goes beside it.
 *
 * The answer's API version is read from its meta (openapi/v0.0.38, or
 * data_parser/v0.0.N from v0.0.40 on), as the client knows it from the URL.
 *
 * Prints, one "name value" per line: api (the answer's version, 38 for
 * v0.0.38), rss_input_kib (the answer read), rss_peak_kib (after one
 * sync, which frees the answer once parsed, as the client does), snapshot_bytes, compact_bytes, write_json_ms and
 * write_compact_ms (one write each, fsync included), nodes, zones; then per
 * round, alternating, "jansson MS" (json_loadb alone, the baseline),
 * "parse MS" (rest_parse_listing handing each node to the model, as
 * slurmrest_get_nodes does), "build MS"
 * (efa_cluster_add_node for every node) and "sync MS" (the two); then
 * "load MS" per snapshot load (efa_snapshot_load, what the bridge does:
 * the compact form), "json_load MS" per efa_snapshot_read of the JSON (what
 * it did before, and does when the compact form is not current); then
 * "decide US" per batch of decisions
 * (efa_policy_decide for a 2-node --efa job in a SingleZone=yes
 * partition), up to N decisions or S seconds, and "decisions", "verdict".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/config/efa_conf.h"
#include "common/cluster/policy.h"
#include "common/cluster/snapshot.h"
#include "common/base/strutil.h"
#include "rest/internal.h"

#define DECIDE_BATCH 10

static int api;	/* the answer's OpenAPI version: 41 for v0.0.41 */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long peak_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void die(const char *what, const char *msg) __attribute__((noreturn));

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "snapshot_scale: %s: %s\n", what, msg);
	exit(1);
}

/*
 * slurmrest_get_nodes after the transfer: the body to the library's model.
 * With release, the body (*release) is freed once its tree is built, as
 * the client frees the answer (client.c). parse and build are not
 * inlined: callgrind counts them by name.
 */
static __attribute__((noinline)) double parse(const char *body, size_t len, slurmrest_nodes **nodes,
					      char **release)
{
	double t0 = now_ms();
	struct rest_nodes_taker taker = { 0 };
	struct rest_listing listing = rest_nodes_listing;
	slurmrest_error err;
	json_t *root;

	/* As slurmrest_get_nodes reads them: each node to the model as the
	 * parse reaches it. */
	listing.take = rest_take_node;
	listing.arg = &taker;
	root = rest_parse_listing(body, len, "nodes", &listing, &err);
	if (release) {
		free(*release);
		*release = NULL;
	}
	if (!root || rest_nodes_taken(&taker, root, nodes, &err))
		die("parse", err.message);
	json_decref(root);
	return now_ms() - t0;
}

/* cli_rest_cluster: the model to the cluster the snapshot is written from. */
static __attribute__((noinline)) double build(const slurmrest_nodes *nodes, struct efa_cluster *c)
{
	double t0 = now_ms();
	struct efa_error err;

	memset(c, 0, sizeof(*c));
	c->generated = (int64_t)time(NULL);
	c->source = strdup("unix:/run/slurmrestd/slurmrestd.sock");
	c->zone_prefix = strdup("az-");
	for (size_t i = 0; i < nodes->count; i++) {
		const slurmrest_node *n = &nodes->nodes[i];

		if (efa_cluster_add_node(c, n->name,
					 n->active_features[0] ? n->active_features : n->features,
					 n->state, n->partitions, &err))
			die("build", err.msg);
	}
	return now_ms() - t0;
}

/* The answer's version, from meta.plugin (found before anything is timed). */
static int answer_api(const char *body)
{
	static const char *const tags[] = { "\"data_parser/", "\"openapi/" };
	char name[16];

	for (size_t k = 0; k < sizeof(tags) / sizeof(tags[0]); k++) {
		const char *at = strstr(body, tags[k]);
		size_t len;

		if (!at)
			continue;
		at += strlen(tags[k]);
		len = strcspn(at, "\"");
		if (len < sizeof(name)) {
			memcpy(name, at, len);
			name[len] = '\0';
			return rest_api_parse(name);
		}
	}
	return -1;
}

static void sync_rounds(const char *body, size_t len, long rounds)
{
	slurmrest_nodes *nodes;
	struct efa_cluster c;
	json_error_t jerr;

	for (long r = 0; r < rounds; r++) {
		double t0 = now_ms(), p, b;
		json_t *root = json_loadb(body, len, 0, &jerr);

		printf("jansson %.3f\n", now_ms() - t0);
		json_decref(root);
		p = parse(body, len, &nodes, NULL);
		b = build(nodes, &c);
		printf("parse %.3f\nbuild %.3f\nsync %.3f\n", p, b, p + b);
		slurmrest_nodes_free(nodes);
		efa_cluster_clear(&c);
	}
}

static void decide(const char *snapshot, long rounds, long max, double seconds)
{
	static const char conf[] = "PartitionName=p00 SingleZone=yes\n";
	struct efa_job_request req = { .partition = "p00", .min_nodes = 2, .user = "alice",
				       .job_name = "train", .efa = "(null)" };
	struct efa_config *cfg;
	struct efa_decision d;
	struct efa_cluster c;
	struct efa_error err;
	char note[EFA_ERROR_MAX + 128];
	double start, t0;
	long done = 0;

	for (long r = 0; r < rounds; r++) {
		t0 = now_ms();
		if (efa_snapshot_load(snapshot, &c, note, sizeof(note), &err))
			die("snapshot", err.msg);
		printf("load %.3f\n", now_ms() - t0);
		if (note[0])
			die("the compact snapshot was not used", note);
		efa_cluster_clear(&c);
		t0 = now_ms();
		if (efa_snapshot_read(snapshot, &c, &err))
			die("snapshot", err.msg);
		printf("json_load %.3f\n", now_ms() - t0);
		efa_cluster_clear(&c);
	}
	if (efa_snapshot_load(snapshot, &c, note, sizeof(note), &err) ||
	    efa_config_parse(conf, strlen(conf), "bench.conf", &cfg, &err))
		die("decide", err.msg);
	if (efa_policy_decide(cfg, &c, NULL, c.generated, &req, &d))
		die("decide", "out of memory");
	printf("verdict %s %s\n", d.verdict == EFA_VERDICT_CHANGE ? "change" :
	       d.verdict == EFA_VERDICT_REJECT ? "reject" : "accept",
	       d.features ? d.features : d.message);
	efa_decision_clear(&d);
	start = now_ms();
	while (done < max && now_ms() - start < seconds * 1e3) {
		t0 = now_ms();
		for (int i = 0; i < DECIDE_BATCH; i++) {
			efa_policy_decide(cfg, &c, NULL, c.generated, &req, &d);
			efa_decision_clear(&d);
		}
		printf("decide %.4f\n", (now_ms() - t0) * 1e3 / DECIDE_BATCH);
		done += DECIDE_BATCH;
	}
	printf("decisions %ld\n", done);
	efa_config_free(cfg);
	efa_cluster_clear(&c);
}

int main(int argc, char **argv)
{
	long rounds = 10, decisions = 100000;
	double seconds = 10;
	slurmrest_nodes *nodes;
	struct efa_cluster c;
	struct efa_error err;
	struct stat st, cst;
	char *body, *compact = NULL;
	double t0, t1, t2;
	size_t len;
	int i;

	for (i = 1; i + 1 < argc - 2; i += 2) {
		if (!strcmp(argv[i], "--rounds"))
			rounds = strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--decisions"))
			decisions = strtol(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--seconds"))
			seconds = strtod(argv[i + 1], NULL);
		else
			break;
	}
	if (i != argc - 2) {
		fprintf(stderr, "usage: snapshot_scale [--rounds N] [--decisions N] [--seconds S] NODES.json SNAPSHOT\n");
		return 2;
	}
	if (efa_read_file(argv[i], 1UL << 31, &body, &len, &err))
		die("input", err.msg);
	if ((api = answer_api(body)) < 0)
		die(argv[i], "no OpenAPI version libslurmrest speaks in meta.plugin");
	printf("api %d\nrss_input_kib %ld\n", api, peak_rss_kib());
	/* One sync as slurm-efa sync does it; the answer is read again for
	 * the rounds. */
	parse(body, len, &nodes, &body);
	build(nodes, &c);
	slurmrest_nodes_free(nodes);
	t0 = now_ms();
	if (efa_snapshot_write(&c, argv[i + 1], &err))
		die("snapshot", err.msg);
	t1 = now_ms();
	if (efa_snapshot_write_compact(&c, argv[i + 1], &err))
		die("compact snapshot", err.msg);
	t2 = now_ms();
	printf("rss_peak_kib %ld\n", peak_rss_kib());
	if (stat(argv[i + 1], &st) || !(compact = efa_snapshot_compact_path(argv[i + 1])) ||
	    stat(compact, &cst))
		die(argv[i + 1], "cannot stat it or its compact form");
	printf("snapshot_bytes %lld\ncompact_bytes %lld\nwrite_json_ms %.3f\nwrite_compact_ms %.3f\nnodes %zu\nzones %zu\n",
	       (long long)st.st_size, (long long)cst.st_size, t1 - t0, t2 - t1, c.nnodes, c.nzones);
	efa_cluster_clear(&c);
	if (efa_read_file(argv[i], 1UL << 31, &body, &len, &err))
		die("input", err.msg);
	sync_rounds(body, len, rounds);
	decide(argv[i + 1], rounds, decisions, seconds);
	unlink(compact);
	free(compact);
	free(body);
	return 0;
}
