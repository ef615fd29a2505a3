/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What steps moved over EFA: the devices' counters read under a root
 * (hw_counters.h), with the bad files a node can have; the node's store
 * of jobs' totals (usage.h); the file node_exporter serves
 * (metrics.h); and what a step's figures tell its user (verdict.h).
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/strutil.h"
#include "common/node/hw_counters.h"
#include "common/usage/metrics.h"
#include "common/usage/usage.h"
#include "common/usage/verdict.h"
#include "tap.h"
#include "tmpdir.h"

#define PORT1 "sys/class/infiniband/%s/ports/1/hw_counters/%s"

static void counter(const char *dev, const char *name, const char *text)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "root/" PORT1, dev, name);
	tmp_put(tmp_base, rel, text);
}

static void gone(const char *rel)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_at(rel));
	require(system(cmd) == 0);
}

static uint64_t sum(const struct efa_hw_reading *r, enum efa_hw_counter c)
{
	uint64_t s = 0;

	efa_hw_sum(r, c, &s);
	return s;
}

/* Two devices: a p4d-like one with RDMA read only, a g4dn-like one with
 * the basic counters only. */
static struct efa_nic nics[2] = { { .name = "rdmap16s27" }, { .name = "efa_0" } };
static struct efa_node node = { .nics = nics, .nnics = 2 };

static void base_counters(void)
{
	counter("rdmap16s27", "tx_bytes", "1000\n");
	counter("rdmap16s27", "rx_bytes", "2000\n");
	counter("rdmap16s27", "rdma_read_bytes", "500\n");
	counter("rdmap16s27", "retrans_timeout_events", "7\n");
	counter("efa_0", "tx_bytes", "10\n");
	counter("efa_0", "rx_bytes", "20\n");
	counter("efa_0", "tx_pkts", "1\n");
}

