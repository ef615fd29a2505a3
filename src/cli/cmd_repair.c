/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa repair --status: the nodes slurm-efa drained and where each
 * stands on the repair ladder (common/health/repair.h), judged from
 * Slurm's node state as slurm-efa sync judges it. The ladder itself runs
 * in sync (RepairAction=).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "repair_round.h"

const char cmd_repair_usage[] =
	"usage: slurm-efa repair --status [--json] [--config FILE] [--url URL] [--user USER]\n"
	"                        [--token-file FILE] [--timeout MS] [--api-version vX]\n";

static const char *action_name(enum efa_repair_action a)
{
	switch (a) {
	case EFA_REPAIR_REBOOT: return "reboot";
	case EFA_REPAIR_REPLACE: return "replace";
	case EFA_REPAIR_REBOOT_REPLACE: return "reboot,replace";
	default: return "none";
	}
}

static int print_json(const struct efa_config *cfg, const struct repair_view *v)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < v->nodes->count; i++) {
		const struct efa_repair_verdict *r = &v->verdict[i];
		const struct efa_repair_node *n = &v->in[i];

		if (r->stage == EFA_REPAIR_NOT_OURS)
			continue;
		json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:s, s:s}",
			"node", n->name, "stage", efa_repair_stage_name(r->stage),
			"repair_action", action_name(efa_repair_action_for(cfg, n->partitions)),
			"since", (json_int_t)n->reason_time, "up_since", (json_int_t)n->started,
			"reason", n->reason, "fault", r->fault ? r->fault : "", "why", r->why));
	}
	return cli_print_json(list ? json_pack("{s:o}", "nodes", list) : NULL);
}

static void print_table(const struct efa_config *cfg, const struct repair_view *v)
{
	size_t shown = 0;

	for (size_t i = 0; i < v->nodes->count; i++) {
		const struct efa_repair_verdict *r = &v->verdict[i];
		const struct efa_repair_node *n = &v->in[i];
		char since[32];

		if (r->stage == EFA_REPAIR_NOT_OURS)
			continue;
		if (!shown++)
			printf("%-16s %-12s %-15s %-19s %s\n", "NODE", "STAGE", "REPAIR_ACTION", "SINCE",
			       "REASON");
		repair_time_text(n->reason_time, "-", since, sizeof(since));
		printf("%-16s %-12s %-15s %-19s %s%s%s\n", n->name, efa_repair_stage_name(r->stage),
		       action_name(efa_repair_action_for(cfg, n->partitions)), since, n->reason,
		       r->why[0] ? " -- " : "", r->why);
	}
	if (!shown)
		printf("no node is out of service for slurm-efa\n");
}

int cmd_repair(int argc, char **argv, const struct cli_common *common)
{
	struct cli_rest rest_opts = { 0 };
	struct repair_view view = { 0 };
	struct efa_config *cfg = NULL;
	slurmrest_t *rest = NULL;
	slurmrest_error rerr;
	struct efa_error err;
	int status = 0, used, rc = EXIT_USAGE;

	for (int i = 1; i < argc; i++) {
		if (cli_rest_option(argv[i], i + 1 < argc ? argv[i + 1] : NULL, &rest_opts, &used))
			return EXIT_USAGE;
		if (used) {
			i += used - 1;
		} else if (!strcmp(argv[i], "--status")) {
			status = 1;
		} else {
			fprintf(stderr, "slurm-efa repair: unexpected argument '%s'\n%s", argv[i],
				cmd_repair_usage);
			return EXIT_USAGE;
		}
	}
	if (!status) {
		fprintf(stderr, "slurm-efa repair: say --status (the ladder itself runs in slurm-efa sync, with RepairAction= in efa.conf)\n%s",
			cmd_repair_usage);
		return EXIT_USAGE;
	}
	if (efa_config_find_and_load(common->config, &cfg, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (!(rest = cli_rest_open(cfg, &rest_opts)))
		goto out;
	rc = EXIT_REFUSED;
	if (repair_view_read(rest, cfg, 0, &view, &rerr)) {
		fprintf(stderr, "slurm-efa repair: cannot read the nodes: %s\n", rerr.message);
		goto out;
	}
	if (common->json) {
		if (print_json(cfg, &view))
			goto out;
	} else {
		print_table(cfg, &view);
	}
	rc = 0;
out:
	repair_view_clear(&view);
	slurmrest_free(rest);
	efa_config_free(cfg);
	return rc;
}
