-- SPDX-License-Identifier: Apache-2.0
--[[
slurm-efa's job_submit bridge: the Lua side. It hands what job_submit/lua
gives it (job_desc, part_list, job_rec) to the C module slurm_efa, which
reads the job (its SPANK options in spank_job_env or, for slurmrestd jobs,
in the job's environment) and decides, and applies the decision. All rules
live in C (src/common/cluster/policy.c).

Use it from a site's existing job_submit.lua with two lines:

    local efa = require("slurm_efa_bridge")
    -- first thing in slurm_job_submit():
    local rc = efa.job_submit(job_desc, part_list, submit_uid); if rc ~= slurm.SUCCESS then return rc end

(and efa.job_modify(job_desc, job_rec, part_list, modify_uid) likewise in
slurm_job_modify). Nothing here may fail open by accident: without its C
module the bridge refuses the jobs its policy covers (as job_submit.lua
does without the bridge); any other error is logged and then handled as
OnSnapshotMissing= says (accept or reject).
--]]

local M = {}

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

-- A Key=Value line as efa.conf's C parser reads it (src/common/config,
-- after Slurm's parse_config.c): blanks around '=' (Key = Value,
-- Key =Value) are allowed; a blank after '=' alone (Key= Other=x) leaves
-- Key empty. Made plain "Key=Value" here, for the patterns below.
local function plain_key_values(line)
	return (line:gsub("#.*", ""):gsub("(%w)%s+=%s*", "%1="))
end
M.plain_key_values = plain_key_values

-- OnSnapshotMissing= as the C module read it; nil when it cannot (no
-- module, an efa.conf it refuses).
local function on_missing()
	if not bridge then
		return nil
	end
	local ok, v = pcall(bridge.setting, bridge, "on_snapshot_missing")
	return ok and v or nil
end

local function count(v)
	if type(v) ~= "number" or v >= NOT_SET then
		return nil
	end
	return v
end

-- What a refused update returns: slurm_errno.h's
-- ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE (2015 in 22.05 to 26.05), so
-- that scontrol says "Requested partition configuration not available now"
-- where a bare error read as "No such file or directory": before 23.02 a
-- log_user in slurm_job_modify never reaches the user (SchedMD bug 14539).
local REFUSED_UPDATE = 2015

-- job_rec is the job an update changes, nil at submission.
local function refuse(message, job_rec)
	slurm.log_user("%s", message)
	return job_rec and REFUSED_UPDATE or slurm.ERROR
end

-- Without the C module: the partitions that efa.conf gives a policy
-- (EFA=required|optional, SingleZone=yes, a CheckpointRoot=, Resume=N).
-- job_submit.lua keeps the same rules for when this file cannot load;
-- test/lua/run.sh holds the two to the same verdicts.
local function policy_partitions()
	local names = {}
	local f = io.open(os.getenv("SLURM_EFA_CONF") or "/etc/slurm/efa.conf", "r")
	if not f then
		return names
	end
	for line in f:lines() do
		line = plain_key_values(line)
		local name = line:match("^%s*[Pp]artition[Nn]ame=(%S+)")
		local lower = line:lower()
		if name and (lower:match("%sefa=required") or lower:match("%sefa=optional") or
			lower:match("%ssinglezone=yes") or lower:match("%scheckpointroot=%S") or
			lower:match("%sresume=[1-9]")) then
			names[name] = true
		end
	end
	f:close()
	return names
end

-- Whether the job gives any of slurm-efa's options (sbatch/salloc/srun
-- carry them in spank_job_env, slurmrestd in the job's environment).
local function asks_for_efa(job_desc)
	local env = job_desc.spank_job_env
	if type(env) == "table" then
		for i = 0, (job_desc.spank_job_env_size or 0) - 1 do
			local entry = env[i]
			if entry and entry:match("^_SLURM_SPANK_OPTION_efa_") then
				return true
			end
		end
	end
	local environment = job_desc.environment
	if environment then
		for _, name in ipairs({ "efa", "efa_bind", "checkpoint_dir", "checkpoint_keep", "efa_resume", "efa_rank_order" }) do
			local found, value = pcall(function()
				return environment["SLURM_SPANK__SLURM_SPANK_OPTION_efa_" .. name]
			end)
			if found and value then
				return true
			end
		end
	end
	return false
end

local function default_partition(part_list)
	for name, part in pairs(part_list or {}) do
		if part.flag_default == 1 or part.flag_default == true then
			return name
		end
	end
	return nil
end

