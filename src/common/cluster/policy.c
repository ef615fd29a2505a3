/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/checkpoint/checkpoint.h"
#include "common/cluster/constraint.h"
#include "common/cluster/policy.h"
#include "common/config/mode.h"

void efa_decision_clear(struct efa_decision *d)
{
	free(d->features);
	free(d->checkpoint_dir);
	memset(d, 0, sizeof(*d));
}

static int reject(struct efa_decision *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int reject(struct efa_decision *d, const char *fmt, ...)
{
	va_list ap;

	d->verdict = EFA_VERDICT_REJECT;
	va_start(ap, fmt);
	vsnprintf(d->message, sizeof(d->message), fmt, ap);
	va_end(ap);
	return 1;	/* decided */
}

static int check_efa(const struct efa_partition *part, const struct efa_job_request *req,
		     struct efa_decision *d)
{
	enum efa_mode mode = EFA_MODE_UNSET;
	struct efa_error err;

	if (!req->efa)
		return 0;
	if (efa_mode_parse(req->efa, &mode, &err))
		return reject(d, "efa: %s", err.msg);
	if (part->efa == EFA_MODE_REQUIRED && mode == EFA_MODE_OFF)
		return reject(d, "efa: partition %s requires EFA (EFA=required): remove --efa=off, or submit to a partition without EFA",
			      part->name);
	if (part->efa == EFA_MODE_OFF && (mode == EFA_MODE_REQUIRED || mode == EFA_MODE_AUTO))
		return reject(d, "efa: partition %s has no EFA (EFA=off): remove --efa, or submit to a partition of EFA instances",
			      part->name);
	return 0;
}

/*
 * The checkpoint directory in this partition. Where the job may run in
 * several, it is recorded only when they all agree (*mixed otherwise):
 * the node decides from the partition the job runs in.
 */
static int check_checkpoint(const struct efa_partition *part, const struct efa_job_request *req,
			    bool *mixed, struct efa_decision *d)
{
	char path[EFA_CKPT_PATH_MAX];
	struct efa_error err;

	if (!part->checkpoint_root)
		return 0;
	if (req->checkpoint_dir) {
		if (efa_checkpoint_allowed(part->checkpoint_root, req->checkpoint_dir, path,
					   sizeof(path), &err))
			return reject(d, "efa: --checkpoint-dir: %s", err.msg);
	} else {
		/* The job id is not known yet; a name that cannot be a
		 * directory leaves the choice to the node (<root>/<user>/<id>). */
		if (!req->user || !efa_checkpoint_name_ok(req->job_name ? req->job_name : ""))
			return 0;
		if (efa_checkpoint_default(part->checkpoint_root, req->user, req->job_name, 0,
					   req->array ? "%a" : NULL, path, sizeof(path), &err))
			return 0;
	}
	if (d->checkpoint_dir && strcmp(d->checkpoint_dir, path))
		*mixed = true;
	else if (!d->checkpoint_dir && !(d->checkpoint_dir = strdup(path)))
		return -1;
	return 0;
}

/*
 * Whether the job is resumable: its --efa-resume, else the largest
 * Resume= of its partitions (the node applies the one it runs in).
 */
static int check_resume(const struct efa_config *cfg, const struct efa_job_request *req,
			long partitions_resume, struct efa_decision *d)
{
	long option = EFA_RESUME_UNSET;
	struct efa_error err;

	if (req->resume && efa_resume_parse(req->resume, &option, &err))
		return reject(d, "efa: %s", err.msg);
	d->resume = option != EFA_RESUME_UNSET ? option :
		    partitions_resume > 0 ? partitions_resume : 0;
	if (d->resume <= 0)
		return 0;
	d->requeue = true;
	d->expedite = cfg->resume_expedite == EFA_YES;
	efa_strlcatf(d->detail, sizeof(d->detail), "resumable up to %ld times%s. ", d->resume,
		     d->expedite ? ", expedited" : "");
	return 0;
}

/* Usable nodes of each zone within the partition, zones best first. */
struct zone_count {
	const struct efa_cluster_zone *zone;
	size_t usable;
};

static int by_usable(const void *a, const void *b)
{
	const struct zone_count *x = a, *y = b;

	if (x->usable != y->usable)
		return x->usable < y->usable ? 1 : -1;
	return strcmp(x->zone->name, y->zone->name);
}

/*
 * One zone for a job that may run in any of parts (those with
 * SingleZone=yes among its partitions): a zone is eligible when one of
 * them has enough usable nodes there, best first; the constraint holds
 * wherever the job runs.
 */
static int single_zone(const struct efa_config *cfg, const struct efa_cluster *snap,
		       const char *problem, int64_t now, const struct efa_partition *const *parts,
		       size_t nparts, const struct efa_job_request *req, struct efa_decision *d)
{
	struct zone_count counts[64];
	char *eligible[65], names[256] = "";
	size_t nz = 0, ne = 0, min = req->min_nodes ? req->min_nodes : 1;
	struct efa_error err;
	int rc;

	if (req->max_nodes == 1)
		return 0;	/* one node is always in one zone */
	if (!snap || now - snap->generated > cfg->snapshot_max_age) {
		char why[512];

		if (snap)
			snprintf(why, sizeof(why), "the zone snapshot is %lld s old (SnapshotMaxAge=%ld)",
				 (long long)(now - snap->generated), cfg->snapshot_max_age);
		else
			snprintf(why, sizeof(why), "%s", problem ? problem : "no zone snapshot");
		if (cfg->on_snapshot_missing == EFA_ON_MISSING_REJECT)
			return reject(d, "efa: cannot place this job in one Availability Zone now: %s. Retry in a minute; cluster admins: check that slurm-efa sync is running",
				      why);
		efa_strlcatf(d->log, sizeof(d->log),
			     "%s: accepting without a zone constraint (OnSnapshotMissing=accept); check slurm-efa sync. ",
			     why);
		return 0;
	}
	for (size_t p = 0; p < nparts; p++)
		efa_strlcatf(names, sizeof(names), "%s%s", p ? "," : "", parts[p]->name);
	for (size_t i = 0; i < snap->nzones && nz < sizeof(counts) / sizeof(counts[0]); i++) {
		size_t members = 0, usable = 0;

		for (size_t p = 0; p < nparts; p++) {
			size_t m, u;

			efa_zone_in_partition(&snap->zones[i], parts[p]->name, &m, &u);
			members += m;
			if (u > usable)
				usable = u;
		}
		if (members)
			counts[nz++] = (struct zone_count){ &snap->zones[i], usable };
	}
	if (!nz)
		return reject(d, "efa: partition %s has no node with a zone feature (%s<zone>), so a multi-node job cannot be kept in one zone: cluster admins: give the nodes their zone feature and check slurm-efa sync",
			      names, snap->zone_prefix ? snap->zone_prefix : cfg->zone_feature_prefix);
	qsort(counts, nz, sizeof(counts[0]), by_usable);
	for (size_t i = 0; i < nz; i++)
		if (counts[i].usable >= min)
			eligible[ne++] = counts[i].zone->feature;
	eligible[ne] = NULL;
	if (!ne)
		return reject(d, "efa: no Availability Zone in partition %s has %zu usable nodes, and EFA jobs cannot span zones: the largest, %s, has %zu. Ask for at most %zu nodes, or wait for nodes to return",
			      names, min, counts[0].zone->name, counts[0].usable, counts[0].usable);
	rc = efa_constraint_single_zone(req->features, eligible,
					snap->zone_prefix ? snap->zone_prefix : cfg->zone_feature_prefix,
					&d->features, &err);
	if (rc < 0)
		return -1;
	if (rc == EFA_CONSTRAINT_REFUSE)
		return reject(d, "efa: %s", err.msg);
	if (rc == EFA_CONSTRAINT_SET)
		efa_strlcatf(d->detail, sizeof(d->detail), "constraint '%s' -> '%s'. ",
			     req->features ? req->features : "", d->features);
	return 0;
}

#define PARTITIONS_MAX 32

/* The next of a job's comma-separated partitions, as efa.conf describes
 * it (NULL when it says nothing about it); *list moves past it. */
static const struct efa_partition *next_partition(const struct efa_config *cfg, const char **list)
{
	const char *p = *list;
	size_t len = strcspn(p, ",");
	char name[256];

	snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1), p);
	*list = p + len + (p[len] ? 1 : 0);
	return efa_config_partition(cfg, name);
}

