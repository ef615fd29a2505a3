/* SPDX-License-Identifier: Apache-2.0 */
/*
 * From slurmrestd's JSON to libslurmrest's one model. The shapes that
 * differ between v0.0.38 (Slurm 22.05) and v0.0.40 and later (24.05 on), as
 * recorded from real servers in test/fixtures/rest/:
 *   node features     "a,b" string           -> array
 *   node state        "idle" + state_flags   -> ["IDLE", "DRAIN"]
 *   partition nodes   "n[1-4]"               -> {"configured": "n[1-4]"}
 *   numbers           42                     -> {"set": true, "number": 42}
 *   errors            {error_code, error}    -> {error_number, description}
 *   job environment   object                 -> ["K=V", ...]
 *   exclusive job     "exclusive": "exclusive" -> "shared": ["none"]
 *   warnings          none                   -> [{description, source}]
 * v0.0.41 to v0.0.45 answer the calls made here as v0.0.40 does; what they
 * add or drop is in fields these parsers do not read.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const int rest_api_versions[] = { 45, 44, 43, 42, 41, 40, 39, 38 };
const size_t rest_api_nversions = sizeof(rest_api_versions) / sizeof(rest_api_versions[0]);
const char rest_api_spoken[] = "v0.0.38 to v0.0.45";

int rest_api_parse(const char *name)
{
	int v;
	char extra;

	if (!name || sscanf(name, "v0.0.%d%c", &v, &extra) != 1)
		return -1;
	for (size_t i = 0; i < rest_api_nversions; i++)
		if (rest_api_versions[i] == v)
			return v;
	return -1;
}

int rest_set_error(slurmrest_error *err, slurmrest_code code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->message, sizeof(err->message), fmt, ap);
		va_end(ap);
	}
	return code;
}

const char *slurmrest_strcode(slurmrest_code code)
{
	switch (code) {
	case SLURMREST_OK: return "ok";
	case SLURMREST_E_USAGE: return "usage error";
	case SLURMREST_E_NOMEM: return "out of memory";
	case SLURMREST_E_TOKEN: return "token error";
	case SLURMREST_E_CONNECT: return "connection failed";
	case SLURMREST_E_TIMEOUT: return "timeout";
	case SLURMREST_E_TOO_LARGE: return "answer too large";
	case SLURMREST_E_AUTH: return "authentication refused";
	case SLURMREST_E_HTTP: return "HTTP error";
	case SLURMREST_E_PARSE: return "unreadable answer";
	case SLURMREST_E_SLURM: return "Slurm error";
	case SLURMREST_E_VERSION: return "no common API version";
	case SLURMREST_E_TRANSPORT: return "transport error";
	}
	return "unknown error";
}

json_t *rest_parse_body(const char *body, size_t len, const char *what, slurmrest_error *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(body, len, 0, &jerr);

	if (!root) {
		rest_set_error(err, SLURMREST_E_PARSE,
			       "slurmrestd's answer to %s is not JSON (%s at byte %d): is the URL a slurmrestd?",
			       what, jerr.text, jerr.position);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		rest_set_error(err, SLURMREST_E_PARSE, "slurmrestd's answer to %s is not a JSON object",
			       what);
		return NULL;
	}
	return root;
}

/* A number, or v0.0.40+'s {"set": true, "infinite": false, "number": N}. */
static int number(json_t *v, long long *out)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return 0;
	}
	if (json_is_object(v) && json_is_true(json_object_get(v, "set")) &&
	    json_is_integer(json_object_get(v, "number"))) {
		*out = json_integer_value(json_object_get(v, "number"));
		return 0;
	}
	return -1;
}

