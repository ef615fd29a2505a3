/* SPDX-License-Identifier: Apache-2.0 */
#include <inttypes.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/usage/verdict.h"

static const enum efa_hw_counter byte_counters[] = {
	EFA_HW_TX_BYTES,
	EFA_HW_RX_BYTES,
	EFA_HW_RDMA_READ_BYTES,
	EFA_HW_RDMA_READ_RESP_BYTES,
	EFA_HW_RDMA_WRITE_BYTES,
	EFA_HW_RDMA_WRITE_RECV_BYTES,
};

/* The counters the health check judges too (common/health/counters.h). */
static const enum efa_hw_counter error_counters[] = {
	EFA_HW_RETRANS_TIMEOUT_EVENTS,
	EFA_HW_UNRESPONSIVE_REMOTE_EVENTS,
	EFA_HW_IMPAIRED_REMOTE_CONN_EVENTS,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool may_fall_back(long seconds, long fallback_after)
{
	return fallback_after > 0 && seconds >= fallback_after;
}

uint32_t efa_step_moved_counters(void)
{
	return efa_hw_mask(byte_counters, COUNT(byte_counters));
}

uint32_t efa_step_judge_counters(long seconds, long fallback_after)
{
	return (may_fall_back(seconds, fallback_after) ? efa_step_moved_counters() : 0) |
	       efa_hw_mask(error_counters, COUNT(error_counters));
}

void efa_step_judge(const struct efa_step_usage *used, unsigned nnodes, long fallback_after,
		    struct efa_step_verdict *v)
{
	const struct efa_hw_reading *d = &used->delta;

	memset(v, 0, sizeof(*v));
	v->seconds = used->end > used->start ? (long)(used->end - used->start) : 0;
	for (size_t i = 0; i < COUNT(byte_counters); i++) {
		uint64_t sum;

		if (efa_hw_sum(d, byte_counters[i], &sum)) {
			v->moved += sum;
			v->counted = true;
		}
	}
	/* No byte counter (a driver without hw_counters): nothing is known. */
	v->fallback = v->counted && nnodes > 1 && may_fall_back(v->seconds, fallback_after) &&
		      v->moved < EFA_FALLBACK_BYTES;
	for (size_t i = 0; i < d->nports; i++) {
		const struct efa_port_counters *p = &d->ports[i];

		for (size_t e = 0; e < COUNT(error_counters); e++) {
			enum efa_hw_counter c = error_counters[e];

			if (!(p->have & (1u << c)) || !p->value[c])
				continue;
			efa_strlcatf(v->errors, sizeof(v->errors), "%sEFA device %s: port %s: %s rose by %" PRIu64,
				     v->errors[0] ? "; " : "", p->device, p->port,
				     efa_hw_counter_info[c].file, p->value[c]);
		}
	}
}
