/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/strutil.h"
#include "rest/internal.h"
#include "tap.h"

/* Answers recorded from real slurmrestd by scripts/capture-rest-fixtures:
 * FIXTURES/rest/<release>/<version>/<call>.json, the versions each release
 * serves in <release>/served. */
static json_t *load_as(const char *release, const char *version, const char *name,
		       const struct rest_listing *listing)
{
	char path[512], *text = NULL;
	struct efa_error err;
	slurmrest_error rerr;
	size_t len;
	json_t *root;

	snprintf(path, sizeof(path), "%s/rest/%s/%s/%s.json", FIXTURES, release, version, name);
	if (efa_read_file(path, 1 << 20, &text, &len, &err)) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	root = listing ? rest_parse_listing(text, len, name, listing, &rerr)
		       : rest_parse_body(text, len, name, &rerr);
	if (!root)
		printf("# %s\n", rerr.message);
	free(text);
	return root;
}

static json_t *load(const char *release, const char *version, const char *name)
{
	return load_as(release, version, name, NULL);
}

static bool has(char **list, const char *item)
{
	for (; list && *list; list++)
		if (!strcmp(*list, item))
			return true;
	return false;
}

/*
 * What the capture's cluster was, as any version must show it: n1-n4 with
 * zone features (n1, n2 in us-west-2a; n3, n4 in us-west-2b), n4 drained
 * for "disk check", partitions gpu = n[1-4] and cpu = n[1-2]. Read whole,
 * and the way GET nodes reads it (only the fields it uses, each node
 * handed to the model as the parse reaches it).
 */
static void check_nodes(const char *release, const char *version, int api, bool sparse)
{
	struct rest_nodes_taker taker = { 0 };
	struct rest_listing listing = rest_nodes_listing;
	slurmrest_nodes *nodes = NULL;
	slurmrest_error err = { 0 };
	json_t *root, *list;
	const slurmrest_node *n1, *n4;

	listing.take = rest_take_node;
	listing.arg = &taker;
	root = load_as(release, version, "nodes", sparse ? &listing : NULL);
	list = json_object_get(root, "nodes");
	if (sparse)
		ok(json_is_array(list) && !json_array_size(list), "%s %s: the parse handed every node over",
		   release, version);
	require(ok(root && rest_nodes_taken(&taker, root, &nodes, &err) == 0, "%s %s: nodes parse%s",
		   release, version, sparse ? ", sparse" : ""));
	require(is_int(nodes->count, 4, "  four nodes"));
	n1 = &nodes->nodes[0];
	n4 = &nodes->nodes[3];
	is_str(n1->name, "n1", "  name");
	is_str(n1->address, "127.0.0.1", "  address");
	ok(has(n1->features, "az-us-west-2a") && has(n1->features, "efa"), "  configured features");
	ok(has(n1->active_features, "az-us-west-2a"), "  active features");
	ok(has(nodes->nodes[2].features, "az-us-west-2b"), "  n3's zone feature");
	ok(has(n1->partitions, "gpu") && has(n1->partitions, "cpu"), "  partitions");
	is_str(n1->state[0], "idle", "  state, lower-cased");
	ok(n1->state[1] == NULL, "  and nothing more when idle");
	is_str(n4->state[0], "idle", "  a drained node: base state first");
	ok(has(n4->state, "drain"), "  then the drain flag");
	is_str(n4->reason, "disk check", "  with its reason");
	if (api == 38)
		is_int(nodes->update_time, 0, "  no update time in v0.0.38");
	else
		ok(nodes->update_time > 1700000000, "  last_update as the update time");
	slurmrest_nodes_free(nodes);
	json_decref(root);
}

static void check_partitions(const char *release, const char *version, int api)
{
	slurmrest_partitions *parts = NULL;
	slurmrest_error err = { 0 };
	json_t *root = load(release, version, "partitions");
	const char *gpu = NULL, *cpu = NULL;

	require(ok(root && rest_parse_partitions(root, api, &parts, &err) == 0,
		   "%s %s: partitions parse", release, version));
	for (size_t i = 0; i < parts->count; i++) {
		if (!strcmp(parts->partitions[i].name, "gpu"))
			gpu = parts->partitions[i].nodes;
		if (!strcmp(parts->partitions[i].name, "cpu"))
			cpu = parts->partitions[i].nodes;
	}
	is_str(gpu, "n[1-4]", "  gpu's nodes");
	is_str(cpu, "n[1-2]", "  cpu's nodes");
	slurmrest_partitions_free(parts);
	json_decref(root);
}

