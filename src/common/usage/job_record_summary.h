/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The job record's summary (job_record.h) inside its files, from the
 * bottom up: job_record_values.c (the values as written),
 * job_record_events.c (what hang detection and sick links keep: read,
 * written, looked up), job_record.c (the summary in the AdminComment, its
 * steps and requeues), job_record_watch.c (the calls for the events).
 * Not installed, not for other callers.
 */
#ifndef EFA_JOB_RECORD_SUMMARY_H
#define EFA_JOB_RECORD_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/base/error.h"
#include "common/usage/job_record.h"

struct entry;	/* a step's entry (job_record.c) */

/* A watched step's quiet bits (job_record.h). */
struct quiet {
	uint32_t run, step, node_count;
	char *bits;
};

/* A step's nodes whose link rate passed the floor (job_record.h). */
struct link_above {
	uint32_t node;
	double rate;
};

struct links {
	uint32_t run, step, node_count;
	struct link_above *above;
	size_t n;
};

/* The summary as read from the AdminComment, and as written back. */
struct summary {
	struct entry *steps;
	size_t n;
	uint64_t dropped;
	struct efa_record_requeue *requeues;
	size_t nrequeues;
	struct quiet *quiet;
	size_t nquiet;
	struct efa_record_hang *hangs;
	size_t nhangs;
	struct links *links;
	size_t nlinks;
	struct efa_record_sick *sick;
	size_t nsick;
};

/* Where the summary is in an AdminComment, and what else it holds. */
struct located {
	bool object;		/* the comment is a JSON object */
	const char *efa, *efa_end;	/* the summary's value in it, or NULL */
	const char *close;	/* an object without one: its closing brace */
	bool members;		/*   and whether it has other members */
	size_t prefix;		/* text: bytes of the site's kept before it */
};

/* comment's summary into s, l where it stands (job_record.c); -1 out of
 * memory (s cleared). */
int efa_rec_summary_of(const char *comment, struct located *l, struct summary *s);

void efa_rec_summary_clear(struct summary *s);

/* The AdminComment with s in place of the summary l found, in *out;
 * clears s. -1 with err when out of memory or past what slurmdbd keeps. */
int efa_rec_written(const char *comment, const struct located *l, struct summary *s, char **out,
		    struct efa_error *err);

/* job_record_values.c: a hex digit, a "reported" string's count (-1 when
 * not one for node_count), an id from min (-1 if not), a string
 * unescaped and malloc'd (NULL: not one, or *oom). */
int efa_rec_hex_value(char c);
long efa_rec_reported_count(const char *bits, uint32_t node_count);
long long efa_rec_id_value(const char *value, long long min);
char *efa_rec_string_value(const char *value, const char *end, bool *oom);

/* job_record_events.c: the lists at quiet, hangs, links and sick (each
 * NULL when absent) into s; -1 out of memory. */
int efa_rec_read_events(struct summary *s, const char *quiet, const char *hangs,
			const char *links, const char *sick);

/* Writes s's events as members of the summary's object (",\"quiet\":[...]"):
 * -1 out of memory. */
int efa_rec_events_json(FILE *f, const struct summary *s);

/* Frees s's events. */
void efa_rec_events_clear(struct summary *s);

/* The events of run and step in s (job_record_events.c): its quiet bits
 * and link rates (NULL: none), whether it has a hang, and a sick node. */
struct quiet *efa_rec_find_quiet(const struct summary *s, uint32_t run, uint32_t step);
struct links *efa_rec_find_links(const struct summary *s, uint32_t run, uint32_t step);
bool efa_rec_holds_hang(const struct summary *s, uint32_t run, uint32_t step);
bool efa_rec_holds_sick(const struct summary *s, const struct efa_record_sick *k);

#endif
