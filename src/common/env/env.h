/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The environment a step gets on a node: built once per step from the
 * node, its profile and efa.conf (the plan: plan.c), checked against what
 * the node's aws-ofi-nccl tunes itself (warnings.c), then applied to each
 * task's environment (apply.c), where the user's own values win unless
 * efa.conf forces.
 */
#ifndef EFA_ENV_H
#define EFA_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/config/efa_conf.h"
#include "common/env/profile.h"
#include "common/node/node.h"
#include "common/node/sysfs.h"

#define EFA_ENV_PROFILE_VAR "SLURM_EFA_PROFILE"
#define EFA_ENV_LIBPATH_VAR "LD_LIBRARY_PATH"
#define EFA_ENV_LIBDIRS_VAR "SLURM_EFA_LIBDIRS"
#define EFA_ENV_OWNED_VAR "SLURM_EFA_SET"
#define EFA_ENV_NCCL_NET_VAR "NCCL_NET"
/* For enroot's hook: the node's EFA libraries to mount (efa_image_host_mounts). */
#define EFA_ENV_HOST_MOUNTS_VAR "SLURM_EFA_HOST_MOUNTS"
/*
 * The network aws-ofi-nccl registers: "AWS Libfabric" up to 1.12; from 1.13
 * "Libfabric", renamed "AWS Libfabric" when NCCL_NET asks for that name
 * (src/nccl_ofi_interface_nvidia.cpp, nvidia_plugin_name_fixup): this name
 * works with every version.
 */
#define EFA_ENV_NCCL_NET "AWS Libfabric"

/* Whether an NCCL_NET value names aws-ofi-nccl's network, by either name. */
bool efa_env_nccl_net_is_efa(const char *value);

struct efa_env_entry {
	char *name;
	char *value;		/* NULL when skipped */
	char *reason;		/* where it came from, or why it was skipped */
	bool slurm_var;		/* Slurm's own (CUDA_VISIBLE_DEVICES) or one
				 * slurm-efa always owns: always set, never
				 * recorded or removed */
	bool per_task;		/* differs between a step's tasks (a binding,
				 * RANK, LOCAL_RANK): never given to
				 * efa_env_apply_shared */
};

struct efa_env_plan {
	char *profile;		/* profile name; NULL when none matched */
	struct efa_env_entry *v;
	size_t n;
	char *libdirs;		/* ":"-joined directories to prepend, or NULL */
	/* A container step's: the image (named in reasons) and the task's
	 * file system, where LD_LIBRARY_PATH's directories are looked at
	 * (NULL: "/"). Set by the caller, not owned. */
	const char *image;
	const struct efa_sysfs *task_fs;
};

/*
 * Builds the plan for node from profiles (NULL: no profile variables).
 * Fails only on ENOMEM or an Include cycle.
 */
int efa_env_plan_build(const struct efa_node *node, const struct efa_profiles *profiles,
		       struct efa_env_plan **out, struct efa_error *err);
void efa_env_plan_free(struct efa_env_plan *plan);

/*
 * The checks of one task, where its file system (fs: "/" on the node or
 * inside its container, or an unpacked image) and library path are known:
 * what it lacks goes to problem (efa_task_missing with checks, enum
 * efa_task_checks; "" when nothing), and
 * the step must then fail (required) or set nothing EFA-specific (auto).
 * Otherwise, under --efa=required on NVIDIA GPUs, NCCL_NET is set to
 * aws-ofi-nccl's network in the plan, as a profile variable would be (the
 * job's or the image's own NCCL_NET wins): NCCL falls back to its socket
 * transport without an error when no net plugin loads, and fails at
 * start-up instead when NCCL_NET names one. -1 on ENOMEM.
 */
int efa_env_plan_for_task(struct efa_env_plan *plan, const struct efa_node *node,
			  const struct efa_sysfs *fs, const char *ld_path, unsigned checks,
			  bool required, char *problem, size_t size);

/*
 * Warnings about a plan and efa.conf: a profile line or ForceEnv= that sets
 * a variable aws-ofi-nccl tunes per platform (NCCL_PROTO, NCCL_ALGO,
 * NCCL_BUFFSIZE, NCCL_NVLS*, ...), overriding the plugin for every job,
 * where the node's aws-ofi-nccl is one that tunes that variable (each has
 * the release it came in; an unknown version counts as tuning). *out is a
 * NULL-terminated list (empty when all is well), freed with efa_strv_free.
 * -1 on ENOMEM.
 */
