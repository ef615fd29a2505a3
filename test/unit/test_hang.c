/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A node's watch of a job (hang.h): traffic, output, checkpoints and a
 * heartbeat each keep it active; nothing moving makes it quiet for as
 * long as nothing moves; evidence that cannot be compared starts it
 * again. A probe reads what a node sees: traffic
 * from the counters' files, output, checkpoint and heartbeat from theirs.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/health/hang.h"
#include "common/health/hang_probe.h"
#include "tap.h"
#include "tmpdir.h"

static struct efa_hang_sample sample(int64_t at, uint64_t traffic)
{
	struct efa_hang_sample s = { .at = at, .traffic_known = true, .traffic = traffic, .ports = 32,
				     .output_known = true, .output = 100,
				     .checkpoint_known = true, .checkpoint = 5 };

	return s;
}

static enum efa_hang_seen add(struct efa_hang_watch *w, struct efa_hang_sample s)
{
	return efa_hang_add(w, &s);
}

static void test_watch(void)
{
	struct efa_hang_watch w = { 0 };
	struct efa_hang_sample s;

	is_int((int)efa_hang_quiet_for(&w, 50), 0, "before a sample: not quiet");
	is_int(add(&w, sample(0, 1000)), EFA_HANG_ACTIVE, "the first sample starts the watch");
	is_int(add(&w, sample(10, 2000)), EFA_HANG_ACTIVE, "traffic moved: active");
	is_int(add(&w, sample(20, 2000)), EFA_HANG_QUIET, "no traffic, nothing else: quiet");
	is_int(add(&w, sample(30, 2000)), EFA_HANG_QUIET, "  still");
	is_int((int)efa_hang_quiet_for(&w, 35), 25, "  quiet since the last move (at 10)");

	s = sample(40, 2000);
	s.output = 120;
	is_int(efa_hang_add(&w, &s), EFA_HANG_ACTIVE, "no traffic but the output grew: active");
	s = sample(50, 2000);
	s.output = 120;
	s.checkpoint = 9;
	is_int(efa_hang_add(&w, &s), EFA_HANG_ACTIVE, "no traffic but a checkpoint written: active");
	s.at = 60;
	s.heartbeat_known = true;
	s.heartbeat = 55;
	is_int(efa_hang_add(&w, &s), EFA_HANG_QUIET, "a heartbeat file seen for the first time is not a move");
	s.at = 70;
	s.heartbeat = 66;
	is_int(efa_hang_add(&w, &s), EFA_HANG_ACTIVE, "  touched again: active");
	s.at = 80;
	s.output_known = false;
	is_int(efa_hang_add(&w, &s), EFA_HANG_QUIET, "output that can no longer be read is not a move");
	s.at = 90;
	s.output_known = true;
	s.output = 1;
	is_int(efa_hang_add(&w, &s), EFA_HANG_QUIET, "  nor is it when it comes back, whatever its size");

	s = sample(100, 1000);
	is_int(efa_hang_add(&w, &s), EFA_HANG_UNKNOWN, "counters that went back (a driver reload): unknown");
	is_int((int)efa_hang_quiet_for(&w, 100), 0, "  and the watch starts again");
	s = sample(110, 1000);
	s.traffic_known = false;
	is_int(efa_hang_add(&w, &s), EFA_HANG_UNKNOWN, "counters not read as numbers: unknown");
	s = sample(120, 1000);
	is_int(efa_hang_add(&w, &s), EFA_HANG_UNKNOWN, "  and the sample after them too (nothing to compare)");
	s = sample(130, 1000);
	s.ports = 31;
	is_int(efa_hang_add(&w, &s), EFA_HANG_UNKNOWN, "a port gone: unknown");
	s = sample(140, 1000);
	s.ports = 31;
	is_int(efa_hang_add(&w, &s), EFA_HANG_QUIET, "  then quiet again from it");
	is_int((int)efa_hang_quiet_for(&w, 200), 70, "  counted from the last unknown (at 130)");
}

