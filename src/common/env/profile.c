/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/base/strutil.h"
#include "common/config/kvline.h"
#include "common/env/profile.h"
#include "common/env/varnames.h"
#include "common/node/stack.h"
#include "common/node/sysfs.h"

#define PROFILE_SUFFIX ".profile"
#define PROFILE_MAX_SIZE (256 * 1024)

static const char *const cmp_names[] = {
	[EFA_CMP_LT] = "<", [EFA_CMP_LE] = "<=", [EFA_CMP_GT] = ">",
	[EFA_CMP_GE] = ">=", [EFA_CMP_EQ] = "==", [EFA_CMP_NE] = "!=",
};

/* Frees what p holds; its strings too unless they are in its set's block. */
static void profile_clear(struct efa_profile *p, bool strings)
{
	for (size_t i = 0; i < p->nvars; i++) {
		struct efa_profile_var *v = &p->vars[i];

		for (size_t j = 0; strings && j < v->nconds; j++) {
			free(v->conds[j].component);
			free(v->conds[j].version);
		}
		free(v->conds);
		if (strings) {
			free(v->name);
			free(v->value);
			free(v->where);
		}
	}
	free(p->vars);
	for (size_t i = 0; strings && i < p->nexpect; i++)
		free(p->expect[i].type);
	free(p->expect);
	if (strings) {
		free(p->name);
		efa_strv_free(p->match);
		efa_strv_free(p->includes);
		efa_strv_free(p->accelerators);
	} else {
		free(p->match);
		free(p->includes);
		free(p->accelerators);
	}
	memset(p, 0, sizeof(*p));
}

void efa_profile_clear(struct efa_profile *p)
{
	profile_clear(p, true);
}

void efa_profiles_free(struct efa_profiles *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++)
		profile_clear(&set->v[i], !set->strings);
	free(set->v);
	free(set->strings);
	free(set);
}

/* Appends the comma-separated items of value to *list. */
static int list_append(char ***list, const char *value)
{
	size_t n = 0, add = 1;
	const char *start = value;
	char **grown;

	for (const char *c = value; *c; c++)
		add += *c == ',';
	while (*list && (*list)[n])
		n++;
	grown = realloc(*list, (n + add + 1) * sizeof(*grown));
	if (!grown)
		return -1;
	*list = grown;
	for (size_t i = 0; i < add; i++) {
		const char *end = strchr(start, ',');
		size_t len = end ? (size_t)(end - start) : strlen(start);

		grown[n] = strndup(start, len);
		if (!grown[n])
			return -1;
		grown[++n] = NULL;
		start += len + 1;
	}
	return 0;
}

static bool valid_list(const char *value)
{
	return value[0] != ',' && value[strlen(value) - 1] != ',' && !strstr(value, ",,");
}

/* The accelerator kinds a profile may name, as Accelerator= spells them. */
static const char *const accel_names[] = {
	[EFA_ACCEL_GPU] = "nvidia",
	[EFA_ACCEL_NEURON] = "neuron",
};

/* Each comma-separated item of value is an accelerator kind. */
static bool accelerators_valid(const char *value)
{
	for (const char *p = value; *p;) {
		size_t len = strcspn(p, ","), k, n = sizeof(accel_names) / sizeof(accel_names[0]);

		for (k = 0; k < n; k++)
			if (strlen(accel_names[k]) == len && !strncasecmp(p, accel_names[k], len))
				break;
		if (k == n)
			return false;
		p += len + (p[len] == ',');
	}
	return true;
}

static bool valid_env_name(const char *name, size_t len)
{
	if (!len || isdigit((unsigned char)name[0]))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_')
			return false;
	return true;
}

