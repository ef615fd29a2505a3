/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node's EFA figures for Prometheus, as a file node_exporter's textfile
 * collector serves (--collector.textfile.directory=MetricsDir): every EFA
 * port's counters, and the totals of the jobs the node ran (usage.h),
 * labelled with job id, user and partition. Names follow Prometheus's
 * conventions: a slurm_efa_ prefix, base units, _total on counters.
 *
 * The file, MetricsDir/slurm_efa_NODE.prom, is replaced whole (a
 * temporary file beside it, then rename), so a scrape never sees half of
 * one; node_exporter reads only names ending in .prom.
 */
#ifndef EFA_METRICS_H
#define EFA_METRICS_H

#include <stddef.h>
#include <time.h>

#include "common/base/error.h"
#include "common/node/hw_counters.h"
#include "common/usage/usage.h"

/*
 * Whether MetricsDir= can be written to: it exists, is a directory and
 * is not writable by others (anyone could then plant figures node_exporter
 * serves as the node's). -1 with err saying which and what to do.
 */
int efa_metrics_dir_check(const char *dir, struct efa_error *err);

/* The file's text, malloc'd; NULL on ENOMEM. */
char *efa_metrics_render(const char *node, const struct efa_hw_reading *now,
			 const struct efa_job_usage *jobs, size_t njobs, time_t when);

/* Checks dir, renders and replaces the node's file in it. */
int efa_metrics_write(const char *dir, const char *node, const struct efa_hw_reading *now,
		      const struct efa_job_usage *jobs, size_t njobs, time_t when,
		      struct efa_error *err);

/* The same with the jobs of the node's usage store (usage.h), running
 * jobs' totals up to reading now. */
int efa_metrics_update(const char *dir, const char *store, const char *node,
		       const struct efa_hw_reading *now, time_t when, struct efa_error *err);

#endif
