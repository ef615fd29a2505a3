/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa sync: keeps the zone snapshot that the job_submit bridge reads.
 * A daemon beside slurmctld (systemd unit or Slinky sidecar): it polls
 * slurmrestd with conditional requests, so an idle cluster costs one small
 * answer per interval, and it keeps the last good snapshot when slurmrestd
 * is down or answers nonsense. With Topology= it also keeps Slurm's
 * topology.conf (topology_sync.c), and with RepairAction= it runs the
 * repair ladder for the nodes slurm-efa drained (repair_round.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/cluster/snapshot.h"
#include "sources/assembly.h"
#include "cli.h"
#include "repair_round.h"
#include "topology_sync.h"

const char cmd_sync_usage[] =
	"usage: slurm-efa sync [--once | --interval SECONDS] [--snapshot PATH] [--config FILE]\n"
	"                      [--url URL] [--user U] [--token-file F] [--timeout MS]\n"
	"                      [--api-version vX.Y.Z]\n";

#define WRITE_ERROR_EVERY 60	/* seconds between repeated write errors */

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_line(const char *fmt, ...)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", localtime_r(&now, &tm));
	fprintf(stderr, "%s slurm-efa sync: ", stamp);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void describe(const struct efa_cluster *c, char *buf, size_t size)
{
	size_t zoned = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->nzones; i++) {
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s %zu/%zu usable",
			 i ? ", " : "", c->zones[i].name, c->zones[i].usable, c->zones[i].nodes);
		zoned += c->zones[i].nodes;
	}
	if (zoned < c->nnodes)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%zu without a zone",
			 c->nzones ? ", " : "", c->nnodes - zoned);
}

struct syncer {
	const struct efa_config *cfg;
	const char *url;
	const char *path;
	slurmrest_t *rest;
	struct assembly cluster;	/* slurmrestd's nodes placed by their sources;
					 * keeps the update time and what EC2 said
					 * between rounds */
	struct efa_cluster last;	/* the last good data */
	int have_last;
	int unchanged_logged;
	int conditional_failed;	/* said once */
	struct topology_sync topo;
	struct repair_runner repair;
	time_t write_error_said;
	int failing;
};

/* "a,b" of a feature list, cut to fit. */
static void join_features(char *const *v, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; v[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "," : "", v[i]);
}

/*
 * WriteFeatures=yes: Slurm's nodes get the zone and layer features the
 * sources give, so that constraints on them (the bridge's zones,
 * topology.conf's switches) hold. A node that cannot be updated is said,
 * and tried again at the next change.
 */
static void write_features(struct syncer *s, const struct node_feature_updates *u)
{
	char what[768], from[256], to[256];
	size_t done = 0, len = 0;
	slurmrest_error err;

	what[0] = '\0';
	for (size_t i = 0; i < u->n; i++) {
		const struct node_feature_update *up = &u->v[i];

		if (slurmrest_update_node_features(s->rest, up->node, (const char *const *)up->to, &err)) {
			log_line("features: cannot update node %s: %s%s", up->node, err.message,
			    err.slurm_errno == 2010 ?
				    ": WriteFeatures=yes needs slurmrestd to act as root, SlurmUser or an AdminLevel=Admin user (RestUser= with its token)" :
				    "");
			continue;
		}
		if (done++ < 3 && len < sizeof(what)) {
			join_features(up->from, from, sizeof(from));
			join_features(up->to, to, sizeof(to));
			len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s: %s -> %s",
						done > 1 ? ", " : "", up->node, from, to);
		}
	}
	if (done)
		log_line("features: updated %zu node%s through slurmrestd (%s%s)", done, done == 1 ? "" : "s",
		    what, done > 3 ? ", ..." : "");
}