static int parse_cond(const char *text, struct efa_cond *cond, struct efa_error *err)
{
	const char *op = text;
	bool known;
	size_t oplen;
	struct efa_stack none = { 0 };

	while (*op && (isalnum((unsigned char)*op) || *op == '-'))
		op++;
	cond->cmp = EFA_CMP_EQ;
	oplen = 0;
	for (int c = 0; c < EFA_CMP_COUNT; c++) {
		size_t l = strlen(cmp_names[c]);

		if (!strncmp(op, cmp_names[c], l) && l > oplen) {
			cond->cmp = c;
			oplen = l;
		}
	}
	if (op == text || !oplen || !op[oplen] || !isdigit((unsigned char)op[oplen]))
		return efa_error_set(err, "bad condition '%s': use COMPONENT<VERSION with <, <=, >, >=, == or !=",
				     text);
	cond->component = strndup(text, (size_t)(op - text));
	cond->version = strdup(op + oplen);
	if (!cond->component || !cond->version)
		return efa_error_set(err, "out of memory");
	efa_stack_version(&none, cond->component, &known);
	if (!known)
		return efa_error_set(err, "unknown component '%s' in condition: use installer, libfabric, rdma-core, ofi-nccl, efa-driver or kernel",
				     cond->component);
	return 0;
}

