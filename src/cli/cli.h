/* slurm-efa: shared by the subcommands. */
#ifndef EFA_CLI_H
#define EFA_CLI_H

#define EXIT_REFUSED 1	/* the request was refused or failed */
#define EXIT_USAGE 2	/* usage or configuration error */

struct cli_common {
	const char *config;	/* --config FILE */
	const char *root;	/* --root DIR */
	int json;		/* --json */
};

/*
 * Parses the options every subcommand shares, removing them from argv.
 * Unknown options are left for the subcommand. Returns 0, or -1 after
 * printing a usage error.
 */
int cli_common_parse(int *argc, char **argv, struct cli_common *common);

int cmd_env(int argc, char **argv, const struct cli_common *common);
int cmd_topo(int argc, char **argv, const struct cli_common *common);

#endif