static void check_jobs(const char *release, const char *version, int api)
{
	slurmrest_job *job = NULL;
	slurmrest_error err = { 0 };
	uint32_t id = 0;
	char *msg = NULL, **warnings;
	json_t *root;

	root = load(release, version, "ping");
	ok(root && rest_parse_errors(root, &err) == 0, "%s %s: ping has no error", release, version);
	{
		char *rel = root ? rest_parse_release(root) : NULL;

		ok(rel && !strncmp(rel, release, strlen(release)), "  Slurm's release %s", rel ? rel : "(none)");
		free(rel);
	}
	json_decref(root);

	root = load(release, version, "submit");
	ok(root && rest_parse_submit(root, &id, &msg, &err) == 0 && id > 0, "  submit: the job id");
	is_str(msg, "", "  no job_submit message");
	free(msg);
	msg = NULL;
	json_decref(root);

	root = load(release, version, "submit-error");
	ok(root && rest_parse_submit(root, &id, &msg, &err) == SLURMREST_E_SLURM, "  a refused job is a Slurm error");
	is_int(err.slurm_errno, 2000, "  Slurm's error number");
	has_str(err.message, "Invalid partition name specified", "  and its words");
	json_decref(root);

	root = load(release, version, "submit-warning");
	warnings = root ? rest_parse_warnings(root) : NULL;
	if (api == 38) {
		ok(rest_parse_submit(root, &id, &msg, &err) == SLURMREST_E_SLURM,
		   "  v0.0.38 refuses a job with a field it does not know");
		has_str(err.message, "fixture_unknown", "  naming it");
		ok(warnings && !warnings[0], "  and has no warnings");
	} else {
		ok(root && rest_parse_submit(root, &id, &msg, &err) == 0, "  a job with a field the version does not know is accepted");
		require(ok(warnings && warnings[0], "  with a warning"));
		has_str(warnings[0], "Ignoring unknown field \"fixture_unknown\"", "  naming the field");
		has_str(warnings[0], "(at #/job/fixture_unknown/)", "  and where it is");
		free(msg);
		msg = NULL;
	}
	rest_strv_free(warnings);
	json_decref(root);

	root = load(release, version, "job");
	require(ok(root && rest_parse_job(root, api, &job, &err) == 0, "  the job parses"));
	is_str(job->name, "fixture", "  name");
	is_str(job->partition, "cpu", "  partition");
	is_str(job->user_name, "root", "  user");
	is_str(job->state, "completed", "  state, lower-cased");
	is_int(job->exit_code, 0, "  exit code");
	ok(!strcmp(job->nodes, "n1") || !strcmp(job->nodes, "n2"), "  a node of its partition (%s)", job->nodes);
	slurmrest_job_free(job);
	json_decref(root);

	root = load(release, version, "job-missing");
	ok(root && rest_parse_job(root, api, &job, &err) == SLURMREST_E_SLURM, "  a missing job is a Slurm error");
	is_int(err.slurm_errno, 2017, "  Invalid job id");
	json_decref(root);
}

/* Every version every recorded release serves. */
static void test_recorded(void)
{
	static const char *const releases[] = { "22.05", "24.11", "26.05" };
	bool seen[64] = { false };

	for (size_t i = 0; i < sizeof(releases) / sizeof(releases[0]); i++) {
		char path[512], version[32];
		FILE *f;

		snprintf(path, sizeof(path), "%s/rest/%s/served", FIXTURES, releases[i]);
		require(ok((f = fopen(path, "r")) != NULL, "%s's versions are recorded", releases[i]));
		while (fscanf(f, "%31s", version) == 1) {
			int api = rest_api_parse(version);

			if (!ok(api > 0, "  %s is one libslurmrest speaks", version))
				continue;
			seen[api] = true;
			check_nodes(releases[i], version, api, false);
			check_nodes(releases[i], version, api, true);
			check_partitions(releases[i], version, api);
			check_jobs(releases[i], version, api);
		}
		fclose(f);
	}
	for (size_t i = 0; i < rest_api_nversions; i++)
		if (rest_api_versions[i] != 39)
			ok(seen[rest_api_versions[i]], "v0.0.%d is checked against a real answer",
			   rest_api_versions[i]);
}

