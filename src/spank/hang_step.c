/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

/* Slurm 26.05 names a job by slurm_step_id_t; its wrappers take the job id
 * every release before it takes. */
#define SLURM_BACKWARD_COMPAT
#include <slurm/slurm.h>

#include "common/cluster/resume.h"
#include "common/health/hang.h"
#include "common/health/hang_probe.h"
#include "common/usage/job_record.h"
#include "hang_step.h"
#include "link_step.h"
#include "step_counters.h"
#include "step_record.h"

/* The file systems' deadline for one look at the job's files. */
#define PROBE_TIMEOUT_MS 5000

/* What the thread knows of the job, read once as it starts. */
struct watched {
	struct efa_step *step;
	uint32_t run;			/* the job's restart count */
	char output[EFA_STEP_PATH_MAX], error[EFA_STEP_PATH_MAX];
	const char *outputs[3];
	bool hang, links;		/* what is watched: the start reading has its counters */
	struct efa_hang_probe probe;
	struct efa_hang_watch watch;
	bool hang_done;			/* the hang part's watch ended */
	struct efa_link_watch link;
	bool marked;			/* this node's quiet bit is set */
	bool counted;			/* the hang is in the node's figures */
	bool told_unknown;
};

static int64_t monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* The heartbeat's directory: world-writable and sticky, as /tmp, so a
 * job's user can create the file its variable names; the thread trusts a
 * file only when it is the user's (the probe reads its time). */
static int heartbeat_path(struct efa_step *step, char *buf, size_t size)
{
	char dir[EFA_STEP_PATH_MAX];
	int n;

	if (!step->cfg->node_cache_dir)
		return -1;
	n = snprintf(dir, sizeof(dir), "%s/heartbeat", step->cfg->node_cache_dir);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -1;
	/* Made once (the umask may take bits mkdir's mode asks for). */
	if (!mkdir(dir, 01777) ? chmod(dir, 01777) : errno != EEXIST)
		return -1;
	n = snprintf(buf, size, "%s/%" PRIu32 ".%" PRIu32 ".%s", dir, step->counters.job_id,
		     step->counters.step_id, step->node_name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Whether the step is watched for hangs on this node (and says why not
 * when its partition asks for it). */
static bool hang_watched(const struct efa_step *step, const struct efa_options *opts)
{
	const struct efa_partition *part = step->part;

	if (!part || part->hang_after <= 0)
		return false;
	if (opts->v.hang_off) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 ": --efa-hang=off: not watched for hangs",
			   step->node_name, step->counters.job_id, step->counters.step_id);
		return false;
	}
	return true;
}

bool efa_hang_step_begin(struct efa_step *step, spank_t sp, const struct efa_options *opts)
{
	struct efa_step_hang *h = &step->hang;
	const struct efa_partition *part = step->part;

	memset(h, 0, sizeof(*h));
	if (!step->counters.counted || !step->counters.judge)
		return false;
	h->watch_hang = hang_watched(step, opts);
	h->watch_links = step->cfg->sick_links == EFA_YES;
	if (!h->watch_hang && !h->watch_links)
		return false;
	h->uid = step->counters.uid;
	h->interval = step->cfg->hang_check_interval;
	if (h->watch_hang) {
		h->after = part->hang_after;
		h->action = part->hang_action;
		h->resume_limit = efa_resume_limit(opts->v.resume, part);
		if (heartbeat_path(step, h->heartbeat, sizeof(h->heartbeat)) ||
		    spank_setenv(sp, EFA_HEARTBEAT_VAR, h->heartbeat, 1) != ESPANK_SUCCESS)
			h->heartbeat[0] = '\0';
	}
	return true;
}

void efa_hang_step_end(struct efa_step *step)
{
	struct efa_step_hang *h = &step->hang;

	if (h->heartbeat[0])
		unlink(h->heartbeat);
	h->heartbeat[0] = '\0';
}

/* Before the tasks run: the thread reads it once they do. */
void efa_hang_note_checkpoint(struct efa_step *step)
{
	struct efa_step_hang *h = &step->hang;

	if (h->watch_hang)
		snprintf(h->resume, sizeof(h->resume), "%s", step->ckpt.resume);
}