static void test_read(void)
{
	struct efa_hw_reading r, back, d;
	char notes[512] = "";
	struct efa_error err;
	char *text;

	base_counters();
	ok(!efa_hw_read(&node, tmp_at("root"), &r, &err), "the counters of both devices are read");
	is_int(r.nports, 2, "  one entry per port");
	ok(!(r.ports[1].have & (1u << EFA_HW_RDMA_READ_BYTES)), "  a device without RDMA counters has none");
	is_int((int)sum(&r, EFA_HW_TX_BYTES), 1010, "  bytes sent, summed over the devices");
	ok(efa_hw_sum(&r, EFA_HW_RDMA_READ_BYTES, &(uint64_t){ 0 }), "  RDMA read where one device has it");
	ok(!efa_hw_sum(&r, EFA_HW_RDMA_WRITE_BYTES, &(uint64_t){ 0 }), "  no RDMA write where none has it");
	is_str(r.problems, "", "  nothing to say about good files");

	text = efa_hw_format(&r);
	ok(text && !efa_hw_parse(text, &back), "a reading kept as text reads back");
	is_int(back.nports, 2, "  with its ports");
	is_int((int)sum(&back, EFA_HW_RX_BYTES), 2020, "  and its values");
	free(text);
	efa_hw_reading_clear(&back);

	/* A step: traffic on both, a driver reload on efa_0, a file gone bad. */
	counter("rdmap16s27", "tx_bytes", "4000\n");
	counter("rdmap16s27", "rx_bytes", "not a number\n");
	counter("rdmap16s27", "retrans_timeout_events", "\n");
	counter("efa_0", "tx_bytes", "3\n");
	counter("efa_0", "rx_bytes", "50\n");
	ok(!efa_hw_read(&node, tmp_at("root"), &back, &err), "files that hold no number do not stop a reading");
	has_str(back.problems, "rdmap16s27 port 1: rx_bytes holds \"not a number\", not a count",
		"  but are named");
	has_str(back.problems, "retrans_timeout_events holds \"\"", "  an empty one too");
	ok(!efa_hw_delta(&r, &back, &d, notes, sizeof(notes)), "what moved between two readings");
	is_int((int)sum(&d, EFA_HW_TX_BYTES), 3003,
	       "  a counter that went back counts from 0 (3000 + 3), never negative");
	is_int((int)sum(&d, EFA_HW_RX_BYTES), 30, "  a counter unreadable in either reading is left out");
	has_str(notes, "efa_0 port 1: counters went back", "  the reload is named");
	ok(!efa_hw_sum(&d, EFA_HW_RETRANS_TIMEOUT_EVENTS, &(uint64_t){ 0 }), "  an emptied file counts nothing");
	efa_hw_reading_clear(&d);
	efa_hw_reading_clear(&back);
	efa_hw_reading_clear(&r);

	/* A step's end reads again only what its start had. */
	base_counters();
	ok(!efa_hw_read(&node, tmp_at("root"), &r, &err), "a step's start");
	counter("efa_0", "rdma_read_bytes", "77\n");	/* appeared since */
	counter("rdmap16s27", "tx_bytes", "1500\n");
	gone("root/sys/class/infiniband/rdmap16s27/ports/1/hw_counters/rx_bytes");
	ok(!efa_hw_read_again(&r, tmp_at("root"), EFA_HW_ALL, &back, &err), "its end reads the same counters again");
	is_int(back.nports, 2, "  both ports");
	is_int((int)sum(&back, EFA_HW_TX_BYTES), 1510, "  their values now");
	ok(!(back.ports[0].have & (1u << EFA_HW_RX_BYTES)), "  a counter gone since is left out");
	is_int((int)sum(&back, EFA_HW_RX_BYTES), 20, "  the other device's is read");
	ok(!(back.ports[1].have & (1u << EFA_HW_RDMA_READ_BYTES)),
	   "  a counter the start did not have is not read");
	efa_hw_reading_clear(&back);
	ok(!efa_hw_read_again(&r, tmp_at("root"), 1u << EFA_HW_TX_BYTES, &back, &err) &&
	   back.nports == 2 && back.ports[0].have == 1u << EFA_HW_TX_BYTES &&
	   back.ports[1].have == 1u << EFA_HW_TX_BYTES && sum(&back, EFA_HW_TX_BYTES) == 1510,
	   "  of those, only the counters asked for");
	efa_hw_reading_clear(&back);
	gone("root/sys/class/infiniband/efa_0/ports/1/hw_counters");
	ok(!efa_hw_read_again(&r, tmp_at("root"), EFA_HW_ALL, &back, &err), "a device gone since");
	ok(!back.ports[1].have && sum(&back, EFA_HW_TX_BYTES) == 1500, "  reads nothing of it, the rest as before");
	efa_hw_reading_clear(&back);
	ok(efa_hw_read_again(&r, tmp_at("no such root"), EFA_HW_ALL, &back, &err),
	   "a root that is gone is an error");
	efa_hw_reading_clear(&r);
	base_counters();

	ok(!efa_hw_parse("garbage\nrdmap0 1 tx_bytes -5\nrdmap0 1 no_such 4\nrdmap0 1 rx_bytes 9\n", &back),
	   "a kept reading with bad lines");
	is_int(back.nports, 1, "  keeps the good one only");
	is_int((int)sum(&back, EFA_HW_RX_BYTES), 9, "  with its value");
	efa_hw_reading_clear(&back);
}

static void reading(struct efa_hw_reading *r, uint64_t tx, uint64_t retrans)
{
	char text[256];

	snprintf(text, sizeof(text), "rdmap16s27 1 tx_bytes %" PRIu64 "\nrdmap16s27 1 retrans_timeout_events %" PRIu64 "\n",
		 tx, retrans);
	require(!efa_hw_parse(text, r));
}

static const struct efa_job_usage *job(const struct efa_job_usage *jobs, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (jobs[i].job_id == id)
			return &jobs[i];
	return NULL;
}

