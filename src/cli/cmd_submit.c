/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa submit: sbatch through slurmrestd. The SPANK options travel in
 * the job's environment exactly as sbatch carries them
 * (SLURM_SPANK__SLURM_SPANK_OPTION_efa_<option>), so the plugin and the
 * job_submit bridge treat both paths the same. pyxis's options travel as
 * the PYXIS_* variables pyxis 0.21 and later read from a job's
 * environment (slurmrestd has no other way to give them: pyxis#115).
 */
#include <ctype.h>
#include <stdbool.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/strutil.h"
#include "common/cluster/job_options.h"
#include "common/cluster/partition_default.h"
#include "common/env/spank_env.h"
#include "cli.h"

#define SCRIPT_MAX (4 * 1024 * 1024)

extern char **environ;

const char cmd_submit_usage[] =
	"usage: slurm-efa submit [--efa[=auto|required|off]] [--efa-bind=none|closest]\n"
	"                        [--efa-rank-order=topology|slurm] [--efa-resume=N]\n"
	"                        [--checkpoint-dir=PATH] [--checkpoint-keep=N]\n"
	"                        [--container-image=IMAGE] [--container-mounts=SRC:DST[,...]]\n"
	"                        [--container-workdir=DIR] [--container-name=NAME]\n"
	"                        [-p PARTITION] [-N NODES] [-n TASKS] [--ntasks-per-node=N]\n"
	"                        [--gpus-per-node=G] [-J NAME] [-t TIME] [-o FILE] [-e FILE]\n"
	"                        [-D DIR] [-C CONSTRAINT] [--exclusive] [--signal=[B:]SIG[@SECONDS]]\n"
	"                        [--field KEY=JSON]\n"
	"                        [--json] [--config FILE] [--url URL] [--user U]\n"
	"                        [--token-file F] [--timeout MS] [--api-version vX.Y.Z]\n"
	"                        script.sh\n";

/* sbatch options that map to one job field. */
static const struct {
	const char *long_name;
	char short_name;
	const char *field;
	enum { STR, INT, MINUTES } type;
} job_options[] = {
	{ "--partition", 'p', "partition", STR },
	{ "--nodes", 'N', "nodes", INT },
	{ "--ntasks", 'n', "tasks", INT },
	{ "--ntasks-per-node", 0, "tasks_per_node", INT },
	{ "--gpus-per-node", 0, "gpus_per_node", STR },
	{ "--job-name", 'J', "name", STR },
	{ "--time", 't', "time_limit", MINUTES },
	{ "--output", 'o', "standard_output", STR },
	{ "--error", 'e', "standard_error", STR },
	{ "--chdir", 'D', "current_working_directory", STR },
	{ "--constraint", 'C', "constraints", STR },
	{ "--signal", 0, "signal", STR },
};


/* pyxis's options (sbatch --container-image ...) and the variables pyxis
 * reads them from. */
static const struct {
	const char *name;	/* without "--" */
	const char *var;
} pyxis_options[] = {
	{ "container-image", "PYXIS_CONTAINER_IMAGE" },
	{ "container-mounts", "PYXIS_CONTAINER_MOUNTS" },
	{ "container-workdir", "PYXIS_CONTAINER_WORKDIR" },
	{ "container-name", "PYXIS_CONTAINER_NAME" },
};

struct submit {
	json_t *fields;
	char **env_extra;	/* NAME=VALUE of SPANK options */
	size_t nextra;
	const char *script_path;
};

static int add_env(struct submit *s, const char *name, const char *value)
{
	char **grown = realloc(s->env_extra, (s->nextra + 2) * sizeof(*grown));

	if (!grown)
		return -1;
	s->env_extra = grown;
	if (asprintf(&grown[s->nextra], "%s=%s", name, value) < 0)
		return -1;
	grown[++s->nextra] = NULL;
	return 0;
}

static int add_spank_env(struct submit *s, const char *option, const char *value)
{
	char name[128];

	return efa_spank_env_name(option, name, sizeof(name)) ? -1 : add_env(s, name, value);
}

/*
 * Whether argv[*i] is --name or --name=VALUE: 1 with *value (the next
 * argument when it is not joined, *i moved past it; without one
 * optional_value), 0 when it is another argument, -1 when a value is
 * missing. cli_option_value, but for an option whose value is optional.
 */
static int option_value(char **argv, int *i, const char *name, const char *optional_value,
			const char **value)
{
	char flag[64];
	int used, rc;

	if (snprintf(flag, sizeof(flag), "--%s", name) >= (int)sizeof(flag))
		return 0;
	if (optional_value && !strcmp(argv[*i], flag)) {
		*value = optional_value;
		return 1;
	}
	rc = cli_option_value(argv[*i], argv[*i + 1], flag, value, &used);
	if (rc > 0)
		*i += used - 1;
	return rc;
}

/* Returns 1 when argv[*i] was one of pyxis's options, 0 when not, -1 on error. */
static int take_pyxis_option(struct submit *s, char **argv, int *i)
{
	for (size_t k = 0; k < sizeof(pyxis_options) / sizeof(pyxis_options[0]); k++) {
		const char *value;
		int rc = option_value(argv, i, pyxis_options[k].name, NULL, &value);

		if (rc < 0)
			return -1;
		if (!rc)
			continue;
		if (!value[0] || strchr(value, '\n'))
			return fprintf(stderr, "slurm-efa submit: --%s: give a value on one line\n",
				       pyxis_options[k].name), -1;
		return add_env(s, pyxis_options[k].var, value) ? -1 : 1;
	}
	return 0;
}

/*
 * Returns 1 when argv[*i] was one of slurm-efa's job options (the table
 * the plugin registers, job_options.h), checked as the plugin will take
 * it and carried in the job's environment; 0 when not, -1 on error.
 */
static int take_spank_option(struct submit *s, char **argv, int *i)
{
	for (int k = 0; k < EFA_OPT_COUNT; k++) {
		const struct efa_job_option *opt = &efa_job_options[k];
		struct efa_job_values v;
		struct efa_error err;
		const char *value;
		int rc = option_value(argv, i, opt->name,
				      opt->optional_arg ? EFA_SPANK_ENV_NO_VALUE : NULL, &value);

		if (rc < 0)
			return -1;
		if (!rc)
			continue;
		efa_job_values_init(&v);
		if (efa_job_option_parse((enum efa_job_option_id)k,
					 strcmp(value, EFA_SPANK_ENV_NO_VALUE) ? value : NULL, &v, &err)) {
			fprintf(stderr, "slurm-efa submit: efa: %s\n", err.msg);
			return -1;
		}
		return add_spank_env(s, opt->name, value) ? -1 : 1;
	}
	return 0;
}

/*
 * sbatch's time formats in minutes, seconds rounded up as Slurm does:
 * M, M:S, H:M:S, D-H, D-H:M, D-H:M:S. -1 when value is none of them.
 */
static long time_minutes(const char *value)
{
	long part[3] = { 0 }, days = -1;
	const char *p = value;
	int n = 0;
	char *end;

	if (strchr(value, '-')) {
		if (!isdigit((unsigned char)*p))
			return -1;
		days = strtol(p, &end, 10);
		if (*end != '-' || days > 100000)
			return -1;
		p = end + 1;
	}
	for (;;) {
		if (n == 3 || !isdigit((unsigned char)*p))
			return -1;
		part[n++] = strtol(p, &end, 10);
		if (part[n - 1] > 10000000)
			return -1;
		if (!*end)
			break;
		if (*end != ':')
			return -1;
		p = end + 1;
	}
	if (days >= 0)
		return days * 1440 + part[0] * 60 + part[1] + (part[2] > 0);
	if (n == 1)
		return part[0];
	if (n == 2)
		return part[0] + (part[1] > 0);
	return part[0] * 60 + part[1] + (part[2] > 0);
}

static int set_field(struct submit *s, size_t k, const char *value)
{
	json_t *v;
	char *end;

	switch (job_options[k].type) {
	case INT: {
		long n = strtol(value, &end, 10);

		if (*end || n <= 0) {
			fprintf(stderr, "slurm-efa submit: %s %s: use a positive number\n",
				job_options[k].long_name, value);
			return -1;
		}
		v = json_integer(n);
		break;
	}
	case MINUTES: {
		long minutes = time_minutes(value);

		if (minutes <= 0) {
			fprintf(stderr, "slurm-efa submit: %s %s: use minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S, e.g. -t 2-00:00:00\n",
				job_options[k].long_name, value);
			return -1;
		}
		v = json_integer(minutes);
		break;
	}
	default:
		v = json_string(value);
	}
	return json_object_set_new(s->fields, job_options[k].field, v);
}

/* Returns 1 when argv[*i] was a job option, 0 when not, -1 on error. */
static int take_job_option(struct submit *s, char **argv, int *i)
{
	const char *arg = argv[*i];

	for (size_t k = 0; k < sizeof(job_options) / sizeof(job_options[0]); k++) {
		size_t len = strlen(job_options[k].long_name);
		const char *value = NULL;

		if (!strncmp(arg, job_options[k].long_name, len) && arg[len] == '=')
			value = arg + len + 1;
		else if ((!strcmp(arg, job_options[k].long_name) ||
			  (job_options[k].short_name && arg[0] == '-' &&
			   arg[1] == job_options[k].short_name && !arg[2])) && argv[*i + 1])
			value = argv[++*i];
		else if (job_options[k].short_name && arg[0] == '-' &&
			 arg[1] == job_options[k].short_name && arg[2])
			value = arg + 2;
		if (!value)
			continue;
		return set_field(s, k, value) ? -1 : 1;
	}
	if (!strcmp(arg, "--exclusive"))
		return json_object_set_new(s->fields, "exclusive", json_string("exclusive")) ? -1 : 1;
	if (!strcmp(arg, "--field") && argv[*i + 1]) {
		const char *kv = argv[++*i], *eq = strchr(kv, '=');
		json_t *v;
		char *key;

		if (!eq || !(v = json_loads(eq + 1, JSON_DECODE_ANY, NULL))) {
			fprintf(stderr, "slurm-efa submit: --field %s: use KEY=JSON, e.g. --field 'comment=\"x\"'\n",
				kv);
			return -1;
		}
		key = strndup(kv, (size_t)(eq - kv));
		if (!key || json_object_set_new(s->fields, key, v)) {
			free(key);
			return -1;
		}
		free(key);
		return 1;
	}
	return 0;
}

/* Whether the command line gives the variable of a NAME=VALUE entry. */
static bool given(const struct submit *s, const char *entry)
{
	size_t len = strcspn(entry, "=");

	for (size_t i = 0; i < s->nextra; i++)
		if (!strncmp(s->env_extra[i], entry, len + 1))
			return true;
	return false;
}

/* The value given to a SPANK option (its name without "--"), or NULL. */
static const char *spank_value(const struct submit *s, const char *option)
{
	char name[128];
	size_t len;

	if (efa_spank_env_name(option, name, sizeof(name)))
		return NULL;
	len = strlen(name);
	for (size_t i = 0; i < s->nextra; i++)
		if (!strncmp(s->env_extra[i], name, len) && s->env_extra[i][len] == '=')
			return s->env_extra[i] + len + 1;
	return NULL;
}

/*
 * The partition's CheckpointSignal= for a job that gives no --signal, as
 * sbatch's cli_filter adds it: a job through slurmrestd does not pass
 * sbatch. A default: when it cannot tell, one line says so and the job
 * goes as given. -1 only when memory ran out.
 */
static int add_checkpoint_signal(struct submit *s, const struct efa_config *cfg, slurmrest_t *rest)
{
	const char *api;
	char option[64];
	struct efa_error err;
	slurmrest_error rerr;
	int rc;

	if (json_object_get(s->fields, "signal"))
		return 0;
	rc = efa_submit_checkpoint_signal(cfg, json_string_value(json_object_get(s->fields, "partition")),
					  spank_value(s, "efa"), option, sizeof(option), &err);
	if (rc < 0)
		fprintf(stderr, "slurm-efa submit: efa: no checkpoint signal set for this job (%s): give --signal yourself if the script saves on one\n",
			err.msg);
	if (rc <= 0)
		return 0;
	/* Slurm 22.05's slurmrestd cannot signal the batch script alone:
	 * which version answers is known once it has answered. */
	api = slurmrest_ping(rest, &rerr) ? NULL : slurmrest_api_version(rest);
	if (api && !strcmp(api, "v0.0.38")) {
		fprintf(stderr, "slurm-efa submit: efa: no checkpoint signal set for this job: slurmrestd %s (Slurm 22.05) cannot signal the batch script alone (%s); give --signal=SIG@SECONDS to signal its steps\n",
			api, option);
		return 0;
	}
	return json_object_set_new(s->fields, "signal", json_string(option));
}

/* The submitting environment, as sbatch exports it, without the token. */
static char **job_environment(const struct submit *s)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	if (!(env = calloc(n + s->nextra + 1, sizeof(*env))))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(environ[i], "SLURM_JWT=", 10) ||
		    !strncmp(environ[i], EFA_SPANK_ENV_PREFIX, strlen(EFA_SPANK_ENV_PREFIX)) ||
		    given(s, environ[i]))
			continue;
		env[k++] = environ[i];
	}
	for (size_t i = 0; i < s->nextra; i++)
		env[k++] = s->env_extra[i];
	return env;
}

