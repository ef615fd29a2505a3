-- SPDX-License-Identifier: Apache-2.0
--[[
slurm-efa's job_submit bridge: the Lua side. It reads what Lua can read of
a job (job_desc, its SPANK options in spank_job_env or, for slurmrestd
jobs, in the job's environment), asks the C module slurm_efa for the
decision, and applies it. All rules live in C (src/common/cluster/policy.c).

Use it from a site's existing job_submit.lua with two lines:

    local efa = require("slurm_efa_bridge")
    -- first thing in slurm_job_submit():
    local rc = efa.job_submit(job_desc, part_list, submit_uid); if rc ~= slurm.SUCCESS then return rc end

(and efa.job_modify(job_desc, job_rec, part_list, modify_uid) likewise in
slurm_job_modify). Nothing here may fail open by accident: any error is
logged and then handled as OnSnapshotMissing= says (accept or reject).
--]]

local M = {}

local OPTION_PREFIX = "_SLURM_SPANK_OPTION_efa_"	-- in spank_job_env (sbatch, salloc, srun)
local ENV_PREFIX = "SLURM_SPANK_" .. OPTION_PREFIX	-- in the job's environment (slurmrestd)
local NOT_SET = 4294967294				-- Slurm's NO_VAL
-- job_desc.bitflags' EXPEDITED_REQUEUE (slurm.h, Slurm 26.05: SLURM_BIT(45),
-- unused by earlier releases). Lua 5.1 has no bit operators: 2^45 is exact
-- in a double, and so is every flag below 2^53.
local EXPEDITED_REQUEUE = 2 ^ 45

local loaded, efa = pcall(require, "slurm_efa")
local bridge = loaded and efa.open() or nil

local function log_info(fmt, ...)
	slurm.log_info("efa: " .. fmt, ...)
end

local function log_error(fmt, ...)
	slurm.log_error("efa: " .. fmt, ...)
end

-- Routine lines, one for every job the bridge changes: Slurm's own
-- slurm.log(level, text) at debug, which drops them unless SlurmctldDebug
-- asks for them, without the string.format of every slurm.log_debug call.
local function log_debug_text(text)
	if slurm.log then
		slurm.log(2, "efa: " .. text)
	else
		slurm.log_debug("efa: %s", text)
	end
end

-- OnSnapshotMissing= read without the C module, for when it cannot load.
local function on_missing_fallback()
	local path = os.getenv("SLURM_EFA_CONF") or "/etc/slurm/efa.conf"
	local f = io.open(path, "r")
	if not f then
		return "accept"
	end
	local value = "accept"
	for line in f:lines() do
		local v = line:gsub("#.*", ""):match("[Oo][Nn][Ss][Nn][Aa][Pp][Ss][Hh][Oo][Tt][Mm][Ii][Ss][Ss][Ii][Nn][Gg]=(%a+)")
		if v then
			value = v:lower()
		end
	end
	f:close()
	return value
end

local function on_missing()
	if bridge then
		local ok, v = pcall(bridge.setting, bridge, "on_snapshot_missing")
		if ok then
			return v
		end
	end
	return on_missing_fallback()
end

-- The SPANK options of ours a job gives, by name, as sbatch carried them
-- (spank_job_env: the lowest index wins) or else slurmrestd (the job's
-- environment). Each field of job_desc is read once: every read is a
-- lookup by name in job_submit/lua, and spank_job_env and environment
-- build a table each time.
local OPTION_NAMES = { "efa", "checkpoint_dir", "efa_resume" }
local OPTION_PATTERN = "^" .. OPTION_PREFIX .. "([%w_]+)=(.*)$"

local function index_env(environment, name)
	return environment[name]
end

local function spank_options(job_desc)
	local found, at = {}, {}
	local env = job_desc.spank_job_env
	if type(env) == "table" then
		for i, entry in pairs(env) do
			local name, value = tostring(entry):match(OPTION_PATTERN)
			if name and (not at[name] or i < at[name]) then
				found[name], at[name] = value, i
			end
		end
	end
	local environment
	for _, name in ipairs(OPTION_NAMES) do
		if not found[name] then
			if environment == nil then
				environment = job_desc.environment or false
			end
			if not environment then
				break
			end
			local ok, value = pcall(index_env, environment, ENV_PREFIX .. name)
			if ok and value then
				found[name] = value
			end
		end
	end
	return found
end

local function default_partition(part_list)
	for name, part in pairs(part_list or {}) do
		if part.flag_default == 1 or part.flag_default == true then
			return name
		end
	end
	return nil
end

local function count(v)
	if type(v) ~= "number" or v >= NOT_SET then
		return nil
	end
	return v
end

local function request(job_desc, part_list, job_rec)
	local options = spank_options(job_desc)
	local array = job_desc.array_inx
	-- A list (sbatch -p free,train) goes whole: the job may run in any
	-- of them, so each one's policy holds.
	local partition = job_desc.partition or (job_rec and job_rec.partition) or default_partition(part_list)
	return {
		partition = partition,
		min_nodes = count(job_desc.min_nodes),
		max_nodes = count(job_desc.max_nodes),
		features = job_desc.features or (job_rec and job_rec.features),
		user = job_desc.user_name,
		job_name = job_desc.name,
		efa = options.efa,
		checkpoint_dir = options.checkpoint_dir,
		resume = options.efa_resume,
		-- sbatch --array: every task gets a directory of its own
		array = array ~= nil and array ~= "",
	}
