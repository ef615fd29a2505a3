-- SPDX-License-Identifier: Apache-2.0
-- The policy without its rules: the shipped job_submit.lua when
-- slurm_efa_bridge cannot be loaded (a Lua path that moved), or, with
-- "bridge" as the argument, the bridge when its C module cannot (a
-- LUA_CPATH typo). Either fails closed for what the policy covers and lets
-- every other job through. Prints one "NAME RC" line per case, and what
-- the user and the log were told. Run by test/lua/run.sh with a LUA_PATH
-- or LUA_CPATH that misses what is to be missing.
local said, logged = {}, {}
slurm = { SUCCESS = 0, ERROR = -1, log_info = function() end,
	log_error = function(fmt, ...) logged[#logged + 1] = string.format(fmt, ...) end,
	log_user = function(fmt, ...) said[#said + 1] = string.format(fmt, ...) end }
local what = assert(arg[1], "usage: nobridge.lua JOB_SUBMIT_LUA|bridge")
if what == "bridge" then
	local bridge = require("slurm_efa_bridge")
	slurm_job_submit, slurm_job_modify = bridge.job_submit, bridge.job_modify
else
	dofile(what)
end

local parts = { gpu = { flag_default = 0 }, cpu = { flag_default = 1 } }
local function job(t)
	t.spank_job_env_size = t.spank_job_env and #t.spank_job_env + 1 or 0
	t.min_nodes, t.user_name = t.min_nodes or 2, "alice"
	return t
end
local cases = {
	{ "efa_option", slurm_job_submit(job({ partition = "cpu",
		spank_job_env = { [0] = "_SLURM_SPANK_OPTION_efa_efa=required" } }), parts, 1000) },
	{ "rest_option", slurm_job_submit(job({ partition = "cpu",
		environment = { SLURM_SPANK__SLURM_SPANK_OPTION_efa_checkpoint_dir = "/fsx/a" } }), parts, 1000) },
	{ "rank_option", slurm_job_submit(job({ partition = "cpu",
		spank_job_env = { [0] = "_SLURM_SPANK_OPTION_efa_efa_rank_order=topology" } }), parts, 1000) },
	{ "policy_partition", slurm_job_submit(job({ partition = "gpu" }), parts, 1000) },
	{ "policy_in_list", slurm_job_submit(job({ partition = "cpu,gpu" }), parts, 1000) },
	{ "plain_job", slurm_job_submit(job({ partition = "cpu" }), parts, 1000) },
	{ "default_partition", slurm_job_submit(job({}), parts, 1000) },
	{ "modify_time", slurm_job_modify({ min_nodes = 4294967294 }, { partition = "gpu" }, parts, 1000) },
	{ "modify_to_gpu", slurm_job_modify({ partition = "gpu" }, { partition = "cpu" }, parts, 1000) },
}
for _, c in ipairs(cases) do
	print(c[1] .. " " .. tostring(c[2]))
end
print("user: " .. (said[1] or ""))
print("log: " .. (logged[1] or ""))
print("log: " .. (logged[2] or ""))