int rest_parse_errors(json_t *root, slurmrest_error *err)
{
	json_t *errors = json_object_get(root, "errors"), *first;
	const char *text, *description;
	long long number_value = 0;

	if (!json_is_array(errors) || !json_array_size(errors))
		return 0;
	first = json_array_get(errors, 0);
	description = json_string_value(json_object_get(first, "description"));
	text = json_string_value(json_object_get(first, "error"));
	/* error_number from v0.0.39 on; v0.0.38 says error_code for jobs and
	 * errno for nodes (its nodes.c). */
	if (number(json_object_get(first, "error_number"), &number_value) &&
	    number(json_object_get(first, "error_code"), &number_value))
		number(json_object_get(first, "errno"), &number_value);
	if (err)
		err->slurm_errno = (int)number_value;
	if (description && *description && text && *text && strcmp(description, text))
		return rest_set_error(err, SLURMREST_E_SLURM, "Slurm: %s (%s, error %lld)",
				      description, text, number_value);
	return rest_set_error(err, SLURMREST_E_SLURM, "Slurm: %s (error %lld)",
			      description && *description ? description : text ? text : "unknown error",
			      number_value);
}

char *rest_parse_release(json_t *root)
{
	json_t *meta = json_object_get(root, "meta");
	/* "Slurm" up to v0.0.39, "slurm" after. */
	json_t *slurm = json_object_get(meta, "Slurm") ? json_object_get(meta, "Slurm")
						       : json_object_get(meta, "slurm");
	const char *release = json_string_value(json_object_get(slurm, "release"));

	return release ? strdup(release) : NULL;
}

void rest_strv_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

char **rest_parse_warnings(json_t *root)
{
	json_t *warnings = json_object_get(root, "warnings");
	size_t n = json_is_array(warnings) ? json_array_size(warnings) : 0, k = 0;
	char **list = calloc(n + 1, sizeof(*list));

	for (size_t i = 0; list && i < n; i++) {
		json_t *w = json_array_get(warnings, i);
		const char *text = json_string_value(json_object_get(w, "description"));
		const char *source = json_string_value(json_object_get(w, "source"));

		if (!text || !*text)
			continue;
		if ((source && *source ? asprintf(&list[k], "%s (at %s)", text, source) :
					 asprintf(&list[k], "%s", text)) < 0) {
			list[k] = NULL;
			rest_strv_free(list);
			return NULL;
		}
		k++;
	}
	return list;
}

static int newest_first(const void *a, const void *b)
{
	return *(const int *)b - *(const int *)a;
}

size_t rest_parse_served(json_t *root, int *versions, size_t max)
{
	json_t *paths = json_object_get(root, "paths"), *value;
	const char *path;
	size_t n = 0;

	json_object_foreach(paths, path, value) {
		int v, seen = 0;
		char slash;

		if (sscanf(path, "/slurm/v0.0.%d%c", &v, &slash) != 2 || slash != '/' || v < 0)
			continue;
		for (size_t i = 0; i < n && !seen; i++)
			seen = versions[i] == v;
		if (!seen && n < max)
			versions[n++] = v;
	}
	qsort(versions, n, sizeof(*versions), newest_first);
	return n;
}

/* "a,b" or ["a", "b"] -> NULL-terminated list; lower-cased when asked. */
static char **strv_from(json_t *v, int lower)
{
	size_t n = 0, cap;
	char **list;

	if (json_is_string(v)) {
		const char *s = json_string_value(v);

		cap = 1;
		for (const char *c = s; *c; c++)
			cap += *c == ',';
		if (!(list = calloc(cap + 1, sizeof(*list))))
			return NULL;
		while (*s) {
			size_t len = strcspn(s, ",");

			if (len && !(list[n++] = strndup(s, len)))
				goto fail;
			s += len + (s[len] == ',');
		}
	} else {
		cap = json_is_array(v) ? json_array_size(v) : 0;
		if (!(list = calloc(cap + 1, sizeof(*list))))
			return NULL;
		for (size_t i = 0; i < cap; i++) {
			const char *s = json_string_value(json_array_get(v, i));

			if (s && !(list[n++] = strdup(s)))
				goto fail;
		}
	}
	for (size_t i = 0; lower && i < n; i++)
		for (char *c = list[i]; *c; c++)
			*c = (char)tolower((unsigned char)*c);
	return list;
fail:
	rest_strv_free(list);
	return NULL;
}

static char *str_or_empty(json_t *v)
{
	const char *s = json_string_value(v);

	return strdup(s ? s : "");
}

