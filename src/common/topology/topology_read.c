/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base/strutil.h"
#include "common/topology/hostlist.h"
#include "common/topology/topology_file.h"
#include "common/topology/topology_read.h"

/* What one line says, before names are resolved. */
struct link {
	char *child;
	size_t parent;		/* index in the units read so far */
	unsigned line;
};

struct links {
	struct link *v;
	size_t n, cap;
};

struct reader {
	const char *source;
	unsigned line;
	struct links units;	/* parent unused */
	struct links below;	/* a switch under another */
	struct links nodes;	/* a node under a switch or block */
	int kind;		/* 0 not yet, 'S' switches, 'B' blocks */
	struct efa_error *err;
};

static int fail(struct reader *r, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct reader *r, unsigned line, const char *fmt, ...)
{
	char what[EFA_ERROR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return efa_error_set(r->err, "%s:%u: %s", r->source, line, what);
}

/* Adds child (malloc'd: l owns it from here, failing too) under parent. */
static int add_link(struct reader *r, struct links *l, char *child, size_t parent)
{
	if (!child)
		return efa_error_set(r->err, "out of memory");
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct link *grown = realloc(l->v, cap * sizeof(*grown));

		if (!grown) {
			free(child);
			return efa_error_set(r->err, "out of memory");
		}
		l->v = grown;
		l->cap = cap;
	}
	l->v[l->n].child = child;
	l->v[l->n].parent = parent;
	l->v[l->n].line = r->line;
	l->n++;
	return 0;
}

static void links_free(struct links *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].child);
	free(l->v);
}

static int add_unit(struct reader *r, const char *name, int kind)
{
	if (!*name)
		return fail(r, r->line, "a %s without a name",
			    kind == 'S' ? "SwitchName=" : "BlockName=");
	if (r->kind && r->kind != kind)
		return fail(r, r->line, "switches and blocks in one topology: Slurm reads one or the other");
	r->kind = kind;
	return add_link(r, &r->units, strdup(name), EFA_TOPO_MAP_NONE);
}

/* Everything a hostlist expression names, under the unit read last. */
static int add_expanded(struct reader *r, struct links *l, const char *expr)
{
	struct efa_error why;
	char **names;
	size_t n;
	int rc = 0;

	if (efa_hostlist_expand(expr, &names, &n, &why))
		return fail(r, r->line, "%s", why.msg);
	/* The names go to l; after a failure, the rest are freed here. */
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = add_link(r, l, names[i], r->units.n - 1);
		else
			free(names[i]);
	}
	free(names);
	return rc;
}

/*
 * The next KEY=VALUE of a topology.conf line as Slurm's parser matches it
 * (parse_config.c's keyvalue_pattern): blanks around '=', an operator
 * before it (+=, -=: topology.conf's keys ignore it), a value in double
 * quotes (blanks allowed) or up to the next blank. A value left out
 * ("Nodes=" at the end, or before the next KEY=) reads "". In place;
 * returns 0 with *key NULL at the end of the line, -1 (*p at it) on what
 * is not KEY=VALUE.
 */
static int next_pair(char **p, char **key, char **value)
{
	static const char blanks[] = " \t\r\v\f";
	char *s = *p + strspn(*p, blanks), *k = s, *v, *end, *key_end;

	*key = *value = NULL;
	if (!*s)
		return 0;
	while (isalnum((unsigned char)*s) || *s == '_' || *s == '.')
		s++;
	key_end = s;
	s += strspn(s, blanks);
	if (key_end > k && *s && strchr("-*+/", *s) && s[1] == '=')
		s++;
	if (key_end == k || *s != '=') {
		*p = k;
		return -1;
	}
	s++;
	v = s + strspn(s, blanks);
	if (*v == '"' && (end = strchr(v + 1, '"')) && (!end[1] || strchr(blanks, end[1]))) {
		v++;
	} else {
		end = v + strcspn(v, blanks);
		if (v > s && memchr(v, '=', end - v))
			end = v = s;	/* "Name= Nodes=n1": the next pair */
	}
	*p = *end ? end + 1 : end;
	*end = '\0';
	*key_end = '\0';
	*key = k;
	*value = v;
	return 0;
}

