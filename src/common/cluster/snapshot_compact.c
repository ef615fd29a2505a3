/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The compact snapshot: the cluster of a JSON snapshot as the job_submit
 * bridge needs it, in one file that loads into one allocation. Reading the
 * JSON costs tens of milliseconds at 10,000 nodes, inside slurmctld's
 * job_submit call and under its locks, every time sync writes.
 *
 * Layout (native byte order and sizes: it is read on the host that wrote
 * it, or one like it; another order fails the order check):
 *
 *   header           struct compact_header
 *   layer prefixes   u32 string [nlayers]
 *   zones            struct compact_zone [nzones], sorted by name
 *   zone partitions  struct compact_part [nzparts], sorted within a zone
 *   nodes            struct compact_node [nnodes]
 *   node layers      u32 string [nnodes * nlayers]
 *   node partitions  u32 string [nnparts]
 *   strings          NUL-terminated, each once; the last byte is NUL
 *
 * A string is its offset in the strings, NONE for NULL. The checksum is
 * what catches a damaged file; the bounds checks keep one that passes it
 * (a bug, a file made by hand) from reading outside the file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/atomic_write.h"
#include "common/base/hash.h"
#include "common/base/strutil.h"
#include "common/cluster/snapshot.h"

#define MAGIC "EFASNAP"
#define ORDER 0x01020304u
#define NONE 0xffffffffu
#define MAX_LAYERS 16

struct compact_header {
	char magic[8];
	uint32_t order;
	uint32_t version;
	uint64_t size;		/* of the whole file */
	uint64_t checksum;	/* of everything after this field */
	struct efa_snapshot_id json;
	int64_t generated;
	uint32_t nnodes, nzones, nlayers, nzparts, nnparts, strings_size;
	uint32_t release;	/* the slurm-efa that wrote it: usability was
				 * decided by its rules */
	uint32_t source, slurm_version, api_version, zone_prefix, block_prefix;
	uint32_t flags;
	uint32_t unused;	/* keeps the records 8-byte aligned */
};

/* Layer prefixes were recorded (possibly none): layer_prefixes not NULL. */
#define HAS_LAYERS 1u

#define CHECKED_FROM (offsetof(struct compact_header, checksum) + sizeof(uint64_t))

struct compact_zone {
	uint32_t name, feature, nodes, usable, first_part, nparts;
};

struct compact_part {
	uint32_t name, nodes, usable;
};

#define NODE_USABLE 1u
#define NODE_ZONE_CONFLICT 2u

struct compact_node {
	uint32_t name, zone, zone_feature, state, block, first_part, nparts, flags;
};

/* Where each part of a file starts, from its header's counts. */
struct layout {
	uint64_t prefixes, zones, zparts, nodes, layers, nparts, strings, end;
};

static void layout_of(const struct compact_header *h, struct layout *l)
{
	l->prefixes = sizeof(*h);
	l->zones = l->prefixes + 4ull * h->nlayers;
	l->zparts = l->zones + (uint64_t)sizeof(struct compact_zone) * h->nzones;
	l->nodes = l->zparts + (uint64_t)sizeof(struct compact_part) * h->nzparts;
	l->layers = l->nodes + (uint64_t)sizeof(struct compact_node) * h->nnodes;
	l->nparts = l->layers + 4ull * h->nnodes * h->nlayers;
	l->strings = l->nparts + 4ull * h->nnparts;
	l->end = l->strings + h->strings_size;
}

/*
 * FNV-1a over 64-bit words: each step is a bijection of the state for a
 * given word, so any one changed word changes the sum, and it runs at a
 * fraction of the cost of reading the file.
 */