static void test_served(void)
{
	int versions[REST_SERVED_MAX];
	json_t *root = json_pack("{s:{s:{}, s:{}, s:{}, s:{}, s:{}}}", "paths",
				 "/slurm/v0.0.44/ping", "/slurm/v0.0.46/nodes/", "/slurm/v0.0.44/nodes/",
				 "/slurmdb/v0.0.46/jobs/", "/openapi/v3");

	require(is_int(rest_parse_served(root, versions, REST_SERVED_MAX), 2,
		       "the description's /slurm/ versions, each once"));
	is_int(versions[0], 46, "  newest first, also one this library does not speak");
	is_int(versions[1], 44, "  then the older");
	json_decref(root);
	root = json_pack("{s:s}", "paths", "none");
	is_int(rest_parse_served(root, versions, REST_SERVED_MAX), 0, "no paths: none");
	json_decref(root);
}

/* The shapes of an error each version's source writes: v0.0.38's nodes.c
 * sets "error" and "errno" (its jobs "error_code"; recorded above). */
static void test_error_shapes(void)
{
	slurmrest_error err = { 0 };
	json_t *root = json_pack("{s:[{s:s, s:i}]}", "errors", "error", "Unspecified error",
				 "errno", -1);

	is_int(rest_parse_errors(root, &err), SLURMREST_E_SLURM, "v0.0.38 nodes: a Slurm error");
	is_int(err.slurm_errno, -1, "  its number, from errno");
	has_str(err.message, "Slurm: Unspecified error (error -1)", "  and its words");
	json_decref(root);
	root = json_pack("{s:[{s:s, s:s, s:i}]}", "errors", "description", "no such node",
			 "error", "Invalid node name specified", "error_number", 2018);
	is_int(rest_parse_errors(root, &err), SLURMREST_E_SLURM, "v0.0.39 on: a Slurm error");
	is_int(err.slurm_errno, 2018, "  its number, from error_number");
	has_str(err.message, "no such node (Invalid node name specified, error 2018)",
		"  with the description first");
	json_decref(root);
}

