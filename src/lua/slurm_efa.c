/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm_efa: the job_submit bridge's C side, a Lua module for the Lua that
 * slurmctld's job_submit/lua loads (5.1 on Debian 12; 5.2-5.4 build too).
 *
 *   local efa = require("slurm_efa")
 *   local bridge = efa.open([config_path])
 *   local verdict, result, log, note, detail, who = bridge:decide(job_desc, part_list[, job_rec])
 *
 * decide() takes what job_submit/lua hands slurm_job_submit (and, with
 * job_rec, slurm_job_modify) and reads the job from it (lua/job_request.c).
 * decide() never touches the network: it reads efa.conf and the zone
 * snapshot written by slurm-efa sync (its compact form when current),
 * again only when they changed (stat), and calls the policy in src/common.
 * verdict is "accept", "change" (result is a table of job fields to set),
 * "reject" (result is the message for the user) or "error" (result says
 * what broke; the Lua side then follows OnSnapshotMissing=). log is what
 * slurmctld's log should show an admin (a check skipped), detail what was
 * changed and why (routine, for its debug level); note, on the call that
 * loaded a snapshot from its JSON because the compact form was missing or
 * not trusted, says why. Each is nil when there is nothing to say. who
 * names the job for log, detail and a rejection ("alice in gpu").
 *
 *   local signal, why = bridge:checkpoint_signal{partition = "gpu", efa = "(null)"}
 *
 * checkpoint_signal() is sbatch's (cli_filter/lua), never slurmctld's: the
 * --signal a batch job gets from its partition's CheckpointSignal=, or nil
 * (why, when set, says why it could not tell). A job that names no
 * partition makes it ask slurmctld for the default one (scontrol).
 */
#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/checkpoint/checkpoint.h"
#include "common/cluster/partition_default.h"
#include "common/cluster/policy.h"
#include "common/cluster/snapshot.h"
#include "common/config/efa_conf.h"
#include "lua/job_request.h"

#define BRIDGE_META "slurm_efa.bridge"

#if LUA_VERSION_NUM < 502
#define efa_setfuncs(L, l) luaL_register(L, NULL, l)
#else
#define efa_setfuncs(L, l) luaL_setfuncs(L, l, 0)
#endif

/* Identity of a file as last read, to see when it changed. */
struct file_id {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	bool seen;
};

struct bridge {
	char *config_path;		/* NULL: the usual search */
	struct efa_config *cfg;
	struct file_id cfg_id;
	struct efa_cluster snapshot;
	bool have_snapshot;
	struct file_id snap_id;
	char snap_problem[EFA_ERROR_MAX];
	/* Why the last load read the JSON, not the compact form: logged
	 * once, by the decide() that loaded it. */
	char snap_note[EFA_ERROR_MAX + 128];
};

