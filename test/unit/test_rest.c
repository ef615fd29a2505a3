#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/strutil.h"
#include "rest/internal.h"
#include "tap.h"

static json_t *load(const char *version, const char *name)
{
	char path[512], *text = NULL;
	struct efa_error err;
	slurmrest_error rerr;
	size_t len;
	json_t *root;

	snprintf(path, sizeof(path), "%s/rest/%s/%s", FIXTURES, version, name);
	if (efa_read_file(path, 1 << 20, &text, &len, &err)) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	root = rest_parse_body(text, len, name, &rerr);
	free(text);
	return root;
}

static const char *state_of(const slurmrest_node *n, size_t i)
{
	return n->state[i];
}

static void test_nodes(void)
{
	slurmrest_nodes *nodes = NULL;
	slurmrest_error err = { 0 };
	json_t *root = load("v0.0.38", "nodes.json");

	require(ok(rest_parse_nodes(root, 38, &nodes, &err) == 0, "v0.0.38 nodes parse (recorded from 22.05)"));
	require(is_int(nodes->count, 4, "  four nodes"));
	is_str(nodes->nodes[0].name, "n1", "  name");
	is_str(nodes->nodes[0].features[0], "az-us-west-2a", "  features from a comma string");
	is_str(nodes->nodes[0].features[1], "efa", "  second feature");
	ok(nodes->nodes[0].features[2] == NULL, "  and no more");
	is_str(state_of(&nodes->nodes[0], 0), "idle", "  state");
	is_str(state_of(&nodes->nodes[3], 0), "idle", "  drained node: base state");
	is_str(state_of(&nodes->nodes[3], 1), "drain", "  then its flags, lower-cased");
	is_str(nodes->nodes[3].reason, "disk check", "  reason");
	is_str(nodes->nodes[0].partitions[1], "cpu", "  partitions");
	is_int(nodes->update_time, 0, "  v0.0.38 carries no update time");
	slurmrest_nodes_free(nodes);
	json_decref(root);

	root = load("v0.0.41", "nodes.json");
	require(ok(rest_parse_nodes(root, 41, &nodes, &err) == 0, "v0.0.41 nodes parse"));
	require(is_int(nodes->count, 3, "  three nodes"));
	is_str(nodes->nodes[0].features[0], "k8s/az-us-east-1a", "  features from an array");
	is_str(state_of(&nodes->nodes[1], 0), "idle", "  state array, lower-cased");
	is_str(state_of(&nodes->nodes[1], 1), "drain", "  with its flag");
	ok(nodes->nodes[2].active_features[0] == NULL, "  empty active features");
	is_int(nodes->update_time, 1732800123, "  last_update from the number wrapper");
	slurmrest_nodes_free(nodes);
	json_decref(root);

	root = json_pack("{s:s}", "nodes", "not a list");
	ok(rest_parse_nodes(root, 38, &nodes, &err) == SLURMREST_E_PARSE, "a nodes answer without a list is a parse error");
	has_str(err.message, "no \"nodes\" list", "  saying so");
	json_decref(root);
}

static void test_partitions_jobs(void)
{
	slurmrest_partitions *parts = NULL;
	slurmrest_job *job = NULL;
	slurmrest_error err = { 0 };
	uint32_t id = 0;
	char *msg = NULL;
	json_t *root;

	root = load("v0.0.38", "partitions.json");
	require(ok(rest_parse_partitions(root, 38, &parts, &err) == 0, "v0.0.38 partitions parse"));
	is_str(parts->partitions[0].name, "gpu", "  name");
	is_str(parts->partitions[0].nodes, "n[1-4]", "  nodes as a string");
	slurmrest_partitions_free(parts);
	json_decref(root);
	root = load("v0.0.41", "partitions.json");
	require(ok(rest_parse_partitions(root, 41, &parts, &err) == 0, "v0.0.41 partitions parse"));
	is_str(parts->partitions[0].nodes, "p5-[0-2]", "  nodes from {configured: ...}");
	is_int(parts->update_time, 1732800100, "  last_update");
	slurmrest_partitions_free(parts);
	json_decref(root);

	root = load("v0.0.38", "submit.json");
	ok(rest_parse_submit(root, &id, &msg, &err) == 0 && id == 1, "v0.0.38 submit answer: job id");
	free(msg);
	json_decref(root);
	root = load("v0.0.41", "submit.json");
	require(ok(rest_parse_submit(root, &id, &msg, &err) == 0 && id == 4242, "v0.0.41 submit answer: job id"));
	is_str(msg, "efa: zone constraint added", "  job_submit's message");
	free(msg);
	json_decref(root);

	root = load("v0.0.38", "submit-error.json");
	ok(rest_parse_submit(root, &id, &msg, &err) == SLURMREST_E_SLURM, "v0.0.38 error shape");
	is_int(err.slurm_errno, 2000, "  error_code as the number");
	has_str(err.message, "Invalid partition name specified", "  the text");
	json_decref(root);
	root = load("v0.0.41", "submit-error.json");
	ok(rest_parse_submit(root, &id, &msg, &err) == SLURMREST_E_SLURM, "v0.0.41 error shape");
	is_int(err.slurm_errno, 2072, "  error_number");
	has_str(err.message, "Batch job submission failed (Requested node configuration is not available, error 2072)",
		"  description and error both");
	json_decref(root);
	root = load("v0.0.38", "job-missing.json");
	ok(rest_parse_job(root, 38, &job, &err) == SLURMREST_E_SLURM, "a missing job is a Slurm error");
	has_str(err.message, "Unable to find JobId=999999", "  with Slurm's words");
	json_decref(root);

	root = load("v0.0.38", "job.json");
	require(ok(rest_parse_job(root, 38, &job, &err) == 0, "v0.0.38 job parses"));
	is_str(job->state, "running", "  state lower-cased");
	is_str(job->nodes, "n[1-2]", "  nodes");
	slurmrest_job_free(job);
	json_decref(root);
	root = load("v0.0.41", "job.json");
	require(ok(rest_parse_job(root, 41, &job, &err) == 0, "v0.0.41 job parses"));
	is_str(job->state, "completed", "  state from an array");
	is_int(job->exit_code, 0, "  exit code from return_code");
	is_str(job->features, "efa&[k8s/az-us-east-1a|k8s/az-us-east-1b]", "  constraint");
	{
		char *release = rest_parse_release(root);

		is_str(release, "24.05.4", "  release from meta.slurm");
		free(release);
	}
	slurmrest_job_free(job);
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
	o.api_version = "v0.0.41";
	r = slurmrest_new(&o, &err);
	is_str(r ? slurmrest_api_version(r) : NULL, "v0.0.41", "a pinned version is used as is");
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
	is_int(rest_api_parse("v0.0.40x"), -1, "junk after the version is refused");
}

int main(void)
{
	test_nodes();
	test_partitions_jobs();
	test_build_submit();
	test_new();
	return done_testing();
}
