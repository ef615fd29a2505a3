/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/fields.h"
#include "common/base/strutil.h"
#include "common/node/hw_counters.h"
#include "common/node/sysfs.h"

const struct efa_hw_counter_info efa_hw_counter_info[EFA_HW_NCOUNTERS] = {
	[EFA_HW_TX_BYTES] = { "tx_bytes", "tx_bytes_total", "Bytes sent" },
	[EFA_HW_TX_PKTS] = { "tx_pkts", "tx_packets_total", "Packets sent" },
	[EFA_HW_RX_BYTES] = { "rx_bytes", "rx_bytes_total", "Bytes received" },
	[EFA_HW_RX_PKTS] = { "rx_pkts", "rx_packets_total", "Packets received" },
	[EFA_HW_RDMA_READ_BYTES] = { "rdma_read_bytes", "rdma_read_bytes_total",
				     "Bytes read from peers by RDMA read" },
	[EFA_HW_RDMA_READ_RESP_BYTES] = { "rdma_read_resp_bytes", "rdma_read_response_bytes_total",
					  "Bytes sent in answer to peers' RDMA reads" },
	[EFA_HW_RDMA_WRITE_BYTES] = { "rdma_write_bytes", "rdma_write_bytes_total",
				      "Bytes written to peers by RDMA write" },
	[EFA_HW_RDMA_WRITE_RECV_BYTES] = { "rdma_write_recv_bytes", "rdma_write_received_bytes_total",
					   "Bytes peers wrote here by RDMA write" },
	[EFA_HW_RETRANS_BYTES] = { "retrans_bytes", "retransmitted_bytes_total",
				   "SRD bytes sent again" },
	[EFA_HW_RETRANS_PKTS] = { "retrans_pkts", "retransmitted_packets_total",
				  "SRD packets sent again" },
	[EFA_HW_RETRANS_TIMEOUT_EVENTS] = { "retrans_timeout_events", "retransmit_timeouts_total",
					    "SRD traffic that timed out and moved to another path" },
	[EFA_HW_UNRESPONSIVE_REMOTE_EVENTS] = { "unresponsive_remote_events",
						"unresponsive_remotes_total",
						"Times a remote SRD connection did not answer" },
	[EFA_HW_IMPAIRED_REMOTE_CONN_EVENTS] = { "impaired_remote_conn_events",
						 "impaired_connections_total",
						 "Times an SRD connection entered the impaired state" },
};

uint32_t efa_hw_mask(const enum efa_hw_counter *c, size_t n)
{
	uint32_t mask = 0;

	for (size_t i = 0; i < n; i++)
		mask |= 1u << c[i];
	return mask;
}

void efa_hw_reading_clear(struct efa_hw_reading *r)
{
	free(r->ports);
	memset(r, 0, sizeof(*r));
}