/*
 * TopologyReload= ran: a reconfigure sets the nodes' features back to
 * slurm.conf's. 22.05 re-reads slurm.conf in place (read_slurm_conf(1,
 * true) in src/slurmctld/proc_req.c), 23.11 and later start a new
 * slurmctld, also with recover = 1 (controller.c); with recover below 2,
 * _set_features() (read_config.c) and restore_node_features()
 * (node_mgr.c) keep the configured features and drop those set by
 * scontrol update or slurmrestd. So the updates are worked out again from
 * what Slurm holds after the reload, and written after it; scontrol
 * reconfigure answers once the new slurmctld has read its configuration.
 */
static void compare_after_reload(struct syncer *s, struct node_feature_updates *updates)
{
	struct assembly_error rerr;
	struct efa_cluster after;
	int not_modified;

	node_feature_updates_clear(updates);
	if (assembly_read(&s->cluster, false, &after, &not_modified, updates, &rerr)) {
		log_line("features: cannot read the nodes again after TopologyReload (%s); writing them next round",
		    rerr.message);
		/* The next round asks for everything, which compares again. */
		s->cluster.since = 0;
		return;
	}
	efa_cluster_clear(&after);
}

/* One round: returns 0 when the snapshot is current, -1 when it is not. */
static int sync_once(struct syncer *s)
{
	struct efa_cluster fresh;
	struct assembly_error rerr;
	struct efa_error err;
	char summary[1024];
	struct node_feature_updates updates = { 0 };
	struct node_feature_updates *want = s->cfg->write_features == EFA_YES ? &updates : NULL;
	int not_modified;

	int rc = assembly_read(&s->cluster, true, &fresh, &not_modified, want, &rerr);

	/* slurmrestd 22.05 sometimes fails a conditional request that a plain
	 * one answers (HTTP 500, "Unspecified error"): ask again in full. */
	if (rc && s->cluster.since > 0 && rerr.at == ASSEMBLY_AT_SLURMRESTD &&
	    (rerr.rest.code == SLURMREST_E_SLURM || rerr.rest.code == SLURMREST_E_HTTP)) {
		if (!s->conditional_failed)
			log_line("a conditional request failed (%s); asking for everything instead",
			    rerr.message);
		s->conditional_failed = 1;
		s->cluster.since = 0;
		rc = assembly_read(&s->cluster, true, &fresh, &not_modified, want, &rerr);
	}
	if (rc) {
		if (s->have_last)
			log_line("%s; keeping the last good snapshot %s (from %lld)", rerr.message, s->path,
			    (long long)s->last.generated);
		else
			log_line("%s; no snapshot written yet", rerr.message);
		/* After a failure, ask for everything: a conditional request is
		 * only as good as the answer it follows. */
		s->cluster.since = 0;
		s->failing = 1;
		return -1;
	}
	if (not_modified) {
		s->last.generated = (int64_t)time(NULL);
		if (!s->unchanged_logged) {
			log_line("nodes unchanged since %lld (conditional request answered 304); refreshing the snapshot's time only",
			    (long long)s->cluster.since);
			s->unchanged_logged = 1;
		}
	} else {
		if (s->have_last)
			efa_cluster_clear(&s->last);
		s->last = fresh;
		s->have_last = 1;
		s->unchanged_logged = 0;
	}
	if (topology_sync(&s->topo, s->cfg, &s->last, !not_modified, log_line) && want)
		compare_after_reload(s, &updates);
	write_features(s, &updates);
	node_feature_updates_clear(&updates);
	if (efa_snapshot_write(&s->last, s->path, &err)) {
		/* A full or read-only disk fails every round: say it once a
		 * minute, not every second. */
		time_t now = time(NULL);

		if (now - s->write_error_said >= WRITE_ERROR_EVERY) {
			log_line("%s; the previous snapshot stays in place", err.msg);
			s->write_error_said = now;
		}
		return -1;
	}
	/* The JSON is current either way: a compact form that could not be
	 * written is older than it, which readers see and skip. */
	if (efa_snapshot_write_compact(&s->last, s->path, &err)) {
		time_t now = time(NULL);

		if (now - s->write_error_said >= WRITE_ERROR_EVERY) {
			log_line("%s; the bridge reads the JSON snapshot instead (slower)", err.msg);
			s->write_error_said = now;
		}
	} else {
		s->write_error_said = 0;
	}
	if (!not_modified || s->failing) {
		describe(&s->last, summary, sizeof(summary));
		log_line("wrote %s: %zu nodes from %s (Slurm %s, %s): %s", s->path, s->last.nnodes, s->url,
		    s->last.slurm_version ? s->last.slurm_version : "?",
		    s->last.api_version ? s->last.api_version : "?", summary);
	}
	s->failing = 0;
	return 0;
}

