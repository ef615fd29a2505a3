/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a job still does anything on a node, from what the node can see
 * of it without touching it: the EFA devices' byte and packet counters,
 * the job's output files, its checkpoint directory and its heartbeat
 * file. A node that sees none of them move for HangAfter= is quiet; a
 * job is hung only when every node of its steps is (who combines the
 * nodes' verdicts is the caller's part). Evidence that cannot be judged
 * (counters that vanished, went backwards or stopped being numbers) is
 * never quiet: the watch starts again from it.
 */
#ifndef EFA_HEALTH_HANG_H
#define EFA_HEALTH_HANG_H

#include <stdbool.h>
#include <stdint.h>

/* What a node saw of a job at one moment. A source that could not be
 * read (output to /dev/null or a pipe, no checkpoint directory, a file
 * system that did not answer) is not known: it can show activity only
 * while it is known at two samples in a row. */
struct efa_hang_sample {
	int64_t at;			/* seconds, a clock that never goes back */
	bool traffic_known;		/* every port's counters read, as numbers */
	uint64_t traffic;		/* their sum: bytes and packets, both ways */
	unsigned ports;			/* how many ports it sums */
	bool output_known;
	uint64_t output;		/* the output files' sizes, summed */
	bool checkpoint_known;
	int64_t checkpoint;		/* the newest write in the checkpoint directory */
	bool heartbeat_known;
	int64_t heartbeat;		/* the heartbeat file's modification time */
	/* The node's own link since the step's start (sick links): its
	 * retransmitted packets and retransmit timeouts, and the packets it
	 * sent; known when every port has them and none went back. */
	bool link_known;
	uint64_t link_errors, link_sent;
};

enum efa_hang_seen {
	EFA_HANG_ACTIVE,	/* something moved since the last sample */
	EFA_HANG_QUIET,		/* nothing did */
	EFA_HANG_UNKNOWN,	/* the traffic cannot be judged: the watch starts again */
};

/* One node's watch of one job: zero it to start. */
struct efa_hang_watch {
	bool started;
	struct efa_hang_sample last;
	int64_t active_at;	/* when it last saw something move, or started again */
};

/* Adds s, which is later than the last sample: what it shows. */
enum efa_hang_seen efa_hang_add(struct efa_hang_watch *w, const struct efa_hang_sample *s);

/* How long, at now, the node has seen nothing move (0 before a sample). */
int64_t efa_hang_quiet_for(const struct efa_hang_watch *w, int64_t now);

/*
 * Whether node self's link stands out among the n nodes of one step:
 * rates[i] is node i's own link's error rate over the step (its
 * retransmitted packets and retransmit timeouts per packet sent), negative
 * when not known (never a peer). It is sick when its rate is above floor
 * and more than factor times the median of the others' (*peers), so a
 * fabric that slows every node names nobody. 1 sick, 0 not, -1 when it
 * cannot be judged (its own rate or every peer's unknown, or out of memory).
 */
int efa_sick_link(const double *rates, unsigned n, unsigned self, double floor, double factor,
		  double *peers);

#endif