/* v0.0.38: "state": "idle", "state_flags": ["DRAIN"]; later: ["IDLE", "DRAIN"]. */
static char **node_state(json_t *node)
{
	json_t *state = json_object_get(node, "state");
	json_t *flags = json_object_get(node, "state_flags");
	char **base, **extra, **all;
	size_t nb = 0, ne = 0;

	if (!(base = strv_from(state, 1)))
		return NULL;
	if (!(extra = strv_from(json_is_string(state) ? flags : NULL, 1))) {
		rest_strv_free(base);
		return NULL;
	}
	while (base[nb])
		nb++;
	while (extra[ne])
		ne++;
	all = realloc(base, (nb + ne + 1) * sizeof(*all));
	if (!all) {
		rest_strv_free(base);
		rest_strv_free(extra);
		return NULL;
	}
	memcpy(all + nb, extra, (ne + 1) * sizeof(*all));
	free(extra);
	return all;
}

static void node_clear(slurmrest_node *n)
{
	free(n->name);
	free(n->address);
	rest_strv_free(n->features);
	rest_strv_free(n->active_features);
	rest_strv_free(n->state);
	rest_strv_free(n->partitions);
	free(n->reason);
}

void slurmrest_nodes_free(slurmrest_nodes *nodes)
{
	if (!nodes)
		return;
	for (size_t i = 0; i < nodes->count; i++)
		node_clear(&nodes->nodes[i]);
	free(nodes->nodes);
	free(nodes);
}

/* The answer's update time: v0.0.39+ "last_update"; v0.0.38 has none. */
static int64_t last_update(json_t *root)
{
	long long t;

	return number(json_object_get(root, "last_update"), &t) ? 0 : (int64_t)t;
}

static const char *const node_fields[] = {
	"name", "address", "features", "active_features", "state", "state_flags", "partitions",
	"reason", "reason_changed_at", "boot_time", "slurmd_start_time", NULL
};
const struct rest_listing rest_nodes_listing = { .name = "nodes", .fields = node_fields };

/* One node of the answer into node: 1 stored, 0 not a node (no name),
 * -1 out of memory (node cleared). */
static int node_from_json(json_t *j, slurmrest_node *node)
{
	const char *name = json_string_value(json_object_get(j, "name"));
	long long t;

	memset(node, 0, sizeof(*node));
	if (!name)
		return 0;
	node->name = strdup(name);
	node->address = str_or_empty(json_object_get(j, "address"));
	node->features = strv_from(json_object_get(j, "features"), 0);
	node->active_features = strv_from(json_object_get(j, "active_features"), 0);
	node->state = node_state(j);
	node->partitions = strv_from(json_object_get(j, "partitions"), 0);
	node->reason = str_or_empty(json_object_get(j, "reason"));
	/* An integer in v0.0.38 and v0.0.39, {"set", "number"} after. */
	if (!number(json_object_get(j, "reason_changed_at"), &t))
		node->reason_time = t;
	if (!number(json_object_get(j, "boot_time"), &t))
		node->boot_time = t;
	if (!number(json_object_get(j, "slurmd_start_time"), &t))
		node->slurmd_start_time = t;
	if (!node->name || !node->address || !node->features || !node->active_features ||
	    !node->state || !node->partitions || !node->reason) {
		node_clear(node);
		return -1;
	}
	return 1;
}

/* Room in t for one more node. */
static int taker_grow(struct rest_nodes_taker *t)
{
	slurmrest_node *grown;
	size_t cap;

	if (!t->nodes && !(t->nodes = calloc(1, sizeof(*t->nodes))))
		return -1;
	if (t->nodes->count < t->cap)
		return 0;
	cap = t->cap ? t->cap * 2 : 64;
	grown = realloc(t->nodes->nodes, cap * sizeof(*grown));
	if (!grown)
		return -1;
	t->nodes->nodes = grown;
	t->cap = cap;
	return 0;
}

int rest_take_node(void *arg, json_t *item)
{
	struct rest_nodes_taker *t = arg;
	int rc = taker_grow(t) ? -1 : node_from_json(item, &t->nodes->nodes[t->nodes->count]);

	json_decref(item);
	if (rc < 0)
		return -1;
	t->nodes->count += (size_t)rc;
	return 0;
}