static void test_store(void)
{
	struct efa_hw_reading r0, r1, r2;
	struct efa_job_usage *jobs = NULL;
	struct efa_step_usage used;
	const struct efa_job_usage *j;
	char dir[4096], notes[256] = "";
	struct efa_error err;
	size_t n;
	struct stat st;

	ok(!efa_usage_dir(tmp_at("cache"), "n1", dir, sizeof(dir), &err), "the node's store is made");
	ok(!stat(dir, &st) && (st.st_mode & 0777) == 0700, "  closed to others");
	reading(&r0, 100, 1);
	reading(&r1, 600, 1);
	reading(&r2, 1600, 5);
	ok(!efa_usage_step_begin(dir, 7, 0, true, "alice", "gpu", &r0, 1000, &err), "step 7.0 starts");
	ok(!efa_usage_jobs(dir, &r1, &jobs, &n, &err) && n == 1, "a running job is listed");
	j = job(jobs, n, 7);
	ok(j && !j->end && j->total[EFA_HW_TX_BYTES] == 500 && !j->steps,
	   "  with what its running step moved up to now");
	is_str(j ? j->user : "", "alice", "  its user");
	is_str(j ? j->partition : "", "gpu", "  its partition");
	ok(j && !j->shared, "  alone on the node");
	free(jobs);

	ok(!efa_usage_step_begin(dir, 8, 0, true, "bob smith", "", &r1, 1001, &err), "another job's step starts beside it");
	ok(!efa_usage_step_end(dir, 7, 0, true, &r2, 1010, &used, notes, sizeof(notes), &err), "step 7.0 ends");
	is_int((int)sum(&used.delta, EFA_HW_TX_BYTES), 1500, "  it moved 1500 bytes");
	is_int((int)sum(&used.delta, EFA_HW_RETRANS_TIMEOUT_EVENTS), 4, "  with 4 retransmit timeouts");
	ok(used.shared && used.end - used.start == 10, "  shared, and it ran 10 s");
	efa_step_usage_clear(&used);
	ok(efa_usage_step_end(dir, 7, 0, true, &r2, 1011, &used, notes, sizeof(notes), &err) < 0,
	   "a step cannot end twice");
	has_str(err.msg, "step-7.0", "  the message names its reading");
	is_int(efa_usage_job_event(dir, 7, EFA_USAGE_HANG, &err), 1, "a hang in job 7 is counted");
	is_int(efa_usage_job_event(dir, 7, EFA_USAGE_SICK_LINK, &err), 1, "  and a sick link");
	is_int(efa_usage_job_event(dir, 99, EFA_USAGE_HANG, &err), 0, "  not for a job the node never counted");
	is_int(efa_usage_job_end(dir, 7, 1020, &err), 1, "job 7 ends on the node");
	is_int(efa_usage_job_event(dir, 7, EFA_USAGE_HANG, &err), 0, "  nor once it ended");
	is_int(efa_usage_job_end(dir, 99, 1020, &err), 0, "a job the node never counted: nothing to do");
	ok(!efa_usage_jobs(dir, &r2, &jobs, &n, &err) && n == 2, "both jobs are listed");
	ok(!jobs[0].end && jobs[0].job_id == 8, "  the running one first");
	is_str(jobs[0].user, "bob_smith", "  its user as one word");
	is_str(jobs[0].partition, "-", "  no partition: -");
	ok(jobs[0].shared, "  shared too");
	j = job(jobs, n, 7);
	ok(j && j->end == 1020 && j->steps == 1 && j->total[EFA_HW_TX_BYTES] == 1500 &&
	   j->total[EFA_HW_RETRANS_TIMEOUT_EVENTS] == 4 && j->hangs == 1 && j->sick_links == 1,
	   "  the ended one with its totals, its hang and its sick link");
	free(jobs);

	/* Steps that overlap on one node (a batch step and the srun step it
	 * launches): the job's traffic counted once, each step's its own. */
	{
		struct efa_hw_reading r3;

		reading(&r3, 2000, 6);
		require(!efa_usage_step_begin(dir, 30, 0xfffffffb, true, "u", "p", &r0, 1300, &err));
		require(!efa_usage_step_begin(dir, 30, 0, true, "u", "p", &r1, 1301, &err));
		ok(!efa_usage_jobs(dir, &r2, &jobs, &n, &err) && (j = job(jobs, n, 30)) &&
		   j->total[EFA_HW_TX_BYTES] == 1500, "a batch step and its srun step running: 1500 bytes so far, counted once");
		free(jobs);
		ok(!efa_usage_step_end(dir, 30, 0, true, &r2, 1310, &used, NULL, 0, &err) &&
		   sum(&used.delta, EFA_HW_TX_BYTES) == 1000, "  the srun step ends: it moved 1000 itself");
		efa_step_usage_clear(&used);
		ok(!efa_usage_jobs(dir, &r3, &jobs, &n, &err) && (j = job(jobs, n, 30)) &&
		   j->total[EFA_HW_TX_BYTES] == 1900, "  the job, live: 1900 while the batch step runs");
		free(jobs);
		ok(!efa_usage_step_end(dir, 30, 0xfffffffb, true, &r3, 1320, &used, NULL, 0, &err) &&
		   sum(&used.delta, EFA_HW_TX_BYTES) == 1900, "  the batch step ends: 1900 over its whole run");
		efa_step_usage_clear(&used);
		ok(!efa_usage_jobs(dir, NULL, &jobs, &n, &err) && (j = job(jobs, n, 30)) &&
		   j->total[EFA_HW_TX_BYTES] == 1900 && j->total[EFA_HW_RETRANS_TIMEOUT_EVENTS] == 5 &&
		   j->steps == 2, "  the job's totals: 1900 bytes and 5 timeouts once, not 2900 and 9; 2 steps ended");
		free(jobs);
		ok(access(tmp_at("cache/usage-n1/span-30"), F_OK) != 0, "  its span is closed");
		/* Between its steps a job counts nothing: the next step opens a new span. */
		require(!efa_usage_step_begin(dir, 30, 1, true, "u", "p", &r2, 1330, &err));
		require(!efa_usage_step_end(dir, 30, 1, true, &r3, 1331, &used, NULL, 0, &err));
		efa_step_usage_clear(&used);
		ok(!efa_usage_jobs(dir, NULL, &jobs, &n, &err) && (j = job(jobs, n, 30)) &&
		   j->total[EFA_HW_TX_BYTES] == 2300, "  a later step adds what moved while it ran (400), not the gap");
		free(jobs);
		require(efa_usage_job_end(dir, 30, 1340, &err) == 1);
		efa_hw_reading_clear(&r3);
	}

	/* A job between steps (or whose epilog never ran) shares nothing. */
	require(!efa_usage_step_begin(dir, 50, 0, true, "u", "p", &r0, 1100, &err));
	require(!efa_usage_step_end(dir, 50, 0, true, &r1, 1101, &used, NULL, 0, &err));
	efa_step_usage_clear(&used);
	require(efa_usage_job_end(dir, 8, 1102, &err) == 1);
	require(!efa_usage_step_begin(dir, 51, 0, true, "u", "p", &r1, 1103, &err));
	ok(!efa_usage_step_end(dir, 51, 0, true, &r2, 1104, &used, NULL, 0, &err) && !used.shared,
	   "a job still running but with no step on the node: not shared");
	efa_step_usage_clear(&used);
	require(efa_usage_job_end(dir, 50, 1105, &err) == 1 && efa_usage_job_end(dir, 51, 1105, &err) == 1);

	/* Only the most recent ended jobs are kept, and every running one. */
	require(!efa_usage_step_begin(dir, 60, 0, true, "u", "p", &r0, 1200, &err));
	for (uint32_t id = 100; id < 100 + EFA_USAGE_RECENT + 5; id++) {
		require(!efa_usage_step_begin(dir, id, 0, true, "u", "p", &r0, 2000 + id, &err));
		require(!efa_usage_step_end(dir, id, 0, true, &r1, 2000 + id, &used, NULL, 0, &err));
		efa_step_usage_clear(&used);
		require(efa_usage_job_end(dir, id, 3000 + id, &err) == 1);
	}
	ok(!efa_usage_jobs(dir, NULL, &jobs, &n, &err), "after many jobs");
	is_int((int)n, EFA_USAGE_RECENT + 1, "  the running job and the most recent ended ones are kept");
	ok(job(jobs, n, 60) && !job(jobs, n, 7) && !job(jobs, n, 100) && job(jobs, n, 136),
	   "  the oldest ended ones are gone");
	free(jobs);

	/* A job whose slurmstepd died: its step's reading goes with the job. */
	require(!efa_usage_step_begin(dir, 9, 3, true, "u", "p", &r0, 5000, &err));
	is_int(efa_usage_job_end(dir, 9, 5001, &err), 1, "a job ends with a step that never did");
	ok(access(tmp_at("cache/usage-n1/step-9.3"), F_OK) != 0, "  its stale reading is removed");
	ok(access(tmp_at("cache/usage-n1/span-9"), F_OK) != 0, "  and its span");

	/* Without MetricsDir=: the steps' own files, no jobs table. */
	{
		char bare[4096];

		require(!efa_usage_dir(tmp_at("bare"), "n2", bare, sizeof(bare), &err));
		ok(!efa_usage_step_begin(bare, 20, 0, false, NULL, NULL, &r0, 6000, &err) &&
		   !efa_usage_step_begin(bare, 21, 0, false, NULL, NULL, &r1, 6001, &err),
		   "without the jobs table: two jobs' steps start");
		ok(!efa_usage_step_end(bare, 20, 0, false, &r2, 6005, &used, NULL, 0, &err) &&
		   sum(&used.delta, EFA_HW_TX_BYTES) == 1500 && used.shared && used.end - used.start == 5,
		   "  a step's end has what it moved, for how long, and that it was not alone");
		efa_step_usage_clear(&used);
		ok(access(tmp_at("bare/usage-n2/jobs"), F_OK) != 0, "  and no jobs table is written");
		ok(!efa_usage_jobs(bare, NULL, &jobs, &n, &err) && n == 0, "  nor listed");
		free(jobs);
		is_int(efa_usage_job_end(bare, 21, 6010, &err), 0, "  the other job ends: nothing to mark");
		ok(access(tmp_at("bare/usage-n2/step-21.0"), F_OK) != 0, "  its step's reading is removed");
	}

	require(!chmod(tmp_at("cache/usage-n1"), 0755));
	ok(efa_usage_dir(tmp_at("cache"), "n1", dir, sizeof(dir), &err) < 0, "a store others can read is refused");
	has_str(err.msg, "closed to others", "  saying why");
	efa_hw_reading_clear(&r0);
	efa_hw_reading_clear(&r1);
	efa_hw_reading_clear(&r2);
}

