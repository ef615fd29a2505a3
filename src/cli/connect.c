/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa's use of libslurmrest: connecting as efa.conf says, and where
 * a command reads the cluster from (the snapshot, or slurmrestd through
 * sources/assembly.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "common/base/strutil.h"
#include "common/cluster/snapshot.h"
#include "sources/assembly.h"
#include "cli.h"

int cli_rest_option(const char *arg, const char *next, struct cli_rest *opts, int *used)
{
	static const struct {
		const char *name;
		size_t offset;
	} options[] = {
		{ "--url", offsetof(struct cli_rest, url) },
		{ "--user", offsetof(struct cli_rest, user) },
		{ "--token-file", offsetof(struct cli_rest, token_file) },
		{ "--timeout", offsetof(struct cli_rest, timeout) },
		{ "--api-version", offsetof(struct cli_rest, api_version) },
	};

	*used = 0;
	for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		const char **field = (const char **)((char *)opts + options[i].offset);
		int rc = cli_option_value(arg, next, options[i].name, field, used);

		if (rc)
			return rc < 0 ? -1 : 0;
	}
	return 0;
}

slurmrest_t *cli_rest_open(const struct efa_config *cfg, const struct cli_rest *o)
{
	slurmrest_options opts = {
		.url = o->url ? o->url : cfg->rest_url,
		.user = o->user ? o->user : cfg->rest_user,
		.token_file = o->token_file ? o->token_file : cfg->rest_token_file,
		.ca_file = cfg->rest_ca_file,
		.api_version = o->api_version ? o->api_version : cfg->rest_api_version,
		.token_from_env = 1,
		.allow_plain_http = cfg->allow_plain_http == EFA_YES,
	};
	slurmrest_error err;
	slurmrest_t *rest;

	if (o->timeout) {
		char *end;

		opts.timeout_ms = strtol(o->timeout, &end, 10);
		if (*end || opts.timeout_ms <= 0) {
			fprintf(stderr, "slurm-efa: --timeout %s: use milliseconds, e.g. --timeout 5000\n",
				o->timeout);
			return NULL;
		}
		opts.connect_timeout_ms = opts.timeout_ms < 2000 ? opts.timeout_ms : 2000;
	}
	if (!opts.url) {
		fprintf(stderr, "slurm-efa: no slurmrestd to ask: set RestURL= in efa.conf or pass --url\n");
		return NULL;
	}
	/* A local socket authenticates by uid: a stray SLURM_JWT does not apply. */
	if (!strncmp(opts.url, "unix:", 5) && !o->token_file && !cfg->rest_token_file)
		opts.token_from_env = 0;
	rest = slurmrest_new(&opts, &err);
	if (!rest)
		fprintf(stderr, "slurm-efa: %s\n", err.message);
	return rest;
}

void cli_rest_warnings(slurmrest_t *rest)
{
	for (const char *const *w = slurmrest_warnings(rest); *w; w++)
		fprintf(stderr, "slurm-efa: slurmrestd warns: %s\n", *w);
}

int cli_source_option(const char *arg, const char *next, struct cli_source *src, int *used)
{
	if (strcmp(arg, "--snapshot"))
		return cli_rest_option(arg, next, &src->rest, used);
	src->snapshot = 1;
	*used = 1;
	return 0;
}

/* Takes argv[i] (and its value) when it is one of own: 1 with *used, 0
 * when it is none, -1 after printing that its value is missing. */
static int own_option(char **argv, int i, const struct cli_own_option *own, int *used)
{
	for (; own->name; own++) {
		const char *value;
		int rc;

		if (!own->value) {
			if (strcmp(argv[i], own->name))
				continue;
			*used = 1;
			return 1;
		}
		rc = cli_option_value(argv[i], argv[i + 1], own->name, &value, used);
		if (rc > 0)
			*own->value = value;
		if (rc)
			return rc;
	}
	return 0;
}

int cli_source_args(int argc, char **argv, struct cli_source *src,
		    const struct cli_own_option *own, const char *cmd, const char *usage)
{
	int i = 1;

	while (i < argc) {
		int used = 0, rc;

		if (cli_source_option(argv[i], argv[i + 1], src, &used))
			return EXIT_USAGE;
		if (!used) {
			rc = own_option(argv, i, own, &used);
			if (rc < 0)
				return EXIT_USAGE;
			if (!rc) {
				fprintf(stderr, "slurm-efa %s: unexpected argument '%s'\n%s", cmd, argv[i], usage);
				return EXIT_USAGE;
			}
		}
		i += used;
	}
	return 0;
}

int cli_cluster_load(const struct cli_common *common, const struct cli_source *src,
		     struct efa_config **cfg, struct efa_cluster *cluster)
{
	struct assembly_error rerr;
	struct assembly a = { 0 };
	struct efa_error err;
	int not_modified, rc;

	if (efa_config_find_and_load(common->config, cfg, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (src->snapshot) {
		char note[EFA_ERROR_MAX + 128], *compact;
		struct stat st;

		rc = efa_snapshot_load((*cfg)->snapshot, cluster, note, sizeof(note), &err);
		/* A compact form that is there but not used is worth a word;
		 * none at all (a snapshot written by hand) is not. */
		compact = note[0] ? efa_snapshot_compact_path((*cfg)->snapshot) : NULL;
		if (compact && !stat(compact, &st))
			fprintf(stderr, "slurm-efa: %s\n", note);
		free(compact);
		if (!rc)
			return 0;
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		return EXIT_REFUSED;
	}
	if (!(a.rest = cli_rest_open(*cfg, &src->rest)))
		return EXIT_USAGE;
	a.cfg = *cfg;
	a.url = src->rest.url ? src->rest.url : (*cfg)->rest_url;
	rc = assembly_read(&a, false, cluster, &not_modified, NULL, &rerr);
	if (rc)
		fprintf(stderr, "slurm-efa: %s\n", rerr.message);
	assembly_clear(&a);
	slurmrest_free(a.rest);
	return rc ? EXIT_REFUSED : 0;
}
