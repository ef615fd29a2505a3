/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Sick links (SickLinks=yes in efa.conf) for one --efa step on one node,
 * from the step's watch (hang_step.h), when the start reading has the
 * link's counters, at each sample: the node's
 * own link's errors per packet sent since the step started (retransmitted
 * packets and retransmit timeouts; hang_probe.h says which counters),
 * compared with its peers' in the step (common/health/hang.h). A node
 * above SickLinkFloor= sets its rate in the job's record and reads the
 * others'; a peer that set none is counted at the floor. A node that
 * stands out at two samples in a row names itself: a line on the job's
 * stderr, a "sick" entry in its record, slurm_efa_job_sick_links_total,
 * and with SickLinkDrain=yes a drain through Slurm's API (the job goes on;
 * a node already drained or down, an admin's, is left as it is).
 */
#ifndef SPANK_EFA_LINK_STEP_H
#define SPANK_EFA_LINK_STEP_H

#include <stdbool.h>
#include <stdint.h>

#include "common/health/hang.h"
#include "step.h"

/* One node's view of its link in one step: zero it to start. */
struct efa_link_watch {
	unsigned standing_out;	/* samples in a row it stood out */
	bool named;		/* said once: the watch is done */
};

/* At each sample s of run (the job's restart count). */
void efa_link_check(struct efa_step *step, uint32_t run, const struct efa_hang_sample *s,
		    struct efa_link_watch *lw);

#endif
