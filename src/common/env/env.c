/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/env/env.h"
#include "common/node/image.h"
#include "common/node/libpath.h"
#include "common/node/stack.h"
#include "common/base/strutil.h"

#define MAX_INCLUDE_DEPTH 16
#define ENV_VALUE_MAX 8192
#define LONG_VALUE_MAX (4 * 1024 * 1024)

bool efa_env_denied(const char *name)
{
	/* RDMAV_FORK_SAFE and friends: rdma-core's fork protection is
	 * automatic on kernels >= 5.13 and the old switch costs memory
	 * pinning; the EFA limits make libfabric abort() at start-up. */
	static const char *const exact[] = {
		"FI_EFA_MTU_SIZE", "FI_EFA_TX_IOV_LIMIT", "FI_EFA_RX_IOV_LIMIT",
	};

	if (!strncmp(name, "RDMAV_", 6))
		return true;
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (!strcmp(name, exact[i]))
			return true;
	return false;
}

bool efa_env_reserved(const char *name)
{
	/* The dynamic loader's variables (LD_PRELOAD, LD_AUDIT, ...) would
	 * run code in every task; only the library path is managed, here. */
	return !strncmp(name, "LD_", 3) || !strncmp(name, "SLURM_EFA_", 10);
}

void efa_env_plan_free(struct efa_env_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n; i++) {
		free(plan->v[i].name);
		free(plan->v[i].value);
		free(plan->v[i].reason);
	}
	free(plan->v);
	free(plan->profile);
	free(plan->libdirs);
	free(plan);
}

static struct efa_env_entry *entry_for(struct efa_env_plan *plan, const char *name)
{
	struct efa_env_entry *grown;