-- The C module did not load: the rules cannot be applied, so a job they
-- would judge (one that asks for slurm-efa, or goes to a partition with a
-- policy) is refused whatever OnSnapshotMissing= says (that key is about a
-- late snapshot, not a broken install); every other job goes through.
local told_problem
local function fail_closed(job_desc, part_list, job_rec, problem)
	local partitions = job_desc.partition or (job_rec and job_rec.partition) or default_partition(part_list)
	local reason
	if asks_for_efa(job_desc) then
		reason = "it asks for slurm-efa (--efa, --checkpoint-dir, ...)"
	else
		local policy = policy_partitions()
		for name in tostring(partitions or ""):gmatch("[^,]+") do
			if policy[name] then
				reason = "partition " .. name .. " has a slurm-efa policy"
				break
			end
		end
	end
	if not reason then
		if problem ~= told_problem then	-- once, not for every job
			told_problem = problem
			log_error("%s: refusing the jobs the policy covers, accepting the others", problem)
		end
		return slurm.SUCCESS
	end
	log_error("refused a job of %s: %s, and %s",
		tostring(job_desc.user_name or (job_rec and job_rec.user_name)), reason, problem)
	return refuse("efa: this job cannot be checked now: " .. reason ..
		", and slurm-efa's submission policy is not loaded on this cluster. Contact your cluster admin (slurmctld's log says what failed)",
		job_rec)
end

-- The bridge could not decide: OnSnapshotMissing= says what happens, or,
-- where the C module cannot read efa.conf to say, the rules read plainly.
local function undecided(problem, job_desc, part_list, job_rec)
	local setting = on_missing()
	if not setting then
		return fail_closed(job_desc, part_list, job_rec, problem)
	end
	if setting == "reject" then
		log_error("%s; rejecting (OnSnapshotMissing=reject)", problem)
		return refuse("efa: the submission policy could not be checked (" .. problem ..
			"). Retry in a minute; cluster admins: check slurmctld's log and slurm-efa sync", job_rec)
	end
	log_error("%s; accepting without checks (OnSnapshotMissing=accept)", problem)
	return slurm.SUCCESS
end

-- The rules' verdict on the job (read in C, once per field: every read of
-- job_desc is a lookup by name in job_submit/lua), applied to job_desc.
local function apply(job_desc, part_list, job_rec)
	if not bridge then
		return fail_closed(job_desc, part_list, job_rec, "the slurm_efa Lua module did not load (" ..
			tostring(efa):gsub("\n%s*", "; ") .. "): check package.cpath / LUA_CPATH of slurmctld")
	end
	local verdict, result, log, note, detail, who = bridge:decide(job_desc, part_list, job_rec)
	if note then
		log_info("%s", note)
	end
	if log then
		log_info("job of %s: %s", who, log)
	end
	if detail then
		log_debug_text("job of " .. who .. ": " .. detail)
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
		-- Only at submission: Slurm checks a modify's admin_comment against the
		-- requesting user after job_submit_g_modify (job_mgr.c, _update_job),
		-- so setting it would refuse a user's harmless update half-applied,
		-- and an admin's would replace the site's whole AdminComment.
		if result.checkpoint_note and not job_rec then
			local note = result.checkpoint_note
			local old = job_desc.admin_comment
			job_desc.admin_comment = old and old ~= "" and (old .. "; " .. note) or note
		end
		return slurm.SUCCESS
	elseif verdict == "reject" then
		log_info("%s job of %s: %s", job_rec and "refused the update of a" or "rejected",
			who, result)
		return refuse(result, job_rec)
	end
	return undecided(tostring(result), job_desc, part_list, job_rec)
end

local function guarded(fn, job_desc, part_list, job_rec)
	local ok, rc = pcall(fn)
	if ok then
		return rc
	end
	return undecided("Lua error in the bridge: " .. tostring(rc), job_desc, part_list, job_rec)
end

function M.job_submit(job_desc, part_list, submit_uid)
	return guarded(function()
		return apply(job_desc, part_list, nil)
	end, job_desc, part_list, nil)
end

-- Only changes to what the rules look at re-apply them; what the change
-- leaves out, the job keeps (job_rec).
function M.job_modify(job_desc, job_rec, part_list, modify_uid)
	return guarded(function()
		if not (job_desc.partition or count(job_desc.min_nodes) or count(job_desc.max_nodes) or
			job_desc.features) then
			return slurm.SUCCESS
		end
		return apply(job_desc, part_list, job_rec)
	end, job_desc, part_list, job_rec)
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
