/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What one node's figures for a step that ended say to its user:
 *
 * - the silent fall-back: a step on several nodes that ran for a while and
 *   moved next to nothing over the node's EFA devices did its talking
 *   another way (NCCL on its socket transport, gloo, MPI over TCP), at a
 *   fraction of the bandwidth, and nothing else says so;
 * - the fabric's error counters (the efa driver's SRD network statistics:
 *   retransmit timeouts, unresponsive remotes, impaired connections) that
 *   rose while it ran: collectives that slowed down or hung.
 *
 * The figures are the node's devices': with another job's step beside it
 * (efa_step_usage.shared) a fall-back is still certain (the devices moved
 * nothing at all), errors may be the other job's.
 */
#ifndef EFA_USAGE_VERDICT_H
#define EFA_USAGE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/usage/usage.h"

/*
 * Below this a step on several nodes did not use EFA: a collective over
 * EFA moves its whole buffer through every node's devices, and the
 * smallest model's gradients are megabytes; what moves without it (a
 * peer's address exchange, a health probe) is kilobytes.
 */
#define EFA_FALLBACK_BYTES (1024 * 1024)

struct efa_step_verdict {
	/* Bytes over the node's EFA devices: sent, received, and RDMA read
	 * and written either way, as the devices count them. */
	uint64_t moved;
	bool counted;		/* some device had a byte counter */
	long seconds;		/* how long the step ran on the node */
	bool fallback;
	/* "EFA device D: port P: retrans_timeout_events rose by 3; ...";
	 * "" when none rose. */
	char errors[512];
};

/*
 * Judges a step's figures on one node: nnodes, the step's node count (a
 * step on one node needs no network); fallback_after, FallbackAfter=
 * (seconds; 0: never a fall-back).
 */
void efa_step_judge(const struct efa_step_usage *used, unsigned nnodes, long fallback_after,
		    struct efa_step_verdict *v);

/*
 * The counters efa_step_judge reads (bits 1 << enum efa_hw_counter) for a
 * step that ran seconds (LONG_MAX: not known yet, at its start): the
 * error counters always, the byte counters only where a fall-back can be
 * judged (seconds at least fallback_after). A step's readings need no
 * other for its verdict.
 */
uint32_t efa_step_judge_counters(long seconds, long fallback_after);

/* The byte counters whose sum is efa_step_verdict.moved. */
uint32_t efa_step_moved_counters(void);

#endif