static void test_metrics(void)
{
	struct efa_job_usage jobs[2] = {
		{ .job_id = 12, .user = "al\"ice", .partition = "gpu", .start = 100, .steps = 2, .hangs = 1, .sick_links = 2,
		  .have = 1u << EFA_HW_TX_BYTES, .total = { [EFA_HW_TX_BYTES] = 4096 } },
		{ .job_id = 11, .user = "bob", .partition = "gpu", .start = 50, .end = 90, .shared = true },
	};
	struct efa_hw_reading now;
	struct efa_error err;
	char *text, *kept = NULL;
	size_t len;

	reading(&now, 123, 4);
	text = efa_metrics_render("n1", &now, jobs, 2, 777);
	ok(text != NULL, "the metrics are rendered");
	has_str(text, "# TYPE slurm_efa_device_tx_bytes_total counter\n", "  device counters are counters");
	has_str(text, "slurm_efa_device_tx_bytes_total{node=\"n1\",device=\"rdmap16s27\",port=\"1\"} 123\n",
		"  per device and port");
	has_str(text, "slurm_efa_device_retransmit_timeouts_total{node=\"n1\",device=\"rdmap16s27\",port=\"1\"} 4\n",
		"  the error counters too");
	ok(!strstr(text, "slurm_efa_device_rx_bytes_total"), "  nothing the device does not have");
	has_str(text, "slurm_efa_job_tx_bytes_total{node=\"n1\",job_id=\"12\",user=\"al\\\"ice\",partition=\"gpu\"} 4096\n",
		"  a job's total, its labels escaped");
	has_str(text, "slurm_efa_job_running{node=\"n1\",job_id=\"11\",user=\"bob\",partition=\"gpu\"} 0\n",
		"  an ended job is not running");
	has_str(text, "slurm_efa_job_shared{node=\"n1\",job_id=\"11\",user=\"bob\",partition=\"gpu\"} 1\n",
		"  and was shared");
	has_str(text, "slurm_efa_job_hangs_total{node=\"n1\",job_id=\"12\",user=\"al\\\"ice\",partition=\"gpu\"} 1\n",
		"  a job's hangs");
	has_str(text, "slurm_efa_job_sick_links_total{node=\"n1\",job_id=\"12\",user=\"al\\\"ice\",partition=\"gpu\"} 2\n",
		"  and its sick links");
	has_str(text, "slurm_efa_metrics_time_seconds{node=\"n1\"} 777\n", "  when it was written");
	free(text);

	ok(efa_metrics_write(tmp_at("metrics"), "n1", &now, jobs, 2, 1, &err) < 0, "a MetricsDir= that is missing");
	has_str(err.msg, "create it", "  is refused, saying what to do");
	tmp_put(tmp_base, "metrics", "a file\n");
	ok(efa_metrics_write(tmp_at("metrics"), "n1", &now, jobs, 2, 1, &err) < 0 &&
	   strstr(err.msg, "is not a directory"), "one that is a file is refused");
	require(!unlink(tmp_at("metrics")) && !mkdir(tmp_at("metrics"), 0777) &&
		!chmod(tmp_at("metrics"), 0777));
	ok(efa_metrics_write(tmp_at("metrics"), "n1", &now, jobs, 2, 1, &err) < 0 &&
	   strstr(err.msg, "writable by others"), "one writable by others is refused");
	require(!chmod(tmp_at("metrics"), 0755));
	ok(!efa_metrics_write(tmp_at("metrics"), "n1", &now, jobs, 2, 1, &err), "a good one is written");
	ok(!efa_read_file(tmp_at("metrics/slurm_efa_n1.prom"), 1 << 20, &kept, &len, &err) &&
	   strstr(kept, "slurm_efa_job_tx_bytes_total"), "  as the node's .prom file");
	free(kept);
	efa_hw_reading_clear(&now);
}

