/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "common/base/hash.h"
#include "common/base/strutil.h"
#include "common/node/bind.h"
#include "common/node/stack.h"
#include "common/nodecache/nodedesc.h"

static const char magic[8] = "EFANODE";
#define HEADER_SIZE (sizeof(magic) + 4 + 4 + 8 + 8)
#define NO_STRING 0xffffffffu

/* ---- writing ------------------------------------------------------------ */

struct wr {
	unsigned char *p;
	size_t len, cap;
	bool oom;
};

static void put(struct wr *w, const void *data, size_t len)
{
	if (w->oom || !len)
		return;
	if (w->len + len > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		unsigned char *grown;

		while (cap < w->len + len)
			cap *= 2;
		grown = realloc(w->p, cap);
		if (!grown) {
			w->oom = true;
			return;
		}
		w->p = grown;
		w->cap = cap;
	}
	memcpy(w->p + w->len, data, len);
	w->len += len;
}

static void put_u32(struct wr *w, uint32_t v)
{
	put(w, &v, sizeof(v));
}

static void put_i32(struct wr *w, int v)
{
	put_u32(w, (uint32_t)v);
}

static void put_u64(struct wr *w, uint64_t v)
{
	put(w, &v, sizeof(v));
}

static void put_str(struct wr *w, const char *s)
{
	size_t len = s ? strlen(s) : 0;

	put_u32(w, s ? (uint32_t)len : NO_STRING);
	put(w, s, len);
}

/* A list's length plus one, 0 for none: NULL and empty differ. */
static void put_strv(struct wr *w, char *const *v)
{
	uint32_t n = 0;

	while (v && v[n])
		n++;
	put_u32(w, v ? n + 1 : 0);
	for (uint32_t i = 0; i < n; i++)
		put_str(w, v[i]);
}

static void put_pci(struct wr *w, const struct efa_pci *pci)
{
	put_str(w, pci->addr);
	put_str(w, pci->path);
	put_i32(w, pci->numa);
}

static void put_node(struct wr *w, const struct efa_node *node)
{
	const struct efa_stack *s = &node->stack;

	put_str(w, node->instance_type);
	put_u32(w, node->instance_type_configured);
	put_u32(w, (uint32_t)node->nnics);
	for (size_t i = 0; i < node->nnics; i++) {
		put_str(w, node->nics[i].name);
		put_pci(w, &node->nics[i].pci);
		put_i32(w, node->nics[i].uverbs);
		put_u32(w, node->nics[i].usable);
	}
	put_u32(w, (uint32_t)node->naccels);
	for (size_t i = 0; i < node->naccels; i++) {
		const struct efa_accel *a = &node->accels[i];

		put_u32(w, a->kind);
		put_i32(w, a->index);
		put_pci(w, &a->pci);
		put_i32(w, a->cores);
		put_i32(w, a->lnc);
		put_u32(w, a->present);
	}
	put_str(w, s->installer);
	put_str(w, s->libfabric);
	put_str(w, s->rdma_core);
	put_str(w, s->ofi_nccl);
	put_str(w, s->efa_driver);
	put_str(w, s->kernel);
	put_strv(w, s->libdirs);
	put_u32(w, s->has_libfabric);
	put_u32(w, s->has_net_plugin);
	put_u32(w, node->rdma_read);
	put_str(w, node->rdma_read_why);
	put_u32(w, node->closeness ? (uint32_t)(node->naccels * node->nnics) : 0);
	if (node->closeness)
		put(w, node->closeness, node->naccels * node->nnics);
}

static void put_profile(struct wr *w, const struct efa_profile *p)
{
	put_str(w, p->name);
	put_strv(w, p->match);
	put_strv(w, p->includes);
	put_strv(w, p->accelerators);
	put_u32(w, (uint32_t)p->nvars);
	for (size_t i = 0; i < p->nvars; i++) {
		const struct efa_profile_var *v = &p->vars[i];

		put_str(w, v->name);
		put_str(w, v->value);
		put_str(w, v->where);
		put_u32(w, (uint32_t)v->nconds);
		for (size_t c = 0; c < v->nconds; c++) {
			put_str(w, v->conds[c].component);
			put_u32(w, v->conds[c].cmp);
			put_str(w, v->conds[c].version);
		}
	}
	put_u32(w, (uint32_t)p->nexpect);
	for (size_t i = 0; i < p->nexpect; i++) {
		put_str(w, p->expect[i].type);
		put_i32(w, p->expect[i].count);
	}
	put_i32(w, p->expect_wait);
}