static void test_build_submit(void)
{
	const char *env[] = { "PATH=/bin", "SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa=(null)", NULL };
	const char *bad_env[] = { "NOEQUALS", NULL };
	json_t *fields = json_pack("{s:s, s:i, s:s}", "partition", "gpu", "nodes", 2, "gpus_per_node", "2");
	slurmrest_job_desc job = { "#!/bin/bash\ntrue\n", fields, env };
	slurmrest_error err = { 0 };
	json_t *body;

	body = rest_build_submit(&job, 38, &err);
	is_str(json_string_value(json_object_get(json_object_get(json_object_get(body, "job"), "environment"), "PATH")),
	       "/bin", "v0.0.38: environment is an object");
	ok(json_is_integer(json_object_get(json_object_get(body, "job"), "nodes")), "  nodes stay a number");
	is_str(json_string_value(json_object_get(body, "script")), "#!/bin/bash\ntrue\n", "  script");
	is_str(json_string_value(json_object_get(json_object_get(body, "job"), "gpus_per_node")), "2",
	       "  gpus_per_node as given");
	json_decref(body);
	body = rest_build_submit(&job, 41, &err);
	is_str(json_string_value(json_array_get(json_object_get(json_object_get(body, "job"), "environment"), 1)),
	       "SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa=(null)", "v0.0.41: environment is a K=V array");
	is_str(json_string_value(json_object_get(json_object_get(body, "job"), "nodes")), "2",
	       "  nodes as a string");
	is_str(json_string_value(json_object_get(json_object_get(body, "job"), "script")),
	       "#!/bin/bash\ntrue\n", "  the script inside the job");
	ok(!json_object_get(body, "script"), "  and not beside it");
	is_str(json_string_value(json_object_get(json_object_get(body, "job"), "tres_per_node")), "gres/gpu:2",
	       "  GPUs per node as a TRES (slurmrestd ignores gpus_per_node there)");
	ok(!json_object_get(json_object_get(body, "job"), "gpus_per_node"), "  and not as gpus_per_node");
	json_decref(body);
	json_object_set_new(fields, "exclusive", json_true());
	body = rest_build_submit(&job, 45, &err);
	is_str(json_string_value(json_array_get(json_object_get(json_object_get(body, "job"), "shared"), 0)), "none",
	       "v0.0.45: exclusive as shared=[none] (slurmrestd ignores exclusive there)");
	ok(!json_object_get(json_object_get(body, "job"), "exclusive"), "  and not as exclusive");
	json_decref(body);
	json_object_set_new(fields, "time_limit", json_integer(90));
	body = rest_build_submit(&job, 45, &err);
	is_int(json_integer_value(json_object_get(json_object_get(json_object_get(body, "job"), "time_limit"), "number")),
	       90, "  the time limit as a NO_VAL number");
	json_decref(body);
	body = rest_build_submit(&job, 38, &err);
	is_str(json_string_value(json_object_get(json_object_get(body, "job"), "exclusive")), "exclusive",
	       "v0.0.38: exclusive as sbatch's word (22.05 refuses true)");
	is_int(json_integer_value(json_object_get(json_object_get(body, "job"), "time_limit")), 90,
	       "  the time limit a plain number");
	json_decref(body);
	json_object_set_new(fields, "exclusive", json_string("user"));
	body = rest_build_submit(&job, 42, &err);
	is_str(json_string_value(json_array_get(json_object_get(json_object_get(body, "job"), "shared"), 0)), "user",
	       "v0.0.42: exclusive=user as shared=[user]");
	json_decref(body);
	json_object_del(fields, "exclusive");
	json_object_del(fields, "time_limit");
	json_object_set_new(fields, "signal", json_string("USR1@300"));
	body = rest_build_submit(&job, 38, &err);
	is_str(json_string_value(json_object_get(json_object_get(body, "job"), "signal")), "USR1@300",
	       "v0.0.38: --signal in sbatch's form");
	json_decref(body);
	json_object_set_new(fields, "signal", json_string("B:USR1@300"));
	ok(!rest_build_submit(&job, 38, &err) && err.code == SLURMREST_E_USAGE,
	   "v0.0.38: B: is refused before sending (22.05 refuses it)");
	has_str(err.message, "v0.0.38 (Slurm 22.05) takes no B: or R:", "  saying so");
	body = rest_build_submit(&job, 40, &err);
	{
		json_t *j = json_object_get(body, "job");

		is_str(json_string_value(json_object_get(j, "kill_warning_signal")), "USR1",
		       "v0.0.40: the signal as kill_warning_signal");
		is_int(json_integer_value(json_object_get(json_object_get(j, "kill_warning_delay"), "number")), 300,
		       "  the time as kill_warning_delay, a NO_VAL number");
		is_str(json_string_value(json_array_get(json_object_get(j, "kill_warning_flags"), 0)), "BATCH_JOB",
		       "  B: as kill_warning_flags [BATCH_JOB]");
		is_int(json_array_size(json_object_get(j, "kill_warning_flags")), 1, "  alone");
		ok(!json_object_get(j, "signal"), "  and no signal field");
	}
	json_decref(body);
	json_object_set_new(fields, "signal", json_string("10"));
	body = rest_build_submit(&job, 45, &err);
	is_int(json_integer_value(json_object_get(json_object_get(json_object_get(body, "job"), "kill_warning_delay"),
						  "number")), 60, "v0.0.45: a signal without @: 60 s, as sbatch");
	is_int(json_array_size(json_object_get(json_object_get(body, "job"), "kill_warning_flags")), 0,
	       "  no B: no flags");
	json_decref(body);
	json_object_set_new(fields, "signal", json_string("X:USR1@5"));
	ok(!rest_build_submit(&job, 45, &err) && err.code == SLURMREST_E_USAGE, "a signal \"X:USR1@5\" is refused");
	has_str(err.message, "[B:]SIG[@SECONDS]", "  with the form to use");
	json_object_set_new(fields, "signal", json_string("USR1@70000"));
	ok(!rest_build_submit(&job, 38, &err) && err.code == SLURMREST_E_USAGE, "  so is a time past 65535, on v0.0.38 too");
	json_object_del(fields, "signal");
	ok(json_integer_value(json_object_get(fields, "nodes")) == 2, "the caller's fields are not changed");
	job.environment = bad_env;
	ok(!rest_build_submit(&job, 38, &err) && err.code == SLURMREST_E_USAGE, "an entry without '=' is refused");
	job.environment = NULL;
	ok(!rest_build_submit(&job, 38, &err), "an empty environment is refused");
	has_str(err.message, "at least one environment variable", "  saying why");
	json_decref(fields);
}