static bool same_file(const struct file_id *id, const struct stat *st)
{
	return id->seen && id->dev == st->st_dev && id->ino == st->st_ino &&
	       id->size == st->st_size && id->mtime.tv_sec == st->st_mtim.tv_sec &&
	       id->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

static void remember(struct file_id *id, const struct stat *st)
{
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = st->st_size;
	id->mtime = st->st_mtim;
	id->seen = true;
}

/* (Re)reads efa.conf when it changed; the old one stays on error. */
static int load_config(struct bridge *b, struct efa_error *err)
{
	const char *path = b->config_path;
	struct efa_config *cfg = NULL;
	struct stat st;

	if (!path)
		path = getenv("SLURM_EFA_CONF");
	if (!path || !*path)
		path = SYSCONFDIR "/slurm/efa.conf";
	if (stat(path, &st)) {
		if (errno == ENOENT && !b->config_path && !getenv("SLURM_EFA_CONF")) {
			if (!b->cfg && !(b->cfg = efa_config_defaults()))
				return efa_error_set(err, "out of memory");
			return 0;
		}
		return efa_error_set(err, "cannot read %s: %s", path, strerror(errno));
	}
	if (b->cfg && same_file(&b->cfg_id, &st))
		return 0;
	if (efa_config_load(path, &cfg, err))
		return -1;
	efa_config_free(b->cfg);
	b->cfg = cfg;
	remember(&b->cfg_id, &st);
	b->snap_id.seen = false;	/* Snapshot= may have moved */
	return 0;
}

static void load_snapshot(struct bridge *b)
{
	struct efa_cluster fresh;
	struct efa_error err;
	struct stat st;

	if (stat(b->cfg->snapshot, &st)) {
		snprintf(b->snap_problem, sizeof(b->snap_problem), "no zone snapshot at %s (%s)",
			 b->cfg->snapshot, strerror(errno));
		goto drop;
	}
	if (b->have_snapshot && same_file(&b->snap_id, &st))
		return;
	if (efa_snapshot_load(b->cfg->snapshot, &fresh, b->snap_note, sizeof(b->snap_note), &err)) {
		snprintf(b->snap_problem, sizeof(b->snap_problem), "%s", err.msg);
		goto drop;
	}
	if (b->have_snapshot)
		efa_cluster_clear(&b->snapshot);
	b->snapshot = fresh;
	b->have_snapshot = true;
	remember(&b->snap_id, &st);
	return;
drop:
	/* A snapshot that vanished or broke is not trusted any more. */
	if (b->have_snapshot)
		efa_cluster_clear(&b->snapshot);
	b->have_snapshot = false;
	b->snap_id.seen = false;
}

/* A text, or nil when it is empty. */
static void push_text(lua_State *L, const char *text)
{
	if (text[0])
		lua_pushstring(L, text);
	else
		lua_pushnil(L);
}

static int bridge_decide(lua_State *L)
{
	struct bridge *b = luaL_checkudata(L, 1, BRIDGE_META);
	struct efa_job_request req;
	struct efa_decision d;
	struct efa_error err;

	if (!lua_istable(L, 2) && !lua_isuserdata(L, 2))
		return luaL_argerror(L, 2, "job_desc expected");
	lua_settop(L, 4);	/* job_desc, part_list, job_rec: absolute */
	if (load_config(b, &err)) {
		lua_pushstring(L, "error");
		lua_pushstring(L, err.msg);
		return 2;
	}
	load_snapshot(b);
	/* req's strings live on the stack until the results are pushed */
	efa_lua_job_request(L, 2, 3, 4, &req);
	if (efa_policy_decide(b->cfg, b->have_snapshot ? &b->snapshot : NULL, b->snap_problem,
			      (int64_t)time(NULL), &req, &d)) {
		lua_pushstring(L, "error");
		lua_pushstring(L, "out of memory deciding the job's placement");
		return 2;
	}
	switch (d.verdict) {
	case EFA_VERDICT_ACCEPT:
		lua_pushstring(L, "accept");
		lua_pushnil(L);
		break;
	case EFA_VERDICT_CHANGE:
		lua_pushstring(L, "change");
		lua_newtable(L);
		if (d.features) {
			lua_pushstring(L, d.features);
			lua_setfield(L, -2, "features");
		}
		if (d.checkpoint_dir) {
			char note[EFA_CKPT_PATH_MAX * 3 + 64];

			lua_pushstring(L, d.checkpoint_dir);
			lua_setfield(L, -2, "checkpoint_dir");
			lua_pushstring(L, efa_checkpoint_note(d.checkpoint_dir, note, sizeof(note)));
			lua_setfield(L, -2, "checkpoint_note");
		}
		if (d.requeue) {
			lua_pushboolean(L, 1);
			lua_setfield(L, -2, "requeue");
			lua_pushboolean(L, d.expedite);
			lua_setfield(L, -2, "expedite");
			lua_pushnumber(L, (lua_Number)d.resume);
			lua_setfield(L, -2, "resume");
		}
		break;
	case EFA_VERDICT_REJECT:
		lua_pushstring(L, "reject");
		lua_pushstring(L, d.message);
		break;
	}
	push_text(L, d.log);
	push_text(L, b->snap_note);
	b->snap_note[0] = '\0';
	push_text(L, d.detail);
	/* Only a job something is logged about is named */
	if (d.log[0] || d.detail[0] || d.verdict == EFA_VERDICT_REJECT)
		lua_pushfstring(L, "%s in %s", req.user ? req.user : "nil",
				req.partition ? req.partition : "nil");
	else
		lua_pushnil(L);
	efa_decision_clear(&d);
	return 6;
}

/* A string field of a request table, or NULL. */
static const char *opt_field(lua_State *L, int t, const char *key)
{
	const char *v;

	lua_getfield(L, t, key);
	v = lua_isstring(L, -1) ? lua_tostring(L, -1) : NULL;
	lua_pop(L, 1);	/* the string stays alive in the request table */
	return v;
}

static int bridge_checkpoint_signal(lua_State *L)
{
	struct bridge *b = luaL_checkudata(L, 1, BRIDGE_META);
	char option[64];
	struct efa_error err;
	int rc;

	luaL_checktype(L, 2, LUA_TTABLE);
	rc = load_config(b, &err);
	if (!rc)
		rc = efa_submit_checkpoint_signal(b->cfg, opt_field(L, 2, "partition"),
						  opt_field(L, 2, "efa"), option, sizeof(option), &err);
	if (rc < 0) {
		lua_pushnil(L);
		lua_pushstring(L, err.msg);
		return 2;
	}
	if (!rc)
		return 0;
	lua_pushstring(L, option);
	return 1;
}

/* The settings the Lua side needs when decide() cannot be trusted. */
static int bridge_setting(lua_State *L)
{
	struct bridge *b = luaL_checkudata(L, 1, BRIDGE_META);
	const char *key = luaL_checkstring(L, 2);
	struct efa_error err;

	if (load_config(b, &err))
		return luaL_error(L, "%s", err.msg);
	if (!strcmp(key, "on_snapshot_missing"))
		lua_pushstring(L, b->cfg->on_snapshot_missing == EFA_ON_MISSING_REJECT ? "reject" : "accept");
	else if (!strcmp(key, "snapshot"))
		lua_pushstring(L, b->cfg->snapshot);
	else
		return luaL_error(L, "slurm_efa: no setting '%s'", key);
	return 1;
}

static int bridge_gc(lua_State *L)
{
	struct bridge *b = luaL_checkudata(L, 1, BRIDGE_META);

	efa_config_free(b->cfg);
	if (b->have_snapshot)
		efa_cluster_clear(&b->snapshot);
	free(b->config_path);
	memset(b, 0, sizeof(*b));
	return 0;
}

static int efa_open(lua_State *L)
{
	const char *path = luaL_optstring(L, 1, NULL);
	struct bridge *b = lua_newuserdata(L, sizeof(*b));

	memset(b, 0, sizeof(*b));
	luaL_getmetatable(L, BRIDGE_META);
	lua_setmetatable(L, -2);
	if (path && !(b->config_path = strdup(path)))
		return luaL_error(L, "slurm_efa: out of memory");
	return 1;
}

static const luaL_Reg bridge_methods[] = {
	{ "decide", bridge_decide },
	{ "checkpoint_signal", bridge_checkpoint_signal },
	{ "setting", bridge_setting },
	{ "__gc", bridge_gc },
	{ NULL, NULL },
};

static const luaL_Reg module_functions[] = {
	{ "open", efa_open },
	{ NULL, NULL },
};

__attribute__((visibility("default"))) int luaopen_slurm_efa(lua_State *L);

int luaopen_slurm_efa(lua_State *L)
{
	luaL_newmetatable(L, BRIDGE_META);
	lua_pushvalue(L, -1);
	lua_setfield(L, -2, "__index");
	efa_setfuncs(L, bridge_methods);
	lua_pop(L, 1);
	lua_newtable(L);
	efa_setfuncs(L, module_functions);
	lua_pushstring(L, PACKAGE_VERSION);
	lua_setfield(L, -2, "version");
	return 1;
}
