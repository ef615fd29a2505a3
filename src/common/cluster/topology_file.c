/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/base/atomic_write.h"
#include "common/base/strutil.h"
#include "common/cluster/hostlist.h"
#include "common/cluster/topology_file.h"

/* How many names of each kind of change the summary lists. */
#define EXAMPLES 3

/* A node or switch and the switch above it. */
struct link {
	char *child;
	char *parent;
};

struct links {
	struct link *v;
	size_t n, cap;
};

struct conf {
	struct links switches;	/* every switch, parent NULL */
	struct links nodes;
	struct links below;	/* switches under another */
};

static int add_link(struct links *l, const char *child, const char *parent)
{
	struct link *grown = l->v;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;

		grown = realloc(l->v, cap * sizeof(*grown));
		if (!grown)
			return -1;
		l->v = grown;
		l->cap = cap;
	}
	grown[l->n].child = strdup(child);
	grown[l->n].parent = parent ? strdup(parent) : NULL;
	if (!grown[l->n].child || (parent && !grown[l->n].parent)) {
		free(grown[l->n].child);
		free(grown[l->n].parent);
		return -1;
	}
	l->n++;
	return 0;
}

static void links_free(struct links *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].child);
		free(l->v[i].parent);
	}
	free(l->v);
}

static int link_cmp(const void *a, const void *b)
{
	return strcmp(((const struct link *)a)->child, ((const struct link *)b)->child);
}

static void links_sort(struct links *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof(*l->v), link_cmp);
}

/* Everything expr names, under parent. A list Slurm could not read
 * either adds nothing. */
static int add_expanded(struct links *l, const char *expr, const char *parent)
{
	char **names;
	size_t n;
	int rc = 0;

	if (efa_hostlist_expand(expr, &names, &n, NULL))
		return 0;
	for (size_t i = 0; !rc && i < n; i++)
		rc = add_link(l, names[i], parent);
	efa_strv_free(names);
	return rc;
}

static int parse_line(char *line, struct conf *conf)
{
	const char *name = NULL, *nodes = NULL, *below = NULL;
	char *save, *tok;

	line[strcspn(line, "#")] = '\0';
	for (tok = strtok_r(line, " \t\r", &save); tok; tok = strtok_r(NULL, " \t\r", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = '\0';
		if (!strcasecmp(tok, "SwitchName") || !strcasecmp(tok, "BlockName"))
			name = eq + 1;
		else if (!strcasecmp(tok, "Nodes"))
			nodes = eq + 1;
		else if (!strcasecmp(tok, "Switches"))
			below = eq + 1;
	}
	if (!name)
		return 0;
	if (add_link(&conf->switches, name, NULL) ||
	    (nodes && add_expanded(&conf->nodes, nodes, name)) ||
	    (below && add_expanded(&conf->below, below, name)))
		return -1;
	return 0;
}

/* A double-quoted YAML scalar, unescaped in place; a plain one as is. */
static char *yaml_value(char *v)
{
	char *in, *out;

	v += strspn(v, " \t");
	if (*v != '"')
		return v;
	for (in = out = ++v; *in && *in != '"'; in++) {
		if (*in == '\\' && in[1])
			in++;
		*out++ = *in;
	}
	*out = '\0';
	return v;
}

/*
 * A line of topology.yaml as sync writes it: only the first topology (the
 * one efa_topology_render_yaml writes first, the tree) counts, since the
 * others hold the same nodes in other groups. *unit is the switch or block
 * the following children and nodes belong to.
 */
static int parse_yaml_line(char *line, struct conf *conf, int *topologies, const char **unit)
{
	char *key = line + strspn(line, " \t-"), *colon, *value;

	if (*key == '#' || !(colon = strchr(key, ':')))
		return 0;
	*colon = '\0';
	value = yaml_value(colon + 1);
	if (!strcmp(key, "topology"))
		++*topologies;
	if (*topologies > 1)
		return 0;
	if (!strcmp(key, "switch") || !strcmp(key, "block")) {
		*unit = value;
		return add_link(&conf->switches, value, NULL);
	}
	if (*unit && !strcmp(key, "children"))
		return add_expanded(&conf->below, value, *unit);
	if (*unit && !strcmp(key, "nodes"))
		return add_expanded(&conf->nodes, value, *unit);
	return 0;
}

static bool is_yaml(const char *text)
{
	return !strncmp(text, "- topology:", 11) || strstr(text, "\n- topology:");
}

static int parse(const char *text, struct conf *conf)
{
	char *copy = strdup(text), *save, *line;
	bool yaml = is_yaml(text);
	const char *unit = NULL;
	int rc = 0, topologies = 0;

	memset(conf, 0, sizeof(*conf));
	if (!copy)
		return -1;
	for (line = strtok_r(copy, "\n", &save); !rc && line; line = strtok_r(NULL, "\n", &save))
		rc = yaml ? parse_yaml_line(line, conf, &topologies, &unit) : parse_line(line, conf);
	free(copy);
	links_sort(&conf->switches);
	links_sort(&conf->nodes);
	links_sort(&conf->below);
	return rc;
}

static void conf_free(struct conf *conf)
{
	links_free(&conf->switches);
	links_free(&conf->nodes);
	links_free(&conf->below);
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
