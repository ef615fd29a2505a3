/* SPDX-License-Identifier: Apache-2.0 */
/* One deadline over a task's parts (deadline.h). */
#include <unistd.h>

#include "common/base/deadline.h"
#include "tap.h"

int main(void)
{
	struct efa_deadline d;
	long left;

	is_int(efa_deadline_cap(NULL, 5000), 5000, "no deadline: a part keeps its own limit");
	efa_deadline_start(&d, 0);
	is_int(efa_deadline_cap(&d, 5000), 5000, "a deadline of 0 is none");
	efa_deadline_start(&d, 300);
	left = efa_deadline_cap(&d, 5000);
	ok(left > 0 && left <= 300, "300 ms from now: a part of 5 s gets what is left (%ld ms)", left);
	is_int(efa_deadline_cap(&d, 100), 100, "  a part of 100 ms keeps its own");
	usleep(350 * 1000);
	is_int(efa_deadline_cap(&d, 5000), 0, "past it: nothing left, never below 0");
	efa_deadline_start(&d, 2500);
	left = efa_deadline_cap(&d, 10000);
	ok(left > 2000 && left <= 2500, "2.5 s: seconds and milliseconds both counted (%ld ms)", left);
	return done_testing();
}