/* The job's output files and restart count, as slurmctld has them. */
static int read_job(struct watched *w)
{
	const struct efa_step_counters *sc = &w->step->counters;
	job_info_msg_t *msg;
	slurm_job_info_t *job;
	size_t n = 0;

	if (efa_job_load(sc->job_id, &msg))
		return -1;
	job = &msg->job_array[0];
	w->run = job->restart_cnt;
	slurm_get_job_stdout(w->output, sizeof(w->output), job);
	slurm_get_job_stderr(w->error, sizeof(w->error), job);
	if (w->output[0] == '/')
		w->outputs[n++] = w->output;
	if (w->error[0] == '/' && strcmp(w->error, w->output))
		w->outputs[n++] = w->error;
	w->outputs[n] = NULL;
	slurm_free_job_info_msg(msg);
	return 0;
}

enum mark_result {
	MARK_FAILED,		/* the record could not be read or written */
	MARK_DONE,		/* the bit is as asked */
	MARK_COMPLETE,		/* ...and this node's write completed the step's set */
	MARK_HANG_KNOWN,	/* another node found the hang */
};

/*
 * Sets or clears this node's quiet bit. Another node's write made from an
 * older reading drops it; the next interval sets it again (a hang is then
 * found one interval later, never wrongly).
 */
static enum mark_result mark(struct watched *w, bool quiet)
{
	const struct efa_step_counters *sc = &w->step->counters;
	enum mark_result res = MARK_FAILED;
	char *comment = NULL, *next = NULL;
	struct efa_error err;

	if (efa_job_comment(sc->job_id, &comment)) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 ": hang watch: the job cannot be read from slurmctld: %s",
			   w->step->node_name, sc->job_id, sc->step_id, slurm_strerror(errno));
		return MARK_FAILED;
	}
	if (efa_record_hung(comment, w->run, sc->step_id, EFA_HANG_ACTION_UNSET)) {
		res = MARK_HANG_KNOWN;
		goto out;
	}
	if (efa_record_mark_quiet(comment, w->run, sc->step_id, sc->nnodes, sc->nodeid, quiet, &next,
				  &err)) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 ": hang watch: %s",
			   w->step->node_name, sc->job_id, sc->step_id, err.msg);
		goto out;
	}
	if (next && efa_job_set_comment(sc->job_id, next) != SLURM_SUCCESS) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 ": hang watch: the job's AdminComment cannot be set: %s",
			   w->step->node_name, sc->job_id, sc->step_id, slurm_strerror(errno));
		goto out;
	}
	res = quiet && next && efa_record_all_quiet(next, w->run, sc->step_id, sc->nnodes) ?
		      MARK_COMPLETE : MARK_DONE;
out:
	free(next);
	free(comment);
	return res;
}

/* Whether the job may be requeued for its hang, and if not why (resume.h:
 * a hang uses one of its resumes, as a node failure does). */
static bool may_requeue(const struct watched *w, char *why, size_t size)
{
	const struct efa_step_hang *h = &w->step->hang;
	struct efa_record_requeue *rq = NULL;
	unsigned long failures;
	struct efa_error err;
	char *comment;
	size_t n = 0;

	if (h->resume_limit <= 0) {
		snprintf(why, size, "not requeued: the job does not resume (sbatch --efa-resume=N, or the partition's Resume=)");
		return false;
	}
	if (efa_job_comment(w->step->counters.job_id, &comment) ||
	    efa_record_requeues(comment, &rq, &n, &err)) {
		free(comment);
		snprintf(why, size, "not requeued: its resumes cannot be counted (the job cannot be read from slurmctld)");
		return false;
	}
	free(comment);
	failures = efa_resume_node_failures(w->run, rq, n);
	free(rq);
	if (efa_resume_run(h->resume_limit, failures) != EFA_RESUME_MORE) {
		snprintf(why, size, "not requeued: its %ld resumes are used up", h->resume_limit);
		return false;
	}
	snprintf(why, size, "requeued: resume %lu of %ld, from its newest complete checkpoint (CHECKPOINT_RESUME_DIR)",
		 failures + 1, h->resume_limit);
	return true;
}