static int parse_env(struct efa_profile *p, const char *value, const char *cond,
		     const char *where, struct efa_error *err)
{
	const char *eq = strchr(value, '=');
	struct efa_profile_var *grown, *v;
	char *conds = NULL, *save = NULL, *item;

	if (!eq || !valid_env_name(value, (size_t)(eq - value)))
		return efa_error_set(err, "Env=%s: use Env=NAME=VALUE", value);
	grown = realloc(p->vars, (p->nvars + 1) * sizeof(*grown));
	if (!grown)
		return efa_error_set(err, "out of memory");
	p->vars = grown;
	v = &grown[p->nvars++];
	memset(v, 0, sizeof(*v));
	v->name = strndup(value, (size_t)(eq - value));
	v->value = strdup(eq + 1);
	v->where = strdup(where);
	if (!v->name || !v->value || !v->where)
		return efa_error_set(err, "out of memory");
	if (efa_env_denied(v->name))
		return efa_error_set(err, "%s must never be set: it makes libfabric fail or corrupts memory on current kernels (slurm-efa's deny list)",
				     v->name);
	if (efa_env_reserved(v->name))
		return efa_error_set(err, "%s cannot be set in a profile: slurm-efa manages LD_LIBRARY_PATH and SLURM_EFA_*, and no profile may change the dynamic loader (LD_*)",
				     v->name);
	if (!cond)
		return 0;
	if (!valid_list(cond))
		return efa_error_set(err, "If=%s: empty condition", cond);
	conds = strdup(cond);
	if (!conds)
		return efa_error_set(err, "out of memory");
	for (item = strtok_r(conds, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		struct efa_cond *cg = realloc(v->conds, (v->nconds + 1) * sizeof(*cg));

		if (!cg) {
			free(conds);
			return efa_error_set(err, "out of memory");
		}
		v->conds = cg;
		memset(&cg[v->nconds], 0, sizeof(*cg));
		if (parse_cond(item, &cg[v->nconds++], err)) {
			free(conds);
			return -1;
		}
	}
	free(conds);
	return 0;
}

#define EXPECT_MAX 4096
#define EXPECT_WAIT_MAX 300

/* EFADevices=TYPE:N[,TYPE:N...] */
static int parse_expect(struct efa_profile *p, const char *value, struct efa_error *err)
{
	for (const char *item = value; *item;) {
		size_t len = strcspn(item, ",");
		const char *colon = memchr(item, ':', len);
		struct efa_expect *grown;
		char *end;
		long n;

		if (!colon || colon == item)
			return efa_error_set(err, "EFADevices=%s: use EFADevices=INSTANCE_TYPE:COUNT", value);
		n = strtol(colon + 1, &end, 10);
		if (end != item + len || colon + 1 == end || n < 1 || n > EXPECT_MAX)
			return efa_error_set(err, "EFADevices=%s: the count must be 1 to %d", value, EXPECT_MAX);
		grown = realloc(p->expect, (p->nexpect + 1) * sizeof(*grown));
		if (!grown)
			return efa_error_set(err, "out of memory");
		p->expect = grown;
		grown[p->nexpect].count = (int)n;
		grown[p->nexpect].type = strndup(item, (size_t)(colon - item));
		if (!grown[p->nexpect++].type)
			return efa_error_set(err, "out of memory");
		item += len + (item[len] == ',');
	}
	return 0;
}

int efa_profile_expected_nics(const struct efa_profile *p, const char *instance_type,
			      int *wait)
{
	*wait = p ? p->expect_wait : 0;
	for (size_t i = 0; p && instance_type && i < p->nexpect; i++)
		if (!strcmp(p->expect[i].type, instance_type))
			return p->expect[i].count;
	return 0;
}

static int parse_line(struct efa_profile *p, char *line, const char *where,
		      struct efa_error *err)
{
	char *cursor = line, *key, *value, *env = NULL, *cond = NULL;
	int rc;

	while ((rc = efa_kv_next(&cursor, &key, &value, err)) > 0) {
		if (!strcasecmp(key, "Match") || !strcasecmp(key, "Include")) {
			if (env)
				return efa_error_set(err, "%s= goes on its own line, not after Env=", key);
			if (!valid_list(value))
				return efa_error_set(err, "%s=%s: empty item in list", key, value);
			if (list_append(!strcasecmp(key, "Match") ? &p->match : &p->includes, value))
				return efa_error_set(err, "out of memory");
		} else if (!strcasecmp(key, "Accelerator")) {
			if (env)
				return efa_error_set(err, "Accelerator= goes on its own line, not after Env=");
			if (!valid_list(value) || !accelerators_valid(value))
				return efa_error_set(err, "Accelerator=%s: use nvidia, neuron or both, comma-separated",
						     value);
			if (list_append(&p->accelerators, value))
				return efa_error_set(err, "out of memory");
		} else if (!strcasecmp(key, "EFADevices")) {
			if (env)
				return efa_error_set(err, "EFADevices= goes on its own line, not after Env=");
			if (!valid_list(value))
				return efa_error_set(err, "EFADevices=%s: empty item in list", value);
			if (parse_expect(p, value, err))
				return -1;
		} else if (!strcasecmp(key, "EFADevicesWait")) {
			char *end;
			long n = strtol(value, &end, 10);

			if (env || *end || end == value || n < 0 || n > EXPECT_WAIT_MAX)
				return efa_error_set(err, "EFADevicesWait=%s: seconds, 0 to %d, on its own line",
						     value, EXPECT_WAIT_MAX);
			p->expect_wait = (int)n;
		} else if (!strcasecmp(key, "Env")) {
			if (env)
				return efa_error_set(err, "one Env= per line");
			env = value;
		} else if (!strcasecmp(key, "If")) {
			if (!env || cond)
				return efa_error_set(err, "If= follows an Env= on the same line, once");
			cond = value;
		} else {
			return efa_error_set(err, "unknown key '%s': use Match=, Accelerator=, Include=, EFADevices=, EFADevicesWait=, Env= and If=",
					     key);
		}
	}
	if (rc < 0)
		return -1;
	return env ? parse_env(p, env, cond, where, err) : 0;
}

int efa_profile_parse(const char *text, size_t len, const char *name,
		      struct efa_profile *out, struct efa_error *err)
{
	struct efa_profile p = { 0 };
	struct efa_error why;
	char *buf = NULL, *line, *cursor;
	char where[256];
	unsigned lineno = 0;

	if (memchr(text, '\0', len)) {
		efa_error_set(err, "%s%s: contains a NUL byte: not a text file", name, PROFILE_SUFFIX);
		goto fail;
	}
	p.name = strdup(name);
	buf = strndup(text, len);
	if (!p.name || !buf) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	for (cursor = buf; (line = efa_line_next(&cursor));) {
		snprintf(where, sizeof(where), "%s%s:%u", name, PROFILE_SUFFIX, ++lineno);
		if (parse_line(&p, line, where, &why)) {
			efa_error_set(err, "%s: %s", where, why.msg);
			goto fail;
		}
	}
	free(buf);
	*out = p;
	return 0;
fail:
	free(buf);
	efa_profile_clear(&p);
	return -1;
}

const struct efa_profile *efa_profiles_find(const struct efa_profiles *set,
					    const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->v[i].name, name))
			return &set->v[i];
	return NULL;
}