static void test_new(void)
{
	slurmrest_options o = { 0 };
	slurmrest_error err;
	slurmrest_t *r;
	char dir[] = "/tmp/rest-test.XXXXXX", path[256];
	FILE *f;

	ok(!slurmrest_new(&o, &err) && err.code == SLURMREST_E_USAGE, "no URL: usage error");
	o.url = "ftp://x";
	ok(!slurmrest_new(&o, &err), "ftp:// refused");
	has_str(err.message, "use unix:/path/to/socket, http://host:port or https://host:port", "  with the accepted forms");
	o.url = "unix:relative.sock";
	ok(!slurmrest_new(&o, &err), "a relative socket path is refused");
	o.url = "http://127.0.0.1:6820/slurm/v0.0.38";
	ok(!slurmrest_new(&o, &err), "a URL with a path is refused");
	has_str(err.message, "give only scheme, host and port", "  saying why");
	o.url = "http://127.0.0.1:6820/";
	r = slurmrest_new(&o, &err);
	require(ok(r != NULL, "http://host:port/ is fine"));
	ok(slurmrest_api_version(r) == NULL, "  no version before the first call");
	slurmrest_free(r);
	o.api_version = "v0.0.37";
	ok(!slurmrest_new(&o, &err), "an unsupported pinned version is refused");
	has_str(err.message, "v0.0.38 to v0.0.45", "  naming the versions it speaks");
	o.api_version = "v0.0.45";
	r = slurmrest_new(&o, &err);
	is_str(r ? slurmrest_api_version(r) : NULL, "v0.0.45", "a pinned version is used as is");
	slurmrest_free(r);
	o.api_version = NULL;

	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/token", dir);
	f = fopen(path, "w");
	fputs("SLURM_JWT=eyJhbGciOi.secret.part\n", f);
	fclose(f);
	chmod(path, 0644);
	o.token_file = path;
	o.user = "alice";
	ok(!slurmrest_new(&o, &err) && err.code == SLURMREST_E_TOKEN, "a token file readable by others is refused");
	has_str(err.message, "chmod 600", "  saying what to do");
	ok(!strstr(err.message, "secret"), "  without the token in the message");
	chmod(path, 0440);
	r = slurmrest_new(&o, &err);
	ok(r != NULL, "a 0440 token file (a Kubernetes Secret under the pod's fsGroup) is accepted");
	slurmrest_free(r);
	chmod(path, 0600);
	r = slurmrest_new(&o, &err);
	ok(r != NULL, "a 0600 token file is accepted");
	slurmrest_free(r);
	o.user = NULL;
	ok(!slurmrest_new(&o, &err), "a token without its user is refused");
	unlink(path);
	rmdir(dir);
	o.token_file = NULL;
	is_str(slurmrest_strcode(SLURMREST_E_TIMEOUT), "timeout", "strcode");
	is_int(rest_api_parse("v0.0.40"), 40, "v0.0.40 parses");
	is_int(rest_api_parse("v0.0.45"), 45, "v0.0.45 parses");
	is_int(rest_api_parse("v0.0.46"), -1, "v0.0.46 is not spoken");
	is_int(rest_api_parse("v0.0.40x"), -1, "junk after the version is refused");
}