void rest_nodes_taker_clear(struct rest_nodes_taker *t)
{
	slurmrest_nodes_free(t->nodes);
	memset(t, 0, sizeof(*t));
}

int rest_nodes_taken(struct rest_nodes_taker *t, json_t *root, slurmrest_nodes **out,
		     slurmrest_error *err)
{
	json_t *array = json_object_get(root, "nodes");

	*out = NULL;
	if (!json_is_array(array)) {
		rest_nodes_taker_clear(t);
		return rest_set_error(err, SLURMREST_E_PARSE, "slurmrestd's nodes answer has no \"nodes\" list");
	}
	/* Items the parse did not hand over (an answer read whole), each
	 * released from the tree as it is taken. */
	for (size_t i = 0; i < json_array_size(array); i++) {
		json_t *item = json_incref(json_array_get(array, i));

		json_array_set_new(array, i, json_null());
		if (rest_take_node(t, item)) {
			rest_nodes_taker_clear(t);
			return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		}
	}
	if (!t->nodes && !(t->nodes = calloc(1, sizeof(*t->nodes))))
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	t->nodes->update_time = last_update(root);
	*out = t->nodes;
	memset(t, 0, sizeof(*t));
	return 0;
}

void slurmrest_partitions_free(slurmrest_partitions *parts)
{
	if (!parts)
		return;
	for (size_t i = 0; i < parts->count; i++) {
		free(parts->partitions[i].name);
		free(parts->partitions[i].nodes);
	}
	free(parts->partitions);
	free(parts);
}

int rest_parse_partitions(json_t *root, int api, slurmrest_partitions **out,
			  slurmrest_error *err)
{
	json_t *array = json_object_get(root, "partitions");
	slurmrest_partitions *res;
	size_t n;

	(void)api;
	if (!json_is_array(array))
		return rest_set_error(err, SLURMREST_E_PARSE,
				      "slurmrestd's partitions answer has no \"partitions\" list");
	n = json_array_size(array);
	if (!(res = calloc(1, sizeof(*res))) ||
	    !(res->partitions = calloc(n ? n : 1, sizeof(*res->partitions)))) {
		free(res);
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	}
	res->update_time = last_update(root);
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_array_get(array, i), *nodes = json_object_get(j, "nodes");
		slurmrest_partition *p = &res->partitions[res->count];
		const char *name = json_string_value(json_object_get(j, "name"));

		if (!name) {
			json_array_set_new(array, i, json_null());
			continue;
		}
		res->count++;
		if (json_is_object(nodes))
			nodes = json_object_get(nodes, "configured");
		p->name = strdup(name);
		p->nodes = str_or_empty(nodes);
		if (!p->name || !p->nodes) {
			slurmrest_partitions_free(res);
			return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
		}
	}
	*out = res;
	return 0;
}

int rest_parse_submit(json_t *root, uint32_t *job_id, char **user_msg, slurmrest_error *err)
{
	long long id;
	int rc = rest_parse_errors(root, err);

	if (rc)
		return rc;
	if (number(json_object_get(root, "job_id"), &id) || id <= 0 || id > UINT32_MAX)
		return rest_set_error(err, SLURMREST_E_PARSE, "slurmrestd accepted the job but sent no job_id");
	*job_id = (uint32_t)id;
	if (user_msg) {
		*user_msg = str_or_empty(json_object_get(root, "job_submit_user_msg"));
		if (!*user_msg)
			return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	}
	return 0;
}

void slurmrest_job_free(slurmrest_job *job)
{
	if (!job)
		return;
	free(job->name);
	free(job->user_name);
	free(job->partition);
	free(job->state);
	free(job->nodes);
	free(job->features);
	free(job->admin_comment);
	free(job);
}

