/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa check: before submitting, whether a checkpoint directory is
 * allowed on a partition and why, or which directory a job would get;
 * with --node, whether this node is healthy (common/health/node_check.h).
 * The rules are the ones the job_submit bridge and the plugin apply.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <jansson.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/deadline.h"
#include "common/base/strutil.h"
#include "common/checkpoint/checkpoint.h"
#include "common/checkpoint/retention.h"
#include "common/config/efa_conf.h"
#include "common/config/plugin_args.h"
#include "common/config/plugstack.h"
#include "common/health/counters.h"
#include "common/health/gres.h"
#include "common/health/node_check.h"
#include "common/health/node_drain.h"
#include "common/node/hw_counters.h"
#include "common/usage/metrics.h"
#include "common/usage/usage.h"
#include "cli.h"

#define ROOTS_MAX 1024
/* A health check asks slurmctld for the node's GRES: at most this long. */
#define GRES_TIMEOUT_MS 10000
/* Of HealthTimeout=, what is kept for telling Slurm the verdict (reading
 * the node and draining it or returning it): at most this, or a third. */
#define ACT_RESERVE_MS 20000

const char cmd_check_usage[] =
	"usage: slurm-efa check --checkpoint-dir PATH [--keep N] [--partition P] [--config FILE]\n"
	"                       [--slurm-conf FILE] [--json]\n"
	"       slurm-efa check --node [--drain] [--partition P] [--gres GRES] [--root DIR]\n"
	"                       [--config FILE] [--slurm-conf FILE] [--json]\n"
	"       slurm-efa check --partition P --job-name NAME [--job-id ID] [--array-task N]\n"
	"                       [--user U]\n"
	"                       [--config FILE] [--json]\n";

struct request {
	const char *dir;
	const char *partition;
	const char *user;
	const char *job_name;
	const char *job_id;
	const char *array_task;
	const char *gres;	/* --gres: judge by it, not by Slurm's */
	const char *keep;	/* --keep: retention's count, else the partition's */
	/* --slurm-conf: Slurm's default slurm.conf, where spank_efa.so's
	 * plugstack line is looked for without SLURM_CONF (the build's) */
	const char *slurm_conf;
	int node;
	int drain;
};

struct verdict {
	const char *what;	/* allowed, refused, default, none */
	char path[EFA_CKPT_PATH_MAX];
	const char *root;
	char why[EFA_ERROR_MAX + ROOTS_MAX + 128];
};

static int parse(int argc, char **argv, struct request *req)
{
	static const struct option longopts[] = {
		{ "checkpoint-dir", required_argument, NULL, 'd' },
		{ "partition", required_argument, NULL, 'p' },
		{ "user", required_argument, NULL, 'u' },
		{ "job-name", required_argument, NULL, 'n' },
		{ "job-id", required_argument, NULL, 'i' },
		{ "array-task", required_argument, NULL, 'a' },
		{ "node", no_argument, NULL, 'N' },
		{ "drain", no_argument, NULL, 'D' },
		{ "gres", required_argument, NULL, 'g' },
		{ "keep", required_argument, NULL, 'k' },
		{ "slurm-conf", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': req->dir = optarg; break;
		case 'p': req->partition = optarg; break;
		case 'u': req->user = optarg; break;
		case 'n': req->job_name = optarg; break;
		case 'i': req->job_id = optarg; break;
		case 'a': req->array_task = optarg; break;
		case 'N': req->node = 1; break;
		case 'D': req->drain = 1; break;
		case 'g': req->gres = optarg; break;
		case 'k': req->keep = optarg; break;
		case 's': req->slurm_conf = optarg; break;
		default:
			fprintf(stderr, "slurm-efa check: bad or incomplete option '%s'\n%s",
				argv[optind - 1], cmd_check_usage);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "slurm-efa check: unexpected argument '%s'\n%s", argv[optind], cmd_check_usage);
		return -1;
	}
	if (req->node)
		return 0;
	if (!req->dir && (!req->partition || !req->job_name)) {
		fprintf(stderr, "slurm-efa check: give --checkpoint-dir, or --partition and --job-name for the default directory\n%s",
			cmd_check_usage);
		return -1;
	}
	return 0;
}