int efa_policy_decide(const struct efa_config *cfg, const struct efa_cluster *snapshot,
		      const char *snapshot_problem, int64_t now,
		      const struct efa_job_request *req, struct efa_decision *d)
{
	const struct efa_partition *single[PARTITIONS_MAX];
	size_t nsingle = 0;
	long partitions_resume = 0;
	bool mixed = false;
	int rc;

	memset(d, 0, sizeof(*d));
	/* A job may run in any partition it lists: each one's policy holds. */
	for (const char *p = req->partition; p && *p;) {
		const struct efa_partition *part = next_partition(cfg, &p);

		if (!part)
			continue;	/* efa.conf says nothing about this partition */
		if (check_efa(part, req, d))
			return 0;
		rc = check_checkpoint(part, req, &mixed, d);
		if (rc < 0) {
			efa_decision_clear(d);
			return -1;
		}
		if (rc)
			return 0;
		if (part->single_zone == EFA_YES && nsingle < PARTITIONS_MAX)
			single[nsingle++] = part;
		if (part->resume > partitions_resume)
			partitions_resume = part->resume;
	}
	if (check_resume(cfg, req, partitions_resume, d))
		return 0;
	if (mixed) {
		efa_strlcatf(d->log, sizeof(d->log),
			     "its partitions put checkpoints in different places: the node decides. ");
		free(d->checkpoint_dir);
		d->checkpoint_dir = NULL;
	}
	if (nsingle) {
		rc = single_zone(cfg, snapshot, snapshot_problem, now, single, nsingle, req, d);
		if (rc < 0) {
			efa_decision_clear(d);
			return -1;
		}
		if (rc)
			return 0;
	}
	if (d->features || d->checkpoint_dir || d->requeue)
		d->verdict = EFA_VERDICT_CHANGE;
	return 0;
}

bool efa_policy_any_checkpoint_signal(const struct efa_config *cfg)
{
	for (size_t i = 0; i < cfg->npartitions; i++)
		if (cfg->partitions[i].checkpoint_signal.number)
			return true;
	return false;
}

int efa_policy_checkpoint_signal(const struct efa_config *cfg, const char *partitions,
				 const char *efa, char *out, size_t size)
{
	enum efa_mode mode = EFA_MODE_UNSET;
	struct efa_error err;

	if (efa && efa_mode_parse(efa, &mode, &err))
		return 0;	/* refused at submission, with the reason */
	for (const char *p = partitions; p && *p;) {
		const struct efa_partition *part = next_partition(cfg, &p);
		enum efa_mode used;

		if (!part || !part->checkpoint_signal.number)
			continue;
		/* The user's --efa, else what the partition gives every job;
		 * no job uses EFA where the partition has none. */
		used = part->efa == EFA_MODE_OFF ? EFA_MODE_OFF :
		       mode != EFA_MODE_UNSET ? mode : part->efa;
		if (used != EFA_MODE_AUTO && used != EFA_MODE_REQUIRED)
			continue;
		return efa_signal_batch_option(&part->checkpoint_signal, out, size) ? -1 : 1;
	}
	return 0;
}
