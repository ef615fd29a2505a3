/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "common/base/error.h"

#include "common/cluster/job_options.h"

const struct efa_job_option efa_job_options[EFA_OPT_COUNT] = {
	[EFA_OPT_EFA] = { "efa", "[auto|required|off]",
		"Use EFA for this job: 'required' (the default for a bare --efa) fails "
		"steps on nodes without usable EFA, 'auto' uses EFA where present, "
		"'off' opts out.", true },
	[EFA_OPT_EFA_BIND] = { "efa-bind", "none|closest",
		"Per-task accelerator and EFA NIC binding: 'closest' gives each task "
		"its GPUs and the NICs nearest to them, 'none' (default) leaves NIC "
		"choice to NCCL.", false },
	[EFA_OPT_EFA_RANK_ORDER] = { "efa-rank-order", "topology|slurm",
		"How RANK, NODE_RANK and MASTER_ADDR number the step's nodes: "
		"'topology' puts nodes under one network switch next to each other "
		"(NCCL's rings follow rank order), 'slurm' keeps Slurm's order.", false },
	[EFA_OPT_CHECKPOINT_DIR] = { "checkpoint-dir", "PATH",
		"Directory for this job's checkpoints (an absolute path, under the "
		"partition's checkpoint root when it has one), created as you on every "
		"node and given to every task as CHECKPOINT_DIR.", false },
	[EFA_OPT_CHECKPOINT_KEEP] = { "checkpoint-keep", "N",
		"When the job ends, keep only the N newest complete checkpoints (checkpoint-*, "
		"step_*, global_step*, iter_*, ...) in its checkpoint directory; 0 keeps all.", false },
	[EFA_OPT_EFA_RESUME] = { "efa-resume", "N",
		"When a node of this batch job fails, run the job again on healthy "
		"nodes, up to N times (same job id); each run gets CHECKPOINT_RESUME_DIR, "
		"the newest complete checkpoint. 0: never.", false },
	[EFA_OPT_EFA_HANG] = { "efa-hang", "on|off",
		"'off': the partition's hang detection leaves this job alone (a phase "
		"with no EFA traffic, output or checkpoint writes for longer than its "
		"HangAfter=); 'on' (default) keeps it. Or touch $SLURM_EFA_HEARTBEAT.", false },
};

void efa_job_values_init(struct efa_job_values *v)
{
	memset(v, 0, sizeof(*v));
	v->checkpoint_keep = EFA_CKPT_KEEP_UNSET;
	v->resume = EFA_RESUME_UNSET;
}

int efa_job_option_find(const char *name)
{
	for (int i = 0; i < EFA_OPT_COUNT; i++)
		if (!strcmp(efa_job_options[i].name, name))
			return i;
	return -1;
}

static int hang_parse(const char *value, bool *off, struct efa_error *err)
{
	if (value && !strcmp(value, "on")) {
		*off = false;
		return 0;
	}
	if (value && !strcmp(value, "off")) {
		*off = true;
		return 0;
	}
	return efa_error_set(err, "invalid --efa-hang=%s: use on or off", value ? value : "");
}

int efa_job_option_parse(enum efa_job_option_id id, const char *value, struct efa_job_values *v,
			 struct efa_error *err)
{
	switch (id) {
	case EFA_OPT_EFA:
		return efa_mode_parse(value, &v->efa, err);
	case EFA_OPT_EFA_BIND:
		return efa_bind_parse(value, &v->bind, err);
	case EFA_OPT_EFA_RANK_ORDER:
		return efa_rank_order_parse(value, &v->rank_order, err);
	case EFA_OPT_CHECKPOINT_DIR:
		return efa_checkpoint_dir_parse(value, v->checkpoint_dir, sizeof(v->checkpoint_dir), err);
	case EFA_OPT_CHECKPOINT_KEEP:
		return efa_checkpoint_keep_parse(value, &v->checkpoint_keep, err);
	case EFA_OPT_EFA_RESUME:
		return efa_resume_parse(value, &v->resume, err);
	case EFA_OPT_EFA_HANG:
		return hang_parse(value, &v->hang_off, err);
	case EFA_OPT_COUNT:
		break;
	}
	return efa_error_set(err, "no such option");
}
