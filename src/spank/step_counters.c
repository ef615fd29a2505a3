/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <slurm/slurm.h>

#include "common/env/env.h"
#include "common/health/hang_probe.h"
#include "common/node/hw_counters.h"
#include "common/nodecache/nodecache.h"
#include "common/usage/metrics.h"
#include "common/usage/usage.h"
#include "common/usage/verdict.h"
#include "step_counters.h"
#include "step_record.h"

static void user_name(uid_t uid, char *buf, size_t size)
{
	struct passwd pw, *found = NULL;
	char text[1024];

	if (!getpwuid_r(uid, &pw, text, sizeof(text), &found) && found)
		snprintf(buf, size, "%s", pw.pw_name);
	else
		snprintf(buf, size, "%u", (unsigned)uid);
}

/* The node's file for node_exporter, from reading now; said in the log
 * when it cannot be written, never to the job. */
static void write_metrics(const struct efa_config *cfg, const char *store, const char *node,
			  const struct efa_hw_reading *now)
{
	struct efa_error err;

	if (efa_metrics_update(cfg->metrics_dir, store, node, now, time(NULL), &err))
		slurm_error("efa: node %s: metrics not written: %s", node, err.msg);
}

/*
 * The counters a step reads at its start, and of those again at its end
 * (ran: how long it ran; LONG_MAX at its start): each is a file of its own
 * on every port (416 on a p5), and both readings are on the step's way to
 * srun. The node's metrics file has them all; a judged step, what its
 * verdict and record sum and its end's line in slurmd's log, and at its
 * start what its hang and sick-link watches sample (efa_hang_step_begin
 * watches judged steps only; both watches end before the step does).
 */
static uint32_t counters_wanted(const struct efa_step *step, long ran)
{
	uint32_t want;

	if (step->cfg->metrics_dir)
		return EFA_HW_ALL;
	want = efa_step_judge_counters(ran, step->cfg->fallback_after) | 1u << EFA_HW_TX_BYTES |
	       1u << EFA_HW_RX_BYTES;
	if (step->cfg->job_record == EFA_YES)
		want |= efa_step_record_counters();
	if (ran == LONG_MAX && step->part && step->part->hang_after > 0)
		want |= efa_hang_probe_traffic_counters();
	if (ran == LONG_MAX && step->cfg->sick_links == EFA_YES)
		want |= efa_hang_probe_link_counters();
	return want;
}

void efa_counters_step_begin(struct efa_step *step, spank_t sp)
{
	struct efa_step_counters *sc = &step->counters;

	if (!step->cfg || !step->node || !step->node->nnics ||
	    spank_get_item(sp, S_JOB_ID, &sc->job_id) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_STEPID, &sc->step_id) != ESPANK_SUCCESS ||
	    sc->step_id >= SLURM_MAX_NORMAL_STEP_ID ||
	    spank_get_item(sp, S_JOB_NNODES, &sc->nnodes) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_NODEID, &sc->nodeid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &sc->local_tasks) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_UID, &sc->uid) != ESPANK_SUCCESS)
		return;
	/* Every step with MetricsDir=, for the job totals; an --efa step (its
	 * plan made) on several nodes always, to tell its user what its
	 * figures say: on one node its traffic takes NVLink, not EFA. */
	sc->judge = step->env.plan && sc->nnodes > 1;
	if (!step->cfg->metrics_dir && !sc->judge)
		return;
	/* The partition labels the job in the node's metrics file. */
	if (!step->cfg->metrics_dir ||
	    !efa_step_job_env(sp, "SLURM_JOB_PARTITION", sc->partition, sizeof(sc->partition)))
		sc->partition[0] = '\0';
	if (!efa_step_job_env(sp, "SLURM_STEP_NODELIST", sc->nodes, sizeof(sc->nodes)))
		snprintf(sc->nodes, sizeof(sc->nodes), "?");
	if (!efa_step_job_env(sp, EFA_ENV_NCCL_NET_VAR, sc->nccl_net, sizeof(sc->nccl_net)))
		sc->nccl_net[0] = '\0';
	sc->counted = true;
}

/*
 * The start reading, in the thread once the tasks run: the counters, and
 * the store's entry for the step. The node's file for node_exporter is
 * written when the step ends, and by the health check meanwhile.
 */
