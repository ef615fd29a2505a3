/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/child.h"
#include "common/health/hang_probe.h"

/* What moves when a job talks over EFA: bytes and packets both ways,
 * and what RDMA moved (which the send/receive counters do not count). */
static const enum efa_hw_counter traffic_counters[] = {
	EFA_HW_TX_BYTES, EFA_HW_TX_PKTS, EFA_HW_RX_BYTES, EFA_HW_RX_PKTS,
	EFA_HW_RDMA_READ_BYTES, EFA_HW_RDMA_READ_RESP_BYTES,
	EFA_HW_RDMA_WRITE_BYTES, EFA_HW_RDMA_WRITE_RECV_BYTES,
};

uint32_t efa_hang_probe_traffic_counters(void)
{
	return efa_hw_mask(traffic_counters, sizeof(traffic_counters) / sizeof(*traffic_counters));
}

static const struct efa_port_counters *port_in(const struct efa_hw_reading *r,
					       const struct efa_port_counters *want)
{
	for (size_t i = 0; i < r->nports; i++)
		if (!strcmp(r->ports[i].device, want->device) && !strcmp(r->ports[i].port, want->port))
			return &r->ports[i];
	return NULL;
}

/*
 * The counters a node's own link drives: the packets its SRD sent again
 * and the times a path timed out and another was taken (the efa driver's
 * network statistics group), per packet it sent. Not
 * unresponsive_remote_events or impaired_remote_conn_events, which say
 * what a peer did.
 */
#define LINK_ERRORS (1u << EFA_HW_RETRANS_PKTS | 1u << EFA_HW_RETRANS_TIMEOUT_EVENTS)
#define LINK_SENT (1u << EFA_HW_TX_PKTS)

uint32_t efa_hang_probe_link_counters(void)
{
	return LINK_ERRORS | LINK_SENT;
}

bool efa_hang_probe_link_usable(const struct efa_hw_reading *start)
{
	for (size_t i = 0; i < start->nports; i++)
		if (start->ports[i].have & LINK_ERRORS && start->ports[i].have & LINK_SENT)
			return true;
	return false;
}

static void take_link(const struct efa_hw_reading *start, const struct efa_hw_reading *now,
		      struct efa_hang_sample *s)
{
	size_t counted = 0;

	s->link_known = !now->problems[0];
	s->link_errors = s->link_sent = 0;
	for (size_t i = 0; s->link_known && i < start->nports; i++) {
		uint32_t want = start->ports[i].have & (LINK_ERRORS | LINK_SENT);
		const struct efa_port_counters *p;

		if (!(want & LINK_ERRORS) || !(want & LINK_SENT))
			continue;
		p = port_in(now, &start->ports[i]);
		if (!p || (p->have & want) != want) {
			s->link_known = false;
			break;
		}
		for (unsigned c = 0; c < EFA_HW_NCOUNTERS; c++) {
			if (!(want & (1u << c)))
				continue;
			if (p->value[c] < start->ports[i].value[c]) {
				s->link_known = false;	/* a driver reloaded */
				break;
			}
			if (LINK_SENT & (1u << c))
				s->link_sent += p->value[c] - start->ports[i].value[c];
			else
				s->link_errors += p->value[c] - start->ports[i].value[c];
		}
		counted++;
	}
	if (!counted)
		s->link_known = false;
}

/* Every port and traffic counter of start read again, as numbers. */
bool efa_hang_probe_usable(const struct efa_hw_reading *start)
{
	for (size_t i = 0; i < start->nports; i++)
		if (start->ports[i].have & efa_hang_probe_traffic_counters())
			return true;
	return false;
}

static void take_traffic(const struct efa_hw_reading *start, const struct efa_hw_reading *now,
			 struct efa_hang_sample *s)
{
	const uint32_t mask = efa_hang_probe_traffic_counters();
	size_t counted = 0;

	s->traffic_known = !now->problems[0] && start->nports > 0;
	s->traffic = 0;
	s->ports = (unsigned)start->nports;
	for (size_t i = 0; s->traffic_known && i < start->nports; i++) {
		uint32_t want = start->ports[i].have & mask;
		const struct efa_port_counters *p;

		if (!want)
			continue;	/* a port that counts no traffic */
		counted++;
		p = port_in(now, &start->ports[i]);
		if (!p || (p->have & want) != want) {
			s->traffic_known = false;
			break;
		}
		for (unsigned c = 0; c < EFA_HW_NCOUNTERS; c++)
			if (want & (1u << c))
				s->traffic += p->value[c];
	}
	/* No port that counts traffic: a node that cannot see it never
	 * judges it quiet. */
	if (!counted)
		s->traffic_known = false;
}

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/*
 * The newest modification time of dir and its entries (not followed),
 * at most EFA_HANG_DIR_ENTRIES_MAX of them; *newest_dir: the entry that is
 * the newest directory, "" when none. -1 when dir cannot be read.
 */
