-- SPDX-License-Identifier: Apache-2.0
--[[
slurm-efa's drop-in job_submit.lua (slurm.conf: JobSubmitPlugins=lua; this
file next to slurm.conf). It applies slurm-efa's submission policy: EFA
jobs in one Availability Zone, checkpoint directories under the partition's
CheckpointRoot, and each partition's EFA= rule (see README.md).

The bridge is found through package.path/package.cpath: install
slurm_efa_bridge.lua and slurm_efa.so where slurmctld's Lua looks, or set
LUA_PATH/LUA_CPATH in slurmctld's environment. A site with its own
job_submit.lua adds the two lines shown in slurm_efa_bridge.lua instead.
--]]

local ok, efa = pcall(require, "slurm_efa_bridge")
if not ok then
	slurm.log_error("efa: cannot load slurm_efa_bridge (%s): jobs are accepted without slurm-efa's checks",
		tostring(efa))
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	if not ok then
		return slurm.SUCCESS
	end
	return efa.job_submit(job_desc, part_list, submit_uid)
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	if not ok then
		return slurm.SUCCESS
	end
	return efa.job_modify(job_desc, job_rec, part_list, modify_uid)
end

return slurm.SUCCESS