int rest_parse_job(json_t *root, int api, slurmrest_job **out, slurmrest_error *err)
{
	json_t *jobs = json_object_get(root, "jobs"), *j, *exit_code;
	slurmrest_job *job;
	char **state;
	long long v;
	int rc;

	(void)api;
	if ((rc = rest_parse_errors(root, err)))
		return rc;
	j = json_array_get(jobs, 0);
	if (!json_is_object(j) || number(json_object_get(j, "job_id"), &v))
		return rest_set_error(err, SLURMREST_E_PARSE, "slurmrestd's job answer has no job");
	if (!(job = calloc(1, sizeof(*job))))
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	job->job_id = (uint32_t)v;
	job->name = str_or_empty(json_object_get(j, "name"));
	job->user_name = str_or_empty(json_object_get(j, "user_name"));
	job->partition = str_or_empty(json_object_get(j, "partition"));
	job->nodes = str_or_empty(json_object_get(j, "nodes"));
	job->features = str_or_empty(json_object_get(j, "features"));
	state = strv_from(json_object_get(j, "job_state"), 1);
	job->state = state && state[0] ? strdup(state[0]) : strdup("");
	rest_strv_free(state);
	/* v0.0.38: an integer; later {"return_code": {"number": N}, ...}. */
	exit_code = json_object_get(j, "exit_code");
	if (json_is_object(exit_code))
		exit_code = json_object_get(exit_code, "return_code");
	job->exit_code = number(exit_code, &v) ? 0 : (int)v;
	job->admin_comment = str_or_empty(json_object_get(j, "admin_comment"));
	if (!job->name || !job->user_name || !job->partition || !job->nodes || !job->features ||
	    !job->state || !job->admin_comment) {
		slurmrest_job_free(job);
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	}
	*out = job;
	return 0;
}

/* slurm_errno.h: ESLURM_REST_EMPTY_RESULT. */
#define SLURM_REST_EMPTY_RESULT 9003

/*
 * A job as slurmdbd keeps it (/slurmdb/): "user", "state": {"current":
 * "COMPLETED"} (a list from v0.0.40), "exit_code": {"return_code": N} (N a
 * NO_VAL number from v0.0.40), "comment": {"administrator": ...}; no
 * features (the constraint is "constraints").
 */
int rest_parse_db_job(json_t *root, uint32_t job_id, slurmrest_job **out, slurmrest_error *err)
{
	json_t *jobs = json_object_get(root, "jobs"), *j = NULL, *e;
	slurmrest_job *job;
	long long v;
	char **state;
	size_t i;
	int rc;

	/* dbv0.0.38 answers a job it does not know with ESLURM_REST_EMPTY_RESULT. */
	if ((rc = rest_parse_errors(root, err)) && err->slurm_errno != SLURM_REST_EMPTY_RESULT)
		return rc;
	if (!rc && !json_is_array(jobs))
		return rest_set_error(err, SLURMREST_E_PARSE, "slurmrestd's accounting answer has no job list");
	/* The job itself, not another run of an array's or a requeued one's id. */
	json_array_foreach(jobs, i, e)
		if (!number(json_object_get(e, "job_id"), &v) && v == (long long)job_id)
			j = e;
	if (!json_is_object(j)) {
		rest_set_error(err, SLURMREST_E_SLURM, "slurmdbd has no job %u", job_id);
		err->slurm_errno = SLURMREST_ERRNO_INVALID_JOB_ID;	/* as slurmctld says it */
		return SLURMREST_E_SLURM;
	}
	if (!(job = calloc(1, sizeof(*job))))
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	job->job_id = job_id;
	job->name = str_or_empty(json_object_get(j, "name"));
	job->user_name = str_or_empty(json_object_get(j, "user"));
	job->partition = str_or_empty(json_object_get(j, "partition"));
	job->nodes = str_or_empty(json_object_get(j, "nodes"));
	job->features = str_or_empty(json_object_get(j, "constraints"));
	state = strv_from(json_object_get(json_object_get(j, "state"), "current"), 1);
	job->state = state && state[0] ? strdup(state[0]) : strdup("");
	rest_strv_free(state);
	job->exit_code = number(json_object_get(json_object_get(j, "exit_code"), "return_code"), &v) ?
			 0 : (int)v;
	job->admin_comment = str_or_empty(json_object_get(json_object_get(j, "comment"), "administrator"));
	if (!job->name || !job->user_name || !job->partition || !job->nodes || !job->features ||
	    !job->state || !job->admin_comment) {
		slurmrest_job_free(job);
		return rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	}
	*out = job;
	return 0;
}

