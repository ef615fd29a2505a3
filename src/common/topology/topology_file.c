/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/base/atomic_write.h"
#include "common/base/strutil.h"
#include "common/topology/topology_file.h"
#include "common/topology/topology_read.h"

/* How many names of each kind of change the summary lists. */
#define EXAMPLES 3

/* A node or switch and the switch above it, names in the conf's map. */
struct link {
	const char *child;
	const char *parent;
};

struct links {
	struct link *v;
	size_t n;
};

struct conf {
	struct efa_topo_map map;	/* what the links name */
	struct links switches;		/* every switch, parent NULL */
	struct links nodes;
	struct links below;		/* switches under another */
};

static int link_cmp(const void *a, const void *b)
{
	return strcmp(((const struct link *)a)->child, ((const struct link *)b)->child);
}

static void links_sort(struct links *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), link_cmp);
}

/*
 * The switches and nodes of text as Slurm reads them (topology_read.h:
 * from topology.yaml, the first topology, the tree sync writes first; the
 * others hold the same nodes in other groups), each list sorted by name.
 * A text Slurm would refuse counts as empty: everything in the other is
 * added or removed.
 */
static int parse(const char *text, struct conf *conf)
{
	const struct efa_topo_map *m = &conf->map;
	struct efa_error err;

	memset(conf, 0, sizeof(*conf));
	if (efa_topo_map_parse(text, "topology", EFA_TOPO_PICK_FIRST, &conf->map, &err))
		return strcmp(err.msg, "out of memory") ? 0 : -1;
	conf->switches.v = calloc(m->nunits ? m->nunits : 1, sizeof(struct link));
	conf->below.v = calloc(m->nunits ? m->nunits : 1, sizeof(struct link));
	conf->nodes.v = calloc(m->nnodes ? m->nnodes : 1, sizeof(struct link));
	if (!conf->switches.v || !conf->below.v || !conf->nodes.v)
		return -1;
	for (size_t i = 0; i < m->nunits; i++) {
		const struct efa_topo_unit *u = &m->units[i];

		conf->switches.v[conf->switches.n++].child = u->name;
		if (u->parent != EFA_TOPO_MAP_NONE)
			conf->below.v[conf->below.n++] = (struct link){ u->name, m->units[u->parent].name };
	}
	/* The map's nodes are sorted by name already. */
	for (size_t i = 0; i < m->nnodes; i++)
		conf->nodes.v[i] = (struct link){ m->nodes[i].name, m->units[m->nodes[i].unit].name };
	conf->nodes.n = m->nnodes;
	links_sort(&conf->switches);
	links_sort(&conf->below);
	return 0;
}

static void conf_free(struct conf *conf)
{
	free(conf->switches.v);
	free(conf->nodes.v);
	free(conf->below.v);
	efa_topo_map_clear(&conf->map);
}

/* One kind of change: how many, and the first few. */
struct change {
	size_t count;
	char examples[256];
};

static void note(struct change *c, const struct link *before, const struct link *after)
{
	const struct link *l = after ? after : before;

	if (++c->count > EXAMPLES)
		return;
	if (before && after && before->parent)
		efa_strlcatf(c->examples, sizeof(c->examples), "%s%s: %s -> %s",
			     c->count > 1 ? ", " : "", l->child, before->parent, after->parent);
	else
		efa_strlcatf(c->examples, sizeof(c->examples), "%s%s", c->count > 1 ? ", " : "",
			     l->child);
}

/* Walks two sorted lists: what only one has, and what moved. */
static void compare(const struct links *before, const struct links *after, struct change *added,
		    struct change *removed, struct change *moved)
{
	size_t i = 0, j = 0;

	while (i < before->n || j < after->n) {
		int c = i == before->n ? 1 : j == after->n ? -1 :
			strcmp(before->v[i].child, after->v[j].child);

		if (c < 0) {
			if (removed)
				note(removed, &before->v[i], NULL);
			i++;
		} else if (c > 0) {
			if (added)
				note(added, NULL, &after->v[j]);
			j++;
		} else {
			if (before->v[i].parent && strcmp(before->v[i].parent, after->v[j].parent))
				note(moved, &before->v[i], &after->v[j]);
			i++;
			j++;
		}
	}
}

static void summarize_change(char *summary, size_t size, const char *what, const struct change *c)
{
	if (!c->count)
		return;
	efa_strlcatf(summary, size, "%s%s: %zu (%s%s)", summary[0] ? ", " : "", what, c->count,
		     c->examples, c->count > EXAMPLES ? ", ..." : "");
}

void efa_topology_diff(const char *before, const char *after, char *summary, size_t size)
{
	struct change sw_added = { 0 }, sw_removed = { 0 }, sw_moved = { 0 };
	struct change moved = { 0 }, added = { 0 }, removed = { 0 };
	struct conf old, new;
	int rc;

	summary[0] = '\0';
	rc = parse(before, &old);
	rc |= parse(after, &new);
	if (rc) {
		snprintf(summary, size, "(no summary: out of memory)");
		goto out;
	}
	compare(&old.switches, &new.switches, &sw_added, &sw_removed, NULL);
	compare(&old.below, &new.below, NULL, NULL, &sw_moved);
	compare(&old.nodes, &new.nodes, &added, &removed, &moved);
	summarize_change(summary, size, "switches added", &sw_added);
	summarize_change(summary, size, "switches removed", &sw_removed);
	summarize_change(summary, size, "switches moved", &sw_moved);
	summarize_change(summary, size, "nodes moved", &moved);
	summarize_change(summary, size, "nodes added", &added);
	summarize_change(summary, size, "nodes removed", &removed);
	if (!summary[0])
		snprintf(summary, size, "no switch or node moved");
out:
	conf_free(&old);
	conf_free(&new);
}

int efa_topology_update(const char *path, const char *text, bool *changed, char *summary,
			size_t size, struct efa_error *err)
{
	char *old = NULL;
	size_t len = 0;
	struct stat st;

	*changed = false;
	if (stat(path, &st)) {
		if (errno != ENOENT)
			return efa_error_set(err, "cannot stat %s: %s", path, strerror(errno));
	} else {
		if (efa_read_file(path, EFA_TOPOLOGY_MAX_SIZE, &old, &len, err))
			return -1;
		if (len == strlen(text) && !memcmp(old, text, len)) {
			free(old);
			return 0;
		}
	}
	if (efa_write_atomic(path, text, strlen(text), 0644, err)) {
		free(old);
		return -1;
	}
	*changed = true;
	efa_topology_diff(old ? old : "", text, summary, size);
	free(old);
	return 0;
}
