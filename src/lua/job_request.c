/* SPDX-License-Identifier: Apache-2.0 */
#include "lua/job_request.h"

#include <lauxlib.h>
#include <string.h>

#include "common/cluster/job_options.h"
#include "common/env/spank_env.h"

/* Slurm's NO_VAL and the values just below it mean "not said". */
#define COUNT_UNSET 0xfffffff0u

/* The options the policy reads, of the plugin's table (job_options.h). */
enum { OPT_EFA, OPT_CHECKPOINT_DIR, OPT_RESUME, OPT_COUNT };
static const enum efa_job_option_id policy_options[OPT_COUNT] = {
	[OPT_EFA] = EFA_OPT_EFA,
	[OPT_CHECKPOINT_DIR] = EFA_OPT_CHECKPOINT_DIR,
	[OPT_RESUME] = EFA_OPT_EFA_RESUME,
};

/* The variable the job's environment carries policy option k in
 * (spank_env.h); spank_job_env's is its tail, from the job prefix on. */
static const char *env_name(int k, char *buf, size_t size)
{
	if (efa_spank_env_name(efa_job_options[policy_options[k]].name, buf, size))
		buf[0] = '\0';
	return buf;
}

static const char *job_env_name(int k, char *buf, size_t size)
{
	const size_t skip = strlen(EFA_SPANK_ENV_PREFIX) - strlen(EFA_SPANK_JOB_ENV_PREFIX);

	env_name(k, buf, size);
	return strlen(buf) >= skip ? buf + skip : buf;
}

struct options {
	const char *value[OPT_COUNT];
	lua_Number at[OPT_COUNT];	/* spank_job_env index it came from */
};

/* Pushes t[key] and returns it as a string, or NULL: the value stays on
 * the stack, and the string with it. */
static const char *push_string(lua_State *L, int t, const char *key)
{
	lua_getfield(L, t, key);
	return lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
}

/* job_desc's field, else job_rec's (a modification keeps what it does
 * not change); the values stay on the stack. */
static const char *push_job_string(lua_State *L, int job, int rec, const char *key)
{
	const char *v = push_string(L, job, key);

	return v || !rec ? v : push_string(L, rec, key);
}

static uint32_t read_count(lua_State *L, int job, const char *key)
{
	lua_Number n;

	lua_getfield(L, job, key);
	n = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
	lua_pop(L, 1);
	return n > 0 && n < COUNT_UNSET ? (uint32_t)n : 0;
}

/* job_desc's count, else job_rec's: a node count the update leaves out is
 * the job's. */
static uint32_t read_job_count(lua_State *L, int job, int rec, const char *key)
{
	uint32_t n = read_count(L, job, key);

	return n || !rec ? n : read_count(L, rec, key);
}

static bool is_default(lua_State *L, int part)
{
	bool yes;

	if (!lua_istable(L, part) && !lua_isuserdata(L, part))
		return false;
	lua_getfield(L, part, "flag_default");
	yes = lua_type(L, -1) == LUA_TBOOLEAN ? lua_toboolean(L, -1) :
	      lua_type(L, -1) == LUA_TNUMBER && lua_tonumber(L, -1) == 1;
	lua_pop(L, 1);
	return yes;
}

/* The name of the partition part_list marks as the default, or NULL; one
 * value stays on the stack either way. */
static const char *push_default_partition(lua_State *L, int parts)
{
	if (lua_istable(L, parts)) {
		lua_pushnil(L);
		while (lua_next(L, parts)) {
			bool found = is_default(L, lua_gettop(L));

			lua_pop(L, 1);
			if (found && lua_type(L, -1) == LUA_TSTRING)
				return lua_tostring(L, -1);	/* the key stays */
		}
	}
	lua_pushnil(L);
	return NULL;
}

