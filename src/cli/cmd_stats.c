/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa stats JOBID: what a job did over EFA, from the summary its
 * --efa steps left in its AdminComment (JobRecord=yes, job_record.h):
 * slurmctld's record while it knows the job, slurmdbd's (slurmrestd's
 * /slurmdb/ tree) once it does not.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/usage/job_record.h"
#include "cli.h"

const char cmd_stats_usage[] =
	"usage: slurm-efa stats JOBID [--accounting] [--json] [--config FILE] [--url URL]\n"
	"                       [--user USER] [--token-file FILE] [--timeout MS] [--api-version vX]\n";

static int parse(int argc, char **argv, uint32_t *job, bool *accounting, struct cli_rest *rest)
{
	const char *id = NULL;
	unsigned long v;
	char *end;
	int used;

	for (int i = 1; i < argc; i++) {
		if (cli_rest_option(argv[i], i + 1 < argc ? argv[i + 1] : NULL, rest, &used))
			return -1;
		if (used) {
			i += used - 1;
			continue;
		}
		if (!strcmp(argv[i], "--accounting")) {
			*accounting = true;
			continue;
		}
		if (argv[i][0] == '-' || id) {
			fprintf(stderr, "slurm-efa stats: unexpected argument '%s'\n%s", argv[i], cmd_stats_usage);
			return -1;
		}
		id = argv[i];
	}
	if (!id) {
		fprintf(stderr, "slurm-efa stats: which job?\n%s", cmd_stats_usage);
		return -1;
	}
	v = strtoul(id, &end, 10);
	if (*end || !*id || id[0] == '-' || !v || v > UINT32_MAX) {
		fprintf(stderr, "slurm-efa stats: '%s' is not a job id\n%s", id, cmd_stats_usage);
		return -1;
	}
	*job = (uint32_t)v;
	return 0;
}

/* The job as slurmctld has it, else (or with accounting) as slurmdbd
 * does; *from names which. */
static int load_job(slurmrest_t *rest, uint32_t id, bool accounting, slurmrest_job **job,
		    const char **from)
{
	slurmrest_error err;

	*from = "slurmctld";
	if (!accounting) {
		if (!slurmrest_get_job(rest, id, job, &err))
			return 0;
		if (err.code != SLURMREST_E_SLURM || err.slurm_errno != SLURMREST_ERRNO_INVALID_JOB_ID) {
			fprintf(stderr, "slurm-efa: job %" PRIu32 ": %s\n", id, err.message);
			return -1;
		}
	}
	*from = "slurmdbd";
	if (!slurmrest_get_db_job(rest, id, job, &err))
		return 0;
	if (err.code == SLURMREST_E_HTTP && err.http_status == 404)
		fprintf(stderr, "slurm-efa: job %" PRIu32 ": %sthis slurmrestd serves no /slurmdb/ to ask Slurm's accounting (start it with openapi/slurmdbd, or openapi/dbv0.0.38 before 24.05)\n",
			id, accounting ? "" : "slurmctld no longer knows it, and ");
	else
		fprintf(stderr, "slurm-efa: job %" PRIu32 ": %s\n", id, err.message);
	return -1;
}

static int print_json(const slurmrest_job *job, const char *from)
{
	char *text = efa_record_json(job->admin_comment);
	json_t *efa = text ? json_loads(text, 0, NULL) : json_null();

	free(text);
	return cli_print_json(json_pack("{s:I, s:s, s:s, s:s, s:o}", "job_id", (json_int_t)job->job_id,
					"state", job->state, "nodes", job->nodes, "from", from, "efa",
					efa ? efa : json_null()));
}