	for (size_t i = 0; i < plan->n; i++)
		if (!strcmp(plan->v[i].name, name))
			return &plan->v[i];
	grown = realloc(plan->v, (plan->n + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	plan->v = grown;
	memset(&grown[plan->n], 0, sizeof(*grown));
	grown[plan->n].name = strdup(name);
	if (!grown[plan->n].name)
		return NULL;
	return &grown[plan->n++];
}

static int take_var(struct efa_env_plan *plan, const struct efa_profile_var *var,
		    const struct efa_node *node)
{
	char why[256] = "", reason[512];
	struct efa_env_entry *e;
	bool holds = true;

	for (size_t i = 0; i < var->nconds && holds; i++)
		holds = efa_cond_holds(&var->conds[i], &node->stack, why, sizeof(why));
	e = entry_for(plan, var->name);
	if (!e)
		return -1;
	if (!holds && e->value)
		return 0;	/* an earlier line already set it */
	if (holds)
		snprintf(reason, sizeof(reason), "%s%s%s", var->where, why[0] ? ", " : "", why);
	else	/* every line that could have set it, and why it did not */
		snprintf(reason, sizeof(reason), "%s%s%s: %s", e->reason ? e->reason : "",
			 e->reason ? "; " : "", var->where, why);
	free(e->value);
	free(e->reason);
	e->value = holds ? strdup(var->value) : NULL;
	e->reason = strdup(reason);
	return (!e->reason || (holds && !e->value)) ? -1 : 0;
}

static int take_profile(struct efa_env_plan *plan, const struct efa_profiles *profiles,
			const struct efa_profile *p, const struct efa_node *node,
			int depth, struct efa_error *err)
{
	if (depth > MAX_INCLUDE_DEPTH)
		return efa_error_set(err, "%s.profile: Include= nests deeper than %d (a cycle?)",
				     p->name, MAX_INCLUDE_DEPTH);
	for (char **inc = p->includes; inc && *inc; inc++) {
		const struct efa_profile *q = efa_profiles_find(profiles, *inc);

		if (q && take_profile(plan, profiles, q, node, depth + 1, err))
			return -1;
	}
	for (size_t i = 0; i < p->nvars; i++)
		if (take_var(plan, &p->vars[i], node))
			return efa_error_set(err, "out of memory");
	return 0;
}

/*
 * FI_EFA_USE_DEVICE_RDMA=1 (any value libfabric reads as true) makes
 * libfabric abort() on an EFA device without RDMA read, whatever its
 * version (rdma.h): a profile's line stands only where the node's devices
 * are known to have it.
 */
static int guard_device_rdma(struct efa_env_plan *plan, const struct efa_node *node)
{
	static const char *const off[] = { "0", "false", "no", "off" };
	struct efa_env_entry *e = NULL;
	char *reason;

	for (size_t i = 0; i < plan->n && !e; i++)
		if (!strcmp(plan->v[i].name, "FI_EFA_USE_DEVICE_RDMA") && plan->v[i].value)
			e = &plan->v[i];
	if (!e || node->rdma_read == EFA_RDMA_READ_YES)
		return 0;
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		if (!strcasecmp(e->value, off[i]))
			return 0;
	if (asprintf(&reason, "%s, but not set: libfabric aborts with it on an EFA device without RDMA read, and %s",
		     e->reason, node->rdma_read_why[0] ? node->rdma_read_why :
		     "nothing says this node's devices have it") < 0)
		return -1;
	free(e->value);
	free(e->reason);
	e->value = NULL;
	e->reason = reason;
	return 0;
}

static int join_libdirs(struct efa_env_plan *plan, const struct efa_node *node)
{
	size_t len = 0;

	for (char **d = node->stack.libdirs; d && *d; d++)
		len += strlen(*d) + 1;
	if (!len)
		return 0;
	plan->libdirs = calloc(1, len);
	if (!plan->libdirs)
		return -1;
	for (char **d = node->stack.libdirs; *d; d++) {
		if (d != node->stack.libdirs)
			strcat(plan->libdirs, ":");
		strcat(plan->libdirs, *d);
	}
	return 0;
}

int efa_env_plan_build(const struct efa_node *node, const struct efa_profiles *profiles,
		       struct efa_env_plan **out, struct efa_error *err)
{
	struct efa_env_plan *plan = calloc(1, sizeof(*plan));
	const struct efa_profile *p;
	unsigned accels = 0;

	if (!plan)
		return efa_error_set(err, "out of memory");
	for (size_t i = 0; i < node->naccels; i++)
		if (node->accels[i].present)
			accels |= 1u << node->accels[i].kind;
	p = profiles ? efa_profiles_match(profiles, node->instance_type, accels) : NULL;
	if (p) {
		plan->profile = strdup(p->name);
		if (!plan->profile) {
			efa_error_set(err, "out of memory");
			goto fail;
		}
		if (take_profile(plan, profiles, p, node, 0, err))
			goto fail;
		if (guard_device_rdma(plan, node)) {
			efa_error_set(err, "out of memory");
			goto fail;
		}
	}
	if (join_libdirs(plan, node)) {
		efa_error_set(err, "out of memory");
		goto fail;
	}
	*out = plan;
	return 0;
fail:
	efa_env_plan_free(plan);
	return -1;
}

static int pin_nccl_net(struct efa_env_plan *plan)
{
	struct efa_env_entry *e = entry_for(plan, EFA_ENV_NCCL_NET_VAR);

	if (!e)
		return -1;
	free(e->value);
	free(e->reason);
	e->value = strdup(EFA_ENV_NCCL_NET);
	e->reason = strdup("--efa=required on NVIDIA GPUs: NCCL fails at start-up instead of falling back to its socket transport when aws-ofi-nccl does not load");
	return e->value && e->reason ? 0 : -1;
}

int efa_env_plan_for_task(struct efa_env_plan *plan, const struct efa_node *node,
			  const struct efa_sysfs *fs, const char *ld_path, unsigned checks,
			  bool required, char *problem, size_t size)
{
	efa_task_missing(node, fs, ld_path, checks, problem, size);
	if (problem[0] || !required || !efa_node_has_gpus(node))
		return 0;
	return pin_nccl_net(plan);
}

/*
 * What aws-ofi-nccl tunes itself, and the first release that does: a site
 * value overrides the plugin only from there on. Checked against the
 * plugin's tags (src/nccl_ofi_net.c, src/platform-aws.c, later
 * src/platform-aws.cpp and src/tuner/): NCCL_TOPO_FILE on p4d from 1.1.1;
 * NCCL_PROTO=simple where the NIC lacks ordering from 1.6.0; the tuner
 * (which picks NCCL_ALGO and NCCL_PROTO, and steps aside when either is
 * set), NCCL_NET_FORCE_FLUSH and NCCL_NVLSTREE_MAX_CHUNKSIZE from 1.8.0;
 * NCCL_NVLS_CHUNKSIZE from 1.9.0; the platform table's NCCL_BUFFSIZE,
 * NCCL_P2P_NET_CHUNKSIZE and NCCL_TUNER_PLUGIN from 1.16.0;
 * NCCL_NETDEVS_POLICY from 1.17.0. The other NCCL_NVLS* switches choose
 * among the algorithms the tuner picks from 1.8.0.
 */
static const char *plugin_tunes_since(const char *name)
{
	static const struct {
		const char *name, *since;
	} vars[] = {
		{ "NCCL_TOPO_FILE", "1.1.1" },
		{ "NCCL_PROTO", "1.6.0" },
		{ "NCCL_ALGO", "1.8.0" },
		{ "NCCL_NET_FORCE_FLUSH", "1.8.0" },
		{ "NCCL_NVLSTREE_MAX_CHUNKSIZE", "1.8.0" },
		{ "NCCL_NVLS_CHUNKSIZE", "1.9.0" },
		{ "NCCL_BUFFSIZE", "1.16.0" },
		{ "NCCL_P2P_NET_CHUNKSIZE", "1.16.0" },
		{ "NCCL_TUNER_PLUGIN", "1.16.0" },
		{ "NCCL_NETDEVS_POLICY", "1.17.0" },
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (!strcmp(name, vars[i].name))
			return vars[i].since;
	return strncmp(name, "NCCL_NVLS", 9) ? NULL : "1.8.0";
}

/*
 * The release from which the node's aws-ofi-nccl tunes name itself, or
 * NULL when it does not (or never does). An unknown plugin version counts
 * as one that does: the warning is cheap, a silent override is not.
 */
static const char *plugin_tunes(const char *name, const char *ofi)
{
	const char *since = plugin_tunes_since(name);

	if (!since || (ofi && efa_version_cmp(ofi, since) < 0))
		return NULL;
	return since;
}

static int add_warning(char ***list, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_warning(char ***list, size_t *n, const char *fmt, ...)
{
	char **grown = realloc(*list, (*n + 2) * sizeof(*grown));
	va_list ap;
	int rc;

	if (!grown)
		return -1;
	*list = grown;
	va_start(ap, fmt);
	rc = vasprintf(&grown[*n], fmt, ap);
	va_end(ap);
	if (rc < 0) {
		grown[*n] = NULL;	/* undefined after a failure: keep the list freeable */
		return -1;
	}
	grown[++*n] = NULL;
	return 0;
}

int efa_env_plan_warnings(const struct efa_env_plan *plan, const struct efa_config *cfg,
			  const struct efa_node *node, char ***out)
{
	const char *ofi = node->stack.ofi_nccl, *since;
	size_t n = 0;

	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -1;
	for (size_t i = 0; plan && i < plan->n; i++) {
		const struct efa_env_entry *e = &plan->v[i];

		if (e->value && (since = plugin_tunes(e->name, ofi)) &&
		    add_warning(out, &n, "%.*s sets %s, which aws-ofi-nccl tunes per platform from %s on%s: it overrides the plugin's choice for every job; remove it unless measured on this platform",
				(int)strcspn(e->reason, ","), e->reason, e->name, since,
				ofi ? "" : " (this node's is unknown)"))
			goto nomem;
	}
	for (char **f = cfg ? cfg->force_env : NULL; f && *f; f++)
		if ((since = plugin_tunes(*f, ofi)) &&
		    add_warning(out, &n, "ForceEnv= forces %s, which aws-ofi-nccl tunes per platform from %s on%s, over every job's own value; remove it unless measured on this platform",
				*f, since, ofi ? "" : " (this node's is unknown)"))
			goto nomem;
	return 0;
nomem:
	efa_strv_free(*out);
	*out = NULL;
	return -1;
}

const char *efa_env_decision_name(enum efa_env_decision d)
{
	static const char *const names[] = {
		[EFA_ENV_SET] = "set",
		[EFA_ENV_FORCED] = "forced",
		[EFA_ENV_USER] = "user",
		[EFA_ENV_SKIPPED] = "skipped",
		[EFA_ENV_PREPENDED] = "prepended",
		[EFA_ENV_REMOVED] = "removed",
	};

	return names[d];
}

static bool forced(const struct efa_config *cfg, const char *name)
{
	for (char **f = cfg ? cfg->force_env : NULL; f && *f; f++)
		if (!strcmp(*f, name))
			return true;
	return false;
}

/*
 * Appends the entries of list that are not in skip to out (size bytes,
 * *used of them taken): linear in the list's length, which may be a job's
 * path of many thousands of entries.
 */
static int append_entries(char *out, size_t size, size_t *used, const char *list,
			  const char *skip)
{
	for (const char *p = list; *p;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p), sep = *used ? 1 : 0;

		if (len && !efa_list_has(skip, ':', p, len)) {
			if (*used + sep + len + 1 > size)
				return -1;
			if (sep)
				out[(*used)++] = ':';
			memcpy(out + *used, p, len);
			*used += len;
			out[*used] = '\0';
		}
		p += len + (end ? 1 : 0);
	}
	return 0;
}

static bool find_own_stack(const struct efa_env_plan *plan, const char *list, const char *skip,
			   char *dir, size_t size)
{
	struct efa_sysfs root;
	bool found;

	if (plan->task_fs)
		return efa_libpath_find(plan->task_fs, list, skip, EFA_LIB_NET_PLUGIN, dir, size) ||
		       efa_libpath_find(plan->task_fs, list, skip, EFA_LIB_FABRIC, dir, size);
	if (efa_sysfs_open(&root, "/"))
		return false;
	found = efa_libpath_find(&root, list, skip, EFA_LIB_NET_PLUGIN, dir, size) ||
		efa_libpath_find(&root, list, skip, EFA_LIB_FABRIC, dir, size);
	efa_sysfs_close(&root);
	return found;
}

/*
 * The whole value of name, however long up to LONG_VALUE_MAX (a library
 * path of thousands of entries is a job's own, and never to be taken for
 * unset): malloc'd, "" when unset; NULL past the bound or on ENOMEM.
 */
static char *get_whole(efa_env_get_fn get, void *ctx, const char *name)
{
	for (size_t size = ENV_VALUE_MAX; size <= LONG_VALUE_MAX; size *= 2) {
		char *buf = malloc(size);
		int rc;

		if (!buf)
			return NULL;
		rc = get(ctx, name, buf, size);
		if (rc >= 0) {
			if (!rc)
				buf[0] = '\0';
			return buf;
		}
		free(buf);
	}
	return NULL;
}

static int apply_libdirs(const struct efa_env_plan *plan, efa_env_get_fn get,
			 efa_env_put_fn put, void *ctx)
{
	char added[ENV_VALUE_MAX] = "", own[ENV_VALUE_MAX], reason[ENV_VALUE_MAX + 128];
	char *current, *value = NULL;
	size_t size, used = 0;
	int rc = 0;

	/* Past LONG_VALUE_MAX (or without memory) it is left as it is. */
	if (!(current = get_whole(get, ctx, EFA_ENV_LIBPATH_VAR)))
		return 0;
	if (get(ctx, EFA_ENV_LIBDIRS_VAR, added, sizeof(added)) != 1)
		added[0] = '\0';
	size = strlen(current) + strlen(plan->libdirs) + 2;
	if (!(value = calloc(1, size)))
		goto out;
	if (find_own_stack(plan, current, added, own, sizeof(own))) {
		if (append_entries(value, size, &used, current, added))
			goto out;
		snprintf(reason, sizeof(reason),
			 "the job brings its own EFA libraries (%s): the node's are not put first", own);
		/* Left as it is, but for what an earlier step put first. */
		rc = put(ctx, EFA_ENV_LIBPATH_VAR, value, added[0] ? EFA_ENV_SET : EFA_ENV_USER, reason);
		if (!rc)
			rc = put(ctx, EFA_ENV_LIBDIRS_VAR, "", EFA_ENV_SET, reason);
		goto out;
	}
	/* Ours first, then the rest without ours and without the earlier
	 * step's (which may be another node's). */
	if (efa_strlcatf(added, sizeof(added), "%s%s", added[0] ? ":" : "", plan->libdirs) ||
	    append_entries(value, size, &used, plan->libdirs, "") ||
	    append_entries(value, size, &used, current, added))
		goto out;	/* too long to rewrite: leave the user's path */
	rc = put(ctx, EFA_ENV_LIBPATH_VAR, value, EFA_ENV_PREPENDED,
		 plan->image ? "EFA and aws-ofi-nccl libraries found in the container image" :
			       "EFA and aws-ofi-nccl libraries found on this node");
	if (!rc)
		rc = put(ctx, EFA_ENV_LIBDIRS_VAR, plan->libdirs, EFA_ENV_SET,
			 "what slurm-efa added to LD_LIBRARY_PATH");
out:
	free(current);
	free(value);
	return rc;
}

/*
 * What slurm-efa set, in EFA_ENV_OWNED_VAR: "NAME:DIGEST,..." with a digest
 * of the value it set, so that a value the job changed since (or unset) is
 * told apart from slurm-efa's own and kept. A NAME without a digest (an
 * earlier release wrote those) counts as slurm-efa's whatever its value.
 */
#define DIGEST_LEN 8

static void value_digest(const char *value, char out[DIGEST_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (const unsigned char *c = (const unsigned char *)value; *c; c++)
		h = (h ^ *c) * 16777619u;
	/* By hand: a step makes one per variable per task. */
	for (int i = DIGEST_LEN - 1; i >= 0; i--, h >>= 4)
		out[i] = hex[h & 0xf];
	out[DIGEST_LEN] = '\0';
}

enum recorded { NOT_RECORDED, RECORDED, RECORDED_WITH_DIGEST };

/* Looks name up in a record; digest gets the recorded one, if any. */
static enum recorded record_find(const char *record, const char *name, size_t len,
				 char digest[DIGEST_LEN + 1])
{
	for (const char *p = record; p && *p;) {
		const char *end = strchr(p, ',');
		size_t plen = end ? (size_t)(end - p) : strlen(p);

		if (plen >= len && !strncmp(p, name, len)) {
			if (plen == len)
				return RECORDED;
			if (p[len] == ':' && plen == len + 1 + DIGEST_LEN) {
				memcpy(digest, p + len + 1, DIGEST_LEN);
				digest[DIGEST_LEN] = '\0';
				return RECORDED_WITH_DIGEST;
			}
		}
		if (!end)
			break;
		p = end + 1;
	}
	return NOT_RECORDED;
}

/* Whether the job's current value is the one slurm-efa recorded setting. */
static bool still_ours(enum recorded r, const char *recorded_digest, const char *current)
{
	char digest[DIGEST_LEN + 1];

	if (r == RECORDED)
		return true;
	value_digest(current, digest);
	return r == RECORDED_WITH_DIGEST && !strcmp(digest, recorded_digest);
}

struct apply {
	const struct efa_config *cfg;
	const char *image;
	efa_env_get_fn get;
	efa_env_put_fn put;
	void *ctx;
	char owned_before[ENV_VALUE_MAX];	/* EFA_ENV_OWNED_VAR on arrival */
	char owned_now[ENV_VALUE_MAX];
	size_t owned_len;
};

static void record_add(struct apply *a, const char *name, const char *digest)
{
	size_t nlen = strlen(name), sep = a->owned_len ? 1 : 0;
	char *p = a->owned_now + a->owned_len;

	/* Too many to record is harmless: those stay as user values. */
	if (a->owned_len + sep + nlen + 1 + DIGEST_LEN >= sizeof(a->owned_now))
		return;
	if (sep)
		*p++ = ',';
	memcpy(p, name, nlen);
	p[nlen] = ':';
	memcpy(p + nlen + 1, digest, DIGEST_LEN + 1);
	a->owned_len += sep + nlen + 1 + DIGEST_LEN;
}

static int apply_entry(struct apply *a, const struct efa_env_entry *e)
{
	char current[ENV_VALUE_MAX], recorded_digest[DIGEST_LEN + 1], digest[DIGEST_LEN + 1];
	enum recorded r = record_find(a->owned_before, e->name, strlen(e->name), recorded_digest);
	int got = e->value && !e->slurm_var ? a->get(a->ctx, e->name, current, sizeof(current)) : 0;
	bool present = got != 0;	/* -1: longer than current, the job's */
	const char *reason = e->reason;
	enum efa_env_decision d;
	int rc;

	if (!e->value) {
		d = EFA_ENV_SKIPPED;
	} else if (e->slurm_var || (!present && r != RECORDED_WITH_DIGEST) ||
		   (got == 1 && r != NOT_RECORDED && still_ours(r, recorded_digest, current))) {
		d = EFA_ENV_SET;
	} else if (forced(a->cfg, e->name)) {
		d = EFA_ENV_FORCED;
	} else if (!present) {
		/* The job unset what slurm-efa set: it stays unset, and
		 * recorded, for the steps this one starts. */
		rc = a->put(a->ctx, e->name, NULL, EFA_ENV_USER,
			    "unset by the job after slurm-efa set it: left unset");
		record_add(a, e->name, recorded_digest);
		return rc;
	} else {
		d = EFA_ENV_USER;
		reason = r != NOT_RECORDED ? "changed by the job after slurm-efa set it: the job's value wins" :
			 a->image ? "set by the container image or the job: its value wins (ForceEnv= overrides)" :
				    "already set in this environment: the job's value wins";
	}
	rc = a->put(a->ctx, e->name, d == EFA_ENV_USER ? current : e->value, d, reason);
	if (rc || (d != EFA_ENV_SET && d != EFA_ENV_FORCED) || e->slurm_var)
		return rc;
	value_digest(e->value, digest);
	record_add(a, e->name, digest);
	return 0;
}

/* Removes what an earlier step set that this one does not, unless the job
 * changed it since. */
static int remove_stale(struct apply *a)
{
	char current[ENV_VALUE_MAX], digest[DIGEST_LEN + 1], unused[DIGEST_LEN + 1];

	for (const char *p = a->owned_before; *p;) {
		const char *end = strchr(p, ',');
		size_t entry = end ? (size_t)(end - p) : strlen(p);
		size_t len = strcspn(p, ",:");
		char name[256];
		enum recorded r;
		int rc;

		if (len && len < sizeof(name) &&
		    record_find(a->owned_now, p, len, unused) == NOT_RECORDED) {
			memcpy(name, p, len);
			name[len] = '\0';
			r = record_find(p, name, len, digest);	/* this entry */
			/* The record is in the user's hands: never let it remove
			 * what slurm-efa could not have set. */
			if (!efa_env_reserved(name) && strcmp(name, "PATH") &&
			    a->get(a->ctx, name, current, sizeof(current)) == 1 &&
			    still_ours(r, digest, current) &&
			    (rc = a->put(a->ctx, name, NULL, EFA_ENV_REMOVED,
					 "set by slurm-efa for an earlier step; not wanted here")))
				return rc;
		}
		p += entry + (end ? 1 : 0);
	}
	return 0;
}

int efa_env_apply(const struct efa_env_plan *plan, const struct efa_env_entry *task,
		  size_t ntask, const struct efa_config *cfg,
		  efa_env_get_fn get, efa_env_put_fn put, void *ctx)
{
	struct apply a;
	int rc;

	/* Not zeroed whole: its two buffers are 16 KiB, per task. */
	a.cfg = cfg;
	a.image = plan ? plan->image : NULL;
	a.get = get;
	a.put = put;
	a.ctx = ctx;
	a.owned_now[0] = '\0';
	a.owned_len = 0;
	if (get(ctx, EFA_ENV_OWNED_VAR, a.owned_before, sizeof(a.owned_before)) != 1)
		a.owned_before[0] = '\0';
	for (size_t i = 0; plan && i < plan->n; i++)
		if ((rc = apply_entry(&a, &plan->v[i])))
			return rc;
	for (size_t i = 0; i < ntask; i++)
		if ((rc = apply_entry(&a, &task[i])))
			return rc;
	if ((rc = remove_stale(&a)))
		return rc;
	if (plan && plan->libdirs && (rc = apply_libdirs(plan, get, put, ctx)))
		return rc;
	if ((rc = put(ctx, EFA_ENV_OWNED_VAR, a.owned_now, EFA_ENV_SET,
		      "what slurm-efa set, so later steps may change it")))
		return rc;
	if (!plan)
		return 0;	/* EFA is off for this step: no profile to name */
	return put(ctx, EFA_ENV_PROFILE_VAR, plan->profile ? plan->profile : "none",
		   EFA_ENV_SET, "the profile this node matched");
}
