/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/node/bind.h"

#define SYS_DEVICES "/sys/devices/"

const char *efa_close_name(enum efa_close level)
{
	static const char *const names[] = {
		[EFA_CLOSE_SYS] = "SYS",
		[EFA_CLOSE_NUMA] = "NODE",
		[EFA_CLOSE_HOSTBRIDGE] = "PHB",
		[EFA_CLOSE_SWITCH] = "PXB",
	};

	return names[level];
}

/* Length of the next path component starting at p. */
static size_t component(const char *p)
{
	const char *slash = strchr(p, '/');

	return slash ? (size_t)(slash - p) : strlen(p);
}

enum efa_close efa_closeness(const struct efa_pci *a, const struct efa_pci *b)
{
	const size_t skip = strlen(SYS_DEVICES);
	const char *pa, *pb;
	size_t la, lb;
	int shared = 0;

	if (a->path && b->path && !strncmp(a->path, SYS_DEVICES, skip) &&
	    !strncmp(b->path, SYS_DEVICES, skip)) {
		pa = a->path + skip;
		pb = b->path + skip;
		la = component(pa);
		lb = component(pb);
		if (la == lb && !strncmp(pa, pb, la)) {
			/* Same host bridge; count the bridges below it that
			 * both paths go through (not the devices themselves). */
			for (;;) {
				pa += la + (pa[la] == '/');
				pb += lb + (pb[lb] == '/');
				la = component(pa);
				lb = component(pb);
				if (!pa[la] || !pb[lb] || la != lb || strncmp(pa, pb, la))
					break;
				shared++;
			}
			return shared ? EFA_CLOSE_SWITCH : EFA_CLOSE_HOSTBRIDGE;
		}
	}
	if (a->numa >= 0 && a->numa == b->numa)
		return EFA_CLOSE_NUMA;
	return EFA_CLOSE_SYS;
}

/* Position range [*first, *first + *count) of task k of n over m items. */
static bool share(unsigned k, unsigned n, size_t m, size_t *first, size_t *count)
{
	if (n <= m) {
		*first = (size_t)k * m / n;
		*count = (size_t)(k + 1) * m / n - *first;
		return false;
	}
	*first = (size_t)k * m / n;
	*count = 1;
	return true;
}

static const struct efa_accel *find_gpu(const struct efa_node *node, int minor)
{
	for (size_t i = 0; i < node->naccels; i++)
		if (node->accels[i].kind == EFA_ACCEL_GPU && node->accels[i].index == minor)
			return &node->accels[i];
	return NULL;
}

/* levels[a * nnics + n]: closeness of accelerator a and NIC n. */
static unsigned char *closeness_matrix(const struct efa_node *node)
{
	unsigned char *levels = malloc(node->naccels * node->nnics + 1);

	for (size_t a = 0; levels && a < node->naccels; a++)
		for (size_t n = 0; n < node->nnics; n++)
			levels[a * node->nnics + n] =
				(unsigned char)efa_closeness(&node->accels[a].pci, &node->nics[n].pci);
	return levels;
}

int efa_bind_index(struct efa_node *node)
{
	if (!node->closeness)
		node->closeness = closeness_matrix(node);
	return node->closeness ? 0 : -1;
}

/*
 * Marks in group the usable NICs at the best closeness to any of the
 * accelerators; all usable NICs when none has a known place. level is
 * scratch of node->nnics.
 */
static void closest_nics(const struct efa_node *node, const unsigned char *levels,
			 const struct efa_accel *const *accels, size_t naccels,
			 unsigned char *level, bool *group)
{
	const size_t nnics = node->nnics;
	unsigned char best = EFA_CLOSE_SYS;

	memset(level, EFA_CLOSE_SYS, nnics);
	for (size_t a = 0; a < naccels; a++) {
		const unsigned char *row = levels + (size_t)(accels[a] - node->accels) * nnics;

		for (size_t n = 0; n < nnics; n++)
			if (row[n] > level[n])
				level[n] = row[n];
	}
	for (size_t n = 0; n < nnics; n++)
		if (node->nics[n].usable && level[n] > best)
			best = level[n];
	for (size_t n = 0; n < nnics; n++)
		group[n] = node->nics[n].usable && level[n] == best;
}

/* The accelerators of task k: its share of the step's GPUs, or of the
 * node's Neuron devices when the step has no GPUs. */
static size_t task_accels(const struct efa_node *node, const struct efa_bind_request *req,
			  unsigned k, const struct efa_accel **out, size_t max)
{
	size_t first, count, n = 0;

	if (req->ngpus) {
		if (req->gpus_given) {
			first = 0;
			count = req->ngpus;
		} else {
			share(k, req->ntasks, req->ngpus, &first, &count);
		}
		for (size_t i = first; i < first + count && n < max; i++) {
			const struct efa_accel *gpu = find_gpu(node, req->gpus[i]);

			if (gpu)
				out[n++] = gpu;
		}
		return n;
	}
	{
		size_t ndev = 0, seen = 0;

		for (size_t i = 0; i < node->naccels; i++)
			ndev += node->accels[i].kind == EFA_ACCEL_NEURON && node->accels[i].present;
		if (!ndev)
			return 0;
		share(k, req->ntasks, ndev, &first, &count);
		for (size_t i = 0; i < node->naccels && n < max; i++) {
			const struct efa_accel *a = &node->accels[i];

			if (a->kind != EFA_ACCEL_NEURON || !a->present)
				continue;
			if (seen >= first && seen < first + count)
				out[n++] = a;
			seen++;
		}
	}
	return n;
}