/* Partitions with a root, for a user who gave none: "gpu=/fsx/ckpt, ...". */
static void list_roots(const struct efa_config *cfg, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < cfg->npartitions && used < size; i++)
		if (cfg->partitions[i].checkpoint_root)
			used += (size_t)snprintf(buf + used, size - used, "%s%s=%s", used ? ", " : "",
						 cfg->partitions[i].name,
						 cfg->partitions[i].checkpoint_root);
}

static void check_dir(const struct efa_config *cfg, const struct request *req,
		      const struct efa_partition *part, struct verdict *v)
{
	struct efa_error err;
	char roots[ROOTS_MAX];

	if (efa_checkpoint_dir_parse(req->dir, v->path, sizeof(v->path), &err)) {
		v->what = "refused";
		snprintf(v->path, sizeof(v->path), "%s", req->dir);
		snprintf(v->why, sizeof(v->why), "%s", err.msg);
	} else if (v->root && efa_checkpoint_allowed(v->root, req->dir, v->path, sizeof(v->path), &err)) {
		v->what = "refused";
		snprintf(v->why, sizeof(v->why), "%s", err.msg);
	} else if (v->root) {
		v->what = "allowed";
		snprintf(v->why, sizeof(v->why), "it is under partition %s's checkpoint root %s",
			 part->name, v->root);
	} else if (req->partition) {
		v->what = "allowed";
		snprintf(v->why, sizeof(v->why), "partition %s has no CheckpointRoot= in efa.conf: any absolute path",
			 req->partition);
	} else {
		v->what = "allowed";
		list_roots(cfg, roots, sizeof(roots));
		snprintf(v->why, sizeof(v->why), "no --partition: any absolute path; %s%s",
			 roots[0] ? "these partitions restrict it to their root (give --partition): " :
			 "no partition in efa.conf has a CheckpointRoot=", roots);
	}
}

static int default_dir(const struct request *req, const struct efa_partition *part,
		       struct verdict *v)
{
	const char *user = req->user;
	struct passwd *pw;
	struct efa_error err;
	unsigned long id = 0;
	char *end;

	if (!v->root) {
		v->what = "none";
		snprintf(v->why, sizeof(v->why), "partition %s has no CheckpointRoot= in efa.conf: a job gets a checkpoint directory only with --checkpoint-dir",
			 req->partition);
		return 0;
	}
	if (!user) {
		pw = getpwuid(getuid());
		if (!pw) {
			fprintf(stderr, "slurm-efa check: cannot find your user name: give --user\n");
			return -1;
		}
		user = pw->pw_name;
	}
	if (req->job_id) {
		errno = 0;
		id = strtoul(req->job_id, &end, 10);
		if (errno || *end || !id) {
			fprintf(stderr, "slurm-efa check: invalid --job-id '%s': use a job number\n", req->job_id);
			return -1;
		}
	}
	if (req->array_task && (strspn(req->array_task, "0123456789") != strlen(req->array_task) ||
				!req->array_task[0] || strlen(req->array_task) > 10)) {
		fprintf(stderr, "slurm-efa check: invalid --array-task '%s': use the task's index\n",
			req->array_task);
		return -1;
	}
	v->what = "default";
	if (!efa_checkpoint_name_ok(req->job_name) && !req->job_id) {
		snprintf(v->path, sizeof(v->path), "%s/%s/<job id>%s%s", v->root, user,
			 req->array_task ? "_" : "", req->array_task ? req->array_task : "");
	} else if (efa_checkpoint_default(v->root, user, req->job_name, id, req->array_task, v->path,
					  sizeof(v->path), &err)) {
		fprintf(stderr, "slurm-efa check: %s\n", err.msg);
		return -1;
	}
	if (efa_checkpoint_name_ok(req->job_name) && req->array_task)
		snprintf(v->why, sizeof(v->why), "<root>/<user>/<job name>_<array task> on partition %s: each task of an array has its own, and finds it again when the array is resubmitted with the same name",
			 part->name);
	else if (efa_checkpoint_name_ok(req->job_name))
		snprintf(v->why, sizeof(v->why), "<root>/<user>/<job name> on partition %s: a job resubmitted with the same name finds its checkpoints again",
			 part->name);
	else
		snprintf(v->why, sizeof(v->why), "<root>/<user>/<job id> on partition %s: the job name '%s' cannot be a directory name (empty, '.', '..', '/', not printable ASCII, or longer than %d)",
			 part->name, req->job_name, EFA_CKPT_NAME_MAX);
	return 0;
}

