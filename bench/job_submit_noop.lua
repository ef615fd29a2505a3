-- SPDX-License-Identifier: Apache-2.0
--[[
bench/run's baseline job_submit.lua: accepts every job unchanged, so a
submission costs what job_submit/lua itself costs and nothing more.
--]]

local function accept()
	return slurm.SUCCESS
end

slurm_job_submit = accept
slurm_job_modify = accept

return slurm.SUCCESS
