--[[
slurm-efa job_submit.lua (drop-in for slurmctld's JobSubmitPlugins=lua).

This version accepts every job unchanged: the slurm_efa bridge that
enforces single-zone placement, checkpoint roots and partition EFA policy
is not built yet. Sites can install it now so that upgrading later is a
file replacement, not a slurm.conf change.
--]]

function slurm_job_submit(job_desc, part_list, submit_uid)
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end

return slurm.SUCCESS