static struct efa_port_counters *add_port(struct efa_hw_reading *r, const char *device,
					  const char *port)
{
	struct efa_port_counters *grown, *p;

	if (strlen(device) >= sizeof(p->device) || strlen(port) >= sizeof(p->port)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	grown = realloc(r->ports, (r->nports + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	r->ports = grown;
	p = &r->ports[r->nports++];
	memset(p, 0, sizeof(*p));
	strcpy(p->device, device);
	strcpy(p->port, port);
	return p;
}

/* A counter file's text as a value: digits only, nothing else. */
static bool parse_value(const char *text, uint64_t *value)
{
	char *end;

	if (!text[0] || strspn(text, "0123456789") != strlen(text))
		return false;
	errno = 0;
	*value = strtoull(text, &end, 10);
	return !errno;
}

/* The counters of want a port has; its hw_counters directory is looked
 * up once, and a port without one costs one lookup. */
static void read_port(const struct efa_sysfs *fs, uint32_t want, struct efa_port_counters *p,
		      struct efa_hw_reading *r)
{
	char text[64];
	int dir;

	dir = efa_sysfs_open_dir(fs, "/sys/class/infiniband/%s/ports/%s/hw_counters", p->device,
				 p->port);
	if (dir < 0)
		return;	/* a driver without statistics */
	for (int c = 0; c < EFA_HW_NCOUNTERS; c++) {
		if (!(want & (1u << c)) ||
		    efa_sysfs_read_in(fs, dir, efa_hw_counter_info[c].file, text, sizeof(text)))
			continue;	/* this device has no such counter */
		if (parse_value(text, &p->value[c]))
			p->have |= 1u << c;
		else
			efa_strlcatf(r->problems, sizeof(r->problems), "%s%s port %s: %s holds \"%.20s\", not a count",
				     r->problems[0] ? "; " : "", p->device, p->port,
				     efa_hw_counter_info[c].file, text);
	}
	close(dir);
}

int efa_hw_read(const struct efa_node *node, const char *root, struct efa_hw_reading *r,
		struct efa_error *err)
{
	return efa_hw_read_some(node, root, EFA_HW_ALL, r, err);
}

int efa_hw_read_some(const struct efa_node *node, const char *root, uint32_t want,
		     struct efa_hw_reading *r, struct efa_error *err)
{
	struct efa_sysfs fs;
	int rc = -1;

	memset(r, 0, sizeof(*r));
	if (efa_sysfs_open(&fs, root))
		return efa_error_set(err, "cannot open root %s: %s", root, strerror(errno));
	for (size_t n = 0; n < node->nnics; n++) {
		const char *device = node->nics[n].name;
		char **ports = efa_sysfs_list(&fs, "/sys/class/infiniband/%s/ports", device);

		if (!ports)
			goto fail;
		for (char **port = ports; *port; port++) {
			struct efa_port_counters *p = add_port(r, device, *port);

			if (!p) {
				efa_strv_free(ports);
				goto fail;
			}
			read_port(&fs, want & EFA_HW_ALL, p, r);
		}
		efa_strv_free(ports);
	}
	rc = 0;
	goto out;
fail:
	efa_error_set(err, "cannot read the EFA counters: %s", strerror(errno));
	efa_hw_reading_clear(r);
out:
	efa_sysfs_close(&fs);
	return rc;
}

int efa_hw_read_again(const struct efa_hw_reading *before, const char *root, uint32_t want,
		      struct efa_hw_reading *r, struct efa_error *err)
{
	struct efa_sysfs fs;

	memset(r, 0, sizeof(*r));
	if (efa_sysfs_open(&fs, root))
		return efa_error_set(err, "cannot open root %s: %s", root, strerror(errno));
	for (size_t i = 0; i < before->nports; i++) {
		const struct efa_port_counters *was = &before->ports[i];
		struct efa_port_counters *p;

		if (!(was->have & want))
			continue;	/* nothing to take a difference of */
		p = add_port(r, was->device, was->port);
		if (!p) {
			efa_error_set(err, "cannot read the EFA counters: %s", strerror(errno));
			efa_hw_reading_clear(r);
			efa_sysfs_close(&fs);
			return -1;
		}
		read_port(&fs, was->have & want, p, r);
	}
	efa_sysfs_close(&fs);
	return 0;
}

/* Newest first: a kept reading's lines come port by port, so its parse
 * finds each line's port at once. */
static const struct efa_port_counters *find_port(const struct efa_hw_reading *r,
						 const struct efa_port_counters *like)
{
	for (size_t i = r->nports; i-- > 0;)
		if (!strcmp(r->ports[i].device, like->device) && !strcmp(r->ports[i].port, like->port))
			return &r->ports[i];
	return NULL;
}

int efa_hw_delta(const struct efa_hw_reading *before, const struct efa_hw_reading *after,
		 struct efa_hw_reading *delta, char *notes, size_t size)
{
	memset(delta, 0, sizeof(*delta));
	for (size_t i = 0; i < after->nports; i++) {
		const struct efa_port_counters *a = &after->ports[i], *b = find_port(before, a);
		struct efa_port_counters *d;
		bool restarted = false;

		if (!b)
			continue;
		d = add_port(delta, a->device, a->port);
		if (!d) {
			efa_hw_reading_clear(delta);
			return -1;
		}
		d->have = a->have & b->have;
		for (int c = 0; c < EFA_HW_NCOUNTERS; c++) {
			if (!(d->have & (1u << c)))
				continue;
			if (a->value[c] < b->value[c]) {
				d->value[c] = a->value[c];
				restarted = true;
			} else {
				d->value[c] = a->value[c] - b->value[c];
			}
		}
		if (restarted && notes)
			efa_strlcatf(notes, size, "%s%s port %s: counters went back (the efa driver was reloaded?): counted from 0",
				     notes[0] ? "; " : "", a->device, a->port);
	}
	return 0;
}

bool efa_hw_sum(const struct efa_hw_reading *r, enum efa_hw_counter c, uint64_t *sum)
{
	bool any = false;

	*sum = 0;
	for (size_t i = 0; i < r->nports; i++) {
		if (r->ports[i].have & (1u << c)) {
			*sum += r->ports[i].value[c];
			any = true;
		}
	}
	return any;
}

char *efa_hw_format(const struct efa_hw_reading *r)
{
	size_t size = 1;
	char *text, *at;

	for (size_t i = 0; i < r->nports; i++)
		size += EFA_HW_NCOUNTERS * (sizeof(r->ports[i].device) + sizeof(r->ports[i].port) + 64);
	text = malloc(size);
	if (!text)
		return NULL;
	at = text;
	for (size_t i = 0; i < r->nports; i++) {
		const struct efa_port_counters *p = &r->ports[i];

		for (int c = 0; c < EFA_HW_NCOUNTERS; c++) {
			if (!(p->have & (1u << c)))
				continue;
			at = efa_field_put(at, p->device);
			*at++ = ' ';
			at = efa_field_put(at, p->port);
			*at++ = ' ';
			at = efa_field_put(at, efa_hw_counter_info[c].file);
			*at++ = ' ';
			at = efa_field_put_u64(at, p->value[c]);
			*at++ = '\n';
		}
	}
	*at = '\0';
	return text;
}

static int counter_by_file(const char *file)
{
	for (int c = 0; c < EFA_HW_NCOUNTERS; c++)
		if (!strcmp(efa_hw_counter_info[c].file, file))
			return c;
	return -1;
}

int efa_hw_parse(const char *text, struct efa_hw_reading *r)
{
	memset(r, 0, sizeof(*r));
	for (const char *line = text; line && *line;) {
		const char *at = line, *end = strchr(line, '\n');
		struct efa_port_counters like, *p;
		char file[64];
		uint64_t v;
		int c;

		if (efa_field_word(&at, like.device, sizeof(like.device)) &&
		    efa_field_word(&at, like.port, sizeof(like.port)) &&
		    efa_field_word(&at, file, sizeof(file)) && (c = counter_by_file(file)) >= 0 &&
		    efa_field_u64(&at, &v)) {
			p = (struct efa_port_counters *)find_port(r, &like);
			if (!p && !(p = add_port(r, like.device, like.port))) {
				efa_hw_reading_clear(r);
				return -1;
			}
			p->value[c] = v;
			p->have |= 1u << c;
		}
		line = end ? end + 1 : NULL;
	}
	return 0;
}