int cmd_submit(int argc, char **argv, const struct cli_common *common)
{
	struct cli_rest rest_opts = { 0 };
	struct submit s = { .fields = json_object() };
	struct efa_config *cfg = NULL;
	slurmrest_t *rest = NULL;
	slurmrest_job_desc desc = { 0 };
	slurmrest_error rerr;
	struct efa_error err;
	char **env = NULL, *script = NULL, *user_msg = NULL, cwd[4096];
	size_t len;
	uint32_t job_id;
	int rc = EXIT_USAGE;

	if (!s.fields)
		goto out;
	for (int i = 1; i < argc; i++) {
		int used, taken;

		if (cli_rest_option(argv[i], argv[i + 1], &rest_opts, &used))
			goto out;
		if (used) {
			i += used - 1;
			continue;
		}
		if ((taken = take_spank_option(&s, argv, &i)) < 0 ||
		    (!taken && (taken = take_pyxis_option(&s, argv, &i)) < 0) ||
		    (!taken && (taken = take_job_option(&s, argv, &i)) < 0))
			goto out;
		if (taken)
			continue;
		if (argv[i][0] == '-' || s.script_path) {
			fprintf(stderr, "slurm-efa submit: unexpected argument '%s'\n%s", argv[i], cmd_submit_usage);
			goto out;
		}
		s.script_path = argv[i];
	}
	if (!s.script_path) {
		fprintf(stderr, "slurm-efa submit: no script given\n%s", cmd_submit_usage);
		goto out;
	}
	if (efa_read_file(s.script_path, SCRIPT_MAX, &script, &len, &err)) {
		fprintf(stderr, "slurm-efa submit: %s\n", err.msg);
		goto out;
	}
	if (strncmp(script, "#!", 2)) {
		fprintf(stderr, "slurm-efa submit: %s does not start with #! (sbatch needs an interpreter line)\n",
			s.script_path);
		goto out;
	}
	/* sbatch runs the job where it was submitted unless told otherwise. */
	if (!json_object_get(s.fields, "current_working_directory") && getcwd(cwd, sizeof(cwd)))
		json_object_set_new(s.fields, "current_working_directory", json_string(cwd));
	if (efa_config_find_and_load(common->config, &cfg, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	if (!(rest = cli_rest_open(cfg, &rest_opts)))
		goto out;
	if (add_checkpoint_signal(&s, cfg, rest) || !(env = job_environment(&s)))
		goto out;
	desc.script = script;
	desc.fields = s.fields;
	desc.environment = (const char *const *)env;
	rc = slurmrest_submit(rest, &desc, &job_id, &user_msg, &rerr);
	cli_rest_warnings(rest);
	if (rc) {
		fprintf(stderr, "slurm-efa submit: job refused: %s\n", rerr.message);
		rc = EXIT_REFUSED;
		goto out;
	}
	if (common->json)
		printf("{\"job_id\": %u}\n", job_id);
	else
		printf("Submitted batch job %u\n", job_id);
	if (user_msg && *user_msg)
		fprintf(stderr, "slurm-efa submit: %s\n", user_msg);
	rc = 0;
out:
	free(user_msg);
	free(env);
	efa_strv_free(s.env_extra);
	json_decref(s.fields);
	free(script);
	slurmrest_free(rest);
	efa_config_free(cfg);
	return rc;
}