/* What the sparse parse keeps, and the answers it refuses. */
static void test_sparse(void)
{
	static const struct {
		const char *body, *why;
	} broken[] = {
		{ "", "not JSON" },
		{ "[]", "not a JSON object" },
		{ "{\"nodes\": [{\"name\": \"n1\", \"x\": [1, 2}]}", "expected ',' or ']' at byte 36" },
		{ "{\"nodes\": [{\"name\": \"n1\", \"x\": \"a\tb\"}]}", "control character in a string" },
		{ "{\"nodes\": [{\"x\": \"\\q\"}]}", "invalid escape" },
		{ "{\"nodes\": [{\"x\": \"\\u12g4\"}]}", "invalid \\u escape" },
		{ "{\"nodes\": [{\"x\": 01}]}", "expected ',' or '}'" },
		{ "{\"nodes\": [{\"x\": -}]}", "invalid number" },
		{ "{\"nodes\": [{\"x\": 1.e5}]}", "invalid number" },
		{ "{\"nodes\": [{\"x\": nul}]}", "invalid value" },
		{ "{\"nodes\": [{\"x\" 1}]}", "expected ':'" },
		{ "{\"nodes\": [{\"name\": \"n1\"}]", "expected ',' or '}'" },
		{ "{\"nodes\": [{\"name\": \"n1\"}]} x", "end of the answer expected" },
		{ "{\"nodes\": [{\"x\": \"abc", "the answer ends inside a string" },
		{ "{\"nodes\": [{\"x\": [[[", "the answer ends inside a value" },
		/* Kept values are Jansson's to judge. */
		{ "{\"nodes\": [{\"name\": \"\\u0000\"}]}", "invalid value" },
		{ "{\"nodes\": [{\"name\": 99999999999999999999}]}", "invalid value" },
		{ "{\"meta\": \"\xff\"}", "invalid value" },
		{ "{\"n\\u0000\": 1}", "invalid member name" },
	};
	const char *answer =
		"{\"nodes\": [{\"name\": \"n1\", \"cpus\": 96, \"gres\": \"gpu:8\", "
		"\"energy\": {\"a\": [1, -2.5e3, true, false, null, {}, []]}, \"st\\u0061te\": [\"IDLE\"], "
		"\"reason\": \"\\u00e9t\\u00e9 \\\"x\\\"\"}, 7, {}],\n"
		" \"last_update\": {\"set\": true, \"number\": 1700000001}, \"warnings\": [], "
		"\"errors\": [], \"meta\": {\"slurm\": {\"release\": \"26.05.3\"}}}\n";
	slurmrest_nodes *nodes = NULL;
	slurmrest_error err;
	json_t *root, *n1;
	char nested[3 * 2100 + 64];
	size_t len = 0;

	root = rest_parse_listing(answer, strlen(answer), "GET nodes", &rest_nodes_listing, &err);
	require(ok(root != NULL, "a nodes answer parses sparse (%s)", root ? "" : err.message));
	n1 = json_array_get(json_object_get(root, "nodes"), 0);
	is_int(json_object_size(n1), 3, "  a node keeps only the fields read (name, state, reason)");
	ok(json_object_get(n1, "state") != NULL, "  an escaped field name is matched");
	is_int(json_array_size(json_object_get(root, "nodes")), 3, "  items that are not nodes stay");
	is_int(json_object_size(root), 5, "  every top-level member is kept");
	{
		struct rest_nodes_taker whole = { 0 };

		ok(rest_nodes_taken(&whole, root, &nodes, &err) == 0 && nodes->count == 1,
		   "  and gives the one node");
	}
	if (nodes) {
		is_str(nodes->nodes[0].reason, "\xc3\xa9t\xc3\xa9 \"x\"", "  escapes decoded");
		is_int(nodes->update_time, 1700000001, "  with the update time");
		is_str(nodes->nodes[0].state[0], "idle", "  and the state");
	}
	slurmrest_nodes_free(nodes);
	json_decref(root);

	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		err.message[0] = '\0';
		root = rest_parse_listing(broken[i].body, strlen(broken[i].body), "GET nodes",
					  &rest_nodes_listing, &err);
		ok(!root && err.code == SLURMREST_E_PARSE, "refused: %s", broken[i].body);
		has_str(err.message, broken[i].why, "  %s", broken[i].why);
		json_decref(root);
	}

	/* Deeper than Jansson goes, inside a skipped field. */
	len += (size_t)sprintf(nested, "{\"nodes\": [{\"x\": ");
	for (int i = 0; i < 2049; i++)
		nested[len++] = '[';
	nested[len] = '\0';
	root = rest_parse_listing(nested, len, "GET nodes", &rest_nodes_listing, &err);
	ok(!root, "2049 levels of nesting are refused");
	has_str(err.message, "nesting too deep", "  as too deep");
}

/* A node whose "features" is FEATURES, parsed sparse: its features as
 * kept, or NULL with err (the caller frees *root). */