/* A logical line of topology.conf: the keys of topology.conf(5). */
static int conf_line(struct reader *r, char *line)
{
	const char *name = NULL, *nodes = NULL, *below = NULL, *word = line + strspn(line, " \t");
	char *key, *value;
	int kind = 0;

	/* Slurm's parser reads "Include FILE" lines (relative to slurm.conf,
	 * with %c and globs); they are not followed here. */
	if (!strncasecmp(word, "include", 7) && isspace((unsigned char)word[7]))
		return fail(r, r->line, "%.64s: slurm-efa does not follow Include lines; "
			    "put the switches in this file", word);
	for (;;) {
		char *at = line;

		if (next_pair(&line, &key, &value))
			return fail(r, r->line, "'%.64s' is not KEY=VALUE", at);
		if (!key)
			break;
		if (!*value && strcasecmp(key, "SwitchName") && strcasecmp(key, "BlockName"))
			return fail(r, r->line, "%.64s= without a value", key);
		if (!strcasecmp(key, "SwitchName") || !strcasecmp(key, "BlockName")) {
			name = value;
			kind = (key[0] == 'S' || key[0] == 's') ? 'S' : 'B';
		} else if (!strcasecmp(key, "Nodes")) {
			nodes = value;
		} else if (!strcasecmp(key, "Switches")) {
			below = value;
		} else if (strcasecmp(key, "LinkSpeed") && strcasecmp(key, "BlockSizes")) {
			return fail(r, r->line, "unknown key '%.64s'", key);
		}
	}
	if (!name) {
		if (nodes || below)
			return fail(r, r->line, "Nodes= or Switches= without a SwitchName= or BlockName=");
		return 0;
	}
	if (below && kind != 'S')
		return fail(r, r->line, "a block has no Switches=");
	if (add_unit(r, name, kind))
		return -1;
	if (nodes && add_expanded(r, &r->nodes, nodes))
		return -1;
	return below ? add_expanded(r, &r->below, below) : 0;
}

/*
 * The logical line of topology.conf that starts at text, as Slurm's
 * parser joins it (parse_config.c): a comment starts at a '#' after an
 * even number of backslashes; an odd number of backslashes ending a line
 * (blanks after them aside) joins the next line to it, one backslash
 * dropped; then a backslash escapes the character after it. In place:
 * *next is where the following line starts (NULL at the end), *lines how
 * many lines of the file this one took.
 */
static char *conf_logical_line(char *text, char **next, unsigned *lines)
{
	char *out = text, *in = text;

	*lines = 0;
	*next = NULL;
	for (;;) {
		char *nl = strchr(in, '\n'), *end = nl ? nl : in + strlen(in), *cut = end;
		unsigned backslashes = 0;
		char *q;

		++*lines;
		for (q = in; q < end; q++) {
			if (*q == '#' && backslashes % 2 == 0) {
				cut = q;
				break;
			}
			backslashes = *q == '\\' ? backslashes + 1 : 0;
		}
		backslashes = 0;
		for (q = cut; q > in && isspace((unsigned char)q[-1]); q--)
			;
		while (q > in && q[-1] == '\\') {
			backslashes++;
			q--;
		}
		if (backslashes % 2) {
			q += backslashes - 1;	/* the last one joins */
			memmove(out, in, q - in);
			out += q - in;
			if (nl) {
				in = nl + 1;
				continue;
			}
			break;
		}
		memmove(out, in, cut - in);
		out += cut - in;
		if (nl)
			*next = nl + 1;
		break;
	}
	*out = '\0';
	/* Each backslash stands for the character after it. */
	for (in = out = text; *in; in++) {
		if (*in == '\\' && in[1])
			in++;
		*out++ = *in;
	}
	*out = '\0';
	return text;
}

/* A YAML scalar, in place: quoted ('...' or "..."), or plain up to a
 * comment; a flow sequence ("[a, b]") becomes the list "a,b". */
static char *yaml_value(char *v)
{
	char *in, *out, quote;

	v += strspn(v, " \t");
	quote = *v;
	if (quote == '"' || quote == '\'') {
		for (in = out = ++v; *in && *in != quote; in++) {
			if (quote == '"' && *in == '\\' && in[1])
				in++;
			*out++ = *in;
		}
		*out = '\0';
		return v;
	}
	for (in = v; *in; in++)
		if (*in == '#' && (in == v || in[-1] == ' ' || in[-1] == '\t'))
			break;
	*in = '\0';
	if (*v == '[') {
		v++;
		in = strchr(v, ']');
		if (in)
			*in = '\0';
	}
	for (in = out = v; *in; in++)
		if (*in != ' ' && *in != '\t' && *in != '\r')
			*out++ = *in;
	*out = '\0';
	return v;
}

/* Where one topology.yaml is, line by line. */
struct yaml_state {
	int topology;		/* index of the topology the line is in; -1 before */
	int chosen;		/* the one read */
	int kind;		/* the chosen one's: 'S', 'B', or 'O' (flat, ring, ...) */
	bool in_unit;		/* the next nodes belong to the unit read last */
};

/* A true boolean as Slurm's data.c converts a string to one: y, yes, t,
 * true, on, in any case. */
static bool yaml_true(const char *v)
{
	return !strcasecmp(v, "y") || !strcasecmp(v, "yes") || !strcasecmp(v, "t") ||
	       !strcasecmp(v, "true") || !strcasecmp(v, "on");
}