static int take_start(struct efa_step *step)
{
	struct efa_step_counters *sc = &step->counters;
	struct efa_hw_reading now;
	struct efa_error err;
	char user[64] = "";

	if (efa_usage_dir(step->cfg->node_cache_dir, step->node_name, sc->store, sizeof(sc->store),
			  &err) ||
	    efa_hw_read_some(step->node, step->root, counters_wanted(step, LONG_MAX), &now, &err))
		goto fail;
	if (now.problems[0])
		slurm_info("efa: node %s: %s", step->node_name, now.problems);
	if (step->cfg->metrics_dir)
		user_name(sc->uid, user, sizeof(user));
	sc->started = time(NULL);
	if (efa_usage_step_begin(sc->store, sc->job_id, sc->step_id, step->cfg->metrics_dir != NULL,
				 user, sc->partition, &now, sc->started, &err)) {
		efa_hw_reading_clear(&now);
		goto fail;
	}
	sc->start = now;	/* the end reads only what it has */
	sc->active = true;
	sc->held = true;
	sc->root_fd = open(step->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	sc->store_fd = open(sc->store, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	return 0;
fail:
	slurm_error("efa: node %s: the step's EFA counters are not kept: %s", step->node_name, err.msg);
	return -1;
}

/* Under sc->lock: sleeps until then; false when the step ends first. */
static bool sleep_until(struct efa_step_counters *sc, const struct timespec *until)
{
	while (!sc->stop && pthread_cond_timedwait(&sc->wake, &sc->lock, until) != ETIMEDOUT)
		;
	return !sc->stop;
}

/*
 * Until EFA_USAGE_START_AFTER_S after the tasks run; false when the step
 * ends first. Nothing wakes the thread for the tasks: task_post_fork only
 * notes when they ran (a wake-up there would switch a CPU to this thread
 * while the step launches), and the thread looks once a second until it
 * sees they did.
 */
static bool wait_start(struct efa_step_counters *sc)
{
	struct timespec until;
	bool run = false, go;

	pthread_mutex_lock(&sc->lock);
	clock_gettime(CLOCK_MONOTONIC, &until);
	while (!run) {
		run = sc->tasks_run;
		if (run)
			until = sc->tasks_since;
		until.tv_sec += EFA_USAGE_START_AFTER_S;
		if (!sleep_until(sc, &until))
			break;
	}
	go = sc->reading = !sc->stop;
	pthread_mutex_unlock(&sc->lock);
	return go;
}

bool efa_counters_wait(struct efa_step *step, long seconds)
{
	struct efa_step_counters *sc = &step->counters;
	struct timespec until;
	bool go;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += seconds;
	pthread_mutex_lock(&sc->lock);
	go = sleep_until(sc, &until);
	pthread_mutex_unlock(&sc->lock);
	return go;
}

static void *counters_thread(void *arg)
{
	struct efa_step *step = arg;

	if (wait_start(&step->counters) && !take_start(step) && step->counters.watch)
		step->counters.watch(step);
	return NULL;
}

void efa_counters_start(struct efa_step *step, void (*watch)(struct efa_step *step))
{
	struct efa_step_counters *sc = &step->counters;
	pthread_condattr_t clock;
	int rc;

	if (!sc->counted)
		return;
	sc->watch = watch;
	pthread_mutex_init(&sc->lock, NULL);
	pthread_condattr_init(&clock);
	pthread_condattr_setclock(&clock, CLOCK_MONOTONIC);
	pthread_cond_init(&sc->wake, &clock);
	pthread_condattr_destroy(&clock);
	rc = pthread_create(&sc->thread, NULL, counters_thread, step);
	if (rc) {
		slurm_error("efa: node %s: step %" PRIu32 ".%" PRIu32 ": the step's EFA counters are not kept, nor is it watched: no thread: %s",
			    step->node_name, sc->job_id, sc->step_id, strerror(rc));
		pthread_cond_destroy(&sc->wake);
		pthread_mutex_destroy(&sc->lock);
		return;
	}
	sc->running = true;
}

void efa_counters_tasks_run(struct efa_step *step)
{
	struct efa_step_counters *sc = &step->counters;

	if (!sc->running)
		return;
	pthread_mutex_lock(&sc->lock);
	if (!sc->tasks_run) {
		sc->tasks_run = true;
		clock_gettime(CLOCK_MONOTONIC, &sc->tasks_since);
	}
	pthread_mutex_unlock(&sc->lock);
}

/* The thread ends (between two readings, or after the one it takes). */
static void stop_thread(struct efa_step_counters *sc)
{
	if (!sc->running)
		return;
	pthread_mutex_lock(&sc->lock);
	sc->stop = true;
	pthread_cond_broadcast(&sc->wake);
	pthread_mutex_unlock(&sc->lock);
	pthread_join(sc->thread, NULL);
	pthread_cond_destroy(&sc->wake);
	pthread_mutex_destroy(&sc->lock);
	sc->running = false;
}

/*
 * The step's last task on the node ended: a thread that went on to read is
 * stopped and joined, for the end reading. One still waiting is only told,
 * and ends when it next wakes (slurm_spank_exit joins it): waking it here
 * would switch a CPU to it on srun's path (slurmstepd tells srun its tasks
 * ended after their task_exit, mgr.c _wait_for_all_tasks).
 */
static void tasks_ended(struct efa_step_counters *sc)
{
	bool reading;

	if (!sc->running)
		return;
	pthread_mutex_lock(&sc->lock);
	reading = sc->reading;
	sc->stop = !reading;
	pthread_mutex_unlock(&sc->lock);
	if (reading)
		stop_thread(sc);
}

/*
 * What the step's figures say, on the step's stderr: slurmstepd's own
 * stderr is its first task's until the step's I/O closes (mgr.c,
 * _slurmd_job_log_init), so an error said while its last task ends here
 * reaches the user, and slurmd's log. The fall-back is said once, by the
 * step's first node; errors by each node that saw them.
 */
static void tell_user(const struct efa_step *step, const struct efa_step_usage *used,
		      const struct efa_step_verdict *v)
{
	const struct efa_step_counters *sc = &step->counters;
	const char *shared = used->shared ? " (the node's figures: another job's step ran beside it)" : "";
	char net[128] = "";

	if (v->fallback && sc->nodeid == 0) {
		if (sc->nccl_net[0] && !efa_env_nccl_net_is_efa(sc->nccl_net))
			snprintf(net, sizeof(net), " (this step has NCCL_NET=%s)", sc->nccl_net);
		slurm_error("efa: step %" PRIu32 ".%" PRIu32 " ran %ld s on %" PRIu32 " nodes (%s) and moved %" PRIu64 " bytes over EFA on %s: it did not use EFA, and its traffic took a slower path. Look for NCCL_NET=Socket in the job's or the image's environment%s, an image without aws-ofi-nccl (slurm-efa env --image), or a framework using its own transport (gloo, MPI over TCP)",
			    sc->job_id, sc->step_id, v->seconds, sc->nnodes, sc->nodes, v->moved,
			    step->node_name, net);
	}
	if (v->errors[0])
		slurm_error("efa: step %" PRIu32 ".%" PRIu32 " on node %s: EFA errors while it ran: %s%s. Its collectives may have slowed or stalled: tell your cluster admin if it persists",
			    sc->job_id, sc->step_id, step->node_name, v->errors, shared);
}

/*
 * path, or the directory the step's start opened as fd when path names
 * another one here: reached through /proc/self/fd, which leads to the
 * open directory from any mount namespace.
 */
static const char *reach(const char *path, int fd, char *buf, size_t size)
{
	struct stat here, opened;

	if (fd < 0 || (!stat(path, &here) && !fstat(fd, &opened) && here.st_dev == opened.st_dev &&
		       here.st_ino == opened.st_ino))
		return path;
	snprintf(buf, size, "/proc/self/fd/%d", fd);
	return buf;
}

static void end_step(struct efa_step *step, bool tell)
{
	struct efa_step_counters *sc = &step->counters;
	char root_fd[32], store_fd[32], notes[1024] = "";
	const char *root = reach(step->root, sc->root_fd, root_fd, sizeof(root_fd));
	const char *store = reach(sc->store, sc->store_fd, store_fd, sizeof(store_fd));
	struct efa_step_usage used;
	struct efa_hw_reading now;
	struct efa_error err;
	time_t when = time(NULL);
	uint64_t tx, rx;

	sc->active = false;
	if (efa_hw_read_again(&sc->start, root, counters_wanted(step, (long)(when - sc->started)),
			      &now, &err)) {
		slurm_error("efa: node %s: step %" PRIu32 ".%" PRIu32 ": %s", step->node_name,
			    sc->job_id, sc->step_id, err.msg);
		return;
	}
	if (efa_usage_step_end(store, sc->job_id, sc->step_id, step->cfg->metrics_dir != NULL, &now,
			       when, &used, notes, sizeof(notes), &err)) {
		slurm_error("efa: node %s: step %" PRIu32 ".%" PRIu32 ": %s", step->node_name,
			    sc->job_id, sc->step_id, err.msg);
	} else {
		efa_hw_sum(&used.delta, EFA_HW_TX_BYTES, &tx);
		efa_hw_sum(&used.delta, EFA_HW_RX_BYTES, &rx);
		slurm_info("efa: node %s: step %" PRIu32 ".%" PRIu32 " moved %" PRIu64 " bytes out and %" PRIu64 " in over EFA in %lld s%s%s%s",
			   step->node_name, sc->job_id, sc->step_id, tx, rx,
			   (long long)(used.end - used.start),
			   used.shared ? " (shared: another job's step ran beside it)" : "",
			   notes[0] ? "; " : "", notes);
		if (tell && sc->judge) {
			struct efa_step_verdict v;

			efa_step_judge(&used, sc->nnodes, step->cfg->fallback_after, &v);
			tell_user(step, &used, &v);
			if (step->cfg->job_record == EFA_YES)
				efa_step_record(step, &used, &v);
		}
		efa_step_usage_clear(&used);
	}
	if (step->cfg->metrics_dir)
		write_metrics(step->cfg, store, step->node_name, &now);
	efa_hw_reading_clear(&now);
}

void efa_counters_job_event(const struct efa_step *step, enum efa_usage_event event,
			    const char *what)
{
	const struct efa_step_counters *sc = &step->counters;
	struct efa_hw_reading now = { 0 };
	struct efa_error err;

	/* In the log only: a line on the step's stderr would count as the
	 * job's output (hang detection). */
	if (efa_usage_job_event(sc->store, sc->job_id, event, &err) < 0 ||
	    (step->cfg->metrics_dir &&
	     (efa_hw_read_again(&sc->start, step->root, EFA_HW_ALL, &now, &err) ||
	      efa_metrics_update(step->cfg->metrics_dir, sc->store, step->node_name, &now, time(NULL),
				 &err))))
		slurm_info("efa: node %s: job %" PRIu32 "'s %s not in the node's figures: %s",
			   step->node_name, sc->job_id, what, err.msg);
	efa_hw_reading_clear(&now);
}

bool efa_counters_task_exit(struct efa_step *step, spank_t sp)
{
	struct efa_step_counters *sc = &step->counters;

	(void)sp;
	if (!sc->counted || ++sc->exited < sc->local_tasks)
		return false;
	tasks_ended(sc);
	if (sc->active)
		end_step(step, true);
	return true;
}

void efa_counters_step_end(struct efa_step *step, spank_t sp)
{
	(void)sp;
	stop_thread(&step->counters);
	if (step->counters.active)
		end_step(step, false);	/* tasks that never ran: nothing to tell */
}

void efa_counters_job_end(spank_t sp, const struct efa_args *args)
{
	const char *node = getenv("SLURMD_NODENAME"), *job_text = getenv("SLURM_JOB_ID");
	struct efa_node_cache cache = { .settle = EFA_NODE_CACHE_SETTLE };
	struct efa_nodedesc desc = { 0 };
	struct efa_hw_reading now = { 0 };
	struct efa_config *cfg = NULL;
	char root[EFA_STEP_PATH_MAX], store[EFA_STEP_PATH_MAX], note[512], *end;
	struct efa_error err;
	unsigned long job;
	int ended;

	(void)sp;
	if (!node || !efa_node_name_safe(node) || !job_text ||
	    (job = strtoul(job_text, &end, 10), *end) || job > UINT32_MAX ||
	    efa_args_load_config(args, node, &cfg, &err))
		goto out;
	if (efa_expand_node_name(args->root, node, root, sizeof(root)) ||
	    efa_usage_dir(cfg->node_cache_dir, node, store, sizeof(store), &err))
		goto out;
	ended = efa_usage_job_end(store, (uint32_t)job, time(NULL), &err);
	if (ended < 0)
		slurm_error("efa: node %s: job %lu: %s", node, job, err.msg);
	if (ended <= 0 || !cfg->metrics_dir)
		goto out;	/* a job that counted nothing here changes nothing */
	cache.dir = cfg->node_cache_dir;
	if (efa_node_describe(root, cfg, &cache, &desc, note, sizeof(note), &err) < 0 ||
	    efa_hw_read(desc.node, root, &now, &err)) {
		slurm_error("efa: node %s: metrics not written: %s", node, err.msg);
		goto out;
	}
	write_metrics(cfg, store, node, &now);
out:
	efa_hw_reading_clear(&now);
	efa_nodedesc_clear(&desc);
	efa_config_free(cfg);
}