/*
 * What a resumed job and retention would do in the directory (the one
 * decision the plugin takes, retention.h): its checkpoints newest first,
 * each with its state and, when keep is set, whether retention keeps it.
 * Nothing when the directory is not there.
 */
struct listing {
	json_t *checkpoints;	/* --json: the array */
	const char *resume;	/* --json: the resume point's name (in plan) */
	struct efa_retention_plan plan;
};

static void list_checkpoints(const char *path, long keep, int json, struct listing *l)
{
	struct efa_error err;
	int fd;

	memset(l, 0, sizeof(*l));
	l->checkpoints = json ? json_array() : NULL;
	if (!path[0] || (fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	if (efa_retention_plan(fd, keep, &l->plan, &err)) {
		close(fd);
		if (!json)
			printf("  checkpoints: cannot be judged: %s\n", err.msg);
		else
			fprintf(stderr, "slurm-efa check: checkpoints in %s cannot be judged: %s\n", path,
				err.msg);
		return;
	}
	close(fd);
	l->resume = l->plan.resume ? l->plan.resume->name : NULL;
	for (size_t i = 0; i < l->plan.n; i++) {
		const struct efa_retention_entry *e = &l->plan.v[i];
		const char *retention = keep <= 0 ? NULL : e->remove ? "delete" : "keep";

		if (!efa_retention_is_checkpoint(e))
			continue;
		if (json) {
			json_t *o = json_pack("{s:s, s:s, s:s}", "name", e->name, "state",
					      efa_ckpt_state_name(e->state), "why", e->why);

			if (o && retention)
				json_object_set_new(o, "retention", json_string(retention));
			json_array_append_new(l->checkpoints, o);
		} else
			printf("  checkpoint: %s %s (%s)%s%s\n", e->name, efa_ckpt_state_name(e->state),
			       e->why, retention ? ": retention would " : "",
			       retention ? retention : "");
	}
	if (!json)
		printf("  resume: %s\n", l->resume ? l->resume : "none (no complete checkpoint)");
}

static int print(const struct request *req, const struct verdict *v, long keep, int json)
{
	struct listing l = { NULL };
	bool listed = strcmp(v->what, "refused");
	json_t *doc;
	int rc = 0;

	if (!json) {
		printf("%s: %s\n", v->what, v->path[0] ? v->path : "(no checkpoint directory)");
		printf("  root: %s\n  why: %s\n", v->root ? v->root : "none", v->why);
		if (listed) {
			list_checkpoints(v->path, keep, 0, &l);
			efa_retention_plan_free(&l.plan);
		}
		return 0;
	}
	if (listed)
		list_checkpoints(v->path, keep, 1, &l);
	doc = json_pack("{s:s, s:s?, s:s?, s:s?, s:s?, s:s, s:o, s:s?}", "verdict", v->what,
			"path", v->path[0] ? v->path : NULL, "given", req->dir,
			"partition", req->partition, "root", v->root, "why", v->why,
			"checkpoints", l.checkpoints ? l.checkpoints : json_array(), "resume", l.resume);
	if (keep > 0 && doc)
		json_object_set_new(doc, "keep", json_integer(keep));
	if (cli_print_json(doc)) {
		fprintf(stderr, "slurm-efa check: out of memory\n");
		rc = -1;
	}
	efa_retention_plan_free(&l.plan);
	return rc;
}

/* This node's name in Slurm: slurmd's (HealthCheckProgram runs under it),
 * else the host's. It names the pass count's file, so it must be safe in a
 * path, as the plugin's is. */
static int node_name(char *buf, size_t size)
{
	const char *env = getenv("SLURMD_NODENAME");

	if (env && *env) {
		if (!efa_node_name_safe(env))
			return -1;
		return snprintf(buf, size, "%s", env) >= (int)size ? -1 : 0;
	}
	return gethostname(buf, size);
}

/*
 * The EFA error counters, against the reading the last check kept in
 * NodeCacheDir= (counters.h). A reading that cannot be kept is said, and
 * judges nothing wrong with the node.
 */
static void judge_counters(const struct efa_config *cfg, const struct efa_counter_limits *lim,
			   const struct efa_hw_reading *now, struct efa_node_check *c)
{
	char name[256], state[4096], warn[EFA_NODE_PROBLEM_MAX];
	struct efa_error err;

	if (node_name(name, sizeof(name)) ||
	    snprintf(state, sizeof(state), "%s/counters-%s", cfg->node_cache_dir, name) >=
		    (int)sizeof(state)) {
		fprintf(stderr, "slurm-efa check: EFA counters not judged: cannot tell this node's name (set SLURMD_NODENAME)\n");
		return;
	}
	warn[0] = '\0';
	if (efa_counters_check(now, state, lim, c->problem, sizeof(c->problem), warn, sizeof(warn),
			       &err))
		fprintf(stderr, "slurm-efa check: %s\n", err.msg);
	if (warn[0])
		fprintf(stderr, "slurm-efa check: warning: %s\n", warn);
}

/*
 * MetricsDir=: the node's file for node_exporter written again, with the
 * counters as they are now and the running jobs' totals up to now (a
 * health check runs every HealthCheckInterval=, so figures stay live
 * between steps' starts and ends). Never changes the verdict.
 */
static void write_metrics(const struct efa_config *cfg, const struct efa_hw_reading *now)
{
	char name[256], store[4096];
	struct efa_error err;

	if (node_name(name, sizeof(name))) {
		fprintf(stderr, "slurm-efa check: metrics not written: cannot tell this node's name (set SLURMD_NODENAME)\n");
		return;
	}
	if (efa_usage_dir(cfg->node_cache_dir, name, store, sizeof(store), &err) ||
	    efa_metrics_update(cfg->metrics_dir, store, name, now, time(NULL), &err))
		fprintf(stderr, "slurm-efa check: metrics not written: %s\n", err.msg);
}

/*
 * The EFA counters, read once for both of their uses: judged when
 * efa.conf sets a limit, written for node_exporter with MetricsDir=.
 */
static void use_counters(const struct efa_config *cfg, const char *root, struct efa_node_check *c)
{
	const struct efa_counter_limits lim = {
		.retrans_timeouts = cfg->health_retrans_timeouts,
		.unresponsive_remotes = cfg->health_unresponsive_remotes,
		.impaired_connections = cfg->health_impaired_connections,
	};
	bool judged = efa_counter_limits_any(&lim);
	struct efa_hw_reading now;
	struct efa_error err;

	if (!judged && !cfg->metrics_dir)
		return;
	if (efa_hw_read(c->node, root, &now, &err)) {
		fprintf(stderr, "slurm-efa check: %s\n", err.msg);
		return;
	}
	if (judged)
		judge_counters(cfg, &lim, &now, c);
	if (cfg->metrics_dir)
		write_metrics(cfg, &now);
	efa_hw_reading_clear(&now);
}

/* The Gres= the node is judged by: --gres, else with HealthGres=yes the
 * node's in Slurm; NULL: not judged (a controller that cannot tell is
 * said, and judges nothing). */
static const char *node_gres(const struct efa_config *cfg, const struct request *req,
			     const struct efa_deadline *dl, char *buf, size_t size)
{
	char name[256];
	struct efa_error err;
	long limit;

	if (req->gres)
		return req->gres;
	if (cfg->health_gres != EFA_YES)
		return NULL;
	if (node_name(name, sizeof(name))) {
		fprintf(stderr, "slurm-efa check: GRES not judged: cannot tell this node's name (set SLURMD_NODENAME)\n");
		return NULL;
	}
	limit = efa_deadline_cap(dl, GRES_TIMEOUT_MS);
	if (!limit) {
		fprintf(stderr, "slurm-efa check: GRES not judged: the check ran out of its HealthTimeout=%ld s first\n",
			cfg->health_timeout);
		return NULL;
	}
	if (efa_gres_of_node(name, limit, buf, size, &err)) {
		fprintf(stderr, "slurm-efa check: GRES not judged: %s\n", err.msg);
		return NULL;
	}
	return buf;
}

/* node_name, for what cannot go on without it: says what to set. */
static int acting_node_name(char *buf, size_t size)
{
	if (!node_name(buf, size))
		return 0;
	fprintf(stderr, "slurm-efa check: cannot tell this node's name: set SLURMD_NODENAME to its Slurm name (no '/', not . or ..)\n");
	return -1;
}

/* --drain: the verdict applied in Slurm (node_drain.h), said on stdout. */
static int act_on(const struct efa_config *cfg, const struct efa_node_check *c,
		  const struct efa_deadline *dl)
{
	char name[256], did[EFA_DRAIN_MESSAGE_MAX];
	struct efa_error err;

	if (acting_node_name(name, sizeof(name)))
		return EXIT_USAGE;
	if (efa_node_health_act(cfg, name, !c->problem[0], c->problem, true, dl, did, sizeof(did),
				&err)) {
		fprintf(stderr, "slurm-efa check: %s\n", err.msg);
		return EXIT_REFUSED;
	}
	if (did[0])
		printf("%s\n", did);
	return 0;
}

/*
 * efa.conf and the node's tree as spank_efa.so reads them: its own
 * plugstack line (plugstack.h), so that what Slurm runs on a node (the
 * health check, the enroot hook) reads what the plugin reads, configured
 * in one place. 1 when there is no line to find (said with
 * line_required), 0 with *cfg and root set, -1 when the line is there but
 * cannot be used (said).
 */
static int load_as_plugin(const struct request *req, bool line_required, struct efa_config **cfg,
			  char *root, size_t size)
{
	struct efa_plugstack_line line;
	struct efa_args args = { NULL, "/" };
	char conf[PATH_MAX], node[256];
	struct efa_error err;

	if (efa_slurm_conf_find(req->slurm_conf ? req->slurm_conf : EFA_SLURM_CONF_DEFAULT, conf,
				sizeof(conf), &err) ||
	    efa_plugstack_find(conf, &line, &err)) {
		if (line_required)
			fprintf(stderr, "slurm-efa check: cannot find spank_efa.so's plugstack line: %s\n", err.msg);
		return 1;
	}
	if (efa_args_parse(line.argc, line.argv, &args, &err)) {
		fprintf(stderr, "slurm-efa check: %s:%d: %s\n", line.file, line.line, err.msg);
		return -1;
	}
	if (acting_node_name(node, sizeof(node)))
		return -1;
	if (efa_expand_node_name(args.root, node, root, size)) {
		fprintf(stderr, "slurm-efa check: %s:%d: root=%s cannot name node %s's tree\n", line.file,
			line.line, args.root, node);
		return -1;
	}
	if (efa_args_load_config(&args, node, cfg, &err)) {
		fprintf(stderr, "slurm-efa check: %s (from %s:%d)\n", err.msg, line.file, line.line);
		return -1;
	}
	return 0;
}

/*
 * --node, for a node health check (Slurm's HealthCheckProgram, a boot
 * script): does this node show every EFA device its profile's EFADevices=
 * says its type has, each port ACTIVE? Counts again for EFADevicesWait=
 * seconds first. The checkpoint roots looked at are partition's, or every
 * partition's (a health check does not know the node's partitions).
 */
static int check_node(const struct efa_config *cfg, const struct cli_common *common,
		      const struct request *req)
{
	long total = cfg->health_timeout * 1000;
	struct efa_deadline whole, parts;
	struct efa_node_check c;
	struct efa_error err;
	char gres[1024];
	const char *type;
	int rc = EXIT_USAGE;
	json_t *doc;

	/* One deadline over every part (HealthTimeout=), below slurmd's
	 * own: a check slurmd kills gives no verdict at all. */
	efa_deadline_start(&whole, total);
	efa_deadline_start(&parts, total - (total / 3 < ACT_RESERVE_MS ? total / 3 : ACT_RESERVE_MS));
	if (efa_node_check(common->root, cfg, NULL, req->partition,
			   node_gres(cfg, req, &parts, gres, sizeof(gres)), true, &parts, &c, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	use_counters(cfg, common->root, &c);
	type = c.node->instance_type;
	if (common->json) {
		doc = json_pack("{s:s?, s:s?, s:i, s:i, s:b, s:s?}", "instance_type", type,
				"profile", c.profile ? c.profile->name : NULL, "expected_efa_devices",
				c.expected, "efa_devices", (int)c.node->nnics, "healthy", !c.problem[0],
				"problem", c.problem[0] ? c.problem : NULL);
		if (cli_print_json(doc)) {
			fprintf(stderr, "slurm-efa check: out of memory\n");
			goto out;
		}
	} else if (c.problem[0]) {
		printf("unhealthy: %s\n", c.problem);
	} else if (c.expected) {
		printf("healthy: %zu EFA devices, as profile %s expects of %s\n", c.node->nnics,
		       c.profile->name, type);
	} else {
		printf("healthy: %zu EFA devices (profile %s sets no EFADevices= for %s)\n",
		       c.node->nnics, c.profile ? c.profile->name : "none", type ? type : "this type");
	}
	rc = c.problem[0] ? EXIT_REFUSED : 0;
	if (req->drain) {
		int acted = act_on(cfg, &c, &whole);

		rc = acted ? acted : rc;
	}
out:
	efa_node_check_clear(&c);
	return rc;
}

int cmd_check(int argc, char **argv, const struct cli_common *common)
{
	const struct efa_partition *part;
	struct efa_config *cfg = NULL;
	struct request req = { NULL };
	struct verdict v = { NULL };
	char root[EFA_CKPT_PATH_MAX], tree[PATH_MAX];
	struct efa_error err;
	int rc = EXIT_USAGE;
	long keep;

	if (parse(argc, argv, &req))
		return EXIT_USAGE;
	if (req.drain && !req.node) {
		fprintf(stderr, "slurm-efa check: --drain acts on the result of --node: give both\n%s", cmd_check_usage);
		return EXIT_USAGE;
	}
	/* --node without --config and --root, as slurmd runs the health
	 * check: the plugin's line or nothing. */
	if (req.node && !common->config && !common->root_given) {
		struct cli_common as_plugin = *common;

		if (load_as_plugin(&req, true, &cfg, root, sizeof(root)))
			return EXIT_USAGE;
		as_plugin.root = root;
		rc = check_node(cfg, &as_plugin, &req);
		goto out;
	}
	/* A checkpoint directory without --config or SLURM_EFA_CONF (the
	 * enroot hook clears both, and SLURM_CONF, which the job's user
	 * sets): the plugin's efa.conf, else the default one. */
	if (!req.node && !common->config && !getenv("SLURM_EFA_CONF") &&
	    load_as_plugin(&req, false, &cfg, tree, sizeof(tree)) < 0)
		return EXIT_USAGE;
	if (!cfg && efa_config_find_and_load(common->config, &cfg, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (req.node) {
		rc = check_node(cfg, common, &req);
		goto out;
	}
	part = efa_config_partition(cfg, req.partition);
	if (part && part->checkpoint_root) {
		if (efa_path_normalize(part->checkpoint_root, root, sizeof(root), &err)) {
			fprintf(stderr, "slurm-efa: partition %s: CheckpointRoot=%s\n", part->name, err.msg);
			goto out;
		}
		v.root = root;
	}
	keep = part ? part->checkpoint_keep : EFA_CKPT_KEEP_UNSET;
	if (req.keep && efa_checkpoint_keep_parse(req.keep, &keep, &err)) {
		fprintf(stderr, "slurm-efa check: --keep: %s\n", err.msg);
		goto out;
	}
	if (req.dir)
		check_dir(cfg, &req, part, &v);
	else if (default_dir(&req, part, &v))
		goto out;
	if (print(&req, &v, keep, common->json))
		goto out;
	rc = strcmp(v.what, "refused") ? 0 : EXIT_REFUSED;
out:
	efa_config_free(cfg);
	return rc;
}
