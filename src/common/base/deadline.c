/* SPDX-License-Identifier: Apache-2.0 */
#include "common/base/deadline.h"

void efa_deadline_start(struct efa_deadline *d, long ms)
{
	d->set = ms > 0;
	if (!d->set)
		return;
	clock_gettime(CLOCK_MONOTONIC, &d->end);
	d->end.tv_sec += ms / 1000;
	d->end.tv_nsec += (ms % 1000) * 1000000L;
	if (d->end.tv_nsec >= 1000000000L) {
		d->end.tv_sec++;
		d->end.tv_nsec -= 1000000000L;
	}
}

long efa_deadline_cap(const struct efa_deadline *d, long ms)
{
	struct timespec now;
	long left;

	if (!d || !d->set)
		return ms;
	clock_gettime(CLOCK_MONOTONIC, &now);
	left = (long)(d->end.tv_sec - now.tv_sec) * 1000 + (d->end.tv_nsec - now.tv_nsec) / 1000000L;
	if (left < 0)
		left = 0;
	return ms < left ? ms : left;
}