static void put_key(struct wr *w, const struct efa_nodedesc_key *k)
{
	put_u64(w, k->root_dev);
	put_u64(w, k->root_ino);
	put_str(w, k->boot_id);
	put_str(w, k->instance_type);
	put_str(w, k->profile_dir);
	put_u32(w, (uint32_t)k->nstamps);
	for (size_t i = 0; i < k->nstamps; i++) {
		put_str(w, k->stamps[i].path);
		put_u32(w, k->stamps[i].kind);
		for (size_t j = 0; j < 7; j++)
			put_u64(w, k->stamps[i].v[j]);
	}
}

int efa_nodedesc_encode(const struct efa_nodedesc *desc, char **out, size_t *len)
{
	struct wr w = { 0 };
	uint64_t payload, sum;

	put(&w, magic, sizeof(magic));
	put_u32(&w, EFA_NODEDESC_VERSION);
	put_u32(&w, 0);
	put_u64(&w, 0);		/* payload size and checksum, below */
	put_u64(&w, 0);
	put_key(&w, &desc->key);
	put_node(&w, desc->node);
	put_u32(&w, desc->profiles != NULL);
	if (desc->profiles) {
		put_u32(&w, (uint32_t)desc->profiles->n);
		for (size_t i = 0; i < desc->profiles->n; i++)
			put_profile(&w, &desc->profiles->v[i]);
	} else {
		put_str(&w, desc->profiles_error);
	}
	if (w.oom) {
		free(w.p);
		return -1;
	}
	payload = w.len - HEADER_SIZE;
	sum = efa_fnv1a64_words(EFA_FNV1A64_SEED, w.p + HEADER_SIZE, payload);
	memcpy(w.p + sizeof(magic) + 8, &payload, 8);
	memcpy(w.p + sizeof(magic) + 16, &sum, 8);
	*out = (char *)w.p;
	*len = w.len;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

struct rd {
	const unsigned char *p;
	size_t left;
	bool bad;		/* ran out, or a value out of range */
	bool oom;
	/* The block get_str copies the strings of what is decoded into
	 * (strings_begin): every step decodes a node's description, and a
	 * hundred and fifty allocations each and their frees cost more than
	 * the rest of it. */
	char *strings;
	size_t used, cap;
};

/* A block for the strings decoded from here on: each takes its bytes and
 * a NUL, no more than the length before them, so what is left of the
 * payload bounds them all. NULL without memory. */
static char *strings_begin(struct rd *r)
{
	r->used = 0;
	r->cap = r->left + 1;
	r->strings = malloc(r->cap);
	if (!r->strings)
		r->oom = r->bad = true;
	return r->strings;
}

static void get(struct rd *r, void *out, size_t len)
{
	if (r->bad || len > r->left) {
		r->bad = true;
		memset(out, 0, len);
		return;
	}
	if (!len)
		return;
	memcpy(out, r->p, len);
	r->p += len;
	r->left -= len;
}

static uint32_t get_u32(struct rd *r)
{
	uint32_t v;

	get(r, &v, sizeof(v));
	return v;
}

static int get_i32(struct rd *r)
{
	return (int)get_u32(r);
}

static uint64_t get_u64(struct rd *r)
{
	uint64_t v;

	get(r, &v, sizeof(v));
	return v;
}

static bool get_bool(struct rd *r)
{
	uint32_t v = get_u32(r);

	r->bad = r->bad || v > 1;
	return v == 1;
}

/* A count of items, each at least min bytes: never more than what is left. */
static size_t get_count(struct rd *r, size_t min)
{
	uint32_t n = get_u32(r);

	if (r->bad || (size_t)n > r->left / min) {
		r->bad = true;
		return 0;
	}
	return n;
}

/* The next string's bytes where they are, *len of them, and past them;
 * NULL for none (required: none is bad). */
static const char *take_str(struct rd *r, bool required, uint32_t *len)
{
	const char *at;

	*len = get_u32(r);
	if (r->bad || (*len == NO_STRING && !required))
		return NULL;
	if (*len == NO_STRING || *len > r->left || memchr(r->p, '\0', *len)) {
		r->bad = true;
		return NULL;
	}
	at = (const char *)r->p;
	r->p += *len;
	r->left -= *len;
	return at;
}

/* A string, or NULL for none; required: none is bad. It is in the
 * current block, or allocated on its own when there is none. */
static char *get_str(struct rd *r, bool required)
{
	uint32_t len;
	const char *at = take_str(r, required, &len);
	char *s;

	if (!at)
		return NULL;
	if (!r->strings) {
		if (!(s = strndup(at, len)))
			r->oom = r->bad = true;
		return s;
	}
	if ((size_t)len >= r->cap - r->used) {
		r->bad = true;	/* cannot be: the block holds the payload */
		return NULL;
	}
	s = r->strings + r->used;
	memcpy(s, at, len);
	s[len] = '\0';
	r->used += (size_t)len + 1;
	return s;
}

/* A string into buf (size bytes with its NUL), copied where it is. */
static void get_fixed(struct rd *r, char *buf, size_t size)
{
	uint32_t len;
	const char *at = take_str(r, true, &len);

	if (!at || len >= size) {
		r->bad = true;
		buf[0] = '\0';
		return;
	}
	memcpy(buf, at, len);
	buf[len] = '\0';
}

static char **get_strv(struct rd *r)
{
	uint32_t n = get_u32(r);
	char **v;

	if (r->bad || !n)
		return NULL;
	if ((size_t)n - 1 > r->left / 4) {
		r->bad = true;
		return NULL;
	}
	v = calloc(n, sizeof(*v));
	if (!v) {
		r->oom = r->bad = true;
		return NULL;
	}
	for (size_t i = 0; i + 1 < n && !r->bad; i++)
		v[i] = get_str(r, true);
	return v;
}

static void get_pci(struct rd *r, struct efa_pci *pci)
{
	get_fixed(r, pci->addr, sizeof(pci->addr));
	pci->path = get_str(r, false);
	pci->numa = get_i32(r);
}

static struct efa_node *get_node(struct rd *r)
{
	struct efa_node *node = calloc(1, sizeof(*node));
	struct efa_stack *s;
	size_t n;

	if (!node) {
		r->oom = r->bad = true;
		return NULL;
	}
	node->strings = strings_begin(r);
	s = &node->stack;
	node->instance_type = get_str(r, false);
	node->instance_type_configured = get_bool(r);
	n = get_count(r, 24);
	node->nics = calloc(n ? n : 1, sizeof(*node->nics));
	for (; node->nics && node->nnics < n && !r->bad; node->nnics++) {
		struct efa_nic *nic = &node->nics[node->nnics];

		nic->name = get_str(r, true);
		get_pci(r, &nic->pci);
		nic->uverbs = get_i32(r);
		nic->usable = get_bool(r);
	}
	n = get_count(r, 32);
	node->accels = n ? calloc(n, sizeof(*node->accels)) : NULL;
	for (; node->accels && node->naccels < n && !r->bad; node->naccels++) {
		struct efa_accel *a = &node->accels[node->naccels];
		uint32_t kind = get_u32(r);

		r->bad = r->bad || kind > EFA_ACCEL_NEURON;
		a->kind = kind;
		a->index = get_i32(r);
		get_pci(r, &a->pci);
		a->cores = get_i32(r);
		a->lnc = get_i32(r);
		a->present = get_bool(r);
	}
	if (!node->nics || (n && !node->accels))
		r->oom = r->bad = true;
	s->installer = get_str(r, false);
	s->libfabric = get_str(r, false);
	s->rdma_core = get_str(r, false);
	s->ofi_nccl = get_str(r, false);
	s->efa_driver = get_str(r, false);
	s->kernel = get_str(r, false);
	s->libdirs = get_strv(r);
	s->has_libfabric = get_bool(r);
	s->has_net_plugin = get_bool(r);
	n = get_u32(r);
	r->bad = r->bad || n > EFA_RDMA_READ_YES;
	node->rdma_read = (enum efa_rdma_read)n;
	get_fixed(r, node->rdma_read_why, sizeof(node->rdma_read_why));
	n = get_u32(r);
	if (n && !r->bad) {
		/* Levels of enum efa_close, one per accelerator and NIC. */
		if (n != node->naccels * node->nnics || n > r->left) {
			r->bad = true;
		} else if (!(node->closeness = malloc(n))) {
			r->oom = r->bad = true;
		} else {
			get(r, node->closeness, n);
			for (size_t i = 0; i < n; i++)
				r->bad = r->bad || node->closeness[i] > EFA_CLOSE_SWITCH;
		}
	}
	return node;
}

static void get_profile(struct rd *r, struct efa_profile *p)
{
	size_t n;

	p->name = get_str(r, true);
	p->match = get_strv(r);
	p->includes = get_strv(r);
	p->accelerators = get_strv(r);
	n = get_count(r, 16);
	p->vars = n ? calloc(n, sizeof(*p->vars)) : NULL;
	for (; p->vars && p->nvars < n && !r->bad; p->nvars++) {
		struct efa_profile_var *v = &p->vars[p->nvars];
		size_t nc;

		v->name = get_str(r, true);
		v->value = get_str(r, true);
		v->where = get_str(r, true);
		nc = get_count(r, 12);
		v->conds = nc ? calloc(nc, sizeof(*v->conds)) : NULL;
		for (; v->conds && v->nconds < nc && !r->bad; v->nconds++) {
			struct efa_cond *c = &v->conds[v->nconds];
			uint32_t cmp;

			c->component = get_str(r, true);
			cmp = get_u32(r);
			r->bad = r->bad || cmp >= EFA_CMP_COUNT;
			c->cmp = (enum efa_cmp)cmp;
			c->version = get_str(r, true);
		}
		if (nc && !v->conds)
			r->oom = r->bad = true;
	}
	if (n && !p->vars)
		r->oom = r->bad = true;
	n = get_count(r, 8);
	p->expect = n ? calloc(n, sizeof(*p->expect)) : NULL;
	for (; p->expect && p->nexpect < n && !r->bad; p->nexpect++) {
		p->expect[p->nexpect].type = get_str(r, true);
		p->expect[p->nexpect].count = get_i32(r);
	}
	if (n && !p->expect)
		r->oom = r->bad = true;
	p->expect_wait = get_i32(r);
}

static struct efa_profiles *get_profiles(struct rd *r)
{
	struct efa_profiles *set = calloc(1, sizeof(*set));
	size_t n = get_count(r, 28);

	if (set) {
		set->strings = strings_begin(r);
		set->v = calloc(n ? n : 1, sizeof(*set->v));
	}
	if (!set || !set->v) {
		r->oom = r->bad = true;
		return set;
	}
	for (; set->n < n && !r->bad; set->n++)
		get_profile(r, &set->v[set->n]);
	return set;
}

static void get_key(struct rd *r, struct efa_nodedesc_key *k)
{
	size_t n;

	k->root_dev = get_u64(r);
	k->root_ino = get_u64(r);
	k->boot_id = get_str(r, true);
	k->instance_type = get_str(r, false);
	k->profile_dir = get_str(r, true);
	n = get_count(r, 8 + 7 * 8);
	k->stamps = n ? calloc(n, sizeof(*k->stamps)) : NULL;
	if (n && !k->stamps)
		r->oom = r->bad = true;
	for (; k->stamps && k->nstamps < n && !r->bad; k->nstamps++) {
		struct efa_stamp *s = &k->stamps[k->nstamps];
		uint32_t kind;

		s->path = get_str(r, true);
		kind = get_u32(r);
		r->bad = r->bad || kind > EFA_STAMP_LISTING;
		s->kind = (enum efa_stamp_kind)kind;
		for (size_t j = 0; j < 7; j++)
			s->v[j] = get_u64(r);
	}
}

int efa_nodedesc_decode(const char *buf, size_t len, struct efa_nodedesc *desc,
			struct efa_error *err)
{
	struct rd r;
	uint32_t version, reserved;
	uint64_t payload, sum;

	memset(desc, 0, sizeof(*desc));
	if (len < HEADER_SIZE || memcmp(buf, magic, sizeof(magic)))
		return efa_error_set(err, "not a node description");
	memcpy(&version, buf + sizeof(magic), 4);
	memcpy(&reserved, buf + sizeof(magic) + 4, 4);
	memcpy(&payload, buf + sizeof(magic) + 8, 8);
	memcpy(&sum, buf + sizeof(magic) + 16, 8);
	if (version != EFA_NODEDESC_VERSION)
		return efa_error_set(err, "format version %u, not %u", version, EFA_NODEDESC_VERSION);
	if (reserved)
		return efa_error_set(err, "not a node description");
	if (payload != len - HEADER_SIZE)
		return efa_error_set(err, "truncated: %zu bytes of %llu", len - HEADER_SIZE,
				     (unsigned long long)payload);
	if (efa_fnv1a64_words(EFA_FNV1A64_SEED, (const unsigned char *)buf + HEADER_SIZE, payload) != sum)
		return efa_error_set(err, "checksum mismatch");
	r = (struct rd){ .p = (const unsigned char *)buf + HEADER_SIZE, .left = payload };
	desc->strings = strings_begin(&r);	/* the key's strings */
	get_key(&r, &desc->key);
	desc->node = get_node(&r);
	if (get_bool(&r)) {
		desc->profiles = get_profiles(&r);
	} else {
		r.strings = NULL;	/* rare: a string of its own */
		desc->profiles_error = get_str(&r, true);
	}
	if (!r.bad && r.left)
		r.bad = true;	/* bytes after the end */
	if (r.bad) {
		efa_nodedesc_clear(desc);
		return efa_error_set(err, r.oom ? "out of memory" : "malformed contents");
	}
	return 0;
}

void efa_nodedesc_clear(struct efa_nodedesc *desc)
{
	struct efa_nodedesc_key *k = &desc->key;

	if (!desc->strings) {
		free(k->boot_id);
		free(k->instance_type);
		free(k->profile_dir);
		for (size_t i = 0; i < k->nstamps; i++)
			free(k->stamps[i].path);
	}
	free(desc->strings);
	free(k->stamps);
	efa_node_free(desc->node);
	efa_profiles_free(desc->profiles);
	free(desc->profiles_error);
	memset(desc, 0, sizeof(*desc));
}