/* Marks in keep profile i and, once each, what it includes. */
static void mark_used(const struct efa_profiles *set, size_t i, bool *keep)
{
	if (keep[i])
		return;
	keep[i] = true;
	for (char **inc = set->v[i].includes; inc && *inc; inc++) {
		const struct efa_profile *q = efa_profiles_find(set, *inc);

		if (q)
			mark_used(set, (size_t)(q - set->v), keep);
	}
}

int efa_profiles_keep_matching(struct efa_profiles *set, const char *instance_type,
			       unsigned accels)
{
	const struct efa_profile *p = efa_profiles_match(set, instance_type, accels);
	struct efa_profiles kept = { 0 };
	const char *matched;
	bool *keep;

	if (!p)
		return 0;
	matched = p->name;
	keep = calloc(set->n, sizeof(*keep));
	kept.v = calloc(set->n, sizeof(*kept.v));
	if (!keep || !kept.v) {
		free(keep);
		free(kept.v);
		return -1;
	}
	mark_used(set, (size_t)(p - set->v), keep);
	for (size_t i = 0; i < set->n; i++)
		if (keep[i])
			kept.v[kept.n++] = set->v[i];
	/* Another kept profile serving the accelerators first would win the
	 * match's fall-back: then the set stays as it is. */
	p = efa_profiles_match(&kept, instance_type, accels);
	if (!p || strcmp(p->name, matched)) {
		free(keep);
		free(kept.v);
		return 0;
	}
	for (size_t i = 0; i < set->n; i++)
		if (!keep[i])
			profile_clear(&set->v[i], !set->strings);
	free(set->v);
	set->v = kept.v;
	set->n = kept.n;
	free(keep);
	return 0;
}

/* Checks what only the whole set can: includes exist, no pattern or
 * accelerator twice. */
static int check_set(const struct efa_profiles *set, struct efa_error *err)
{
	for (size_t i = 0; i < set->n; i++) {
		const struct efa_profile *p = &set->v[i];

		for (char **inc = p->includes; inc && *inc; inc++)
			if (!efa_profiles_find(set, *inc))
				return efa_error_set(err, "%s%s: Include=%s: no profile %s%s",
						     p->name, PROFILE_SUFFIX, *inc, *inc, PROFILE_SUFFIX);
		for (char **a = p->accelerators; a && *a; a++)
			for (size_t j = 0; j < i; j++)
				for (char **o = set->v[j].accelerators; o && *o; o++)
					if (!strcasecmp(*o, *a))
						return efa_error_set(err, "Accelerator=%s appears in both %s%s and %s%s: keep one",
								     *a, set->v[j].name, PROFILE_SUFFIX,
								     p->name, PROFILE_SUFFIX);
		for (char **m = p->match; m && *m; m++) {
			for (size_t j = 0; j <= i; j++) {
				for (char **o = set->v[j].match; o && *o; o++) {
					if (o == m || strcmp(*o, *m))
						continue;
					return efa_error_set(err, "Match=%s appears in both %s%s and %s%s: keep one",
							     *m, set->v[j].name, PROFILE_SUFFIX,
							     p->name, PROFILE_SUFFIX);
				}
			}
		}
	}
	return 0;
}

