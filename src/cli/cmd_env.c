/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa env: what a step with --efa gets on this node, and why. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config/efa_conf.h"
#include "common/env/env.h"
#include "common/env/explain.h"
#include "common/node/image.h"
#include "common/node/node.h"
#include "common/node/stack.h"
#include "cli.h"
#include "image_unpack.h"

const char cmd_env_usage[] =
	"usage: slurm-efa env [--image FILE.sqsh|DIR] [--config FILE] [--root DIR] [--json]\n";

/* The calling shell's environment is the job's; in a container, pyxis
 * puts the image's /etc/environment over it. */
static int job_env(void *ctx, const char *name, char *buf, size_t size)
{
	const struct cli_image *img = ctx;
	const char *v = img ? cli_image_getenv(img, name) : NULL;

	if (!v)
		v = getenv(name);
	if (!v)
		return 0;
	return snprintf(buf, size, "%s", v) < (int)size ? 1 : -1;
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

static json_t *rows_json(const struct efa_env_report *r)
{
	json_t *vars = json_array();

	for (size_t i = 0; vars && i < r->nrows; i++) {
		const struct efa_env_row *row = &r->rows[i];
		json_t *v = json_pack("{s:s, s:s?, s:s, s:s}", "name", row->name, "value", row->value,
				      "decision", efa_env_decision_name(row->decision),
				      "reason", row->reason);

		if (!v || json_array_append_new(vars, v)) {
			json_decref(vars);
			return NULL;
		}
	}
	return vars;
}

static int print_json(const struct efa_env_report *r, const char *image)
{
	const struct efa_node *view = &r->view.node;
	json_t *warnings = json_array(), *doc;

	for (char **w = r->warnings; warnings && w && *w; w++)
		json_array_append_new(warnings, json_string(*w));
	doc = json_pack("{s:{s:s?, s:s, s:i, s:i, s:i, s:i}, s:s?, s:o, s:b, s:s?, s:s?, s:s?, s:o, s:o}",
			"node", "instance_type", view->instance_type,
			"instance_type_source", view->instance_type_configured ? "efa.conf" : "dmi",
			"efa_devices", (int)view->nnics,
			"usable_efa_devices", (int)efa_node_usable_nics(view),
			"gpus", (int)count_accels(view, EFA_ACCEL_GPU),
			"neuron_devices", (int)count_accels(view, EFA_ACCEL_NEURON),
			"image", image,
			"stack", stack_json(&view->stack),
			"usable", !r->problem[0], "problem", r->problem[0] ? r->problem : NULL,
			"needs_repair", r->missing[0] ? r->missing : NULL,
			"profile", r->plan ? r->plan->profile : NULL,
			"env", rows_json(r), "warnings", warnings);
	if (!doc)
		return -1;
	cli_print_json(doc);
	return 0;
}

static void print_text(const struct efa_env_report *r, const char *image)
{
	const struct efa_node *node = &r->view.node;
	const struct efa_stack *s = &node->stack;

	printf("node: %s (%s), %zu EFA device%s (%zu usable), %zu GPU, %zu Neuron\n",
	       node->instance_type ? node->instance_type : "unknown instance type",
	       node->instance_type_configured ? "InstanceType= in efa.conf" : "DMI",
	       node->nnics, node->nnics == 1 ? "" : "s", efa_node_usable_nics(node),
	       count_accels(node, EFA_ACCEL_GPU), count_accels(node, EFA_ACCEL_NEURON));
	if (image)
		printf("image: %s: its own EFA software, this node's hardware\n", image);
	printf("stack: installer %s, libfabric %s, aws-ofi-nccl %s, rdma-core %s\n",
	       s->installer ? s->installer : "unknown", s->libfabric ? s->libfabric : "unknown",
	       s->ofi_nccl ? s->ofi_nccl : "unknown", s->rdma_core ? s->rdma_core : "unknown");
	if (r->problem[0])
		printf("EFA: not usable%s: %s\n  a step with --efa=required fails here; --efa=auto sets nothing\n",
		       image ? " in this image" : "", r->problem);
	if (r->missing[0])
		printf("EFA: the node has %s: it needs repair\n  a step with --efa=required fails here; --efa=auto runs on the devices it has\n",
		       r->missing);
	if (!r->plan)
		return;
	printf("profile: %s\nenvironment of a step with --efa%s:\n",
	       r->plan->profile ? r->plan->profile : "none (no profile matches this instance type)",
	       image ? " in this image" : "");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct efa_env_row *row = &r->rows[i];
		const char *decision = efa_env_decision_name(row->decision);

		if (!row->value || row->decision == EFA_ENV_SKIPPED)
			printf("  %-10s %s\n", decision, row->name);
		else
			printf("  %-10s %s=%s\n", decision, row->name, row->value);
		printf("  %-10s %s\n", "", row->reason);
	}
	for (char **w = r->warnings; w && *w; w++)
		printf("warning: %s\n", *w);
}

int cmd_env(int argc, char **argv, const struct cli_common *common)
{
	struct efa_env_report report = { 0 };
	struct efa_config *cfg = NULL;
	struct efa_node *node = NULL;
	struct cli_image img = { .fs = { .dirfd = -1 } };
	struct efa_sysfs task_root = { .dirfd = -1 };
	const char *image = NULL;
	struct efa_error err;
	int rc = EXIT_USAGE;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--image") && i + 1 < argc && !image) {
			image = argv[++i];
		} else if (!strncmp(argv[i], "--image=", 8) && argv[i][8] && !image) {
			image = argv[i] + 8;
		} else {
			fprintf(stderr, "slurm-efa env: unexpected argument '%s'\n%s", argv[i], cmd_env_usage);
			return EXIT_USAGE;
		}
	}
	if (efa_config_find_and_load(common->config, &cfg, &err) ||
	    efa_node_discover(common->root, cfg->instance_type, &node, &err) ||
	    (image && cli_image_open(image, &img, &err))) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	if (!image && efa_sysfs_open(&task_root, "/")) {
		fprintf(stderr, "slurm-efa: cannot open /\n");
		goto out;
	}
	{
		/* A container's /dev is the node's unless the site restricts
		 * it: the node's devices are what is checked. */
		const struct efa_env_question q = {
			.node = node, .root = common->root, .cfg = cfg, .image = image,
			.fs = image ? &img.fs : &task_root,
			.checks = image ? EFA_CHECK_LIBFABRIC : 0, .required = true,
			.get = job_env, .ctx = image ? &img : NULL,
		};

		if (efa_env_explain(&q, &report, &err)) {
			fprintf(stderr, "slurm-efa: %s\n", err.msg);
			goto out;
		}
	}
	if (common->json && print_json(&report, image)) {
		fprintf(stderr, "slurm-efa: out of memory\n");
		goto out;
	}
	if (!common->json)
		print_text(&report, image);
	rc = report.problem[0] || report.missing[0] ? EXIT_REFUSED : 0;
out:
	efa_env_report_clear(&report);
	cli_image_close(&img);
	efa_sysfs_close(&task_root);
	efa_node_free(node);
	efa_config_free(cfg);
	return rc;
}
