/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa: the command line for admins, users and automation. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv, const struct cli_common *common);
	const char *usage;
	const char *summary;
} commands[] = {
	{ "env", cmd_env, cmd_env_usage, "the EFA/NCCL environment a job step gets on this node, and why" },
	{ "topo", cmd_topo, cmd_topo_usage, "accelerators x EFA NICs of this node; --cluster: the network tree" },
	{ "zones", cmd_zones, cmd_zones_usage, "Availability Zones of the cluster's nodes, from slurmrestd or the snapshot" },
	{ "sync", cmd_sync, cmd_sync_usage, "keep the zone snapshot (and topology.conf) current (daemon)" },
	{ "submit", cmd_submit, cmd_submit_usage, "sbatch through slurmrestd, with the slurm-efa options" },
	{ "check", cmd_check, cmd_check_usage, "whether a checkpoint directory is allowed, or which one a job gets" },
	{ "hostfile", cmd_hostfile, cmd_hostfile_usage, "a job's hosts in network-topology order, for mpirun --hostfile" },
	{ "repair", cmd_repair, cmd_repair_usage, "where the nodes slurm-efa drained stand on the repair ladder (--status)" },
	{ "stats", cmd_stats, cmd_stats_usage, "what a job did over EFA, from its record in slurmctld or slurmdbd" },
	{ "node-features", cmd_node_features, cmd_node_features_usage,
	  "the features this node should register with: zone, efa, instance type" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: slurm-efa [--config FILE] [--root DIR] [--json] COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n  --config FILE  efa.conf (default: $SLURM_EFA_CONF, else %s/slurm/efa.conf)\n"
		"  --root DIR     read /sys, /proc, /dev and /opt under DIR (default /)\n"
		"  --json         print data as JSON\n\n"
		"slurm-efa COMMAND --help (or slurm-efa help COMMAND) shows a command's options.\n",
		SYSCONFDIR);
}

static int is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

/* A command asks for help wherever its arguments hold -h or --help, as
 * getopt-based tools (Slurm's own) answer it. */
static int wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (is_help(argv[i]))
			return 1;
	return 0;
}

int cli_print_json(json_t *doc)
{
	if (!doc)
		return -1;
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
	return 0;
}

int cli_option_value(const char *arg, const char *next, const char *name, const char **value,
		     int *used)
{
	size_t len = strlen(name);

	*used = 0;
	if (strncmp(arg, name, len) || (arg[len] && arg[len] != '='))
		return 0;
	if (arg[len] == '=') {
		*value = arg + len + 1;
		*used = 1;
		return 1;
	}
	if (!next) {
		fprintf(stderr, "slurm-efa: %s needs a value\n", arg);
		return -1;
	}
	*value = next;
	*used = 2;
	return 1;
}

int cli_common_parse(int *argc, char **argv, struct cli_common *common)
{
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		const char **target = NULL;
		const char *arg = argv[i];

		if (!strcmp(arg, "--json")) {
			common->json = 1;
			continue;
		}
		if (!strcmp(arg, "--config") || !strncmp(arg, "--config=", 9))
			target = &common->config;
		else if (!strcmp(arg, "--root") || !strncmp(arg, "--root=", 7))
			target = &common->root;
		if (!target) {
			argv[out++] = argv[i];
			continue;
		}
		if (strchr(arg, '=')) {
			*target = strchr(arg, '=') + 1;
		} else if (i + 1 < *argc) {
			*target = argv[++i];
		} else {
			fprintf(stderr, "slurm-efa: %s needs a value\n", arg);
			return -1;
		}
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}

int main(int argc, char **argv)
{
	struct cli_common common = { .root = NULL };
	const char *name;

	/* The common options may come before the command too (slurm-efa
	 * --config F env), as the usage line's list of them suggests. */
	if (cli_common_parse(&argc, argv, &common))
		return EXIT_USAGE;
	common.root_given = common.root != NULL;
	if (!common.root)
		common.root = "/";
	if (argc < 2 || is_help(argv[1]) || (argc == 2 && !strcmp(argv[1], "help"))) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("slurm-efa %s (built for Slurm %s)\n", PACKAGE_VERSION, SLURM_EFA_BUILT_FOR_SLURM);
		return 0;
	}
	/* slurm-efa help COMMAND is slurm-efa COMMAND --help. */
	name = strcmp(argv[1], "help") ? argv[1] : argv[2];

	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name))
			continue;
		if (name != argv[1] || wants_help(argc - 1, argv + 1)) {
			printf("%s\nslurm-efa(1) describes each option.\n", commands[i].usage);
			return 0;
		}
		return commands[i].run(argc - 1, argv + 1, &common);
	}
	fprintf(stderr, "slurm-efa: unknown command '%s'\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