static void test_sick(void)
{
	double one[] = { 0.001, 0.25, 0.002, 0.0015 };
	double all[] = { 0.20, 0.25, 0.22, 0.21 };
	double low[] = { 0.0, 0.004, 0.0, 0.0 };
	double unread[] = { -1, 0.25, -1, -1 };
	double pair[] = { 0.001, 0.3 };
	double peers;

	is_int(efa_sick_link(one, 4, 1, 0.01, 10, &peers), 1, "one node far above its peers: sick");
	ok(peers == 0.0015, "  its peers' median");
	is_int(efa_sick_link(one, 4, 0, 0.01, 10, &peers), 0, "  a peer is not");
	is_int(efa_sick_link(all, 4, 1, 0.01, 10, &peers), 0,
	       "every node up alike (a congested fabric): not sick");
	is_int(efa_sick_link(low, 4, 1, 0.01, 10, &peers), 0,
	       "above its peers but under the floor: not sick");
	is_int(efa_sick_link(unread, 4, 1, 0.01, 10, &peers), -1,
	       "peers whose rate is not known are no peers: not judged");
	is_int(efa_sick_link(unread, 4, 0, 0.01, 10, &peers), -1, "  nor a node whose own is not known");
	is_int(efa_sick_link(pair, 2, 1, 0.01, 10, &peers), 1, "two nodes: the one far above the other");
	is_int(efa_sick_link(pair, 2, 5, 0.01, 10, &peers), -1, "a node past the step's: not judged");
}

#define PORT_DIR "root/sys/class/infiniband/rdmap0/ports/1/hw_counters/"

/* A port's traffic counters under tmp_base/root. */
static void counters(const char *tx_bytes, const char *rx_bytes)
{
	tmp_put(tmp_base, PORT_DIR "tx_bytes", tx_bytes);
	tmp_put(tmp_base, PORT_DIR "rx_bytes", rx_bytes);
	tmp_put(tmp_base, PORT_DIR "tx_pkts", "10\n");
	tmp_put(tmp_base, PORT_DIR "rx_pkts", "20\n");
}

/* Sets path's modification time to sec (seconds since the epoch). */
static void touch_at(const char *path, time_t sec)
{
	struct timespec t[2] = { { .tv_sec = sec }, { .tv_sec = sec } };

	require(utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW) == 0);
}