int efa_profiles_load(const char *dir, struct efa_profiles **out, struct efa_error *err)
{
	struct efa_profiles *set = calloc(1, sizeof(*set));
	struct efa_sysfs fs;
	char **names = NULL;
	size_t count = 0;

	if (!efa_sysfs_open(&fs, "/")) {
		names = efa_sysfs_list(&fs, "%s", dir);
		efa_sysfs_close(&fs);
	}
	if (!set || !names) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	for (char **n = names; *n; n++)
		count++;
	set->v = calloc(count ? count : 1, sizeof(*set->v));
	if (!set->v) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	for (char **n = names; *n; n++) {
		size_t len = strlen(*n), slen = strlen(PROFILE_SUFFIX);
		char *path = NULL, *text = NULL, *name;
		size_t tlen;
		int rc;

		if (len <= slen || strcmp(*n + len - slen, PROFILE_SUFFIX))
			continue;
		if (asprintf(&path, "%s/%s", dir, *n) < 0) {
			efa_error_set(err, "out of memory");
			goto fail;
		}
		name = strndup(*n, len - slen);
		rc = !name || efa_read_file(path, PROFILE_MAX_SIZE, &text, &tlen, err) ||
		     efa_profile_parse(text, tlen, name, &set->v[set->n], err);
		free(path);
		free(text);
		free(name);
		if (rc)
			goto fail;
		set->n++;
	}
	if (!set->n) {
		efa_error_set(err, "no *%s files in ProfileDir=%s: install slurm-efa's profiles there, or set ProfileDir= in efa.conf to where they are",
			      PROFILE_SUFFIX, dir);
		goto fail;
	}
	if (check_set(set, err))
		goto fail;
	efa_strv_free(names);
	*out = set;
	return 0;
fail:
	efa_strv_free(names);
	efa_profiles_free(set);
	return -1;
}

static bool profile_serves(const struct efa_profile *p, unsigned accels)
{
	for (char **a = p->accelerators; a && *a; a++)
		for (size_t k = 0; k < sizeof(accel_names) / sizeof(accel_names[0]); k++)
			if ((accels & (1u << k)) && !strcasecmp(*a, accel_names[k]))
				return true;
	return false;
}

static int specificity(const char *pattern)
{
	int literal = 0;

	if (!strpbrk(pattern, "*?["))
		return 1 << 20;		/* an exact name beats every pattern */
	for (const char *c = pattern; *c; c++)
		literal += !strchr("*?[]", *c);
	return literal;
}

const struct efa_profile *efa_profiles_match(const struct efa_profiles *set,
					     const char *instance_type, unsigned accels)
{
	const struct efa_profile *best = NULL;
	int best_score = -1;

	for (size_t i = 0; i < set->n; i++) {
		for (char **m = set->v[i].match; m && *m; m++) {
			int score = specificity(*m);

			if (instance_type ? fnmatch(*m, instance_type, 0) : strcmp(*m, "*"))
				continue;
			if (score > best_score) {
				best = &set->v[i];
				best_score = score;
			}
		}
	}
	/* A type no pattern names but "*": its accelerators say what it is. */
	for (size_t i = 0; best_score <= 0 && i < set->n; i++)
		if (profile_serves(&set->v[i], accels))
			return &set->v[i];
	return best;
}

bool efa_cond_holds(const struct efa_cond *cond, const struct efa_stack *stack,
		    char *why, size_t size)
{
	bool known, holds = false;
	const char *have = efa_stack_version(stack, cond->component, &known);
	int c;

	if (!have) {
		snprintf(why, size, "%s version unknown on this node", cond->component);
		return false;
	}
	c = efa_version_cmp(have, cond->version);
	switch (cond->cmp) {
	case EFA_CMP_LT: holds = c < 0; break;
	case EFA_CMP_LE: holds = c <= 0; break;
	case EFA_CMP_GT: holds = c > 0; break;
	case EFA_CMP_GE: holds = c >= 0; break;
	case EFA_CMP_EQ: holds = c == 0; break;
	case EFA_CMP_NE: holds = c != 0; break;
	}
	if (size) {
		why[0] = '\0';
		efa_strlcat_all(why, size, cond->component, " ", have, " is ", holds ? "" : "not ",
				cmp_names[cond->cmp % EFA_CMP_COUNT], " ", cond->version, NULL);
	}
	return holds;
}