int cmd_sync(int argc, char **argv, const struct cli_common *common)
{
	struct cli_rest rest_opts = { 0 };
	struct syncer s = { 0 };
	struct efa_config *cfg = NULL;
	const char *path = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	struct efa_error err;
	long interval = 10;
	int once = 0, rc = EXIT_USAGE;

	for (int i = 1; i < argc; i++) {
		const char *value;
		int used, taken;
		char *end;

		if (cli_rest_option(argv[i], argv[i + 1], &rest_opts, &used))
			return EXIT_USAGE;
		if (used) {
			i += used - 1;
		} else if (!strcmp(argv[i], "--once")) {
			once = 1;
		} else if ((taken = cli_option_value(argv[i], argv[i + 1], "--interval", &value, &used))) {
			if (taken < 0)
				return EXIT_USAGE;
			i += used - 1;
			interval = strtol(value, &end, 10);
			if (*end || !*value || interval < 1) {
				fprintf(stderr, "slurm-efa sync: --interval takes whole seconds >= 1\n");
				return EXIT_USAGE;
			}
		} else if ((taken = cli_option_value(argv[i], argv[i + 1], "--snapshot", &path, &used))) {
			if (taken < 0)
				return EXIT_USAGE;
			i += used - 1;
		} else {
			fprintf(stderr, "slurm-efa sync: unexpected argument '%s'\n%s", argv[i], cmd_sync_usage);
			return EXIT_USAGE;
		}
	}
	if (efa_config_find_and_load(common->config, &cfg, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		return EXIT_USAGE;
	}
	if (cfg->write_features == EFA_YES && cfg->zone_source == EFA_SOURCE_FEATURES &&
	    cfg->topology_source == EFA_SOURCE_FEATURES) {
		fprintf(stderr, "slurm-efa sync: WriteFeatures=yes writes what ZoneSource= or TopologySource= learn elsewhere; with both =features there is nothing to write: set one to kubernetes or ec2, or drop WriteFeatures=\n");
		goto out;
	}
	s.cfg = cfg;
	s.url = rest_opts.url ? rest_opts.url : cfg->rest_url;
	s.path = path ? path : cfg->snapshot;
	if (!(s.rest = cli_rest_open(cfg, &rest_opts)))
		goto out;
	s.cluster = (struct assembly){ .rest = s.rest, .cfg = cfg, .url = s.url };
	if (once) {
		rc = sync_once(&s) ? EXIT_REFUSED : 0;
		if (efa_repair_configured(cfg))
			repair_round(&s.repair, s.rest, cfg, log_line);
		goto out;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	log_line("polling %s every %ld s into %s%s", s.url, interval, s.path,
		 efa_repair_configured(cfg) ? "; repairing the nodes slurm-efa drains (RepairAction=)" : "");
	while (!stopping) {
		struct timespec pause = { .tv_sec = interval };

		sync_once(&s);
		if (efa_repair_configured(cfg))
			repair_round(&s.repair, s.rest, cfg, log_line);
		while (!stopping && nanosleep(&pause, &pause) && errno == EINTR)
			;
	}
	log_line("stopping");
	rc = 0;
out:
	if (s.have_last)
		efa_cluster_clear(&s.last);
	assembly_clear(&s.cluster);
	slurmrest_free(s.rest);
	efa_config_free(cfg);
	return rc;
}