/* One spank_job_env entry: an option of ours takes the lowest index. */
static void take_option(struct options *o, const char *entry, lua_Number index)
{
	const size_t plen = strlen(EFA_SPANK_JOB_ENV_PREFIX);
	const char *eq;

	if (strncmp(entry, EFA_SPANK_JOB_ENV_PREFIX, plen) || !(eq = strchr(entry + plen, '=')))
		return;
	for (int k = 0; k < OPT_COUNT; k++) {
		char buf[128];
		const char *name = job_env_name(k, buf, sizeof(buf));

		if (strlen(name) != (size_t)(eq - entry) || memcmp(entry, name, eq - entry))
			continue;
		if (!o->value[k] || index < o->at[k]) {
			o->value[k] = eq + 1;
			o->at[k] = index;
		}
		return;
	}
}

/* environment[name], where an error counts as unset (job_submit/lua's
 * environment raises on some releases when there is none). */
static int index_environment(lua_State *L)
{
	lua_gettable(L, 1);
	return 1;
}

/*
 * The options as sbatch, salloc and srun carry them (spank_job_env), or
 * else as a slurmrestd job does (its environment); spank_job_env, the
 * environment and what was read from it stay on the stack.
 */
static void read_options(lua_State *L, int job, struct options *o)
{
	int env, environment = 0;

	lua_getfield(L, job, "spank_job_env");
	env = lua_gettop(L);
	if (lua_istable(L, env)) {
		lua_pushnil(L);
		while (lua_next(L, env)) {
			if (lua_type(L, -1) == LUA_TSTRING && lua_type(L, -2) == LUA_TNUMBER)
				take_option(o, lua_tostring(L, -1), lua_tonumber(L, -2));
			lua_pop(L, 1);
		}
	}
	for (int k = 0; k < OPT_COUNT; k++) {
		char name[128];

		if (o->value[k])
			continue;
		if (!environment) {
			lua_getfield(L, job, "environment");
			environment = lua_gettop(L);
		}
		if (!lua_toboolean(L, environment))
			return;
		lua_pushcfunction(L, index_environment);
		lua_pushvalue(L, environment);
		lua_pushstring(L, env_name(k, name, sizeof(name)));
		if (!lua_pcall(L, 2, 1, 0) && lua_isstring(L, -1))
			o->value[k] = lua_tostring(L, -1);	/* stays on the stack */
	}
}

void efa_lua_job_request(lua_State *L, int job, int parts, int rec, struct efa_job_request *req)
{
	struct options o = { 0 };
	const char *array;

	if (rec && lua_isnoneornil(L, rec))
		rec = 0;
	/* Every value kept for req, and what keeps its string alive. */
	luaL_checkstack(L, 40, "efa: reading the job");
	memset(req, 0, sizeof(*req));
	read_options(L, job, &o);
	/*
	 * A modification judges the job as it will be: an option the update
	 * does not give is the one the job was submitted with (job_rec's
	 * spank_job_env; job_rec has no environment, so a slurmrestd job's
	 * options are not seen here: docs/bridge.md).
	 */
	if (rec) {
		struct options kept = { 0 };

		read_options(L, rec, &kept);
		for (int k = 0; k < OPT_COUNT; k++)
			if (!o.value[k])
				o.value[k] = kept.value[k];
	}
	req->efa = o.value[OPT_EFA];
	req->checkpoint_dir = o.value[OPT_CHECKPOINT_DIR];
	req->resume = o.value[OPT_RESUME];
	/* A list (sbatch -p free,train) goes whole: the job may run in any
	 * of them, so each one's policy holds. */
	req->partition = push_job_string(L, job, rec, "partition");
	if (!req->partition)
		req->partition = push_default_partition(L, parts);
	req->min_nodes = read_job_count(L, job, rec, "min_nodes");
	req->max_nodes = read_job_count(L, job, rec, "max_nodes");
	req->features = push_job_string(L, job, rec, "features");
	req->user = push_job_string(L, job, rec, "user_name");
	req->job_name = push_job_string(L, job, rec, "name");
	/* sbatch --array: every task gets a directory of its own */
	array = push_string(L, job, "array_inx");
	req->array = array && *array;
}
