/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/base/atomic_write.h"
#include "common/usage/metrics.h"

int efa_metrics_dir_check(const char *dir, struct efa_error *err)
{
	struct stat st;

	if (stat(dir, &st))
		return efa_error_set(err, "MetricsDir=%s: %s: create it, the directory node_exporter's --collector.textfile.directory reads",
				     dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return efa_error_set(err, "MetricsDir=%s is not a directory", dir);
	if (st.st_mode & S_IWOTH)
		return efa_error_set(err, "MetricsDir=%s is writable by others, who could plant the node's figures: chmod o-w it",
				     dir);
	return 0;
}

/* A label value as the text format wants it: \, " and newline escaped. */
static void label(FILE *out, const char *value)
{
	for (; *value; value++) {
		if (*value == '\\' || *value == '"')
			fprintf(out, "\\%c", *value);
		else if (*value == '\n')
			fputs("\\n", out);
		else
			fputc(*value, out);
	}
}

static void family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void device_counters(FILE *out, const char *node, const struct efa_hw_reading *now)
{
	for (int c = 0; c < EFA_HW_NCOUNTERS; c++) {
		bool named = false;

		for (size_t i = 0; i < now->nports; i++) {
			const struct efa_port_counters *p = &now->ports[i];
			char name[128];

			if (!(p->have & (1u << c)))
				continue;
			snprintf(name, sizeof(name), "slurm_efa_device_%s", efa_hw_counter_info[c].metric);
			if (!named) {
				fprintf(out, "# HELP %s %s (EFA port counter %s)\n# TYPE %s counter\n",
					name, efa_hw_counter_info[c].help, efa_hw_counter_info[c].file, name);
				named = true;
			}
			fprintf(out, "%s{node=\"", name);
			label(out, node);
			fputs("\",device=\"", out);
			label(out, p->device);
			fputs("\",port=\"", out);
			label(out, p->port);
			fprintf(out, "\"} %" PRIu64 "\n", p->value[c]);
		}
	}
}

static void job_labels(FILE *out, const char *name, const char *node,
		       const struct efa_job_usage *j)
{
	fprintf(out, "%s{node=\"", name);
	label(out, node);
	fprintf(out, "\",job_id=\"%" PRIu32 "\",user=\"", j->job_id);
	label(out, j->user);
	fputs("\",partition=\"", out);
	label(out, j->partition);
	fputs("\"}", out);
}

static void job_totals(FILE *out, const char *node, const struct efa_job_usage *jobs,
		       size_t njobs)
{
	if (!njobs)
		return;
	for (int c = 0; c < EFA_HW_NCOUNTERS; c++) {
		bool named = false;

		for (size_t i = 0; i < njobs; i++) {
			char name[128];

			if (!(jobs[i].have & (1u << c)))
				continue;
			snprintf(name, sizeof(name), "slurm_efa_job_%s", efa_hw_counter_info[c].metric);
			if (!named) {
				fprintf(out, "# HELP %s %s by the job's steps on the node's EFA devices\n# TYPE %s counter\n",
					name, efa_hw_counter_info[c].help, name);
				named = true;
			}
			job_labels(out, name, node, &jobs[i]);
			fprintf(out, " %" PRIu64 "\n", jobs[i].total[c]);
		}
	}
	family(out, "slurm_efa_job_running", "gauge", "1 while the job runs on the node, 0 once it ended there");
	for (size_t i = 0; i < njobs; i++) {
		job_labels(out, "slurm_efa_job_running", node, &jobs[i]);
		fprintf(out, " %d\n", jobs[i].end ? 0 : 1);
	}
	family(out, "slurm_efa_job_shared", "gauge",
	       "1 when another job's step ran on the node beside one of the job's: its figures are the node's, not its own");
	for (size_t i = 0; i < njobs; i++) {
		job_labels(out, "slurm_efa_job_shared", node, &jobs[i]);
		fprintf(out, " %d\n", jobs[i].shared ? 1 : 0);
	}
	family(out, "slurm_efa_job_steps_ended_total", "counter", "Steps of the job that ended on the node");
	for (size_t i = 0; i < njobs; i++) {
		job_labels(out, "slurm_efa_job_steps_ended_total", node, &jobs[i]);
		fprintf(out, " %u\n", jobs[i].steps);
	}
	family(out, "slurm_efa_job_hangs_total", "counter",
	       "Hangs found in the job's steps while they ran on the node (HangAfter=): nothing moved on any of its nodes");
	for (size_t i = 0; i < njobs; i++) {
		job_labels(out, "slurm_efa_job_hangs_total", node, &jobs[i]);
		fprintf(out, " %u\n", jobs[i].hangs);
	}
	family(out, "slurm_efa_job_sick_links_total", "counter",
	       "Times the node's EFA link was named sick in the job's steps (SickLinks=yes): its errors per packet sent far above its peers'");
	for (size_t i = 0; i < njobs; i++) {
		job_labels(out, "slurm_efa_job_sick_links_total", node, &jobs[i]);
		fprintf(out, " %u\n", jobs[i].sick_links);
	}
	family(out, "slurm_efa_job_start_time_seconds", "gauge",
	       "When the job's first step started on the node, in seconds since the epoch");
	for (size_t i = 0; i < njobs; i++) {
		job_labels(out, "slurm_efa_job_start_time_seconds", node, &jobs[i]);
		fprintf(out, " %lld\n", (long long)jobs[i].start);
	}
}

char *efa_metrics_render(const char *node, const struct efa_hw_reading *now,
			 const struct efa_job_usage *jobs, size_t njobs, time_t when)
{
	char *text = NULL;
	size_t size;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return NULL;
	device_counters(out, node, now);
	job_totals(out, node, jobs, njobs);
	family(out, "slurm_efa_metrics_time_seconds", "gauge",
	       "When slurm-efa last wrote these figures, in seconds since the epoch");
	fputs("slurm_efa_metrics_time_seconds{node=\"", out);
	label(out, node);
	fprintf(out, "\"} %lld\n", (long long)when);
	if (fclose(out)) {
		free(text);
		return NULL;
	}
	return text;
}

int efa_metrics_write(const char *dir, const char *node, const struct efa_hw_reading *now,
		      const struct efa_job_usage *jobs, size_t njobs, time_t when,
		      struct efa_error *err)
{
	char path[4096], *text;
	int rc;

	if (efa_metrics_dir_check(dir, err))
		return -1;
	if (snprintf(path, sizeof(path), "%s/slurm_efa_%s.prom", dir, node) >= (int)sizeof(path))
		return efa_error_set(err, "MetricsDir=%s is too long", dir);
	text = efa_metrics_render(node, now, jobs, njobs, when);
	if (!text)
		return efa_error_set(err, "out of memory writing the metrics");
	/* Readable by node_exporter, which runs as its own user. */
	rc = efa_write_replace(path, text, strlen(text), 0644, err);
	free(text);
	return rc;
}

int efa_metrics_update(const char *dir, const char *store, const char *node,
		       const struct efa_hw_reading *now, time_t when, struct efa_error *err)
{
	struct efa_job_usage *jobs = NULL;
	size_t njobs = 0;
	int rc;

	if (efa_usage_jobs(store, now, &jobs, &njobs, err))
		return -1;
	rc = efa_metrics_write(dir, node, now, jobs, njobs, when, err);
	free(jobs);
	return rc;
}
