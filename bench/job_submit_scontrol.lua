-- SPDX-License-Identifier: Apache-2.0
--[[
bench/run's model of what sites write instead of slurm-efa's bridge: a
job_submit.lua that asks slurmctld for the nodes (scontrol show nodes,
through io.popen) to keep a multi-node job in one Availability Zone.
Sites do write this, and it cannot work: slurmctld holds its locks while
job_submit runs, so scontrol waits for the daemon that waits for it, and
on Slurm 22.05 every submission times out.
--]]

local NO_VAL = 4294967294

-- Usable nodes per zone feature ("az-...") in the partition.
local function zones_of(partition)
	local zones = {}
	local p = io.popen("scontrol show nodes -o 2>/dev/null")
	if not p then
		return zones
	end
	for line in p:lines() do
		local parts = "," .. (line:match("Partitions=(%S+)") or "") .. ","
		local features = line:match("ActiveFeatures=(%S+)") or ""
		local state = line:match("State=(%S+)") or ""
		local zone = ("," .. features):match(",(az%-[^,]+)")
		if zone and parts:find("," .. partition .. ",", 1, true) and
			not state:find("DRAIN") and not state:find("DOWN") then
			zones[zone] = (zones[zone] or 0) + 1
		end
	end
	p:close()
	return zones
end

function slurm_job_submit(job_desc, part_list, submit_uid)
	local want = job_desc.min_nodes
	if type(want) ~= "number" or want >= NO_VAL or want < 2 then
		return slurm.SUCCESS
	end
	slurm.log_info("bench: job_submit_scontrol.lua: scontrol show nodes for a %d-node job", want)
	local eligible = {}
	for zone, usable in pairs(zones_of(job_desc.partition or "gpu")) do
		if usable >= want then
			table.insert(eligible, zone)
		end
	end
	if #eligible == 0 then
		slurm.log_user("no Availability Zone has %d usable nodes", want)
		return slurm.ERROR
	end
	table.sort(eligible)
	job_desc.features = "[" .. table.concat(eligible, "|") .. "]"
	return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
	return slurm.SUCCESS
end

return slurm.SUCCESS
