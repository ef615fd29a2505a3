/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa env: what a step with --efa gets on this node, and why. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/config/efa_conf.h"
#include "common/env/env.h"
#include "common/node/node.h"
#include "common/env/profile.h"
#include "common/base/strutil.h"

struct printer {
	int json;
	json_t *vars;
};

static int get_own_env(void *ctx, const char *name, char *buf, size_t size)
{
	const char *v = getenv(name);

	(void)ctx;
	if (!v)
		return 0;
	snprintf(buf, size, "%s", v);
	return 1;
}

static int print_var(void *ctx, const char *name, const char *value,
		     enum efa_env_decision decision, const char *reason)
{
	struct printer *pr = ctx;

	if (pr->json) {
		json_t *v = json_pack("{s:s, s:s?, s:s, s:s}", "name", name,
				      "value", value,
				      "decision", efa_env_decision_name(decision),
				      "reason", reason);

		return v ? json_array_append_new(pr->vars, v) : -1;
	}
	if (!value || decision == EFA_ENV_SKIPPED)
		printf("  %-10s %s\n", efa_env_decision_name(decision), name);
	else
		printf("  %-10s %s=%s\n", efa_env_decision_name(decision), name, value);
	printf("  %-10s %s\n", "", reason);
	return 0;
}

static size_t count_accels(const struct efa_node *node, enum efa_accel_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < node->naccels; i++)
		n += node->accels[i].kind == kind && node->accels[i].present;
	return n;
}

static json_t *stack_json(const struct efa_stack *s)
{
	json_t *dirs = json_array();

	for (char **d = s->libdirs; d && *d; d++)
		json_array_append_new(dirs, json_string(*d));
	return json_pack("{s:s?, s:s?, s:s?, s:s?, s:s?, s:o}", "installer", s->installer,
			 "libfabric", s->libfabric, "ofi_nccl", s->ofi_nccl,
			 "rdma_core", s->rdma_core, "efa_driver", s->efa_driver,
			 "library_dirs", dirs);
}

static void print_node_text(const struct efa_node *node, const char *problem)
{
	const struct efa_stack *s = &node->stack;

	printf("node: %s (%s), %zu EFA device%s (%zu usable), %zu GPU, %zu Neuron\n",
	       node->instance_type ? node->instance_type : "unknown instance type",
	       node->instance_type_configured ? "InstanceType= in efa.conf" : "DMI",
	       node->nnics, node->nnics == 1 ? "" : "s", efa_node_usable_nics(node),
	       count_accels(node, EFA_ACCEL_GPU), count_accels(node, EFA_ACCEL_NEURON));
	printf("stack: installer %s, libfabric %s, aws-ofi-nccl %s, rdma-core %s\n",
	       s->installer ? s->installer : "unknown", s->libfabric ? s->libfabric : "unknown",
	       s->ofi_nccl ? s->ofi_nccl : "unknown", s->rdma_core ? s->rdma_core : "unknown");
	if (problem[0])
		printf("EFA: not usable: %s\n  a step with --efa=required fails here; --efa=auto sets nothing\n",
		       problem);
}

int cmd_env(int argc, char **argv, const struct cli_common *common)
{
	struct efa_profiles *profiles = NULL;
	struct efa_env_plan *plan = NULL;
	struct efa_config *cfg = NULL;
	struct efa_node *node = NULL;
	struct printer pr = { .json = common->json };
	struct efa_error err;
	json_t *doc = NULL;
	char problem[512], **warnings = NULL;
	int rc = EXIT_USAGE;

	if (argc > 1) {
		fprintf(stderr, "slurm-efa env: unexpected argument '%s'\nusage: slurm-efa env [--config FILE] [--root DIR] [--json]\n",
			argv[1]);
		return EXIT_USAGE;
	}
	if (efa_config_find_and_load(common->config, &cfg, &err) ||
	    efa_node_discover(common->root, cfg->instance_type, &node, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	efa_node_efa_problem(node, problem, sizeof(problem));
	if (!problem[0] &&
	    (efa_profiles_load(cfg->profile_dir, &profiles, &err) ||
	     efa_env_plan_build(node, profiles, &plan, &err))) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	if (pr.json) {
		pr.vars = json_array();
		doc = json_pack("{s:{s:s?, s:s, s:i, s:i, s:i, s:i}, s:o, s:b, s:s?, s:s?}",
				"node", "instance_type", node->instance_type,
				"instance_type_source", node->instance_type_configured ? "efa.conf" : "dmi",
				"efa_devices", (int)node->nnics,
				"usable_efa_devices", (int)efa_node_usable_nics(node),
				"gpus", (int)count_accels(node, EFA_ACCEL_GPU),
				"neuron_devices", (int)count_accels(node, EFA_ACCEL_NEURON),
				"stack", stack_json(&node->stack),
				"usable", !problem[0], "problem", problem[0] ? problem : NULL,
				"profile", plan ? plan->profile : NULL);
		if (!doc || !pr.vars) {
			fprintf(stderr, "slurm-efa: out of memory\n");
			goto out;
		}
	} else {
		print_node_text(node, problem);
		if (plan)
			printf("profile: %s\nenvironment of a step with --efa:\n",
			       plan->profile ? plan->profile : "none (no profile matches this instance type)");
	}
	if (plan && efa_env_plan_warnings(plan, cfg, node, &warnings)) {
		fprintf(stderr, "slurm-efa: out of memory\n");
		goto out;
	}
	if (plan && efa_env_apply(plan, NULL, 0, cfg, get_own_env, print_var, &pr)) {
		fprintf(stderr, "slurm-efa: out of memory\n");
		goto out;
	}
	if (pr.json) {
		json_t *list = json_array();

		for (char **w = warnings; list && w && *w; w++)
			json_array_append_new(list, json_string(*w));
		json_object_set(doc, "env", pr.vars);
		json_object_set_new(doc, "warnings", list ? list : json_array());
		cli_print_json(doc);
		doc = NULL;
	} else {
		for (char **w = warnings; w && *w; w++)
			printf("warning: %s\n", *w);
	}
	rc = problem[0] ? EXIT_REFUSED : 0;
out:
	efa_strv_free(warnings);
	json_decref(pr.vars);
	json_decref(doc);
	efa_env_plan_free(plan);
	efa_profiles_free(profiles);
	efa_node_free(node);
	efa_config_free(cfg);
	return rc;
}
