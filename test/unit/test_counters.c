/* SPDX-License-Identifier: Apache-2.0 */
/*
 * EFA error counters in the health check (counters.h): a counter that
 * rose by more than its limit since the last check is a problem; a first
 * check, a limit of 0, a counter that went down (the driver reloaded) and
 * a device without the file are not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/health/counters.h"
#include "tap.h"
#include "tmpdir.h"

static const struct efa_counter_limits limits = {
	.retrans_timeouts = 100, .unresponsive_remotes = 0, .impaired_connections = 10,
};

static void test_problems(void)
{
	const char *before = "rdmap16s27 1 retrans_timeout_events 1000\n"
			     "rdmap16s27 1 unresponsive_remote_events 5\n"
			     "rdmap32s27 1 impaired_remote_conn_events 7\n";
	char buf[1024] = "", warn[1024] = "";

	is_int(efa_counters_problems(NULL, before, &limits, buf, sizeof(buf), warn, sizeof(warn)), 0,
	       "a first check judges nothing");
	is_int(efa_counters_problems(before, "rdmap16s27 1 retrans_timeout_events 1100\n", &limits, buf,
				     sizeof(buf), warn, sizeof(warn)), 0, "a rise of exactly the limit passes");
	is_int(efa_counters_problems(before, "rdmap16s27 1 retrans_timeout_events 1101\n"
					     "rdmap16s27 1 unresponsive_remote_events 5000\n",
				     &limits, buf, sizeof(buf), warn, sizeof(warn)), 1,
	       "one over the limit fails; a counter whose limit is 0 is not judged");
	is_str(buf, "EFA device rdmap16s27: port 1: retrans_timeout_events rose by 101 since the last check (HealthRetransTimeouts=100)",
	       "  naming the device, the port, the counter, the rise and the key");
	is_str(warn, "", "  and warns of nothing");
	buf[0] = '\0';
	is_int(efa_counters_problems(before, "rdmap16s27 1 retrans_timeout_events 3\n"
					     "rdmap32s27 1 impaired_remote_conn_events 30\n",
				     &limits, buf, sizeof(buf), warn, sizeof(warn)), 0,
	       "impaired connections over their limit: what peers did, never a problem of this node");
	is_str(warn, "EFA device rdmap32s27: port 1: impaired_remote_conn_events rose by 23 since the last check (HealthImpairedConnections=10): what its peers did, not this node's link; not drained",
	       "  a warning instead, naming the device, the counter and why");
	is_str(buf, "", "  a counter that went down is a new start");
	is_int(efa_counters_problems(before, "rdmap32s27 1 impaired_remote_conn_events 30\n", &limits, buf,
				     sizeof(buf), NULL, 0), 0, "  with no buffer for warnings, nothing at all");
	buf[0] = '\0';
	is_int(efa_counters_problems(before, "rdmap99s0 1 retrans_timeout_events 99999\n", &limits,
				     buf, sizeof(buf), NULL, 0), 0, "a device the last check did not see: nothing to compare");
	is_int(efa_counters_problems("garbage", "also garbage\n", &limits, buf, sizeof(buf), NULL, 0), 0,
	       "readings that are not readings judge nothing");
	ok(efa_counter_limits_any(&limits), "limits set: counters are judged");
	ok(!efa_counter_limits_any(&(struct efa_counter_limits){ 0 }), "no limit: not judged at all");
}

/* A health check's part: the node's counters read now, then judged. */
static int check(const struct efa_node *node, const char *root, const char *state, char *buf,
		 size_t size)
{
	struct efa_hw_reading now;
	struct efa_error err;
	int rc;

	if (efa_hw_read(node, root, &now, &err))
		return -1;
	rc = efa_counters_check(&now, state, &limits, buf, size, NULL, 0, &err);
	efa_hw_reading_clear(&now);
	return rc;
}

/* A node tree with two EFA devices; the second has no network counters
 * (before Nitro v4). */
static void test_check(void)
{
	char root[] = "/tmp/test_counters.XXXXXX", state[4096], cmd[4200], buf[1024] = "";
	struct efa_nic nics[2] = { { .name = "rdmap16s27" }, { .name = "rdmap32s27" } };
	struct efa_node node = { .nics = nics, .nnics = 2 };
	struct efa_hw_reading reading;
	struct efa_error err;
	char *text = NULL;

	require(mkdtemp(root) != NULL);
	tmp_put(root, "sys/class/infiniband/rdmap16s27/ports/1/hw_counters/retrans_timeout_events", "40\n");
	tmp_put(root, "sys/class/infiniband/rdmap16s27/ports/1/hw_counters/tx_bytes", "123456\n");
	tmp_put(root, "sys/class/infiniband/rdmap32s27/ports/1/state", "4: ACTIVE\n");
	ok(!efa_hw_read(&node, root, &reading, &err) && (text = efa_hw_format(&reading)),
	   "the node's counters are read");
	efa_hw_reading_clear(&reading);
	is_str(text ? text : "", "rdmap16s27 1 tx_bytes 123456\nrdmap16s27 1 retrans_timeout_events 40\n",
	       "  every counter a device has, none it has not");
	free(text);
	text = NULL;
	tmp_put(root, "sys/class/infiniband/rdmap16s27/ports/1/hw_counters/rdma_read_bytes", "n/a\n");
	ok(!efa_hw_read_some(&node, root, 1u << EFA_HW_TX_BYTES | 1u << EFA_HW_RX_BYTES, &reading,
			     &err) && (text = efa_hw_format(&reading)),
	   "some of the node's counters are read");
	is_str(text ? text : "", "rdmap16s27 1 tx_bytes 123456\n",
	       "  those asked for that a device has, no other");
	is_str(reading.problems, "", "  a file not asked for is not read, even one that holds no number");
	efa_hw_reading_clear(&reading);
	free(text);
	snprintf(cmd, sizeof(cmd), "%s/sys/class/infiniband/rdmap16s27/ports/1/hw_counters/rdma_read_bytes", root);
	require(unlink(cmd) == 0);

	snprintf(state, sizeof(state), "%s/cache/counters-n1", root);
	ok(!check(&node, root, state, buf, sizeof(buf)) && !buf[0],
	   "a first check keeps the reading and judges nothing");
	tmp_put(root, "sys/class/infiniband/rdmap16s27/ports/1/hw_counters/retrans_timeout_events", "90\n");
	ok(!check(&node, root, state, buf, sizeof(buf)) && !buf[0],
	   "a rise of 50 against a limit of 100 passes");
	tmp_put(root, "sys/class/infiniband/rdmap16s27/ports/1/hw_counters/retrans_timeout_events", "600\n");
	ok(!check(&node, root, state, buf, sizeof(buf)),
	   "a rise of 510 since the check before");
	has_str(buf, "retrans_timeout_events rose by 510 since the last check", "  is a problem");
	buf[0] = '\0';
	ok(!check(&node, root, state, buf, sizeof(buf)) && !buf[0],
	   "  and the check after, with no rise, passes again");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ok(system(cmd) == 0, "cleaned up");
}

int main(void)
{
	test_problems();
	test_check();
	return done_testing();
}