uint64_t efa_snapshot_compact_sum(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = EFA_FNV1A64_SEED, w;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

void efa_snapshot_id_of(const struct stat *st, struct efa_snapshot_id *id)
{
	id->ino = (uint64_t)st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_sec = (int64_t)st->st_mtim.tv_sec;
	id->mtime_nsec = (int64_t)st->st_mtim.tv_nsec;
}

char *efa_snapshot_compact_path(const char *path)
{
	size_t len = strlen(path);
	char *out;

	if (len > 5 && !strcmp(path + len - 5, ".json"))
		len -= 5;
	if (!(out = malloc(len + 5)))
		return NULL;
	memcpy(out, path, len);
	memcpy(out + len, ".bin", 5);
	return out;
}

/* ---- writing ------------------------------------------------------------- */

/* The strings, each kept once: a cluster's zones, states and partitions
 * repeat on thousands of nodes. */
struct strings {
	char *buf;
	size_t len, cap;
	uint32_t *slots;	/* offset + 1; 0: empty */
	size_t nslots, used;
};

static int strings_grow(struct strings *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->nslots; i++) {
		size_t j;

		if (!t->slots[i])
			continue;
		for (j = efa_fnv1a64_str(t->buf + t->slots[i] - 1) & (n - 1); slots[j]; j = (j + 1) & (n - 1))
			;
		slots[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

/* The offset of s, added when new; -1 on ENOMEM or past 4 GiB. */
static int intern(struct strings *t, const char *s, uint32_t *off)
{
	size_t len, j;

	if (!s) {
		*off = NONE;
		return 0;
	}
	if (2 * (t->used + 1) > t->nslots && strings_grow(t))
		return -1;
	for (j = efa_fnv1a64_str(s) & (t->nslots - 1); t->slots[j]; j = (j + 1) & (t->nslots - 1))
		if (!strcmp(t->buf + t->slots[j] - 1, s)) {
			*off = t->slots[j] - 1;
			return 0;
		}
	len = strlen(s) + 1;
	if (t->len + len >= NONE - 1)
		return -1;
	if (t->len + len > t->cap) {
		size_t cap = t->cap ? t->cap : 65536;
		char *grown;

		while (cap < t->len + len)
			cap *= 2;
		if (!(grown = realloc(t->buf, cap)))
			return -1;
		t->buf = grown;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, s, len);
	*off = (uint32_t)t->len;
	t->slots[j] = (uint32_t)t->len + 1;
	t->len += len;
	t->used++;
	return 0;
}

static size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* The records of c (everything between the header and the strings). */
static int write_records(const struct efa_cluster *c, struct compact_header *h, char *file,
		struct strings *t)
{
	struct layout l;
	uint32_t *prefixes, *layers, *nparts, zp = 0, np = 0;
	struct compact_zone *zones;
	struct compact_part *zparts;
	struct compact_node *nodes;

	layout_of(h, &l);
	prefixes = (uint32_t *)(file + l.prefixes);
	zones = (struct compact_zone *)(file + l.zones);
	zparts = (struct compact_part *)(file + l.zparts);
	nodes = (struct compact_node *)(file + l.nodes);
	layers = (uint32_t *)(file + l.layers);
	nparts = (uint32_t *)(file + l.nparts);
	if (intern(t, PACKAGE_VERSION, &h->release) || intern(t, c->source, &h->source) ||
	    intern(t, c->slurm_version, &h->slurm_version) ||
	    intern(t, c->api_version, &h->api_version) ||
	    intern(t, c->zone_prefix, &h->zone_prefix) ||
	    intern(t, c->block_prefix, &h->block_prefix))
		return -1;
	for (size_t i = 0; i < c->nlayers; i++)
		if (intern(t, c->layer_prefixes[i], &prefixes[i]))
			return -1;
	for (size_t i = 0; i < c->nzones; i++) {
		const struct efa_cluster_zone *z = &c->zones[i];
		struct compact_zone *o = &zones[i];

		o->nodes = (uint32_t)z->nodes;
		o->usable = (uint32_t)z->usable;
		o->first_part = zp;
		o->nparts = (uint32_t)strv_len(z->partitions);
		if (intern(t, z->name, &o->name) || intern(t, z->feature, &o->feature))
			return -1;
		for (uint32_t p = 0; p < o->nparts; p++, zp++) {
			zparts[zp].nodes = (uint32_t)z->part_nodes[p];
			zparts[zp].usable = (uint32_t)z->part_usable[p];
			if (intern(t, z->partitions[p], &zparts[zp].name))
				return -1;
		}
	}
	for (size_t i = 0; i < c->nnodes; i++) {
		const struct efa_cluster_node *n = &c->nodes[i];
		struct compact_node *o = &nodes[i];

		o->first_part = np;
		o->nparts = (uint32_t)strv_len(n->partitions);
		o->flags = (n->usable ? NODE_USABLE : 0) | (n->zone_conflict ? NODE_ZONE_CONFLICT : 0);
		if (intern(t, n->name, &o->name) || intern(t, n->zone, &o->zone) ||
		    intern(t, n->zone_feature, &o->zone_feature) || intern(t, n->state, &o->state) ||
		    intern(t, n->block, &o->block))
			return -1;
		for (size_t k = 0; k < c->nlayers; k++)
			if (intern(t, n->layers ? n->layers[k] : NULL, &layers[i * c->nlayers + k]))
				return -1;
		for (uint32_t p = 0; p < o->nparts; p++)
			if (intern(t, n->partitions[p], &nparts[np++]))
				return -1;
	}
	return 0;
}

int efa_snapshot_write_compact(const struct efa_cluster *c, const char *path,
			       struct efa_error *err)
{
	struct compact_header h = { .magic = MAGIC, .order = ORDER,
				    .version = EFA_SNAPSHOT_COMPACT_FORMAT,
				    .generated = c->generated };
	struct strings t = { 0 };
	char *compact = efa_snapshot_compact_path(path), *file = NULL, *grown;
	size_t nzparts = 0, nnparts = 0;
	struct layout l;
	struct stat st;
	int rc = -1;

	if (!compact) {
		efa_error_set(err, "out of memory");
		goto out;
	}
	/* Only the JSON as it is now makes this file current. */
	if (stat(path, &st)) {
		efa_error_set(err, "cannot stat %s: %s", path, strerror(errno));
		goto out;
	}
	efa_snapshot_id_of(&st, &h.json);
	for (size_t i = 0; i < c->nzones; i++)
		nzparts += strv_len(c->zones[i].partitions);
	for (size_t i = 0; i < c->nnodes; i++)
		nnparts += strv_len(c->nodes[i].partitions);
	if (c->nnodes >= NONE || c->nzones >= NONE || nzparts >= NONE || nnparts >= NONE ||
	    c->nlayers > MAX_LAYERS) {
		efa_error_set(err, "%s: the cluster is too large for the compact form", compact);
		goto out;
	}
	h.flags = c->layer_prefixes ? HAS_LAYERS : 0;
	h.nnodes = (uint32_t)c->nnodes;
	h.nzones = (uint32_t)c->nzones;
	h.nlayers = (uint32_t)c->nlayers;
	h.nzparts = (uint32_t)nzparts;
	h.nnparts = (uint32_t)nnparts;
	layout_of(&h, &l);
	if (!(file = calloc(1, l.strings)) || write_records(c, &h, file, &t)) {
		efa_error_set(err, "out of memory (or more than 4 GiB of names) writing %s", compact);
		goto out;
	}
	h.strings_size = (uint32_t)t.len;
	layout_of(&h, &l);
	if (!(grown = realloc(file, l.end))) {
		efa_error_set(err, "out of memory writing %s", compact);
		goto out;
	}
	file = grown;
	memcpy(file + l.strings, t.buf, t.len);
	h.size = l.end;
	memcpy(file, &h, sizeof(h));
	h.checksum = efa_snapshot_compact_sum(file + CHECKED_FROM, l.end - CHECKED_FROM);
	memcpy(file, &h, sizeof(h));
	rc = efa_write_atomic(compact, file, l.end, 0644, err);
out:
	free(t.buf);
	free(t.slots);
	free(file);
	free(compact);
	return rc;
}

/* ---- reading ------------------------------------------------------------- */

/* What the records need in memory beside the file itself. */
static size_t memory_for(const struct compact_header *h)
{
	return sizeof(struct efa_cluster_node) * h->nnodes +
	       sizeof(struct efa_cluster_zone) * h->nzones +
	       sizeof(char *) * (h->nlayers + 1 + (size_t)h->nnodes * h->nlayers +
				 h->nnparts + h->nnodes + h->nzparts + h->nzones) +
	       2 * sizeof(size_t) * h->nzparts;
}

/* Everything about a file that its header alone can say. */
static int check_header(const struct compact_header *h, size_t len, const char *name,
			const struct efa_snapshot_id *json, struct efa_error *err)
{
	struct layout l;

	if (len < sizeof(*h) || memcmp(h->magic, MAGIC, sizeof(h->magic)))
		return efa_error_set(err, "%s: not a compact snapshot", name);
	if (h->order != ORDER)
		return efa_error_set(err, "%s: written on a machine of another byte order", name);
	if (h->version != EFA_SNAPSHOT_COMPACT_FORMAT)
		return efa_error_set(err, "%s: compact format %u, this slurm-efa reads %d", name,
				     h->version, EFA_SNAPSHOT_COMPACT_FORMAT);
	if (h->size != len)
		return efa_error_set(err, "%s: %zu bytes, its header says %llu (cut short or grown)",
				     name, len, (unsigned long long)h->size);
	if (json && memcmp(&h->json, json, sizeof(*json)))
		return efa_error_set(err, "%s: written for another version of the JSON snapshot (being written now, or the JSON was changed since)",
				     name);
	layout_of(h, &l);
	if (h->nlayers > MAX_LAYERS || (h->nlayers && !(h->flags & HAS_LAYERS)) || l.end != len ||
	    !h->strings_size)
		return efa_error_set(err, "%s: its counts do not fit its size", name);
	return 0;
}

/* A string of the file: NULL for NONE, or -1 when outside the strings. */
static int string_at(const char *strings, uint32_t size, uint32_t off, bool required,
		     char **out)
{
	if (off == NONE && !required) {
		*out = NULL;
		return 0;
	}
	if (off >= size)
		return -1;
	*out = (char *)strings + off;
	return 0;
}

/* The cluster, pointing into the file at mem + memory_for(h); the release
 * that wrote it must be this one when own_release. */
static int build(const struct compact_header *h, char *mem, bool own_release,
		 struct efa_cluster *c)
{
	char *file = mem + memory_for(h);
	struct layout l;
	const uint32_t *prefixes, *layers, *nparts;
	const struct compact_zone *zones;
	const struct compact_part *zparts;
	const struct compact_node *nodes;
	const char *strings;
	char **ptrs, *release;
	size_t *counts;
	uint32_t ss = h->strings_size;
	uint64_t next;

	layout_of(h, &l);
	prefixes = (const uint32_t *)(file + l.prefixes);
	zones = (const struct compact_zone *)(file + l.zones);
	zparts = (const struct compact_part *)(file + l.zparts);
	nodes = (const struct compact_node *)(file + l.nodes);
	layers = (const uint32_t *)(file + l.layers);
	nparts = (const uint32_t *)(file + l.nparts);
	strings = file + l.strings;
	/* Every offset below the size then ends inside the strings. */
	if (strings[ss - 1] || string_at(strings, ss, h->release, true, &release) ||
	    (own_release && strcmp(release, PACKAGE_VERSION)))
		return -1;
	c->nodes = (struct efa_cluster_node *)mem;
	c->zones = (struct efa_cluster_zone *)(c->nodes + h->nnodes);
	ptrs = (char **)(c->zones + h->nzones);
	counts = (size_t *)(ptrs + h->nlayers + 1 + (size_t)h->nnodes * h->nlayers + h->nnparts +
			    h->nnodes + h->nzparts + h->nzones);
	c->generated = h->generated;
	c->nnodes = c->nodes_cap = h->nnodes;
	c->nzones = h->nzones;
	c->nlayers = h->nlayers;
	c->arena = mem;
	if (string_at(strings, ss, h->source, false, &c->source) ||
	    string_at(strings, ss, h->slurm_version, false, &c->slurm_version) ||
	    string_at(strings, ss, h->api_version, false, &c->api_version) ||
	    string_at(strings, ss, h->zone_prefix, false, &c->zone_prefix) ||
	    string_at(strings, ss, h->block_prefix, false, &c->block_prefix))
		return -1;
	if (h->flags & HAS_LAYERS)
		c->layer_prefixes = ptrs;
	for (uint32_t i = 0; i < h->nlayers; i++)
		if (string_at(strings, ss, prefixes[i], true, ptrs++))
			return -1;
	*ptrs++ = NULL;
	/* Each record's partitions follow the one before's, as written: ranges
	 * that overlap would give more partitions than ptrs and counts hold. */
	next = 0;
	for (uint32_t i = 0; i < h->nzones; i++) {
		const struct compact_zone *o = &zones[i];
		struct efa_cluster_zone *z = &c->zones[i];

		if (o->first_part != next || next + o->nparts > h->nzparts ||
		    string_at(strings, ss, o->name, true, &z->name) ||
		    string_at(strings, ss, o->feature, true, &z->feature))
			return -1;
		next += o->nparts;
		z->nodes = o->nodes;
		z->usable = o->usable;
		z->partitions = ptrs;
		z->part_nodes = counts;
		z->part_usable = counts + o->nparts;
		for (uint32_t p = 0; p < o->nparts; p++) {
			const struct compact_part *zp = &zparts[o->first_part + p];

			if (string_at(strings, ss, zp->name, true, ptrs++))
				return -1;
			z->part_nodes[p] = zp->nodes;
			z->part_usable[p] = zp->usable;
		}
		*ptrs++ = NULL;
		counts += 2 * (size_t)o->nparts;
	}
	next = 0;
	for (uint32_t i = 0; i < h->nnodes; i++) {
		const struct compact_node *o = &nodes[i];
		struct efa_cluster_node *n = &c->nodes[i];

		if (o->first_part != next || next + o->nparts > h->nnparts ||
		    string_at(strings, ss, o->name, true, &n->name) ||
		    string_at(strings, ss, o->zone, false, &n->zone) ||
		    string_at(strings, ss, o->zone_feature, false, &n->zone_feature) ||
		    string_at(strings, ss, o->state, true, &n->state) ||
		    string_at(strings, ss, o->block, false, &n->block))
			return -1;
		next += o->nparts;
		n->usable = o->flags & NODE_USABLE;
		n->zone_conflict = o->flags & NODE_ZONE_CONFLICT;
		n->layers = NULL;
		if (h->nlayers) {
			n->layers = ptrs;
			for (uint32_t k = 0; k < h->nlayers; k++)
				if (string_at(strings, ss, layers[(size_t)i * h->nlayers + k], false,
					      ptrs++))
					return -1;
		}
		n->partitions = ptrs;
		for (uint32_t p = 0; p < o->nparts; p++)
			if (string_at(strings, ss, nparts[o->first_part + p], true, ptrs++))
				return -1;
		*ptrs++ = NULL;
	}
	return 0;
}

/*
 * Checks and builds a file already in place at the end of mem (its header
 * copied to h): on success c owns mem, else mem is freed.
 */
static int finish(const struct compact_header *h, char *mem, const char *name, bool own_release,
		  struct efa_cluster *c, struct efa_error *err)
{
	char *file = mem + memory_for(h);

	if (h->checksum != efa_snapshot_compact_sum(file + CHECKED_FROM, h->size - CHECKED_FROM)) {
		efa_error_set(err, "%s: damaged (checksum does not match)", name);
		goto fail;
	}
	if (build(h, mem, own_release, c)) {
		efa_error_set(err, "%s: a record points outside the file, or another slurm-efa release wrote it",
			      name);
		goto fail;
	}
	return 0;
fail:
	free(mem);
	memset(c, 0, sizeof(*c));
	return -1;
}

int efa_snapshot_compact_parse(const void *data, size_t len, const char *name,
			       const struct efa_snapshot_id *json, struct efa_cluster *c,
			       struct efa_error *err)
{
	struct compact_header h = { 0 };
	char *mem;

	memset(c, 0, sizeof(*c));
	if (len >= sizeof(h))
		memcpy(&h, data, sizeof(h));
	if (check_header(&h, len, name, json, err))
		return -1;
	if (!(mem = malloc(memory_for(&h) + len)))
		return efa_error_set(err, "out of memory reading %s", name);
	memcpy(mem + memory_for(&h), data, len);
	return finish(&h, mem, name, json != NULL, c, err);
}

/* All of buf from fd, from offset 0. */
static int read_all(int fd, char *buf, size_t len)
{
	return efa_pread_full(fd, buf, len, 0) == (ssize_t)len ? 0 : -1;
}

/*
 * What the snapshot says decides where jobs run, and slurmctld reads it: a
 * file only its writer can change. The file (st) and its directory must be
 * writable by their owner alone, and the file be root's, the reader's, or
 * the directory's owner's (slurm-efa sync runs as a user of its own).
 */
static int trusted(const char *name, const struct stat *st, struct efa_error *err)
{
	char *copy = strdup(name), *slash;
	const char *dir;
	struct stat ds;
	int rc = -1;

	if (!copy)
		return efa_error_set(err, "out of memory");
	slash = strrchr(copy, '/');
	if (!slash)
		dir = ".";
	else if (slash == copy)
		dir = "/";
	else {
		*slash = '\0';
		dir = copy;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		efa_error_set(err, "%s is writable by others than its owner: not trusted (chmod go-w %s)",
			      name, name);
	else if (stat(dir, &ds))
		efa_error_set(err, "cannot stat %s: %s", dir, strerror(errno));
	else if (ds.st_mode & (S_IWGRP | S_IWOTH))
		efa_error_set(err, "%s is in %s, which others than its owner can write: not trusted (give the snapshot a directory of its own, e.g. /var/lib/slurm-efa)",
			      name, dir);
	else if (st->st_uid && st->st_uid != geteuid() && st->st_uid != ds.st_uid)
		efa_error_set(err, "%s is owned by uid %u, neither root, this process's user nor its directory's owner: not trusted",
			      name, (unsigned)st->st_uid);
	else
		rc = 0;
	free(copy);
	return rc;
}

/* The compact form of the JSON snapshot whose identity is json. */
static int read_compact(const char *name, const struct efa_snapshot_id *json,
			struct efa_cluster *c, struct efa_error *err)
{
	int fd = open(name, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct compact_header h = { 0 };
	struct stat st;
	char *mem;

	memset(c, 0, sizeof(*c));
	if (fd < 0)
		return efa_error_set(err, "cannot open %s: %s", name, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > EFA_SNAPSHOT_MAX_SIZE) {
		efa_error_set(err, "%s: not a regular file of at most %d bytes", name,
			      EFA_SNAPSHOT_MAX_SIZE);
		goto fail;
	}
	if (trusted(name, &st, err))
		goto fail;
	if ((size_t)st.st_size >= sizeof(h) && read_all(fd, (char *)&h, sizeof(h))) {
		efa_error_set(err, "cannot read %s: %s", name, strerror(errno));
		goto fail;
	}
	if (check_header(&h, (size_t)st.st_size, name, json, err))
		goto fail;
	if (!(mem = malloc(memory_for(&h) + h.size))) {
		efa_error_set(err, "out of memory reading %s", name);
		goto fail;
	}
	if (read_all(fd, mem + memory_for(&h), h.size)) {
		free(mem);
		efa_error_set(err, "cannot read %s whole (cut short while read?)", name);
		goto fail;
	}
	close(fd);
	/* The header read first is the one checked: a file changed under us
	 * fails the checksum. */
	return finish(&h, mem, name, true, c, err);
fail:
	close(fd);
	return -1;
}

int efa_snapshot_load(const char *path, struct efa_cluster *c, char *note, size_t note_size,
		      struct efa_error *err)
{
	struct efa_snapshot_id id;
	struct efa_error why;
	char *compact, *text;
	struct stat st;
	size_t len;
	int fd, rc;

	memset(c, 0, sizeof(*c));
	note[0] = '\0';
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return efa_error_set(err, "cannot open %s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		close(fd);
		return efa_error_set(err, "cannot stat %s: %s", path, strerror(errno));
	}
	if (S_ISREG(st.st_mode) && trusted(path, &st, err)) {
		close(fd);
		return -1;
	}
	efa_snapshot_id_of(&st, &id);
	if (!(compact = efa_snapshot_compact_path(path))) {
		close(fd);
		return efa_error_set(err, "out of memory");
	}
	rc = read_compact(compact, &id, c, &why);
	free(compact);
	if (!rc) {
		close(fd);
		return 0;
	}
	snprintf(note, note_size, "%s; reading %s instead (slower)", why.msg, path);
	if (efa_read_fd(fd, path, EFA_SNAPSHOT_MAX_SIZE, &text, &len, err))
		return -1;
	rc = efa_snapshot_parse(text, len, path, c, err);
	free(text);
	return rc;
}
