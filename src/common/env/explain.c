/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/env/explain.h"
#include "common/node/image.h"
#include "common/node/stack.h"

int efa_env_expected_nics(const struct efa_node *node, const struct efa_profiles *profiles,
			  int *wait)
{
	const struct efa_profile *p;

	*wait = 0;
	if (!profiles)
		return 0;
	p = efa_profiles_match(profiles, node->instance_type, efa_node_accel_kinds(node));
	return efa_profile_expected_nics(p, node->instance_type, wait);
}

void efa_env_view_clear(struct efa_env_view *view)
{
	if (view->image_stack)
		efa_stack_clear(&view->node.stack);
	memset(view, 0, sizeof(*view));
}

int efa_env_view_open(struct efa_env_view *view, const struct efa_node *node,
		      const struct efa_sysfs *image, struct efa_error *err)
{
	view->node = *node;
	view->image_stack = image != NULL;
	if (!image)
		return 0;
	memset(&view->node.stack, 0, sizeof(view->node.stack));
	if (efa_image_stack(image, &node->stack, &view->node.stack))
		return efa_error_set(err, "out of memory reading the image");
	return 0;
}

int efa_env_settle_task(const struct efa_env_task *task, struct efa_env_plan **plan,
			char *problem, size_t size, struct efa_error *err)
{
	const struct efa_node *view = &task->view->node;

	problem[0] = '\0';
	if (task->image) {
		struct efa_env_plan *image_plan = NULL;

		if (efa_env_plan_build(view, task->profiles, &image_plan, err))
			return -1;
		efa_env_plan_free(*plan);
		*plan = image_plan;
		image_plan->image = task->image;
		image_plan->task_fs = task->fs;
	}
	if (!*plan)
		return 0;
	if (efa_env_plan_for_task(*plan, view, task->fs, task->ld_path, task->checks,
				  task->required, problem, size))
		return efa_error_set(err, "out of memory");
	if (problem[0]) {
		efa_env_plan_free(*plan);
		*plan = NULL;
	}
	return 0;
}

/* efa_env_apply's one context: the question's environment to read, the
 * report's rows to fill. */
struct collect {
	const struct efa_env_question *q;
	struct efa_env_report *r;
};

static int read_question_env(void *ctx, const char *name, char *buf, size_t size)
{
	const struct efa_env_question *q = ((struct collect *)ctx)->q;

	return q->get(q->ctx, name, buf, size);
}

static int keep_row(void *ctx, const char *name, const char *value,
		    enum efa_env_decision decision, const char *reason, const char *current)
{
	struct efa_env_report *r = ((struct collect *)ctx)->r;
	struct efa_env_row *grown, *row;

	(void)current;
	grown = realloc(r->rows, (r->nrows + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	r->rows = grown;
	row = &grown[r->nrows];
	*row = (struct efa_env_row){ .decision = decision };
	row->name = strdup(name);
	row->value = value ? strdup(value) : NULL;
	row->reason = reason ? strdup(reason) : NULL;
	r->nrows++;
	if (!row->name || (value && !row->value) || (reason && !row->reason))
		return -1;
	return 0;
}

int efa_env_explain(const struct efa_env_question *q, struct efa_env_report *r,
		    struct efa_error *err)
{
	struct efa_env_task task = {
		.view = &r->view, .image = q->image, .fs = q->fs,
		.checks = q->checks, .required = q->required,
	};
	struct collect collect = { .q = q, .r = r };
	char *ld_path = NULL;
	int rc = -1, wait;

	memset(r, 0, sizeof(*r));
	if (efa_env_view_open(&r->view, q->node, q->image ? q->fs : NULL, err))
		return -1;
	efa_node_efa_problem(q->node, r->problem, sizeof(r->problem));
	if (r->problem[0])
		return 0;
	if (efa_profiles_load(q->cfg->profile_dir, &r->profiles, err))
		return -1;
	task.profiles = r->profiles;
	/* Without the memory to count: no verdict, as in a step. */
	if (efa_node_missing_nics(q->node, q->root, efa_env_expected_nics(q->node, r->profiles, &wait),
				  r->missing, sizeof(r->missing)))
		r->missing[0] = '\0';
	/* In an image, part 2 makes the plan for the image's software alone. */
	if (!q->image && efa_env_plan_build(q->node, r->profiles, &r->plan, err))
		return -1;
	ld_path = malloc(EFA_ENV_LIBPATH_MAX);
	if (!ld_path)
		return efa_error_set(err, "out of memory");
	if (!q->get(q->ctx, EFA_ENV_LIBPATH_VAR, ld_path, EFA_ENV_LIBPATH_MAX))
		ld_path[0] = '\0';
	task.ld_path = ld_path;
	if (efa_env_settle_task(&task, &r->plan, r->problem, sizeof(r->problem), err))
		goto out;
	if (r->plan &&
	    (efa_env_plan_warnings(r->plan, q->cfg, &r->view.node, &r->warnings) ||
	     efa_env_apply(r->plan, NULL, 0, q->cfg, read_question_env, keep_row, &collect))) {
		efa_error_set(err, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(ld_path);
	return rc;
}

void efa_env_report_clear(struct efa_env_report *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].name);
		free(r->rows[i].value);
		free(r->rows[i].reason);
	}
	free(r->rows);
	efa_strv_free(r->warnings);
	efa_env_plan_free(r->plan);
	efa_profiles_free(r->profiles);
	efa_env_view_clear(&r->view);
	memset(r, 0, sizeof(*r));
}
