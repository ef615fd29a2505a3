-- SPDX-License-Identifier: Apache-2.0
--[[
slurm-efa's drop-in cli_filter.lua (slurm.conf: CliFilterPlugins=cli_filter/lua;
this file next to slurm.conf on every host users submit from). sbatch runs
it before it sends a job: a batch job that uses EFA in a partition with a
CheckpointSignal= in efa.conf, and gives no --signal of its own, gets
--signal=B:SIG@SECONDS, so that its script can save a checkpoint before
its time limit (see docs/bridge.md).

The bridge is found as job_submit.lua finds it (package.path/package.cpath,
or LUA_PATH/LUA_CPATH). A site with its own cli_filter.lua calls
efa.cli_pre_submit(options, offset) first thing in slurm_cli_pre_submit
instead. It only ever adds a default: when the bridge cannot load, jobs
go as their users wrote them, with one line saying why.
--]]

-- Loaded by the first sbatch that needs it: every srun and salloc runs
-- this file too, and gets no signal.
local ok, efa

function slurm_cli_setup_defaults(options, early)
	return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
	if options.type ~= "sbatch" then
		return slurm.SUCCESS
	end
	if ok == nil then
		ok, efa = pcall(require, "slurm_efa_bridge")
	end
	if not ok then
		local spank = options.spank
		if spank and spank.efa and spank.efa.efa then
			slurm.log_error("efa: cannot load slurm_efa_bridge (%s): no checkpoint signal set for this job",
				tostring(efa):gsub("\n%s*", "; "))
		end
		return slurm.SUCCESS
	end
	return efa.cli_pre_submit(options, offset)
end

function slurm_cli_post_submit(offset, job_id, step_id)
	return slurm.SUCCESS
end