/* The first pass: which topology is the cluster's default. */
static int yaml_default(char *text)
{
	int topology = -1;
	char *save, *line;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *key = line + strspn(line, " \t-"), *colon = strchr(key, ':');

		if (*key == '#' || !colon)
			continue;
		*colon = '\0';
		if (!strcmp(key, "topology"))
			topology++;
		else if (topology >= 0 && !strcmp(key, "cluster_default") &&
			 yaml_true(yaml_value(colon + 1)))
			return topology;
	}
	return 0;
}

static int yaml_line(struct reader *r, char *line, struct yaml_state *y)
{
	char *key = line + strspn(line, " \t-"), *colon, *value;

	if (*key == '#' || !*key || *key == '\r')
		return 0;
	if (!strncmp(key, "---", 3) || !strncmp(key, "...", 3))
		return 0;
	if (!(colon = strchr(key, ':'))) {
		/* An item of a block sequence ("- 4" under block_sizes). */
		if (line[strspn(line, " \t")] == '-')
			return 0;
		return fail(r, r->line, "'%.64s' is not KEY: VALUE", key);
	}
	*colon = '\0';
	value = yaml_value(colon + 1);
	if (!strcmp(key, "topology")) {
		y->topology++;
		y->in_unit = false;
		return 0;
	}
	if (y->topology != y->chosen)
		return 0;
	if (!*value && (!strcmp(key, "tree") || !strcmp(key, "block"))) {
		y->kind = key[0] == 't' ? 'S' : 'B';
		return 0;
	}
	if (!strcmp(key, "flat") || !strcmp(key, "ring") || !strcmp(key, "torus3d")) {
		y->kind = 'O';
		return fail(r, r->line, "the cluster's topology is %s: only a tree or blocks group nodes",
			    key);
	}
	if (!strcmp(key, "switch") || !strcmp(key, "block")) {
		if (add_unit(r, value, key[0] == 's' ? 'S' : 'B'))
			return -1;
		y->in_unit = true;
		return 0;
	}
	if (!strcmp(key, "children") || !strcmp(key, "nodes")) {
		if (!y->in_unit)
			return fail(r, r->line, "%s: outside a switch or block", key);
		if (key[0] == 'c' && r->kind != 'S')
			return fail(r, r->line, "a block has no children");
		return add_expanded(r, key[0] == 'c' ? &r->below : &r->nodes, value);
	}
	return 0;
}

static bool is_yaml(const char *text)
{
	const char *p = text;

	/* The first line that is not a comment, blank or "---". */
	while (*p) {
		size_t skip = strspn(p, " \t\r");

		if (p[skip] == '#' || p[skip] == '\n' || !strncmp(p + skip, "---", 3)) {
			const char *nl = strchr(p, '\n');

			if (!nl)
				return false;
			p = nl + 1;
			continue;
		}
		return !strncmp(p + skip, "- topology:", 11);
	}
	return false;
}

static int member_cmp(const void *a, const void *b)
{
	return strcmp(((const struct efa_topo_member *)a)->name,
		      ((const struct efa_topo_member *)b)->name);
}

/* A unit's name and its index in the file's order, sorted by name. */
struct unit_ref {
	const char *name;
	size_t index;
};

static int unit_ref_cmp(const void *a, const void *b)
{
	const struct unit_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->index > y->index) - (x->index < y->index);
}