end

local function refuse(message)
	slurm.log_user("%s", message)
	return slurm.ERROR
end

-- The bridge could not decide: OnSnapshotMissing= says what happens.
local function undecided(problem)
	if on_missing() == "reject" then
		log_error("%s; rejecting (OnSnapshotMissing=reject)", problem)
		return refuse("efa: the submission policy could not be checked (" .. problem ..
			"). Retry in a minute; cluster admins: check slurmctld's log and slurm-efa sync")
	end
	log_error("%s; accepting without checks (OnSnapshotMissing=accept)", problem)
	return slurm.SUCCESS
end

local function apply(job_desc, req)
	if not bridge then
		return undecided("the slurm_efa Lua module did not load (" .. tostring(efa) ..
			"): check package.cpath / LUA_CPATH of slurmctld")
	end
	local verdict, result, log, note, detail = bridge:decide(req)
	if note then
		log_info("%s", note)
	end
	if log then
		log_info("job of %s in %s: %s", tostring(req.user), tostring(req.partition), log)
	end
	if detail then
		log_debug_text("job of " .. tostring(req.user) .. " in " .. tostring(req.partition) .. ": " .. detail)
	end
	if verdict == "accept" then
		return slurm.SUCCESS
	elseif verdict == "change" then
		if result.features then
			job_desc.features = result.features
		end
		if result.requeue then
			-- Slurm's own requeue, also where JobRequeue=0 made it off by default
			job_desc.requeue = 1
			local flags = job_desc.bitflags or 0
			if result.expedite and math.floor(flags / EXPEDITED_REQUEUE) % 2 == 0 then
				job_desc.bitflags = flags + EXPEDITED_REQUEUE
			end
		end
		if result.checkpoint_dir then
			local note = "slurm-efa: checkpoints in " .. result.checkpoint_dir
			local old = job_desc.admin_comment
			job_desc.admin_comment = old and old ~= "" and (old .. "; " .. note) or note
		end
		return slurm.SUCCESS
	elseif verdict == "reject" then
		log_info("rejected job of %s in %s: %s", tostring(req.user), tostring(req.partition), result)
		return refuse(result)
	end
	return undecided(tostring(result))
end

local function guarded(fn)
	local ok, rc = pcall(fn)
	if ok then
		return rc
	end
	return undecided("Lua error in the bridge: " .. tostring(rc))
end

function M.job_submit(job_desc, part_list, submit_uid)
	return guarded(function()
		return apply(job_desc, request(job_desc, part_list, nil))
	end)
end

-- Only changes to what the rules look at re-apply them.
function M.job_modify(job_desc, job_rec, part_list, modify_uid)
	return guarded(function()
		if not (job_desc.partition or count(job_desc.min_nodes) or count(job_desc.max_nodes) or
			job_desc.features) then
			return slurm.SUCCESS
		end
		local req = request(job_desc, part_list, job_rec)
		req.user = req.user or (job_rec and job_rec.user_name)
		return apply(job_desc, req)
	end)
end

-- sbatch's --signal as cli_filter/lua reads it back: unset reads "0@0"
-- (no signal), a set one "B:USR1@300", "USR2" or "R:10@60".
local function gives_signal(value)
	if not value then
		return false
	end
	local signal = value:gsub("^[RrBb]*:", ""):match("^[^@]*")
	return signal ~= "" and signal ~= "0"
end

-- The job's --efa as cli_filter/lua reads it ("set" when bare), or nil.
local function cli_efa_option(options)
	local spank = options.spank
	return spank and spank.efa and spank.efa.efa
end

-- Time to save before the time limit: the partition's CheckpointSignal=
-- for an EFA batch job that gives no --signal of its own, set where sbatch
-- reads its options (lua/cli_filter.lua): Slurm's job_submit/lua cannot
-- set a job's signal. A default, not a policy: when it cannot tell, the
-- job goes as its user wrote it, with one line saying why.
function M.cli_pre_submit(options, offset)
	-- The batch shell is in a heterogeneous job's first component.
	if options.type ~= "sbatch" or (offset or 0) ~= 0 or gives_signal(options.signal) then
		return slurm.SUCCESS
	end
	local ok, signal, why = pcall(function()
		local value = cli_efa_option(options)
		if not bridge then
			if not value then
				return nil	-- none of ours: nothing to say
			end
			error("the slurm_efa Lua module did not load (" .. tostring(efa) .. ")", 0)
		end
		-- A bare --efa reads "set"; the rules take it as sbatch carries it.
		return bridge:checkpoint_signal{
			partition = options.partition,
			efa = value == "set" and "(null)" or value,
		}
	end)
	if not ok or why then
		slurm.log_error("efa: no checkpoint signal set for this job (%s): give --signal yourself if the script saves on one",
			tostring(ok and why or signal))
		return slurm.SUCCESS
	end
	if signal then
		options.signal = signal
		slurm.log_verbose("efa: --signal=%s (the partition's CheckpointSignal= in efa.conf)", signal)
	end
	return slurm.SUCCESS
end

return M