/* A number slurmrestd reads as "set or not" (NO_VAL), in v0.0.40's form. */
static json_t *no_val_number(json_int_t n)
{
	return json_pack("{s:b, s:b, s:I}", "set", 1, "infinite", 0, "number", n);
}

/* v0.0.38 takes sbatch's word; true is taken to mean the same. */
static int older_job_fields(json_t *job)
{
	json_t *exclusive = json_object_get(job, "exclusive");

	if (json_is_true(exclusive))
		return json_object_set_new(job, "exclusive", json_string("exclusive"));
	return 0;
}

/* sbatch's --signal, "[R|B...:]SIG[@SECONDS]", taken apart. */
struct job_signal {
	bool batch, reservation;
	char name[16];
	long seconds;		/* 60 when not given, as sbatch */
};

static bool parse_signal(const char *text, struct job_signal *sig)
{
	const char *name = text, *at;
	size_t len;
	char *end;

	memset(sig, 0, sizeof(*sig));
	sig->seconds = 60;
	if (strchr(text, ':')) {
		for (; *name != ':'; name++) {
			if (*name == 'B' || *name == 'b')
				sig->batch = true;
			else if (*name == 'R' || *name == 'r')
				sig->reservation = true;
			else
				return false;
		}
		name++;
	}
	at = strchr(name, '@');
	len = at ? (size_t)(at - name) : strlen(name);
	if (!len || len >= sizeof(sig->name))
		return false;
	memcpy(sig->name, name, len);
	sig->name[len] = '\0';
	if (at) {
		sig->seconds = strtol(at + 1, &end, 10);
		if (!isdigit((unsigned char)at[1]) || *end || sig->seconds > 65535)
			return false;
	}
	return true;
}

/*
 * The signal as v0.0.40 and later take it: kill_warning_flags (B:
 * BATCH_JOB, R: RESERVATION_JOB), kill_warning_signal and
 * kill_warning_delay (a NO_VAL number).
 */
static int newer_signal(json_t *job, const struct job_signal *sig)
{
	json_t *flags = json_array();

	if (!flags)
		return -1;
	if ((sig->batch && json_array_append_new(flags, json_string("BATCH_JOB"))) ||
	    (sig->reservation && json_array_append_new(flags, json_string("RESERVATION_JOB")))) {
		json_decref(flags);
		return -1;
	}
	/* Each _new takes its value, also when it fails. */
	if (json_object_set_new(job, "kill_warning_flags", flags) ||
	    json_object_set_new(job, "kill_warning_signal", json_string(sig->name)) ||
	    json_object_set_new(job, "kill_warning_delay", no_val_number(sig->seconds)) ||
	    json_object_del(job, "signal"))
		return -1;
	return 0;
}

/*
 * v0.0.38's spelling of job fields in v0.0.40's and later: the node count
 * is a string ("2", "2-4"); GPUs per node are a TRES ("gres/gpu:2");
 * --exclusive[=user|mcs] is "shared": ["none"] (or ["user"], ["mcs"]); and
 * a time limit is a NO_VAL number (24.11's v0.0.42 warns about a plain
 * one); a signal before the time limit is three fields (newer_signal). slurmrestd ignores gpus_per_node and exclusive there, with only a
 * warning: the job would get no GPU, or share its nodes.
 */