static size_t find_unit(const struct unit_ref *refs, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(refs[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(refs[lo].name, name) ? refs[lo].index : EFA_TOPO_MAP_NONE;
}

/* Turns the lines' names into m: units with their parents, nodes with
 * their units. */
static int resolve(struct reader *r, struct efa_topo_map *m)
{
	struct unit_ref *by_name = NULL;
	size_t n = r->units.n;
	int rc = -1;

	if (!(m->units = calloc(r->units.n ? r->units.n : 1, sizeof(*m->units))) ||
	    !(m->nodes = calloc(r->nodes.n ? r->nodes.n : 1, sizeof(*m->nodes))) ||
	    !(by_name = calloc(n ? n : 1, sizeof(*by_name)))) {
		efa_error_set(r->err, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < r->units.n; i++) {
		m->units[i].name = r->units.v[i].child;
		r->units.v[i].child = NULL;
		m->units[i].line = r->units.v[i].line;
		m->units[i].parent = EFA_TOPO_MAP_NONE;
		by_name[i].name = m->units[i].name;
		by_name[i].index = i;
	}
	m->nunits = n;
	qsort(by_name, n, sizeof(*by_name), unit_ref_cmp);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(by_name[i].name, by_name[i - 1].name)) {
			fail(r, m->units[by_name[i].index].line, "%s is defined again (line %u)",
			     by_name[i].name, m->units[by_name[i - 1].index].line);
			goto fail;
		}
	for (size_t i = 0; i < r->below.n; i++) {
		const struct link *l = &r->below.v[i];
		size_t child = find_unit(by_name, n, l->child), parent = l->parent;

		if (child == EFA_TOPO_MAP_NONE) {
			fail(r, l->line, "switch %s under %s is not defined", l->child,
			     m->units[parent].name);
			goto fail;
		}
		if (m->units[child].parent != EFA_TOPO_MAP_NONE) {
			fail(r, l->line, "switch %s is under %s already", l->child,
			     m->units[m->units[child].parent].name);
			goto fail;
		}
		m->units[child].parent = parent;
	}
	/* A loop: a chain of parents longer than there are units. */
	for (size_t i = 0; i < m->nunits; i++) {
		size_t u = i, steps = 0;

		while (m->units[u].parent != EFA_TOPO_MAP_NONE && steps <= m->nunits) {
			u = m->units[u].parent;
			steps++;
		}
		if (steps > m->nunits) {
			fail(r, m->units[i].line, "switch %s is below itself (a loop)",
			     m->units[i].name);
			goto fail;
		}
		if (steps + 1 > m->depth)
			m->depth = steps + 1;
	}
	for (size_t i = 0; i < r->nodes.n; i++) {
		m->nodes[i].name = r->nodes.v[i].child;
		r->nodes.v[i].child = NULL;
		m->nodes[i].unit = r->nodes.v[i].parent;
		m->nodes[i].line = r->nodes.v[i].line;
	}
	m->nnodes = r->nodes.n;
	qsort(m->nodes, m->nnodes, sizeof(*m->nodes), member_cmp);
	for (size_t i = 1; i < m->nnodes; i++)
		if (!strcmp(m->nodes[i].name, m->nodes[i - 1].name)) {
			const struct efa_topo_member *a = &m->nodes[i - 1], *b = &m->nodes[i];

			if (a->line > b->line) {
				const struct efa_topo_member *t = a;

				a = b;
				b = t;
			}
			fail(r, b->line, "node %s is under %s already (line %u)", b->name,
			     m->units[a->unit].name, a->line);
			goto fail;
		}
	rc = 0;
fail:
	free(by_name);
	return rc;
}

int efa_topo_map_parse(const char *text, const char *source, enum efa_topo_pick pick,
		       struct efa_topo_map *m, struct efa_error *err)
{
	struct reader r = { .source = source ? source : "topology", .err = err };
	struct yaml_state y = { .topology = -1 };
	bool yaml = is_yaml(text);
	char *copy = strdup(text), *line, *p;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (!copy)
		return efa_error_set(err, "out of memory");
	if (yaml && pick == EFA_TOPO_PICK_DEFAULT) {
		y.chosen = yaml_default(copy);
		strcpy(copy, text);
	}
	/* Line by line, counting empty lines too (strtok_r would skip them). */
	for (line = copy; line; line = p) {
		unsigned lines = 1;

		r.line++;
		if (yaml) {
			p = strchr(line, '\n');
			if (p)
				*p++ = '\0';
		} else {
			line = conf_logical_line(line, &p, &lines);
		}
		if (yaml ? yaml_line(&r, line, &y) : conf_line(&r, line))
			goto fail;
		r.line += lines - 1;
	}
	rc = resolve(&r, m);
fail:
	free(copy);
	links_free(&r.units);
	links_free(&r.below);
	links_free(&r.nodes);
	if (rc)
		efa_topo_map_clear(m);
	return rc;
}

int efa_topo_map_load(const char *path, struct efa_topo_map *m, struct efa_error *err)
{
	char *text;
	size_t len;
	int rc;

	memset(m, 0, sizeof(*m));
	if (efa_read_file(path, EFA_TOPOLOGY_MAX_SIZE, &text, &len, err))
		return -1;
	if (memchr(text, '\0', len)) {
		free(text);
		return efa_error_set(err, "%s: not a text file", path);
	}
	rc = efa_topo_map_parse(text, path, EFA_TOPO_PICK_DEFAULT, m, err);
	free(text);
	return rc;
}

void efa_topo_map_clear(struct efa_topo_map *m)
{
	for (size_t i = 0; m->units && i < m->nunits; i++)
		free(m->units[i].name);
	for (size_t i = 0; m->nodes && i < m->nnodes; i++)
		free(m->nodes[i].name);
	free(m->units);
	free(m->nodes);
	memset(m, 0, sizeof(*m));
}

size_t efa_topo_map_unit_of(const struct efa_topo_map *m, const char *node)
{
	struct efa_topo_member key = { .name = (char *)node };
	const struct efa_topo_member *found;

	if (!m->nnodes)
		return EFA_TOPO_MAP_NONE;
	found = bsearch(&key, m->nodes, m->nnodes, sizeof(*m->nodes), member_cmp);
	return found ? found->unit : EFA_TOPO_MAP_NONE;
}
