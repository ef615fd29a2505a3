/* SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cluster/resume.h"
#include "common/config/efa_conf.h"
#include "common/health/gres.h"
#include "common/health/node_check.h"
#include "common/health/node_drain.h"
#include "gate.h"
#include "options.h"
#include "resume_step.h"

/* The prolog asks slurmctld for the node's GRES (HealthGres=yes): a slow
 * controller delays the job's start by at most this, and judges nothing. */
#define GATE_GRES_TIMEOUT_MS 10000

/*
 * A job script's environment is the one slurmd builds for it (the job's
 * SPANK variables, SLURM_CONF, SLURMD_NODENAME, ...: prep_script_slurmd.c,
 * _build_env), without PATH: scontrol is then looked for beside the
 * slurmstepd running this, the same Slurm's bin directory, then in
 * /usr/bin and /bin.
 */
static void find_slurm_commands(void)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n;
	char *slash;

	if (getenv("PATH"))
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';		/* .../sbin */
	snprintf(path, sizeof(path), "%s/../bin:/usr/bin:/bin", exe);
	setenv("PATH", path, 1);
}

/*
 * The epilog found the node broken: it is to blame for how the job ended.
 * A resumable job with resumes left runs again on other nodes: by Slurm
 * 26.05's expedited requeue, which the epilog's failure triggers
 * (ResumeExpedite=yes), else by a requeue of the completing job from
 * here. Returns true when the job has used its resumes and the epilog
 * must not fail, so that an expedited requeue does not run it again.
 */
static bool blame_node(spank_t sp, const struct efa_config *cfg, const char *job,
		       const char *node, const char *problem)
{
	const struct efa_partition *part = efa_config_partition(cfg, getenv("SLURM_JOB_PARTITION"));
	long limit = efa_resume_limit(efa_options_job_resume(sp), part);
	enum efa_resume_run run = EFA_RESUME_MORE;
	char answer[1024];

	if (limit <= 0 || !job) {
		slurm_error("efa: job %s ended on node %s, which failed slurm-efa's health check: %s. The node is to blame; the job is not one slurm-efa resumes (--efa-resume)",
			    job ? job : "?", node, problem);
		return false;
	}
	/* Unread, the job is requeued: its next run's start counts again. */
	if (efa_resume_ended_run(job, limit, &run, answer, sizeof(answer)))
		slurm_info("efa: job %s cannot be read from slurmctld (%s): requeued without counting its resumes here",
			   job, answer);
	if (run != EFA_RESUME_MORE) {
		slurm_error("efa: job %s ended on node %s, which failed slurm-efa's health check: %s. The node is to blame, but the job has been resumed after node failures %ld times, what --efa-resume allows: it ends",
			    job, node, problem, limit);
		return true;
	}
	if (cfg->resume_expedite == EFA_YES) {
		slurm_error("efa: job %s ended on node %s, which failed slurm-efa's health check: %s. The node is to blame: the job's expedited requeue runs it again at once on other nodes",
			    job, node, problem);
	} else if (!efa_resume_requeue(job, answer, sizeof(answer))) {
		slurm_error("efa: job %s ended on node %s, which failed slurm-efa's health check: %s. The node is to blame: the job is requeued to run again on other nodes (--efa-resume=%ld)",
			    job, node, problem, limit);
	} else {
		slurm_error("efa: job %s ended on node %s, which failed slurm-efa's health check: %s. The node is to blame, but the job is not requeued: %s",
			    job, node, problem, answer);
	}
	return false;
}

int efa_job_gate(spank_t sp, const struct efa_args *args, bool epilog)
{
	const char *when = epilog ? "epilog" : "prolog";
	const char *node = getenv("SLURMD_NODENAME");
	const char *job = getenv("SLURM_JOB_ID");
	struct efa_node_cache cache = { .settle = EFA_NODE_CACHE_SETTLE };
	struct efa_node_check check = { 0 };
	struct efa_config *cfg = NULL;
	char root[PATH_MAX], did[EFA_DRAIN_MESSAGE_MAX], gres[1024];
	const char *judged_gres = NULL;
	struct efa_error err;
	enum efa_mode mode;
	bool out_of_service = false;
	int rc = 0;

	/* Bad input (a broken efa.conf, a name slurmd did not give) is
	 * logged and lets the job start: only the node's hardware fails it. */
	if (!node || !efa_node_name_safe(node)) {
		slurm_error("efa: %s: SLURMD_NODENAME is %s: the node is not checked", when,
			    node ? "not a node name" : "not set");
		return 0;
	}
	mode = efa_options_job_efa(sp);
	if (mode == EFA_MODE_OFF)
		return 0;
	if (efa_args_load_config(args, node, &cfg, &err)) {
		/* Said once per job that asked for EFA, not for every job. */
		if (mode != EFA_MODE_UNSET)
			slurm_error("efa: %s: %s: node %s is not checked", when, err.msg, node);
		return 0;
	}
	/* No --efa: its partition's EFA= decides. */
	if (mode == EFA_MODE_UNSET) {
		const struct efa_partition *part =
			efa_config_partition(cfg, getenv("SLURM_JOB_PARTITION"));

		mode = part ? part->efa : EFA_MODE_UNSET;
	}
	if (mode != EFA_MODE_REQUIRED && mode != EFA_MODE_AUTO)
		goto out;
	if (efa_expand_node_name(args->root, node, root, sizeof(root))) {
		slurm_error("efa: %s: root=%s is too long: node %s is not checked", when,
			    args->root, node);
		goto out;
	}
	find_slurm_commands();
	if (cfg->health_gres == EFA_YES) {
		if (efa_gres_of_node(node, GATE_GRES_TIMEOUT_MS, gres, sizeof(gres), &err))
			slurm_error("efa: %s: node %s: GRES not judged: %s", when, node, err.msg);
		else
			judged_gres = gres;
	}
	cache.dir = cfg->node_cache_dir;
	if (efa_node_check(root, cfg, &cache, getenv("SLURM_JOB_PARTITION"), judged_gres, true, NULL,
			   &check, &err)) {
		slurm_error("efa: %s: %s: node %s is not checked", when, err.msg, node);
		goto out;
	}
	if (!check.problem[0])
		goto out;
	rc = -1;
	if (efa_node_health_act(cfg, node, false, check.problem, false, NULL, did, sizeof(did),
				&err)) {
		slurm_error("efa: %s: %s (drain it by hand)", when, err.msg);
	} else {
		out_of_service = true;
		if (did[0])
			slurm_info("efa: %s: %s", when, did);
	}
	/* An epilog that fails drains the node too: only where this one took
	 * it out of service may it succeed. */
	if (epilog && blame_node(sp, cfg, job, node, check.problem) && out_of_service)
		rc = 0;
	else if (!epilog)
		slurm_error("efa: job %s cannot start on node %s, which failed slurm-efa's health check: %s. Slurm puts the job back in the queue",
			    job ? job : "?", node, check.problem);
out:
	efa_node_check_clear(&check);
	efa_config_free(cfg);
	return rc;
}
