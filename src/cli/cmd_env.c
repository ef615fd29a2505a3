/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa env: what a step with --efa gets on this node, and why. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/config/efa_conf.h"
#include "common/env/env.h"
#include "common/env/profile.h"
#include "common/node/image.h"
#include "common/node/node.h"
#include "common/node/stack.h"
#include "cli.h"
#include "image_unpack.h"

#define LIBPATH_MAX 65536

const char cmd_env_usage[] =
	"usage: slurm-efa env [--image FILE.sqsh|DIR] [--config FILE] [--root DIR] [--json]\n";

struct printer {
	int json;
	json_t *vars;
};

/* The calling shell's environment is the job's; in a container, pyxis
 * puts the image's /etc/environment over it. */
static int own_env(const struct cli_image *img, const char *name, char *buf, size_t size)
{
	const char *v = img ? cli_image_getenv(img, name) : NULL;

	if (!v)
		v = getenv(name);
	if (!v)
		return 0;
	return snprintf(buf, size, "%s", v) < (int)size ? 1 : -1;
}

struct applied {
	const struct cli_image *img;
	struct printer *pr;
};

static int get_applied_env(void *ctx, const char *name, char *buf, size_t size)
{
	return own_env(((struct applied *)ctx)->img, name, buf, size);
}

static int print_var(void *ctx, const char *name, const char *value,
		     enum efa_env_decision decision, const char *reason, const char *current)
{
	struct printer *pr = ((struct applied *)ctx)->pr;

	(void)current;
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

static void print_node_text(const struct efa_node *node, const char *image, const char *problem)
{
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
	if (problem[0])
		printf("EFA: not usable%s: %s\n  a step with --efa=required fails here; --efa=auto sets nothing\n",
		       image ? " in this image" : "", problem);
}

/* The image's software in place of the node's, with the node's hardware. */
static int image_view(const struct efa_node *node, const struct cli_image *img,
		      struct efa_node *view, struct efa_error *err)
{
	*view = *node;
	if (efa_image_stack(&img->fs, &node->stack, &view->stack))
		return efa_error_set(err, "out of memory reading the image");
	return 0;
}

int cmd_env(int argc, char **argv, const struct cli_common *common)
{
	struct efa_profiles *profiles = NULL;
	struct efa_env_plan *plan = NULL;
	struct efa_config *cfg = NULL;
	struct efa_node *node = NULL, view = { 0 };
	struct printer pr = { .json = common->json };
	struct cli_image img = { .fs = { .dirfd = -1 } };
	struct applied ap = { .pr = &pr };
	struct efa_sysfs task_root = { .dirfd = -1 };
	const struct efa_sysfs *task_fs;
	const char *image = NULL;
	struct efa_error err;
	json_t *doc = NULL;
	char problem[1024], **warnings = NULL, *ld_path = NULL;
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
	    (image && cli_image_open(image, &img, &err)) ||
	    (image && image_view(node, &img, &view, &err))) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	if (!image)
		view = *node;
	ap.img = image ? &img : NULL;
	if (image) {
		task_fs = &img.fs;
	} else if (!efa_sysfs_open(&task_root, "/")) {
		task_fs = &task_root;
	} else {
		fprintf(stderr, "slurm-efa: cannot open /\n");
		goto out;
	}
	efa_node_efa_problem(&view, problem, sizeof(problem));
	if (!problem[0] &&
	    (efa_profiles_load(cfg->profile_dir, &profiles, &err) ||
	     efa_env_plan_build(&view, profiles, &plan, &err))) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	if (plan) {
		plan->image = image;
		plan->task_fs = task_fs;
		ld_path = malloc(LIBPATH_MAX);
		if (!ld_path) {
			fprintf(stderr, "slurm-efa: out of memory\n");
			goto out;
		}
		if (!own_env(ap.img, "LD_LIBRARY_PATH", ld_path, LIBPATH_MAX))
			ld_path[0] = '\0';
		/* A container's /dev is the node's unless the site restricts
		 * it: the node's devices were checked above. */
		if (efa_env_plan_for_task(plan, &view, task_fs, ld_path,
					  image ? EFA_CHECK_LIBFABRIC : 0, true, problem, sizeof(problem))) {
			fprintf(stderr, "slurm-efa: out of memory\n");
			goto out;
		}
		if (problem[0]) {
			efa_env_plan_free(plan);
			plan = NULL;
		}
	}
	if (pr.json) {
		pr.vars = json_array();
		doc = json_pack("{s:{s:s?, s:s, s:i, s:i, s:i, s:i}, s:s?, s:o, s:b, s:s?, s:s?}",
				"node", "instance_type", view.instance_type,
				"instance_type_source", view.instance_type_configured ? "efa.conf" : "dmi",
				"efa_devices", (int)view.nnics,
				"usable_efa_devices", (int)efa_node_usable_nics(&view),
				"gpus", (int)count_accels(&view, EFA_ACCEL_GPU),
				"neuron_devices", (int)count_accels(&view, EFA_ACCEL_NEURON),
				"image", image,
				"stack", stack_json(&view.stack),
				"usable", !problem[0], "problem", problem[0] ? problem : NULL,
				"profile", plan ? plan->profile : NULL);
		if (!doc || !pr.vars) {
			fprintf(stderr, "slurm-efa: out of memory\n");
			goto out;
		}
	} else {
		print_node_text(&view, image, problem);
		if (plan)
			printf("profile: %s\nenvironment of a step with --efa%s:\n",
			       plan->profile ? plan->profile : "none (no profile matches this instance type)",
			       image ? " in this image" : "");
	}
	if (plan && efa_env_plan_warnings(plan, cfg, &view, &warnings)) {
		fprintf(stderr, "slurm-efa: out of memory\n");
		goto out;
	}
	if (plan && efa_env_apply(plan, NULL, 0, cfg, get_applied_env, print_var, &ap)) {
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
	free(ld_path);
	efa_strv_free(warnings);
	json_decref(pr.vars);
	json_decref(doc);
	efa_env_plan_free(plan);
	efa_profiles_free(profiles);
	if (image)
		efa_stack_clear(&view.stack);
	cli_image_close(&img);
	efa_sysfs_close(&task_root);
	efa_node_free(node);
	efa_config_free(cfg);
	return rc;
}
