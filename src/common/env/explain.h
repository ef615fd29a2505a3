/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Why a step gets the environment it gets on one node, worked out once for
 * the plugin and `slurm-efa env` alike:
 *
 *  1. the node: EFA usable on its hardware (efa_node_efa_problem), and the
 *     plan from its profile (efa_env_plan_build);
 *  2. a task: in a container, the plan made again for the image's EFA
 *     software on the node's hardware; then what the task's file system
 *     and library path lack (efa_env_settle_task), which drops the plan;
 *  3. each variable, as efa_env_apply decides it against the task's
 *     environment.
 *
 * The plugin takes part 1 once per step (in slurmstepd, before any task)
 * and part 2 in each task, then applies the plan into the task itself;
 * efa_env_explain takes all three for one task and keeps what it found in
 * a report, for `slurm-efa env` to print. Nothing here prints.
 */
#ifndef EFA_ENV_EXPLAIN_H
#define EFA_ENV_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/config/efa_conf.h"
#include "common/env/env.h"
#include "common/env/profile.h"
#include "common/node/node.h"
#include "common/node/sysfs.h"

#define EFA_ENV_PROBLEM_MAX 1024
/* The longest LD_LIBRARY_PATH a task's checks read whole (a longer one is
 * the job's, never rewritten: efa_env_get_fn). */
#define EFA_ENV_LIBPATH_MAX 65536

/*
 * How many EFA devices the node's profile expects (EFADevices=), 0 when
 * none says, and in *wait how long they may take to come up (seconds,
 * EFADevicesWait=). A node with fewer (efa_node_missing_nics) needs repair:
 * --efa=required fails there, auto runs on the devices it has.
 */
int efa_env_expected_nics(const struct efa_node *node, const struct efa_profiles *profiles,
			  int *wait);

/* The node's hardware with the EFA software a task sees: a container
 * image's own, or the node's. */
struct efa_env_view {
	struct efa_node node;	/* a shallow copy of the node but for its stack */
	bool image_stack;	/* node.stack is the image's, cleared with the view */
};

/*
 * The view of a task in a container (image: its "/", from inside it or an
 * unpacked image) or, with image NULL, on the node. -1 on ENOMEM (err);
 * the view is to be cleared either way.
 */
int efa_env_view_open(struct efa_env_view *view, const struct efa_node *node,
		      const struct efa_sysfs *image, struct efa_error *err);
void efa_env_view_clear(struct efa_env_view *view);

/* One task, as part 2 sees it. */
struct efa_env_task {
	const struct efa_env_view *view;	/* efa_env_view_open */
	const struct efa_profiles *profiles;	/* for an image's plan; NULL: none */
	const char *image;			/* its name in reasons; NULL: no container */
	const struct efa_sysfs *fs;		/* the task's "/", the image's with image */
	const char *ld_path;			/* the task's LD_LIBRARY_PATH, "" when unset */
	unsigned checks;			/* enum efa_task_checks */
	bool required;				/* --efa=required */
};

/*
 * Part 2. With task->image, *plan is replaced by one made for the view
 * (the image's software on the node's hardware). Then the task's checks:
 * when it lacks what EFA needs, *plan is freed and NULL, and problem says
 * what ("" when nothing); without an image, a NULL *plan stays NULL. -1
 * on ENOMEM or a profile's Include cycle (err).
 */
int efa_env_settle_task(const struct efa_env_task *task, struct efa_env_plan **plan,
			char *problem, size_t size, struct efa_error *err);

/* One variable as efa_env_apply decided it. */
struct efa_env_row {
	char *name;
	char *value;		/* NULL: not set (skipped, removed, or the user's unset) */
	enum efa_env_decision decision;
	char *reason;
};

/* What a task would get and why (efa_env_explain); cleared with
 * efa_env_report_clear. */
struct efa_env_report {
	struct efa_env_view view;	/* the hardware and software judged */
	char problem[EFA_ENV_PROBLEM_MAX];	/* why EFA is not usable; "" when it is */
	/* the EFA devices its profile expects that the node lacks
	 * (efa_env_expected_nics); "" when none */
	char missing[EFA_ENV_PROBLEM_MAX / 2];
	struct efa_env_plan *plan;	/* NULL when problem says why not */
	struct efa_profiles *profiles;	/* loaded from ProfileDir= when EFA is usable */
	char **warnings;		/* efa_env_plan_warnings; NULL-terminated */
	struct efa_env_row *rows;	/* every decision, in efa_env_apply's order */
	size_t nrows;
};

/* One task of a step with --efa, for efa_env_explain. */
struct efa_env_question {
	const struct efa_node *node;
	const char *root;			/* the node's ("/" on a real node) */
	const struct efa_config *cfg;		/* ProfileDir=, ForceEnv= */
	const char *image;			/* NULL: on the node */
	const struct efa_sysfs *fs;		/* the task's "/" (the image's with image) */
	unsigned checks;			/* enum efa_task_checks */
	bool required;
	efa_env_get_fn get;			/* the task's environment before slurm-efa */
	void *ctx;
};

/*
 * Parts 1 to 3 for one task. 0 with the report filled (problem "" or not),
 * -1 when the profiles cannot be read or on ENOMEM (err). The report is to
 * be cleared either way.
 */
int efa_env_explain(const struct efa_env_question *q, struct efa_env_report *report,
		    struct efa_error *err);
void efa_env_report_clear(struct efa_env_report *report);

#endif