static void neuron_cores(const struct efa_node *node, const struct efa_bind_request *req,
			 struct efa_task_binding *out)
{
	size_t total = 0, first, count;

	for (size_t i = 0; i < node->naccels; i++)
		if (node->accels[i].kind == EFA_ACCEL_NEURON && node->accels[i].present)
			total += (size_t)efa_neuron_logical_cores(&node->accels[i], req->lnc);
	if (!total)
		return;
	/* The runtime numbers logical cores across devices in index order,
	 * so a task's devices are a contiguous core range; with more tasks
	 * than devices the split is by core. */
	out->shared = share(req->task, req->ntasks, total, &first, &count);
	if (count == 1)
		snprintf(out->neuron_cores, sizeof(out->neuron_cores), "%zu", first);
	else
		snprintf(out->neuron_cores, sizeof(out->neuron_cores), "%zu-%zu",
			 first, first + count - 1);
}

/*
 * Task k's closest NICs into group (scratch: the accelerator list of
 * naccels or 1 entries, level of nnics).
 */
static void task_group(const struct efa_node *node, const unsigned char *levels,
		       const struct efa_bind_request *req, unsigned k,
		       const struct efa_accel **scratch, unsigned char *level, bool *group)
{
	const size_t max = node->naccels ? node->naccels : 1;
	size_t n = task_accels(node, req, k, scratch, max);

	closest_nics(node, levels, scratch, n, level, group);
}

/* The closest NICs of req's tasks from to to - 1, a row of nnics each in
 * rows. Returns 0, or -1 when out of memory. */
static int fill_groups(const struct efa_node *node, const struct efa_bind_request *req,
		       unsigned from, unsigned to, bool *rows)
{
	const struct efa_accel **scratch = calloc(node->naccels ? node->naccels : 1, sizeof(*scratch));
	unsigned char *own = node->closeness ? NULL : closeness_matrix(node);
	const unsigned char *levels = node->closeness ? node->closeness : own;
	unsigned char *level = malloc(node->nnics ? node->nnics : 1);
	int rc = -1;

	if (scratch && levels && level) {
		for (unsigned k = from; k < to; k++)
			task_group(node, levels, req, k, scratch, level,
				   rows + (size_t)(k - from) * node->nnics);
		rc = 0;
	}
	free(scratch);
	free(own);
	free(level);
	return rc;
}

static bool *alloc_rows(const struct efa_node *node, unsigned n)
{
	size_t cells = (size_t)n * node->nnics;

	return calloc(cells ? cells : 1, sizeof(bool));
}

bool *efa_bind_step_groups(const struct efa_node *node, const int *gpus, size_t ngpus,
			   unsigned ntasks)
{
	struct efa_bind_request req = { .gpus = gpus, .ngpus = ngpus, .ntasks = ntasks };
	bool *groups = ntasks ? alloc_rows(node, ntasks) : NULL;

	if (groups && fill_groups(node, &req, 0, ntasks, groups)) {
		free(groups);
		groups = NULL;
	}
	return groups;
}

int efa_bind_task(const struct efa_node *node, const struct efa_bind_request *req,
		  struct efa_task_binding *out, struct efa_error *err)
{
	const size_t nnics = node->nnics;
	size_t sharers = 0, position = 0, m = 0, first, count;
	bool *own_groups = NULL;
	const bool *group;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!req->ntasks || req->task >= req->ntasks)
		return efa_error_set(err, "task %u of %u: no such local task", req->task, req->ntasks);
	if (req->ngpus && !req->gpus_given)
		out->shared = share(req->task, req->ntasks, req->ngpus, &out->first, &out->count);
	if (!req->ngpus)
		neuron_cores(node, req, out);

	if (req->gpus_given) {
		/* GPUs of its own, which no other task has: their NICs too. */
		own_groups = alloc_rows(node, 1);
		if (!own_groups || fill_groups(node, req, req->task, req->task + 1, own_groups))
			goto oom;
		group = own_groups;
		sharers = 1;
	} else {
		const bool *groups = req->groups;

		if (!groups)
			groups = own_groups = efa_bind_step_groups(node, req->gpus, req->ngpus, req->ntasks);
		if (!groups)
			goto oom;
		group = groups + (size_t)req->task * nnics;
		/* Which tasks have exactly these NICs closest, and where we stand. */
		for (unsigned k = 0; k < req->ntasks; k++) {
			if (memcmp(group, groups + (size_t)k * nnics, nnics * sizeof(*group)))
				continue;
			if (k == req->task)
				position = sharers;
			sharers++;
		}
	}
	for (size_t n = 0; n < nnics; n++)
		m += group[n];
	if (m)
		share((unsigned)position, (unsigned)sharers, m, &first, &count);
	for (size_t n = 0, seen = 0; m && n < nnics; n++) {
		if (!group[n])
			continue;
		if (seen >= first && seen < first + count)
			efa_list_append(out->nics, sizeof(out->nics), ",", node->nics[n].name);
		seen++;
	}
	rc = 0;
	goto out;
oom:
	efa_error_set(err, "out of memory");
out:
	free(own_groups);
	return rc;
}

int efa_parse_index_list(const char *text, int *out, size_t max)
{
	size_t n = 0;
	const char *p = text;

	if (!p || !*p)
		return -1;
	for (;;) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 0 || v > 65535 || n == max || !isdigit((unsigned char)*p))
			return -1;
		out[n++] = (int)v;
		if (!*end)
			return (int)n;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
}
