/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <slurm/spank.h>

#include "common/env/spank_env.h"

#include "options.h"

static struct efa_options opts;
static bool opts_ready;
static bool given[EFA_OPT_COUNT];
/* SPANK's view of the table; registered and looked up by value (the id). */
static struct spank_option options[EFA_OPT_COUNT];

/* The first problem with a value the job sent; the step fails with it. */
static void note_problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note_problem(const char *fmt, ...)
{
	va_list ap;

	if (opts.problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(opts.problem, sizeof(opts.problem), fmt, ap);
	va_end(ap);
}

static void opts_init(void)
{
	if (opts_ready)
		return;
	efa_job_values_init(&opts.v);
	opts_ready = true;
}

static int option_cb(int val, const char *optarg, int remote)
{
	struct efa_error err;

	if (val < 0 || val >= EFA_OPT_COUNT)
		return -1;
	opts_init();
	given[val] = true;
	if (!efa_job_option_parse((enum efa_job_option_id)val, optarg, &opts.v, &err))
		return 0;
	if (!remote) {
		slurm_error("efa: %s", err.msg);
		return -1;
	}
	/* srun and sbatch check values, but a client of Slurm's API can send
	 * any: failing here, before init_post_opt, could drain the node, so
	 * the step fails in task_init instead. */
	slurm_error("efa: %s (in the job's environment)", err.msg);
	note_problem("efa: %s (in the job's environment): this step cannot run with it", err.msg);
	return 0;
}

/* SPANK's option records, from the table: has_arg 2 is an optional value. */
static void options_init(void)
{
	for (int i = 0; i < EFA_OPT_COUNT; i++)
		options[i] = (struct spank_option){
			.name = (char *)efa_job_options[i].name,
			.arginfo = (char *)efa_job_options[i].arginfo,
			.usage = (char *)efa_job_options[i].usage,
			.has_arg = efa_job_options[i].optional_arg ? 2 : 1,
			.val = i,
			.cb = option_cb,
		};
}

void efa_options_from_job_env(spank_t sp)
{
	opts_init();
	for (size_t i = 0; i < EFA_OPT_COUNT; i++) {
		char name[128], value[EFA_CKPT_PATH_MAX + 64];
		spank_err_t rc;

		if (!options[i].name)
			options_init();
		if (given[options[i].val])
			continue;
		if (efa_spank_env_name(options[i].name, name, sizeof(name)))
			continue;
		rc = spank_getenv(sp, name, value, sizeof(value));
		if (rc == ESPANK_ENV_NOEXIST)
			continue;
		if (rc == ESPANK_NOSPACE) {
			note_problem("efa: --%s in the job's environment is longer than %zu bytes",
				     options[i].name, sizeof(value) - 1);
			continue;
		}
		if (rc != ESPANK_SUCCESS) {
			note_problem("efa: cannot read --%s from the job's environment: %s",
				     options[i].name, spank_strerror(rc));
			continue;
		}
		option_cb(options[i].val, strcmp(value, EFA_SPANK_ENV_NO_VALUE) ? value : NULL, 1);
	}
}

int efa_options_register(spank_t sp)
{
	opts_init();
	options_init();
	for (size_t i = 0; i < EFA_OPT_COUNT; i++) {
		spank_err_t rc = spank_option_register(sp, &options[i]);

		if (rc != ESPANK_SUCCESS) {
			slurm_error("efa: cannot register --%s: %s", options[i].name,
				    spank_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* Option id as the job prolog or epilog sees it, parsed into v (which
 * the caller set up with efa_job_values_init); -1 when not given or not
 * a value of it. */
static int job_script_option(spank_t sp, enum efa_job_option_id id, struct efa_job_values *v)
{
	struct efa_error err;
	char *value = NULL;

	if (!options[id].name)
		options_init();
	/* A bare option arrives as an empty value (--efa: required). */
	if (spank_option_getopt(sp, &options[id], &value) != ESPANK_SUCCESS ||
	    efa_job_option_parse(id, value, v, &err))
		return -1;
	return 0;
}

enum efa_mode efa_options_job_efa(spank_t sp)
{
	struct efa_job_values v;

	efa_job_values_init(&v);
	return job_script_option(sp, EFA_OPT_EFA, &v) ? EFA_MODE_UNSET : v.efa;
}

long efa_options_job_resume(spank_t sp)
{
	struct efa_job_values v;

	efa_job_values_init(&v);
	return job_script_option(sp, EFA_OPT_EFA_RESUME, &v) ? EFA_RESUME_UNSET : v.resume;
}

const struct efa_options *efa_options_get(void)
{
	opts_init();
	return &opts;
}