static void print_table(const slurmrest_job *job, const char *from,
			const struct efa_record_step *steps, size_t n, unsigned long dropped)
{
	printf("job %" PRIu32 " (%s, %s on %s), from %s: %zu step%s with EFA figures\n",
	       job->job_id, job->name, job->state, job->nodes[0] ? job->nodes : "no nodes", from, n,
	       n == 1 ? "" : "s");
	if (dropped)
		printf("(%lu older steps dropped from the record)\n", dropped);
	printf("%-6s %-20s %-9s %8s %15s %15s %15s %9s %9s %9s %9s %-8s %s\n", "STEP", "NODES",
	       "REPORTED", "SECONDS", "BYTES", "TX_BYTES", "RX_BYTES", "RETRANS", "TIMEOUTS",
	       "UNRESP", "IMPAIRED", "FALLBACK", "SHARED");
	for (size_t i = 0; i < n; i++) {
		const struct efa_record_step *s = &steps[i];
		char reported[32];

		snprintf(reported, sizeof(reported), "%" PRIu32 "/%" PRIu32, s->reported, s->node_count);
		printf("%-6" PRIu32 " %-20s %-9s %8ld %15" PRIu64 " %15" PRIu64 " %15" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %-8s %s\n",
		       s->step_id, s->nodes, reported, s->seconds, s->bytes, s->tx_bytes, s->rx_bytes,
		       s->retransmitted_packets, s->retransmit_timeouts, s->unresponsive_remotes,
		       s->impaired_connections, s->fallback ? "yes" : "no", s->shared ? "yes" : "no");
	}
	for (size_t i = 0; i < n; i++)
		if (steps[i].fallback)
			printf("step %" PRIu32 " did not use EFA: it ran %ld s on %" PRIu32 " nodes and its first node moved %s over EFA\n",
			       steps[i].step_id, steps[i].seconds, steps[i].node_count,
			       steps[i].bytes ? "next to nothing" : "nothing");
}

/* The hangs (HangAfter=) and sick links (SickLinks=yes) found in the job,
 * after its steps. */
static int print_events(const slurmrest_job *job, struct efa_error *err)
{
	struct efa_record_hang *hangs;
	struct efa_record_sick *sick;
	size_t n;

	if (efa_record_sick_links(job->admin_comment, &sick, &n, err))
		return -1;
	for (size_t i = 0; i < n; i++)
		printf("run %" PRIu32 ", step %" PRIu32 ": sick link on %s: %.3g retransmits per packet sent, its peers %.3g; %s\n",
		       sick[i].run, sick[i].step, sick[i].node, sick[i].rate, sick[i].peers,
		       sick[i].drained ? "drained" : "not drained");
	free(sick);
	if (efa_record_hangs(job->admin_comment, &hangs, &n, err))
		return -1;
	for (size_t i = 0; i < n; i++)
		printf("run %" PRIu32 ", step %" PRIu32 " hung on %s: nothing moved for %ld s; %s\n",
		       hangs[i].run, hangs[i].step, hangs[i].nodes, hangs[i].quiet_seconds,
		       hangs[i].action == EFA_HANG_REQUEUE ? "requeued" :
		       hangs[i].action == EFA_HANG_CANCEL ? "cancelled" : "the job was told");
	free(hangs);
	return 0;
}

int cmd_stats(int argc, char **argv, const struct cli_common *common)
{
	struct efa_record_step *steps = NULL;
	struct cli_rest opts = { 0 };
	struct efa_config *cfg = NULL;
	slurmrest_job *job = NULL;
	slurmrest_t *rest = NULL;
	unsigned long dropped;
	struct efa_error err;
	bool accounting = false;
	const char *from;
	uint32_t id;
	size_t n;
	int rc = EXIT_USAGE;

	if (parse(argc, argv, &id, &accounting, &opts))
		return EXIT_USAGE;
	if (efa_config_find_and_load(common->config, &cfg, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (!(rest = cli_rest_open(cfg, &opts)))
		goto out;
	rc = EXIT_REFUSED;
	if (load_job(rest, id, accounting, &job, &from))
		goto out;
	cli_rest_warnings(rest);
	if (common->json) {
		rc = print_json(job, from) ? EXIT_REFUSED : 0;
		goto out;
	}
	if (efa_record_steps(job->admin_comment, &steps, &n, &dropped, &err)) {
		fprintf(stderr, "slurm-efa: job %" PRIu32 ": %s\n", id, err.msg);
		goto out;
	}
	if (!n)
		printf("job %" PRIu32 " (%s, %s), from %s: no EFA figures in its record (JobRecord=yes in efa.conf records each --efa step on several nodes)\n",
		       id, job->name, job->state, from);
	else
		print_table(job, from, steps, n, dropped);
	if (print_events(job, &err)) {
		fprintf(stderr, "slurm-efa: job %" PRIu32 ": %s\n", id, err.msg);
		goto out;
	}
	rc = 0;
out:
	free(steps);
	slurmrest_job_free(job);
	slurmrest_free(rest);
	efa_config_free(cfg);
	return rc;
}