int efa_env_plan_warnings(const struct efa_env_plan *plan, const struct efa_config *cfg,
			  const struct efa_node *node, char ***out);

enum efa_env_decision {
	EFA_ENV_SET,		/* set: nothing was there */
	EFA_ENV_FORCED,		/* set over the user's value (ForceEnv=) */
	EFA_ENV_USER,		/* left alone: the user set, changed or unset it */
	EFA_ENV_SKIPPED,	/* a condition did not hold */
	EFA_ENV_PREPENDED,	/* LD_LIBRARY_PATH with the stack's dirs first */
	EFA_ENV_REMOVED,	/* an earlier step's value this step must not keep */
};

const char *efa_env_decision_name(enum efa_env_decision d);

/* Returns 1 and the value when name is set in the target environment, 0
 * when it is not, -1 when its value is longer than size: then it is the
 * job's, never replaced or rewritten. */
typedef int (*efa_env_get_fn)(void *ctx, const char *name, char *buf, size_t size);
/*
 * Told every decision; sets name=value where the decision is to set.
 * current is what name holds as apply read it just before, NULL when it
 * is not set or apply did not read it: a put may leave a value that is
 * there already without looking it up again (slurmstepd's environment is
 * a list searched from its start).
 */
typedef int (*efa_env_put_fn)(void *ctx, const char *name, const char *value,
			      enum efa_env_decision decision, const char *reason,
			      const char *current);

/*
 * Applies the step's plan and one task's own entries (bindings, launch
 * variables) to that task's environment: each variable unless the user set
 * it (or ForceEnv= lists it), the library directories prepended (unless a
 * directory of the task's LD_LIBRARY_PATH holds an aws-ofi-nccl or a
 * libfabric of its own: read from the task's file system), and
 * SLURM_EFA_PROFILE.
 *
 * A batch script's environment reaches the steps it starts, on other nodes
 * and with other bindings: what slurm-efa set is recorded in SLURM_EFA_SET
 * with a digest of each value, so a later step replaces those values (and
 * removes the ones it does not want) instead of mistaking them for the
 * user's, while a value the job changed since is the job's (EFA_ENV_USER),
 * and one it unset stays unset (EFA_ENV_USER with value NULL).
 *
 * put is told every decision (value NULL for EFA_ENV_REMOVED); apply stops
 * at the first put failure and returns it (-1 without memory). plan may be NULL (a step
 * without EFA): then only the task's entries, and no SLURM_EFA_PROFILE.
 */
int efa_env_apply(const struct efa_env_plan *plan, const struct efa_env_entry *task,
		  size_t ntask, const struct efa_config *cfg,
		  efa_env_get_fn get, efa_env_put_fn put, void *ctx);

/*
 * The part every task of a step shares (the plan, and entries the same for
 * all of them), applied once to the step's environment before its tasks
 * start, with the same decisions efa_env_apply makes: each task's
 * efa_env_apply then finds those made and ends with the same environment
 * as without it, and efa_env_apply_task takes them as made. It keeps
 * SLURM_EFA_SET's records of the variables it does not decide, for the
 * tasks to decide, and removes nothing (the tasks do).
 */
int efa_env_apply_shared(const struct efa_env_plan *plan, const struct efa_env_entry *entries,
			 size_t n, const struct efa_config *cfg,
			 efa_env_get_fn get, efa_env_put_fn put, void *ctx);

/*
 * One task's part in an environment that efa_env_apply_shared settled for
 * the same plan and the same shared entries (a task's environment is its
 * step's, by the fork): task holds all the task's entries, as
 * efa_env_apply would take them; only the per_task ones, and those
 * ForceEnv= lists, are decided, and what an earlier step set that neither
 * part decides is removed. The others were decided by the shared part and
 * are not read again, nor the library path. The task ends with the
 * environment efa_env_apply would give it, SLURM_EFA_SET's records in
 * another order. A step's shared part runs once, each task's in its own
 * process: this is the part every task pays.
 */
int efa_env_apply_task(const struct efa_env_plan *plan, const struct efa_env_entry *task,
		       size_t ntask, const struct efa_config *cfg,
		       efa_env_get_fn get, efa_env_put_fn put, void *ctx);

#endif
