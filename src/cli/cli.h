/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa: shared by the subcommands. */
#ifndef EFA_CLI_H
#define EFA_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/cluster/zones.h"
#include "common/config/efa_conf.h"
#include "rest/slurmrest.h"

#define EXIT_REFUSED 1	/* the request was refused or failed */
#define EXIT_USAGE 2	/* usage or configuration error */

struct cli_common {
	const char *config;	/* --config FILE */
	const char *root;	/* --root DIR, else "/" */
	bool root_given;	/* --root was given */
	int json;		/* --json */
};

/*
 * Parses the options every subcommand shares, removing them from argv.
 * Unknown options are left for the subcommand. Returns 0, or -1 after
 * printing a usage error.
 */
int cli_common_parse(int *argc, char **argv, struct cli_common *common);

/*
 * Every command's options with a value: whether arg is option name
 * ("--interval") given as "--interval=V" or "--interval V" (V is next).
 * Returns 1 with *value and *used (the arguments taken: 1 or 2), 0 when
 * arg is another one, -1 after printing that the value is missing.
 */
int cli_option_value(const char *arg, const char *next, const char *name, const char **value,
		     int *used);

/*
 * --json output: prints doc, indented and in the order it was built, and
 * releases it. Returns -1 for a NULL doc (a failed json_pack), else 0.
 */
int cli_print_json(json_t *doc);

/* How to reach slurmrestd; NULL fields come from efa.conf. */
struct cli_rest {
	const char *url;
	const char *user;
	const char *token_file;
	const char *timeout;	/* milliseconds */
	const char *api_version;	/* pin: "v0.0.45" */
};

/*
 * Takes arg (and next, for "--url VALUE") when it is one of --url, --user,
 * --token-file, --timeout, --api-version; *used says how many arguments it
 * consumed.
 * Returns -1 after printing a usage error.
 */
int cli_rest_option(const char *arg, const char *next, struct cli_rest *opts, int *used);

/* A client as efa.conf and the options say; NULL after printing why. */
slurmrest_t *cli_rest_open(const struct efa_config *cfg, const struct cli_rest *opts);

/* Prints what slurmrestd warned about in its last answer, one line each. */
void cli_rest_warnings(slurmrest_t *rest);

/* Where zones and topo --cluster read the cluster from. */
struct cli_source {
	struct cli_rest rest;
	int snapshot;		/* --snapshot: efa.conf's Snapshot=, not slurmrestd */
};

/* Like cli_rest_option, also taking --snapshot. */
int cli_source_option(const char *arg, const char *next, struct cli_source *src, int *used);

/* One of a command's own options beside the source's: "--name V" or
 * "--name=V" into *value, or a flag taken as given when value is NULL. */
struct cli_own_option {
	const char *name;
	const char **value;
};

/*
 * The arguments of a command that reads the cluster (zones, topo
 * --cluster): the source options and own[] (ended by a NULL name).
 * Returns 0, or EXIT_USAGE after printing what was wrong and, for an
 * argument nobody takes, "slurm-efa CMD: unexpected argument" and usage.
 */
int cli_source_args(int argc, char **argv, struct cli_source *src,
		    const struct cli_own_option *own, const char *cmd, const char *usage);

/*
 * efa.conf (*cfg, freed by the caller whatever the result) and the cluster
 * as the snapshot or slurmrestd, now, sees it. Returns 0, or an exit code
 * after printing why.
 */
int cli_cluster_load(const struct cli_common *common, const struct cli_source *src,
		     struct efa_config **cfg, struct efa_cluster *cluster);

/* Each command's usage, which slurm-efa COMMAND --help prints. */
extern const char cmd_check_usage[];
extern const char cmd_env_usage[];
extern const char cmd_hostfile_usage[];
extern const char cmd_node_features_usage[];
extern const char cmd_repair_usage[];
extern const char cmd_stats_usage[];
extern const char cmd_submit_usage[];
extern const char cmd_sync_usage[];
extern const char cmd_topo_usage[];
extern const char cmd_zones_usage[];

int cmd_check(int argc, char **argv, const struct cli_common *common);
int cmd_env(int argc, char **argv, const struct cli_common *common);
int cmd_hostfile(int argc, char **argv, const struct cli_common *common);
int cmd_node_features(int argc, char **argv, const struct cli_common *common);
int cmd_repair(int argc, char **argv, const struct cli_common *common);
int cmd_sync(int argc, char **argv, const struct cli_common *common);
int cmd_stats(int argc, char **argv, const struct cli_common *common);
int cmd_submit(int argc, char **argv, const struct cli_common *common);
int cmd_zones(int argc, char **argv, const struct cli_common *common);
int cmd_topo(int argc, char **argv, const struct cli_common *common);
int cmd_topo_cluster(int argc, char **argv, const struct cli_common *common);
int cmd_topo_ring(int argc, char **argv, const struct cli_common *common);

#endif