static int newest_in(int at, const char *dir, int64_t *newest, char *newest_dir, size_t size)
{
	int64_t newest_dir_time = INT64_MIN;
	struct dirent *e;
	struct stat st;
	unsigned n = 0;
	DIR *d;
	int fd;

	newest_dir[0] = '\0';
	fd = openat(at, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !(d = fdopendir(fd))) {
		close(fd);
		return -1;
	}
	*newest = mtime_ns(&st);
	while ((e = readdir(d)) && n++ < EFA_HANG_DIR_ENTRIES_MAX) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (mtime_ns(&st) > *newest)
			*newest = mtime_ns(&st);
		if (S_ISDIR(st.st_mode) && mtime_ns(&st) > newest_dir_time &&
		    strlen(e->d_name) < size) {
			newest_dir_time = mtime_ns(&st);
			strcpy(newest_dir, e->d_name);
		}
	}
	closedir(d);
	return 0;
}

/*
 * The newest write in a checkpoint directory: its own entries, and those
 * of its newest subdirectory, the save being written (a framework writes
 * a save's files inside checkpoint-N/ or global_stepN/, which changes no
 * time in the directory above while one large file grows).
 */
static int newest_write(const char *dir, int64_t *newest)
{
	char sub[256], ignored[8];
	int64_t in_sub;
	int fd, rc = -1;

	if (newest_in(AT_FDCWD, dir, newest, sub, sizeof(sub)))
		return -1;
	if (!sub[0])
		return 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (!newest_in(fd, sub, &in_sub, ignored, sizeof(ignored))) {
		if (in_sub > *newest)
			*newest = in_sub;
		rc = 0;
	}
	close(fd);
	return rc;
}

/* In the child: one "output|checkpoint|heartbeat KNOWN VALUE" line each. */
static int look_at_files(void *arg, int fd)
{
	const struct efa_hang_probe *p = arg;
	uint64_t output = 0;
	bool output_known = false;
	int64_t checkpoint = 0, heartbeat = 0;
	bool checkpoint_known = false, heartbeat_known = false;
	struct stat st;

	for (const char *const *o = p->outputs; o && *o; o++) {
		if (!stat(*o, &st) && S_ISREG(st.st_mode)) {
			output += (uint64_t)st.st_size;
			output_known = true;
		}
	}
	if (p->checkpoint_dir)
		checkpoint_known = !newest_write(p->checkpoint_dir, &checkpoint);
	if (p->heartbeat && !stat(p->heartbeat, &st) && st.st_uid == p->heartbeat_owner) {
		heartbeat = mtime_ns(&st);
		heartbeat_known = true;
	}
	dprintf(fd, "output %d %" PRIu64 "\ncheckpoint %d %" PRId64 "\nheartbeat %d %" PRId64 "\n",
		output_known, output, checkpoint_known, checkpoint, heartbeat_known, heartbeat);
	return 0;
}

static void parse_files(const char *text, struct efa_hang_sample *s)
{
	int output_known, checkpoint_known, heartbeat_known;
	uint64_t output;
	int64_t checkpoint, heartbeat;

	if (sscanf(text, "output %d %" SCNu64 " checkpoint %d %" SCNd64 " heartbeat %d %" SCNd64,
		   &output_known, &output, &checkpoint_known, &checkpoint, &heartbeat_known,
		   &heartbeat) != 6)
		return;
	s->output_known = output_known;
	s->output = output;
	s->checkpoint_known = checkpoint_known;
	s->checkpoint = checkpoint;
	s->heartbeat_known = heartbeat_known;
	s->heartbeat = heartbeat;
}

int efa_hang_probe_take(const struct efa_hang_probe *p, int64_t now, struct efa_hang_sample *s,
			struct efa_error *err)
{
	struct efa_hw_reading again = { 0 };
	struct efa_child child;
	char out[256];

	memset(s, 0, sizeof(*s));
	s->at = now;
	if (efa_hw_read_again(p->start, p->root && p->root[0] ? p->root : "/", EFA_HW_ALL,
			      &again, err))
		return -1;
	take_traffic(p->start, &again, s);
	take_link(p->start, &again, s);
	efa_hw_reading_clear(&again);
	if ((!p->outputs || !p->outputs[0]) && !p->checkpoint_dir && !p->heartbeat)
		return 0;
	if (efa_child_run(look_at_files, (void *)p, p->timeout_ms, false, out, sizeof(out), &child,
			  err))
		return -1;
	/* Its whole answer (six values) counts, whatever its exit status: in
	 * slurmstepd, whose main thread waits for any child (wait3), the
	 * child may be reaped there, and its status is then lost. */
	if (!child.killed)
		parse_files(out, s);
	return 0;
}
