/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A job as the submission policy sees it (struct efa_job_request), read
 * from what Slurm's job_submit/lua hands slurm_job_submit and
 * slurm_job_modify: job_desc, part_list and, for a modification, job_rec.
 */
#ifndef EFA_LUA_JOB_REQUEST_H
#define EFA_LUA_JOB_REQUEST_H

#include <lua.h>

#include "common/cluster/policy.h"

/*
 * Fills req from the job_desc at index job (a table or userdata indexed
 * as job_submit/lua's), the part_list at parts and the job_rec at rec (0
 * or a nil there: none). Each field of job_desc is read once: every read
 * is a lookup by name in Slurm's C, and spank_job_env and environment are
 * built anew on each. The strings req points to stay on the Lua stack,
 * above its top on entry: the caller keeps them there until it is done
 * with req. Raises a Lua error as an index of job_desc or job_rec does.
 */
void efa_lua_job_request(lua_State *L, int job, int parts, int rec, struct efa_job_request *req);

#endif