static void test_probe(void)
{
	struct efa_hw_reading start = { 0 };
	struct efa_port_counters port = { .device = "rdmap0", .port = "1" };
	const char *outputs[3] = { NULL };
	struct efa_hang_probe p = { .start = &start, .timeout_ms = 5000 };
	struct efa_hang_sample s;
	struct efa_error err;
	char root[4096], out[4096], ck[4096], model[4096], heartbeat[4096], nowhere[4096], link[4096];
	int64_t before;

	if (tmp_open())
		return;
	port.have = 1u << EFA_HW_TX_BYTES | 1u << EFA_HW_RX_BYTES | 1u << EFA_HW_TX_PKTS |
		    1u << EFA_HW_RX_PKTS;
	start.ports = &port;
	start.nports = 1;
	snprintf(root, sizeof(root), "%s", tmp_at("root"));
	p.root = root;
	counters("1000\n", "2000\n");
	ok(efa_hang_probe_usable(&start), "a port that counts traffic: the node can be watched");
	port.have = 1u << EFA_HW_RETRANS_PKTS;
	ok(!efa_hang_probe_usable(&start), "  one that counts only retransmits: it cannot");
	ok(!efa_hang_probe_take(&p, 6, &s, &err) && !s.traffic_known,
	   "  and its traffic is never known (never quiet)");
	port.have = 1u << EFA_HW_TX_BYTES | 1u << EFA_HW_RX_BYTES | 1u << EFA_HW_TX_PKTS |
		    1u << EFA_HW_RX_PKTS;
	ok(!efa_hang_probe_take(&p, 7, &s, &err), "a probe of a port's counters");
	ok(s.traffic_known && s.traffic == 3030 && s.ports == 1 && s.at == 7,
	   "  its bytes and packets both ways, summed");
	ok(!s.output_known && !s.checkpoint_known && !s.heartbeat_known,
	   "  no output, checkpoint or heartbeat named: none known");
	tmp_put(tmp_base, PORT_DIR "rx_bytes", "n/a\n");
	ok(!efa_hang_probe_take(&p, 8, &s, &err) && !s.traffic_known,
	   "a counter that holds no number: the traffic is not known");
	require(unlink(tmp_at(PORT_DIR "rx_bytes")) == 0);
	ok(!efa_hang_probe_take(&p, 9, &s, &err) && !s.traffic_known,
	   "a counter gone (a driver reloaded without it): not known");
	counters("1000\n", "2000\n");
	ok(!efa_hang_probe_link_usable(&start), "no retransmit counter: the link is not compared");
	tmp_put(tmp_base, PORT_DIR "retrans_pkts", "5\n");
	port.have |= 1u << EFA_HW_RETRANS_PKTS;
	port.value[EFA_HW_TX_PKTS] = 10;
	port.value[EFA_HW_RETRANS_PKTS] = 5;
	ok(efa_hang_probe_link_usable(&start), "retrans_pkts and tx_pkts: it is");
	{
		uint32_t had = port.have;

		port.have = efa_hang_probe_link_counters();
		ok(efa_hang_probe_link_usable(&start),
		   "  a start reading of efa_hang_probe_link_counters() alone is enough");
		port.have = efa_hang_probe_traffic_counters();
		ok(efa_hang_probe_usable(&start),
		   "  and of efa_hang_probe_traffic_counters() alone, for traffic");
		port.have = had;
	}
	tmp_put(tmp_base, PORT_DIR "tx_pkts", "1010\n");
	tmp_put(tmp_base, PORT_DIR "retrans_pkts", "55\n");
	ok(!efa_hang_probe_take(&p, 9, &s, &err) && s.link_known && s.link_sent == 1000 &&
	   s.link_errors == 50, "  its errors and packets sent since the start reading");
	tmp_put(tmp_base, PORT_DIR "retrans_pkts", "4\n");
	ok(!efa_hang_probe_take(&p, 9, &s, &err) && !s.link_known,
	   "  a counter below its start (a driver reloaded): not known");
	require(unlink(tmp_at(PORT_DIR "retrans_pkts")) == 0);
	ok(!efa_hang_probe_take(&p, 9, &s, &err) && !s.link_known, "  one gone: not known");
	port.have &= ~(1u << EFA_HW_RETRANS_PKTS);
	counters("1000\n", "2000\n");

	tmp_put(tmp_base, "out/job.out", "0123456789");
	snprintf(out, sizeof(out), "%s", tmp_at("out/job.out"));
	outputs[0] = out;
	outputs[1] = "/dev/null";
	p.outputs = outputs;
	ok(!efa_hang_probe_take(&p, 10, &s, &err) && s.output_known && s.output == 10,
	   "output to a file and to /dev/null: the file's size");
	outputs[0] = "/dev/null";
	outputs[1] = NULL;
	ok(!efa_hang_probe_take(&p, 11, &s, &err) && !s.output_known,
	   "output to /dev/null only: not known (never \"nothing moved\")");

	snprintf(ck, sizeof(ck), "%s", tmp_at("ck"));
	snprintf(model, sizeof(model), "%s", tmp_at("ck/checkpoint-200/model.safetensors"));
	tmp_put(tmp_base, "ck/checkpoint-100/trainer_state.json", "{}");
	tmp_put(tmp_base, "ck/checkpoint-200/model.safetensors", "weights");
	touch_at(tmp_at("ck/checkpoint-100/trainer_state.json"), 1000);
	touch_at(tmp_at("ck/checkpoint-100"), 1000);
	touch_at(model, 2000);
	touch_at(tmp_at("ck/checkpoint-200"), 2000);
	touch_at(ck, 2000);
	p.checkpoint_dir = ck;
	ok(!efa_hang_probe_take(&p, 12, &s, &err) && s.checkpoint_known &&
	   s.checkpoint == 2000 * INT64_C(1000000000),
	   "a checkpoint directory: its newest write");
	before = s.checkpoint;
	touch_at(model, 2500);
	ok(!efa_hang_probe_take(&p, 13, &s, &err) && s.checkpoint_known && s.checkpoint > before,
	   "  a large file of the newest save growing (no directory's time changes): newer");
	snprintf(nowhere, sizeof(nowhere), "%s", tmp_at("nowhere"));
	p.checkpoint_dir = nowhere;
	ok(!efa_hang_probe_take(&p, 14, &s, &err) && !s.checkpoint_known,
	   "a checkpoint directory that is not there: not known");
	snprintf(link, sizeof(link), "%s", tmp_at("ck-link"));
	require(symlink(ck, link) == 0);
	p.checkpoint_dir = link;
	ok(!efa_hang_probe_take(&p, 15, &s, &err) && !s.checkpoint_known,
	   "a checkpoint directory that is a link: not followed, not known");
	p.checkpoint_dir = NULL;

	snprintf(heartbeat, sizeof(heartbeat), "%s", tmp_at("heartbeat"));
	tmp_put(tmp_base, "heartbeat", "");
	touch_at(heartbeat, 3000);
	p.heartbeat = heartbeat;
	p.heartbeat_owner = getuid() + 1;
	ok(!efa_hang_probe_take(&p, 16, &s, &err) && !s.heartbeat_known,
	   "a heartbeat file of another owner than the job's user: not read");
	p.heartbeat_owner = getuid();
	ok(!efa_hang_probe_take(&p, 16, &s, &err) && s.heartbeat_known &&
	   s.heartbeat == 3000 * INT64_C(1000000000), "the user's heartbeat file: its time");
	require(unlink(heartbeat) == 0);
	ok(!efa_hang_probe_take(&p, 17, &s, &err) && !s.heartbeat_known,
	   "  gone: not known");
	tmp_close();
}

int main(void)
{
	test_watch();
	test_sick();
	test_probe();
	return done_testing();
}
