/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One sample of what a node sees of a job (hang.h). Its EFA ports'
 * traffic is read again from the step's start reading: sysfs answers at
 * once. Its output files' sizes, the newest write in its checkpoint
 * directory and its heartbeat file's time are read in a child with a
 * deadline: a hung FSx for Lustre or NFS client leaves a reader waiting
 * for ever, and the child, not the caller, is left behind (child.h). What
 * the child could not say in time is not known, which never counts as
 * "nothing moved" (efa_hang_add).
 */
#ifndef EFA_HEALTH_HANG_PROBE_H
#define EFA_HEALTH_HANG_PROBE_H

#include <sys/types.h>

#include "common/base/error.h"
#include "common/health/hang.h"
#include "common/node/hw_counters.h"

/* Entries looked at in a directory: the checkpoint directory, then its
 * newest subdirectory (the save being written). */
#define EFA_HANG_DIR_ENTRIES_MAX 4096

struct efa_hang_probe {
	const struct efa_hw_reading *start;	/* the step's start reading: which ports */
	const char *root;			/* the node's root (root=); NULL or "" for / */
	const char *const *outputs;		/* the job's output files, NULL-ended; may be NULL */
	const char *checkpoint_dir;		/* NULL: none */
	const char *heartbeat;			/* NULL: none */
	uid_t heartbeat_owner;			/* a heartbeat file of another owner is not read */
	long timeout_ms;			/* the file systems' deadline */
};

/* The counters a sample reads for traffic, and for a node's own link
 * (bits 1 << enum efa_hw_counter): what a watched step's start reading
 * must have for them. */
uint32_t efa_hang_probe_traffic_counters(void);
uint32_t efa_hang_probe_link_counters(void);

/* Whether start has a port that counts traffic: a node without one
 * cannot tell a hang from a computation, and is not watched. */
bool efa_hang_probe_usable(const struct efa_hw_reading *start);

/* Whether start has a port that counts its own link's errors and its
 * packets sent (retrans_pkts or retrans_timeout_events, and tx_pkts). */
bool efa_hang_probe_link_usable(const struct efa_hw_reading *start);

/*
 * Fills s, taken at now (seconds). Traffic is known when every port of
 * the start reading was read again with every counter it had, as numbers;
 * it is then the sum of their bytes and packets, both ways, RDMA too.
 * Output is known when one output file or more is a regular file (not
 * /dev/null, a pipe or a terminal); a checkpoint or heartbeat time when
 * the path could be looked at. Times are nanoseconds. Returns -1 with err
 * only when memory runs out or no child could start.
 */
int efa_hang_probe_take(const struct efa_hang_probe *p, int64_t now, struct efa_hang_sample *s,
			struct efa_error *err);

#endif