static int newer_job_fields(json_t *job)
{
	json_t *nodes = json_object_get(job, "nodes");
	json_t *gpus = json_object_get(job, "gpus_per_node");
	json_t *exclusive = json_object_get(job, "exclusive");
	json_t *time_limit = json_object_get(job, "time_limit");
	json_t *signal = json_object_get(job, "signal");
	struct job_signal sig;

	if (signal && (!parse_signal(json_string_value(signal), &sig) || newer_signal(job, &sig)))
		return -1;
	if (exclusive) {
		const char *how = json_is_true(exclusive) ? "exclusive" : json_string_value(exclusive);

		if (how && strcmp(how, "exclusive") && strcmp(how, "user") && strcmp(how, "mcs") &&
		    strcmp(how, "oversubscribe"))
			how = NULL;
		if (how && (json_object_set_new(job, "shared",
					       json_pack("[s]", strcmp(how, "exclusive") ? how : "none")) ||
			    json_object_del(job, "exclusive")))
			return -1;
	}
	if (json_is_integer(time_limit) &&
	    json_object_set_new(job, "time_limit", no_val_number(json_integer_value(time_limit))))
		return -1;
	if (json_is_integer(nodes) &&
	    json_object_set_new(job, "nodes", json_sprintf("%lld", json_integer_value(nodes))))
		return -1;
	if (gpus) {
		json_t *tres = json_is_integer(gpus) ?
			json_sprintf("gres/gpu:%lld", json_integer_value(gpus)) :
			json_is_string(gpus) ? json_sprintf("gres/gpu:%s", json_string_value(gpus)) : NULL;

		if (!tres || json_object_set_new(job, "tres_per_node", tres) ||
		    json_object_del(job, "gpus_per_node"))
			return -1;
	}
	return 0;
}

json_t *rest_build_submit(const slurmrest_job_desc *desc, int api, slurmrest_error *err)
{
	json_t *fields = (json_t *)desc->fields, *job, *env, *body;

	if (!desc->script || !desc->environment || !desc->environment[0]) {
		rest_set_error(err, SLURMREST_E_USAGE,
			       "a job needs a script and at least one environment variable");
		return NULL;
	}
	if (fields && !json_is_object(fields)) {
		rest_set_error(err, SLURMREST_E_USAGE, "job fields must be a JSON object");
		return NULL;
	}
	if (fields && json_object_get(fields, "signal")) {
		const char *text = json_string_value(json_object_get(fields, "signal"));
		struct job_signal sig;

		if (!text || !parse_signal(text, &sig)) {
			rest_set_error(err, SLURMREST_E_USAGE,
				       "signal: use sbatch's --signal form, [B:]SIG[@SECONDS], e.g. \"B:USR1@300\"");
			return NULL;
		}
		/* 22.05 answers "Invalid SIGNAL specification" to any flag. */
		if (api < 40 && (sig.batch || sig.reservation)) {
			rest_set_error(err, SLURMREST_E_USAGE,
				       "signal \"%.32s\": v0.0.38 (Slurm 22.05) takes no B: or R:, only SIG[@SECONDS], which signals the job's steps",
				       text);
			return NULL;
		}
	}
	job = fields ? json_deep_copy(fields) : json_object();
	env = api >= 40 ? json_array() : json_object();
	if (!job || !env)
		goto nomem;
	for (const char *const *e = desc->environment; *e; e++) {
		const char *eq = strchr(*e, '=');
		int rc;

		if (!eq || eq == *e) {
			rest_set_error(err, SLURMREST_E_USAGE,
				       "environment entry '%.64s' is not NAME=VALUE", *e);
			goto fail;
		}
		if (api >= 40) {
			rc = json_array_append_new(env, json_string(*e));
		} else {
			char *name = strndup(*e, (size_t)(eq - *e));

			rc = name ? json_object_set_new(env, name, json_string(eq + 1)) : -1;
			free(name);
		}
		if (rc)
			goto nomem;
	}
	if (api >= 40 ? newer_job_fields(job) : older_job_fields(job))
		goto nomem;
	/* Both _new and "o" take the references, also when they fail. */
	if (json_object_set_new(job, "environment", env)) {
		json_decref(job);
		goto nomem_stolen;
	}
	if (api >= 40) {
		/* v0.0.40+ read the script inside the job. */
		if (json_object_set_new(job, "script", json_string(desc->script))) {
			json_decref(job);
			goto nomem_stolen;
		}
		body = json_pack("{s:o}", "job", job);
	} else {
		body = json_pack("{s:s, s:o}", "script", desc->script, "job", job);
	}
	if (!body)
		goto nomem_stolen;
	return body;
nomem:
	rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
fail:
	json_decref(env);
	json_decref(job);
	return NULL;
nomem_stolen:
	rest_set_error(err, SLURMREST_E_NOMEM, "out of memory");
	return NULL;
}