static int add_hang(const char *comment, const void *what, char **next, struct efa_error *err)
{
	return efa_record_add_hang(comment, what, next, err);
}

/* The hang is found: told, recorded, acted on; once for the step. */
static void act(struct watched *w, int64_t quiet_for)
{
	struct efa_step *step = w->step;
	const struct efa_step_counters *sc = &step->counters;
	struct efa_step_hang *h = &step->hang;
	struct efa_record_hang rec = { .run = w->run, .step = sc->step_id, .action = EFA_HANG_NOTIFY,
				       .quiet_seconds = (long)quiet_for };
	char what[512], checkpoint[EFA_CKPT_PATH_MAX + 64], label[64];
	int rc = SLURM_SUCCESS;

	snprintf(rec.nodes, sizeof(rec.nodes), "%.*s", (int)sizeof(rec.nodes) - 1, sc->nodes);
	if (h->action == EFA_HANG_REQUEUE && may_requeue(w, what, sizeof(what)))
		rec.action = EFA_HANG_REQUEUE;
	else if (h->action == EFA_HANG_CANCEL)
		rec.action = EFA_HANG_CANCEL, snprintf(what, sizeof(what), "cancelled (HangAction=cancel)");
	else if (h->action != EFA_HANG_REQUEUE)
		snprintf(what, sizeof(what), "it keeps running: cancel it (scancel %" PRIu32 ") or requeue it (scontrol requeue %" PRIu32 ") if it does not recover",
			 sc->job_id, sc->job_id);
	if (step->ckpt.active)
		snprintf(checkpoint, sizeof(checkpoint), "newest complete checkpoint at the step's start: %s",
			 h->resume[0] ? h->resume : "none");
	else
		snprintf(checkpoint, sizeof(checkpoint), "no checkpoint directory");
	/* Recorded first: the batch step, ended by the requeue, must find
	 * it (resume_step.c counts the requeue as a failure). */
	snprintf(label, sizeof(label), "job %" PRIu32 "'s hang", sc->job_id);
	efa_step_record_update(step, sc->job_id, label, add_hang, &rec);
	slurm_error("efa: job %" PRIu32 " hung: step %" PRIu32 " on %s: no EFA traffic, no output and no checkpoint write on any of its nodes for %" PRId64 " s (HangAfter=%ld s); %s; %s",
		    sc->job_id, sc->step_id, sc->nodes, quiet_for, h->after, checkpoint, what);
	if (rec.action == EFA_HANG_REQUEUE)
		rc = slurm_requeue(sc->job_id, 0);
	else if (rec.action == EFA_HANG_CANCEL)
		rc = slurm_kill_job(sc->job_id, SIGKILL, 0);
	if (rc != SLURM_SUCCESS)
		slurm_error("efa: job %" PRIu32 ": the hang's %s was refused by Slurm: %s",
			    sc->job_id, efa_hang_action_name(rec.action), slurm_strerror(errno));
	slurm_info("efa: node %s: job %" PRIu32 " step %" PRIu32 " hung (quiet %" PRId64 " s on every node): %s",
		   step->node_name, sc->job_id, sc->step_id, quiet_for,
		   efa_hang_action_name(rec.action));
}

/* The hang in the node's figures (slurm_efa_job_hangs_total), once. */
static void count_hang(struct watched *w)
{
	efa_counters_job_event(w->step, EFA_USAGE_HANG, "hang");
	w->counted = true;
}

/* A quiet node whose step ends (a requeue or cancel of the hung job ends
 * it before the next sample) looks once more whether the hang was found. */
static void count_hang_at_end(struct watched *w)
{
	const struct efa_step_counters *sc = &w->step->counters;
	char *comment;

	if (!w->marked || w->counted || efa_job_comment(sc->job_id, &comment))
		return;
	if (efa_record_hung(comment, w->run, sc->step_id, EFA_HANG_ACTION_UNSET))
		count_hang(w);
	free(comment);
}

