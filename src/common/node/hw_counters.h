/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What an EFA device moved and what went wrong on it: the port statistics
 * the efa driver publishes under
 * /sys/class/infiniband/DEV/ports/N/hw_counters/ (efa_verbs.c,
 * EFA_DEFINE_PORT_STATS, filled by efa_fill_port_stats from the device's
 * basic, messages, RDMA read, RDMA write and network statistics). Which
 * files a device has depends on the device and the driver: RDMA write
 * counters only where the device can write (EFA_DEV_CAP RDMA_WRITE), the
 * network ones from Nitro v4 on. A reading holds only what the device has.
 *
 * All counters only grow while the driver is loaded; a value lower than
 * an earlier one means it started again (a driver reload).
 */
#ifndef EFA_HW_COUNTERS_H
#define EFA_HW_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "common/node/node.h"

enum efa_hw_counter {
	EFA_HW_TX_BYTES,
	EFA_HW_TX_PKTS,
	EFA_HW_RX_BYTES,
	EFA_HW_RX_PKTS,
	EFA_HW_RDMA_READ_BYTES,		/* read from peers by this device */
	EFA_HW_RDMA_READ_RESP_BYTES,	/* sent in answer to peers' reads */
	EFA_HW_RDMA_WRITE_BYTES,	/* written to peers */
	EFA_HW_RDMA_WRITE_RECV_BYTES,	/* written here by peers */
	EFA_HW_RETRANS_BYTES,
	EFA_HW_RETRANS_PKTS,
	EFA_HW_RETRANS_TIMEOUT_EVENTS,
	EFA_HW_UNRESPONSIVE_REMOTE_EVENTS,
	EFA_HW_IMPAIRED_REMOTE_CONN_EVENTS,
	EFA_HW_NCOUNTERS
};

struct efa_hw_counter_info {
	const char *file;	/* the driver's name, under hw_counters/ */
	const char *metric;	/* Prometheus's name: base unit, then _total */
	const char *help;
};

extern const struct efa_hw_counter_info efa_hw_counter_info[EFA_HW_NCOUNTERS];

struct efa_port_counters {
	char device[64];
	char port[16];
	uint32_t have;		/* bit c: counter c was read */
	uint64_t value[EFA_HW_NCOUNTERS];
};

struct efa_hw_reading {
	struct efa_port_counters *ports;
	size_t nports;
	/* Files that were there but held no number: said, never counted. */
	char problems[512];
};

/* Every counter, as a mask of bits 1 << enum efa_hw_counter. */
#define EFA_HW_ALL ((1u << EFA_HW_NCOUNTERS) - 1)

/* The n counters in c as such a mask. */
uint32_t efa_hw_mask(const enum efa_hw_counter *c, size_t n);

/*
 * Reads every port of the node's EFA devices under root. A counter file
 * that is missing is left out; one that is empty or holds no number is
 * left out and named in problems. -1 with err only when root cannot be
 * opened or memory runs out.
 */
int efa_hw_read(const struct efa_node *node, const char *root, struct efa_hw_reading *r,
		struct efa_error *err);

/*
 * The same, for the counters in want only (bits 1 << enum efa_hw_counter):
 * each counter is a file of its own, opened, read and closed, so a reader
 * that needs a few of a port's thirteen reads only those.
 */
int efa_hw_read_some(const struct efa_node *node, const char *root, uint32_t want,
		     struct efa_hw_reading *r, struct efa_error *err);

/*
 * The ports and counters before has, of those in want, read again (a
 * step's end, against its start): no directory is listed, and ports
 * without such counters cost nothing. A counter or port gone since is
 * left out, as efa_hw_read leaves out what is missing.
 */
int efa_hw_read_again(const struct efa_hw_reading *before, const char *root, uint32_t want,
		      struct efa_hw_reading *r, struct efa_error *err);

void efa_hw_reading_clear(struct efa_hw_reading *r);

/*
 * What moved between two readings, per port of after (ports matched by
 * device and port): only counters both readings have. A counter lower in
 * after than in before started again in between: its delta is its value
 * in after (what it counted since), and the port is named in notes. A port
 * missing from before is left out. -1 only when memory runs out.
 */
int efa_hw_delta(const struct efa_hw_reading *before, const struct efa_hw_reading *after,
		 struct efa_hw_reading *delta, char *notes, size_t size);

/* The sum over ports of one counter, and whether any port had it. */
bool efa_hw_sum(const struct efa_hw_reading *r, enum efa_hw_counter c, uint64_t *sum);

/*
 * A reading as text, one "DEVICE PORT FILE VALUE" line per counter, and
 * back: how a reading is kept in a file between two moments. Lines that
 * do not parse are skipped on the way back.
 */
char *efa_hw_format(const struct efa_hw_reading *r);
int efa_hw_parse(const char *text, struct efa_hw_reading *r);

#endif
