-- SPDX-License-Identifier: Apache-2.0
--[[
slurm-efa's drop-in job_submit.lua (slurm.conf: JobSubmitPlugins=lua; this
file next to slurm.conf). It applies slurm-efa's submission policy: EFA
jobs in one Availability Zone, checkpoint directories under the partition's
CheckpointRoot, and each partition's EFA= rule (see docs/bridge.md).

The bridge is found through package.path/package.cpath: install
slurm_efa_bridge.lua and slurm_efa.so where slurmctld's Lua looks, or set
LUA_PATH/LUA_CPATH in slurmctld's environment. A site with its own
job_submit.lua adds the two lines shown in slurm_efa_bridge.lua instead.

When the bridge cannot be loaded (a Lua path that moved with an upgrade, a
typo in LUA_CPATH) this file fails closed for what the policy covers: jobs
that give a slurm-efa option, and jobs in a partition that efa.conf gives
a policy, are refused with a message for the user and one for the admin;
every other job goes through. Nothing else here decides: the rules live in
C, behind the bridge.
--]]

local ok, efa = pcall(require, "slurm_efa_bridge")
-- require's answer lists every place it looked, one per line: one line.
local why = not ok and tostring(efa):gsub("\n%s*", "; ") or nil
if not ok then
	slurm.log_error("efa: cannot load slurm_efa_bridge (%s): jobs that ask for slurm-efa or go to a partition with a policy in efa.conf are refused until it loads (check package.path/LUA_PATH of slurmctld)",
		why)
end

-- Without the bridge: the partitions that efa.conf gives a policy
-- (EFA=required|optional, SingleZone=yes, a CheckpointRoot=, Resume=N), read as
-- plainly as Slurm's own Key=Value lines. The bridge keeps the same rules
-- for when its C module cannot load; test/lua/run.sh holds the two to the
-- same verdicts.
local function policy_partitions()
	local names = {}
	local f = io.open(os.getenv("SLURM_EFA_CONF") or "/etc/slurm/efa.conf", "r")
	if not f then
		return names
	end
	for line in f:lines() do
		-- As efa.conf's C parser reads it: blanks around '=' allowed
		-- (the bridge's plain_key_values, which may be what did not load).
		line = line:gsub("#.*", ""):gsub("(%w)%s+=%s*", "%1=")
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

local function refuse_without_bridge(job_desc, part_list, job_rec)
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
		return slurm.SUCCESS
	end
	slurm.log_error("efa: refused a job of %s: %s, and slurm_efa_bridge is not loaded (%s)",
		tostring(job_desc.user_name or (job_rec and job_rec.user_name)), reason, why)
	slurm.log_user("%s", "efa: this job cannot be checked now: " .. reason ..
		", and slurm-efa's submission policy is not loaded on this cluster. Contact your cluster admin (slurmctld's log says what failed)")
	-- An update: ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE, as the bridge
	-- returns (22.05's scontrol shows no log_user of slurm_job_modify).
	return job_rec and 2015 or slurm.ERROR
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	if not ok then
		return refuse_without_bridge(job_desc, part_list, nil)
	end
	return efa.job_submit(job_desc, part_list, submit_uid)
end

-- As the bridge does, only a change to what the policy looks at counts.
local function moves_job(job_desc)
	local NOT_SET = 4294967294
	local function set(v) return type(v) == "number" and v < NOT_SET end
	return job_desc.partition or set(job_desc.min_nodes) or set(job_desc.max_nodes) or
		job_desc.features
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	if not ok then
		if not moves_job(job_desc) then
			return slurm.SUCCESS
		end
		return refuse_without_bridge(job_desc, part_list, job_rec)
	end
	return efa.job_modify(job_desc, job_rec, part_list, modify_uid)
end

return slurm.SUCCESS