/* The hang part of a sample; true while it goes on. */
static bool hang_check(struct watched *w, const struct efa_hang_sample *s, int64_t now)
{
	const struct efa_step_counters *sc = &w->step->counters;
	const struct efa_step_hang *h = &w->step->hang;
	enum mark_result res;
	int64_t quiet_for;
	bool quiet;

	if (efa_hang_add(&w->watch, s) == EFA_HANG_UNKNOWN && !w->told_unknown) {
		slurm_error("efa: job %" PRIu32 " step %" PRIu32 " on node %s: its EFA counters cannot be compared (a port gone, or counters reset): hang detection starts again from now",
			    sc->job_id, sc->step_id, w->step->node_name);
		w->told_unknown = true;
	}
	quiet_for = efa_hang_quiet_for(&w->watch, now);
	quiet = quiet_for >= h->after;
	/* Quiet, the bit is read again each interval: another node's write
	 * may have dropped it, and the hang may have been found. */
	if (!quiet && !w->marked)
		return true;
	res = mark(w, quiet);
	if (res == MARK_HANG_KNOWN) {
		count_hang(w);
		return false;
	}
	if (res != MARK_FAILED)
		w->marked = quiet;
	if (res == MARK_COMPLETE) {
		act(w, quiet_for);
		count_hang(w);
		return false;
	}
	return true;
}

/* One sample; true while the watch goes on. */
static bool sample(struct watched *w)
{
	const struct efa_step_counters *sc = &w->step->counters;
	struct efa_hang_sample s;
	struct efa_error err;
	int64_t now = monotonic_s();

	if (efa_hang_probe_take(&w->probe, now, &s, &err)) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 ": watch: %s",
			   w->step->node_name, sc->job_id, sc->step_id, err.msg);
		return true;
	}
	if (w->hang && !w->hang_done)
		w->hang_done = !hang_check(w, &s, now);
	if (w->links)
		efa_link_check(w->step, w->run, &s, &w->link);
	return (w->hang && !w->hang_done) || (w->links && !w->link.named);
}

/* Whether what the step watches can be seen in its start reading (and
 * says why not). */
static void watch_what(struct watched *w)
{
	const struct efa_step *step = w->step;
	const struct efa_step_counters *sc = &step->counters;

	w->hang = step->hang.watch_hang && efa_hang_probe_usable(&sc->start);
	if (step->hang.watch_hang && !w->hang)
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 " not watched for hangs: no EFA port here counts its traffic (hw_counters)",
			   step->node_name, sc->job_id, sc->step_id);
	w->links = step->hang.watch_links && efa_hang_probe_link_usable(&sc->start);
}

void efa_hang_watch(struct efa_step *step)
{
	struct watched *w = calloc(1, sizeof(*w));

	if (!w)
		return;
	w->step = step;
	watch_what(w);
	if (!w->hang && !w->links)
		goto out;
	if (read_job(w)) {
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 " not watched for hangs: the job cannot be read from slurmctld: %s",
			   step->node_name, step->counters.job_id, step->counters.step_id,
			   slurm_strerror(errno));
		goto out;
	}
	w->probe = (struct efa_hang_probe){
		.start = &step->counters.start,
		.root = step->root,
		.timeout_ms = PROBE_TIMEOUT_MS,
	};
	/* Sick links need the counters alone. */
	if (w->hang) {
		w->probe.outputs = w->outputs;
		w->probe.checkpoint_dir = step->ckpt.active ? step->ckpt.dir : NULL;
		w->probe.heartbeat = step->hang.heartbeat[0] ? step->hang.heartbeat : NULL;
		w->probe.heartbeat_owner = step->hang.uid;
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 " watched for hangs: HangAfter=%ld s, every %ld s, output %s, checkpoints %s",
			   step->node_name, step->counters.job_id, step->counters.step_id,
			   step->hang.after, step->hang.interval,
			   w->outputs[0] ? w->outputs[0] : "(none)",
			   w->probe.checkpoint_dir ? w->probe.checkpoint_dir : "(none)");
	}
	if (w->links)
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 "'s link compared with its peers' every %ld s",
			   step->node_name, step->counters.job_id, step->counters.step_id,
			   step->hang.interval);
	/* The first sample is the watch's start. */
	if (sample(w))
		while (efa_counters_wait(step, step->hang.interval) && sample(w))
			;
	count_hang_at_end(w);
out:
	free(w);
}