static json_t *kept_features(const char *features, json_t **root, slurmrest_error *err)
{
	char body[512];

	snprintf(body, sizeof(body), "{\"nodes\": [{\"name\": \"n1\", \"features\": %s}]}", features);
	*root = rest_parse_listing(body, strlen(body), "GET nodes", &rest_nodes_listing, err);
	return *root ? json_object_get(json_array_get(json_object_get(*root, "nodes"), 0), "features") : NULL;
}

/* Kept arrays and strings are what Jansson's own parser makes of them,
 * whichever way they are read (plain strings directly, the rest by
 * Jansson), and strings end where they end at every offset in a word. */
static void test_sparse_values(void)
{
	static const char *const arrays[] = {
		"[]", "[ ]", "[\"a\"]", "[ \"a\" , \"b\" ]", "[\"az-1\",\"efa\",\"p5.48xlarge\"]",
		"[\"\\u00e9t\\u00e9\", \"x\"]", "[\"a\", 1]", "[1, \"a\"]", "[[\"a\"], \"b\"]",
		"[\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\"]", "[\"\", \"\"]", "[null]", "[{}]",
	};
	static const struct {
		const char *features, *why;
	} refused[] = {
		{ "[\"a\tb\"]", "control character in a string" },
		{ "[\"\xff\"]", "invalid value" },
		{ "[\"a\",]", "invalid value" },
		{ "[\"a\" \"b\"]", "expected ',' or ']'" },
		{ "[\"a\"", "expected ',' or ']'" },
	};
	slurmrest_error err;
	json_t *root, *kept, *want;

	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		kept = kept_features(arrays[i], &root, &err);
		want = json_loadb(arrays[i], strlen(arrays[i]), JSON_DECODE_ANY, NULL);
		ok(kept && want && json_equal(kept, want), "features %s kept as Jansson reads it", arrays[i]);
		json_decref(want);
		json_decref(root);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		err.message[0] = '\0';
		kept = kept_features(refused[i].features, &root, &err);
		ok(!root, "features %s refused", refused[i].features);
		has_str(err.message, refused[i].why, "  %s", refused[i].why);
		json_decref(root);
	}
	/* Every length across two words, and a quote, a control character
	 * or a UTF-8 sequence at every offset. */
	for (int len = 0; len <= 20; len++) {
		char text[64], features[80];
		bool all = true;

		memset(text, 'x', (size_t)len);
		text[len] = '\0';
		snprintf(features, sizeof(features), "[\"%s\", \"y\"]", text);
		kept = kept_features(features, &root, &err);
		all = kept && !strcmp(json_string_value(json_array_get(kept, 0)), text) &&
		      !strcmp(json_string_value(json_array_get(kept, 1)), "y");
		json_decref(root);
		for (int at = 0; at < len && all; at++) {
			char escaped[80], control[80], utf8[80], where[80];

			snprintf(escaped, sizeof(escaped), "[\"%.*s\\\"%s\"]", at, text, text + at);
			kept = kept_features(escaped, &root, &err);
			all = kept && strlen(json_string_value(json_array_get(kept, 0))) == (size_t)len + 1 &&
			      json_string_value(json_array_get(kept, 0))[at] == '"';
			json_decref(root);
			snprintf(control, sizeof(control), "[\"%.*s\x01%s\"]", at, text, text + at);
			kept = kept_features(control, &root, &err);
			snprintf(where, sizeof(where), "control character in a string at byte %zu",
				 strlen("{\"nodes\": [{\"name\": \"n1\", \"features\": [\"") + (size_t)at);
			all = all && !root && strstr(err.message, where);
			json_decref(root);
			snprintf(utf8, sizeof(utf8), "[\"%.*s\xc3\xa9%s\"]", at, text, text + at);
			kept = kept_features(utf8, &root, &err);
			all = all && kept && strlen(json_string_value(json_array_get(kept, 0))) == (size_t)len + 2;
			json_decref(root);
		}
		ok(all, "a string of %d bytes ends where it ends, with a quote, a control byte or UTF-8 at each offset", len);
	}
}

int main(void)
{
	test_recorded();
	test_sparse();
	test_sparse_values();
	test_served();
	test_error_shapes();
	test_build_submit();
	test_new();
	return done_testing();
}