/* A step's figures on one node: bytes sent and received on a port with
 * the counters in have, and an error counter's rise. */
static void step_figures(struct efa_step_usage *u, struct efa_port_counters *port, uint32_t have,
			 uint64_t tx, uint64_t rx, long seconds)
{
	memset(port, 0, sizeof(*port));
	strcpy(port->device, "rdmap16s27");
	strcpy(port->port, "1");
	port->have = have;
	port->value[EFA_HW_TX_BYTES] = tx;
	port->value[EFA_HW_RX_BYTES] = rx;
	memset(u, 0, sizeof(*u));
	u->start = 1000;
	u->end = 1000 + seconds;
	u->delta.ports = port;
	u->delta.nports = 1;
}

static void test_verdict(void)
{
	const uint32_t bytes = 1u << EFA_HW_TX_BYTES | 1u << EFA_HW_RX_BYTES;
	struct efa_port_counters port;
	struct efa_step_usage u;
	struct efa_step_verdict v;

	step_figures(&u, &port, bytes, 100, 200, 61);
	efa_step_judge(&u, 2, 60, &v);
	ok(v.fallback, "two nodes, 61 s, 300 bytes over EFA: a fall-back");
	is_int((int)v.moved, 300, "  the bytes moved, both ways");
	is_int((int)v.seconds, 61, "  and how long it ran");
	is_str(v.errors, "", "  no error rose");
	efa_step_judge(&u, 1, 60, &v);
	ok(!v.fallback, "one node: never (it needs no network)");
	efa_step_judge(&u, 2, 62, &v);
	ok(!v.fallback, "shorter than FallbackAfter=: not judged");
	efa_step_judge(&u, 2, 0, &v);
	ok(!v.fallback, "FallbackAfter=0: never");
	step_figures(&u, &port, bytes | 1u << EFA_HW_RDMA_READ_BYTES, 100, 200, 61);
	port.value[EFA_HW_RDMA_READ_BYTES] = EFA_FALLBACK_BYTES;
	efa_step_judge(&u, 2, 60, &v);
	ok(!v.fallback, "a step that moved its bytes by RDMA read alone used EFA");
	step_figures(&u, &port, bytes, EFA_FALLBACK_BYTES / 2, EFA_FALLBACK_BYTES / 2 - 1, 61);
	efa_step_judge(&u, 2, 60, &v);
	ok(v.fallback, "one byte short of EFA_FALLBACK_BYTES: a fall-back");
	port.value[EFA_HW_RX_BYTES]++;
	efa_step_judge(&u, 2, 60, &v);
	ok(!v.fallback, "  at it: not");
	step_figures(&u, &port, 0, 0, 0, 600);
	efa_step_judge(&u, 2, 60, &v);
	ok(!v.fallback && !v.counted, "a device without byte counters: nothing is known, nothing said");
	step_figures(&u, &port, bytes | 1u << EFA_HW_RETRANS_TIMEOUT_EVENTS |
			1u << EFA_HW_IMPAIRED_REMOTE_CONN_EVENTS | 1u << EFA_HW_RETRANS_PKTS,
		     5000000, 5000000, 61);
	port.value[EFA_HW_RETRANS_TIMEOUT_EVENTS] = 3;
	port.value[EFA_HW_RETRANS_PKTS] = 40;
	efa_step_judge(&u, 1, 60, &v);
	is_str(v.errors, "EFA device rdmap16s27: port 1: retrans_timeout_events rose by 3",
	       "error counters that rose are named, on one node too; retransmitted packets alone are SRD at work");
	port.value[EFA_HW_IMPAIRED_REMOTE_CONN_EVENTS] = 1;
	efa_step_judge(&u, 1, 60, &v);
	has_str(v.errors, "; EFA device rdmap16s27: port 1: impaired_remote_conn_events rose by 1",
		"  each of them");
	/* A step reads only efa_step_judge_counters(): its verdict is the
	 * one every counter gives, for a step long enough to fall back and
	 * for one too short to. */
	for (long seconds = 59; seconds <= 61; seconds += 2) {
		struct efa_step_verdict all;

		step_figures(&u, &port, EFA_HW_ALL, 300, 400, seconds);
		for (int c = 0; c < EFA_HW_NCOUNTERS; c++)
			port.value[c] = 100 + (uint64_t)c;
		efa_step_judge(&u, 2, 60, &all);
		port.have &= efa_step_judge_counters(seconds, 60);
		efa_step_judge(&u, 2, 60, &v);
		ok(v.fallback == all.fallback && !strcmp(v.errors, all.errors) && all.errors[0] &&
		   (!all.fallback || v.moved == all.moved),
		   "%ld s: the counters efa_step_judge_counters names give the verdict every counter gives",
		   seconds);
	}
	ok(efa_step_judge_counters(LONG_MAX, 60) == efa_step_judge_counters(61, 60),
	   "  not known yet (a step's start): those of a step that may fall back");
	ok(!(efa_step_judge_counters(LONG_MAX, 60) & (1u << EFA_HW_TX_PKTS | 1u << EFA_HW_RX_PKTS)),
	   "  without the packet counters, which it does not sum");
	ok(!(efa_step_judge_counters(LONG_MAX, 0) & efa_step_moved_counters()) &&
	   !(efa_step_judge_counters(59, 60) & efa_step_moved_counters()),
	   "  no byte counter where no fall-back is judged (FallbackAfter=0, a shorter step)");
}

int main(void)
{
	if (tmp_open())
		return done_testing();
	test_read();
	test_store();
	test_metrics();
	test_verdict();
	tmp_close();
	return done_testing();
}
