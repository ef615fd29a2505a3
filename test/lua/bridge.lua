-- SPDX-License-Identifier: Apache-2.0
-- The job_submit bridge under the Lua slurmctld uses, with job_desc as
-- job_submit/lua gives it: spank_job_env 0-indexed with its size, and the
-- environment a proxy that can be indexed but not iterated. TAP output.
-- Run by test/lua/run.sh, which sets SLURM_EFA_CONF, LUA_PATH and LUA_CPATH.

local dir = assert(os.getenv("TEST_DIR"))
local conf = assert(os.getenv("SLURM_EFA_CONF"))
local n, failed = 0, 0
local user_msgs, logs = {}, {}

local function ok(cond, desc)
	n = n + 1
	print((cond and "ok " or "not ok ") .. n .. " - " .. desc)
	if not cond then
		failed = failed + 1
	end
end

local function is(got, want, desc)
	ok(got == want, desc)
	if got ~= want then
		print("#   got: " .. tostring(got))
		print("#   want: " .. tostring(want))
	end
end

local function like(got, pattern, desc)
	ok(type(got) == "string" and got:find(pattern) ~= nil, desc)
	if not (type(got) == "string" and got:find(pattern)) then
		print("#   got: " .. tostring(got))
		print("#   want pattern: " .. pattern)
	end
end

slurm = {
	SUCCESS = 0,
	ERROR = -1,
	log_info = function(fmt, ...) logs[#logs + 1] = string.format(fmt, ...) end,
	log_verbose = function(fmt, ...) logs[#logs + 1] = "verbose: " .. string.format(fmt, ...) end,
	log_error = function(fmt, ...) logs[#logs + 1] = "error: " .. string.format(fmt, ...) end,
	-- what slurm.log_info and friends call: 0 info, 1 verbose, 2 debug...
	log = function(level, text) logs[#logs + 1] = "level " .. level .. ": " .. text end,
	log_user = function(fmt, ...) user_msgs[#user_msgs + 1] = string.format(fmt, ...) end,
}

local function write(path, text)
	local f = assert(io.open(path, "w"))
	f:write(text)
	f:close()
end

local function snapshot(age, zone_b_usable)
	local now = os.time() - age
	local b2 = zone_b_usable >= 2 and "idle" or "idle+drain"
	write(dir .. "/snapshot.json", string.format([[
{"format": 1, "generated": %d, "zone_prefix": "az-", "nodes": [
 {"name": "n1", "feature": "az-us-west-2a", "state": "idle", "usable": true, "partitions": ["gpu", "cpu"]},
 {"name": "n2", "feature": "az-us-west-2a", "state": "mixed", "usable": true, "partitions": ["gpu", "cpu"]},
 {"name": "n3", "feature": "az-us-west-2b", "state": "idle", "usable": true, "partitions": ["gpu"]},
 {"name": "n4", "feature": "az-us-west-2b", "state": "%s", "usable": true, "partitions": ["gpu"]},
 {"name": "n5", "feature": "az-us-west-2b", "state": "idle", "usable": true, "partitions": ["gpu"]}]}
]], now, b2))
end

local function efa_conf(missing, extra)
	write(conf, table.concat({
		"Snapshot=" .. dir .. "/snapshot.json",
		"SnapshotMaxAge=60",
		"OnSnapshotMissing=" .. missing,
		extra or "",
		"PartitionName=gpu SingleZone=yes EFA=required CheckpointRoot=/fsx/ckpt CheckpointFS=any",
		"PartitionName=cpu EFA=off",
	}, "\n") .. "\n")
end

-- job_desc as job_submit/lua shows it: a proxy whose every read is a lookup
-- by name in C (counted in reads), and whose spank_job_env and environment
-- are built anew on each read.
local reads = {}
local function job(fields, spank, env)
	local spank_env, size = {}, 0
	for _, entry in ipairs(spank or {}) do
		spank_env[size] = entry
		size = size + 1
	end
	fields.user_name = fields.user_name or "alice"
	return setmetatable({}, {
		__index = function(_, k)
			reads[k] = (reads[k] or 0) + 1
			if k == "spank_job_env" then
				local copy = {}
				for i, entry in pairs(spank_env) do
					copy[i] = entry
				end
				return copy
			elseif k == "spank_job_env_size" then
				return size
			elseif k == "environment" then
				return env and setmetatable({}, { __index = function(_, name) return env[name] end,
					__pairs = function() error("environment cannot be iterated") end })
			end
			return fields[k]
		end,
		__newindex = function(_, k, v) fields[k] = v end,
	})
end

local parts = { gpu = { flag_default = 1 }, cpu = { flag_default = 0 } }
local EFA = "_SLURM_SPANK_OPTION_efa_efa="

efa_conf("accept")
snapshot(0, 2)
local bridge = require("slurm_efa_bridge")

-- The most times bridge.job_submit read one field of job_desc.
local function most_reads(j, part_list)
	reads = {}
	bridge.job_submit(j, part_list, 1000)
	local most, field = 0, nil
	for k, n in pairs(reads) do
		if n > most then
			most, field = n, k
		end
	end
	return most, field
end

local j = job({ partition = "gpu", min_nodes = 2, max_nodes = 2, name = "train" }, { EFA .. "(null)" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "sbatch -N2 --efa is accepted")
is(j.features, "[az-us-west-2b|az-us-west-2a]", "  with both zones, the one with more usable nodes first")
is(j.admin_comment, "slurm-efa: checkpoints in /fsx/ckpt/alice/train", "  and its checkpoint directory recorded")
-- Written by hand, the snapshot has no compact form: read from the JSON, said once.
like(logs[1], "^efa: cannot open .*/snapshot%.bin.*; reading .*/snapshot%.json instead",
	"  a snapshot without its compact form is read from the JSON, and the log says why")
like(logs[#logs], "^level 2: efa: job of alice in gpu: constraint '' %-> '%[az%-us%-west%-2b|az%-us%-west%-2a%]'",
	"  the change logged at debug level: routine, not for slurmctld's default log")
is(#logs, 2, "  nothing else logged")
local seen = #logs
bridge.job_submit(job({ partition = "gpu", min_nodes = 2, max_nodes = 2 }), parts, 1000)
local again = false
for i = seen + 1, #logs do
	again = again or logs[i]:find("snapshot.bin", 1, true) ~= nil
end
ok(not again, "  once: the next submission, the snapshot unchanged, says nothing about it")

local most, field = most_reads(job({ partition = "gpu", min_nodes = 2, max_nodes = 2, name = "train", array_inx = "" },
	{ "SLURM_OTHER=1", EFA .. "(null)" }, { PATH = "/usr/bin" }), parts)
is(most, 1, "each field of job_desc is read once (each read is a lookup in slurmctld; read most: " .. tostring(field) .. ")")

j = job({ partition = "gpu", min_nodes = 1, max_nodes = 1 }, { "_SLURM_SPANK_OPTION_efa_checkpoint_dir=/fsx/ckpt/alice/first",
	"_SLURM_SPANK_OPTION_efa_checkpoint_dir=/elsewhere" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "an option given twice in spank_job_env: the first one counts")
is(j.admin_comment, "slurm-efa: checkpoints in /fsx/ckpt/alice/first", "  its directory recorded")
j = job({ partition = "gpu", min_nodes = 1, max_nodes = 1 }, { EFA .. "(null)" },
	{ SLURM_SPANK__SLURM_SPANK_OPTION_efa_checkpoint_dir = "/fsx/ckpt/alice/from-env",
	  SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa = "off" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "an option missing from spank_job_env is taken from the environment")
is(j.admin_comment, "slurm-efa: checkpoints in /fsx/ckpt/alice/from-env", "  its directory recorded")

j = job({ min_nodes = 2, max_nodes = 4, features = "efa", name = "runs/a" }, { EFA .. "required" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "no partition given: the default partition's rules apply")
is(j.features, "efa&[az-us-west-2b|az-us-west-2a]", "  the user's constraint is kept, ANDed with the zones")
is(j.admin_comment, nil, "  a job name that cannot be a directory leaves the path to the node")

j = job({ partition = "gpu", min_nodes = 4, max_nodes = 4 })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "-N4 is refused: no zone has 4 usable nodes")
like(user_msgs[#user_msgs], "the largest, us%-west%-2b, has 3", "  the message names the largest zone and its size")

j = job({ partition = "gpu", min_nodes = 2, max_nodes = 2 }, nil, { SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa = "off" })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "a slurmrestd job with --efa=off in an EFA=required partition is refused")
like(user_msgs[#user_msgs], "partition gpu requires EFA", "  saying why")

j = job({ partition = "cpu", min_nodes = 1, max_nodes = 1 }, { EFA .. "auto" })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "--efa in an EFA=off partition is refused")

j = job({ partition = "free,gpu", min_nodes = 2, max_nodes = 2, name = "listed" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "-p free,gpu is accepted")
is(j.features, "[az-us-west-2b|az-us-west-2a]", "  with gpu's zone constraint, though free comes first")
j = job({ partition = "gpu", min_nodes = 1, max_nodes = 1, name = "sweep", array_inx = "0-3" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "sbatch --array=0-3 is accepted")
is(j.admin_comment, "slurm-efa: checkpoints in /fsx/ckpt/alice/sweep_%a", "  each task's own directory recorded as a pattern")
j = job({ partition = "gpu,cpu", min_nodes = 1, max_nodes = 1 }, { EFA .. "auto" })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "-p gpu,cpu --efa is refused: cpu has no EFA")

j = job({ partition = "gpu", min_nodes = 1, max_nodes = 1 }, { "_SLURM_SPANK_OPTION_efa_checkpoint_dir=/elsewhere/ckpt" })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "--checkpoint-dir outside CheckpointRoot is refused")
like(user_msgs[#user_msgs], "/fsx/ckpt", "  naming the allowed root")
j = job({ partition = "gpu", min_nodes = 1, max_nodes = 1 }, { "_SLURM_SPANK_OPTION_efa_checkpoint_dir=/fsx/ckpt/alice/../alice//run1/" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "a --checkpoint-dir under the root is accepted")
is(j.admin_comment, "slurm-efa: checkpoints in /fsx/ckpt/alice/run1", "  normalized")
is(j.features, nil, "  a one-node job needs no zone constraint")

j = job({ partition = "gpu", min_nodes = 2, features = "az-us-west-2a|az-us-west-2b" })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "a constraint that mixes zones is refused")
like(user_msgs[#user_msgs], "matching OR", "  with the fix")

snapshot(0, 1)
j = job({ partition = "gpu", min_nodes = 3, max_nodes = 3 })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "a changed snapshot is re-read: zone b lost a node")

snapshot(3600, 2)
j = job({ partition = "gpu", min_nodes = 2, max_nodes = 2 })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "a stale snapshot with OnSnapshotMissing=accept: accepted")
is(j.features, nil, "  without a zone constraint")
-- The snapshot's time and the bridge's clock are read a second apart at most.
local age = tonumber((logs[#logs] or ""):match("(%d+) s old"))
local age_logged = age ~= nil and age >= 3600 and age <= 3601
ok(age_logged, "  and logged with its age")
if not age_logged then
	print("#   got: " .. tostring(logs[#logs]))
	print("#   want: 3600 s old (3601 across a second's boundary)")
end
efa_conf("reject")
j = job({ partition = "gpu", min_nodes = 2, max_nodes = 2 })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "OnSnapshotMissing=reject refuses")
like(user_msgs[#user_msgs], "Retry in a minute; cluster admins: check that slurm%-efa sync is running", "  telling user and admin what to do")

write(dir .. "/snapshot.json", "{ broken")
j = job({ partition = "gpu", min_nodes = 2, max_nodes = 2 })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "a corrupt snapshot counts as missing")
like(user_msgs[#user_msgs], "not a snapshot", "  and the message says what is wrong")

efa_conf("accept")
snapshot(0, 2)
write(conf, "Bogus=1\n")
j = job({ partition = "gpu", min_nodes = 2, max_nodes = 2 })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "a broken efa.conf: a job its plain reading gives no policy goes through")
like(logs[#logs], "unknown key 'Bogus'.*refusing the jobs the policy covers", "  and the error is logged")
write(conf, "Bogus=1\nPartitionName=gpu EFA=required\n")
j = job({ partition = "gpu", min_nodes = 2, max_nodes = 2 })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "  one in a partition it gives a policy is refused, OnSnapshotMissing=accept or not")
like(user_msgs[#user_msgs], "partition gpu has a slurm%-efa policy.*Contact your cluster admin", "  saying why")

efa_conf("accept")
j = job({ partition = "cpu" })
local rec = { partition = "cpu", user_name = "alice" }
is(bridge.job_modify(j, rec, parts, 0), slurm.SUCCESS, "job_modify within a partition without rules")
j = { partition = "gpu", min_nodes = 2, max_nodes = 2 }
is(bridge.job_modify(j, rec, parts, 0), slurm.SUCCESS, "job_modify to the gpu partition re-applies the rules")
is(j.features, "[az-us-west-2b|az-us-west-2a]", "  the zone constraint is added")
j = { comment = "x" }
is(bridge.job_modify(j, rec, parts, 0), slurm.SUCCESS, "job_modify of other fields changes nothing")
is(j.features, nil, "  no constraint added")
j = { min_nodes = 2, max_nodes = 2 }
is(bridge.job_modify(j, { partition = "gpu", user_name = "bob", features = "efa" }, parts, 0), slurm.SUCCESS,
	"job_modify of the node count of a job in gpu re-applies gpu's rules")
is(j.features, "efa&[az-us-west-2b|az-us-west-2a]", "  with the partition and constraint the change left as they were")
like(logs[#logs], "^level 2: efa: job of bob in gpu: constraint 'efa'", "  the job named by its user")

-- An update is judged on the job as it will be: the options the job was
-- submitted with (job_rec's spank_job_env) with the partition the update
-- gives, refused as a submission would be, with the code scontrol shows.
local REFUSED_UPDATE = 2015
local OPT = "_SLURM_SPANK_OPTION_efa_"
j = { partition = "gpu" }
is(bridge.job_modify(j, job({ partition = "cpu", min_nodes = 2, max_nodes = 2 }, { OPT .. "efa=off" }),
	parts, 1000), REFUSED_UPDATE, "a pending --efa=off job moved into an EFA=required partition is refused")
like(user_msgs[#user_msgs], "^efa: partition gpu requires EFA %(EFA=required%): remove %-%-efa=off", "  saying why, as at submission")
j = { partition = "gpu" }
is(bridge.job_modify(j, job({ partition = "cpu", min_nodes = 1 }, { OPT .. "checkpoint_dir=/scratch/alice" }),
	parts, 1000), REFUSED_UPDATE, "a job whose --checkpoint-dir lies outside the new partition's CheckpointRoot= is refused")
like(user_msgs[#user_msgs], "/fsx/ckpt", "  naming the root")
j = { partition = "gpu" }
is(bridge.job_modify(j, job({ partition = "cpu", min_nodes = 2, max_nodes = 2 }, { OPT .. "efa=required" }),
	parts, 1000), slurm.SUCCESS, "a --efa job of 2 nodes moved into gpu")
is(j.features, "[az-us-west-2b|az-us-west-2a]", "  gets gpu's zone constraint, its node count taken from the job")
j = { partition = "cpu" }
is(bridge.job_modify(j, job({ partition = "gpu", min_nodes = 2 }, { OPT .. "efa=required" }),
	parts, 1000), REFUSED_UPDATE, "a --efa job moved into an EFA=off partition is refused")
j = { partition = "gpu" }
is(bridge.job_modify(j, job({ partition = "cpu", min_nodes = 2 }, { OPT .. "efa=off" }),
	parts, 0), REFUSED_UPDATE, "  root's update is judged the same")

-- The Lua side's reading of Key=Value lines (for when the C module cannot
-- load) against the C parser's, line for line: blanks around '='.
for _, line in ipairs({ "OnSnapshotMissing=reject", "OnSnapshotMissing = reject", "OnSnapshotMissing =reject",
	"onsnapshotmissing  =  reject  # a comment", "OnSnapshotMissing=accept", "OnSnapshotMissing = accept" }) do
	write(conf, line .. "\n")
	local c = require("slurm_efa").open():setting("on_snapshot_missing")
	local lua_value = bridge.plain_key_values(line):lower():match("onsnapshotmissing=(%a+)")
	is(lua_value, c, "'" .. line .. "': the Lua reading is the C parser's (" .. c .. ")")
end
efa_conf("accept")

-- A path that holds an EFA summary cannot be taken for one: the note
-- writes its '{' and '}' as %7B and %7D.
j = job({ partition = "gpu", min_nodes = 1, max_nodes = 1 },
	{ '_SLURM_SPANK_OPTION_efa_checkpoint_dir=/fsx/ckpt/alice/{"efa":{"steps":[]}}' })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "a --checkpoint-dir holding {\"efa\":...} is accepted")
is(j.admin_comment, 'slurm-efa: checkpoints in /fsx/ckpt/alice/%7B"efa":%7B"steps":[]%7D%7D',
	"  and its note holds no JSON object")

-- A modify never writes admin_comment (Slurm checks it against the
-- requesting user after job_submit_g_modify): the same job submitted gets
-- its checkpoint directory recorded, moved by an update it does not.
j = job({ partition = "gpu", min_nodes = 2, max_nodes = 2, name = "train", efa = "required" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "a gpu job with a job name is accepted")
like(j.admin_comment or "", "^slurm%-efa: checkpoints in /fsx/ckpt/alice/train$", "  at submission its directory is recorded")
j = { partition = "gpu", min_nodes = 2, max_nodes = 2 }
is(bridge.job_modify(j, { partition = "cpu", user_name = "alice", name = "train",
	admin_comment = "site: budget 42" }, parts, 1000), slurm.SUCCESS, "a user's update moving the job to gpu")
is(j.admin_comment, nil, "  leaves admin_comment out of the update: the site's AdminComment stays whole")

-- Auto-resume: Slurm's requeue turned on, expedited where efa.conf says.
local RESUME = "_SLURM_SPANK_OPTION_efa_efa_resume="
local EXPEDITED = 2 ^ 45
j = job({ partition = "cpu", requeue = 0, bitflags = 4 }, { RESUME .. "2" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "sbatch --efa-resume=2 is accepted")
is(j.requeue, 1, "  requeue turned on, over JobRequeue=0's default")
is(j.bitflags, 4, "  not expedited without ResumeExpedite=yes")
j = job({ partition = "cpu", requeue = 0 }, nil, { SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa_resume = "1" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "a slurmrestd job's --efa-resume=1 in its environment")
is(j.requeue, 1, "  requeue turned on")
j = job({ partition = "cpu", requeue = 0 }, { RESUME .. "0" })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "--efa-resume=0 is accepted")
is(j.requeue, 0, "  and leaves requeue alone")
j = job({ partition = "cpu" }, { RESUME .. "lots" })
is(bridge.job_submit(j, parts, 1000), slurm.ERROR, "--efa-resume=lots is refused")
like(user_msgs[#user_msgs], "invalid %-%-efa%-resume value 'lots'", "  with the reason")
efa_conf("accept", "ResumeExpedite=yes\nPartitionName=train Resume=3")
j = job({ partition = "train", requeue = 0, bitflags = 4 })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "a job in a partition with Resume=3")
is(j.requeue, 1, "  is made requeueable")
is(j.bitflags, 4 + EXPEDITED, "  and expedited (EXPEDITED_REQUEUE added to its other flags)")
j = job({ partition = "train", bitflags = EXPEDITED + 1 })
is(bridge.job_submit(j, parts, 1000), slurm.SUCCESS, "a job that asked --requeue=expedite itself")
is(j.bitflags, EXPEDITED + 1, "  keeps its flags as they are")
efa_conf("accept")

-- sbatch's cli_filter: a partition's CheckpointSignal= for EFA batch jobs
-- without a --signal. options as cli_filter/lua gives them: an unset
-- --signal reads "0@0", SPANK options under options.spank[plugin].
local function cli(fields, efa_value)
	local o = fields
	o.type = o.type or "sbatch"
	o.signal = o.signal or "0@0"
	o.spank = { efa = { efa = efa_value } }
	return o
end
local asked = dir .. "/scontrol-asked"
local function scontrol_asked()
	local f = io.open(asked, "r")
	if not f then
		return 0
	end
	local text = f:read("*a")
	f:close()
	os.remove(asked)
	return select(2, text:gsub("\n", ""))
end
efa_conf("accept", table.concat({
	"PartitionName=free CheckpointSignal=TERM@120",
	"PartitionName=train EFA=optional CheckpointSignal=SIGusr2",
}, "\n"))
local o = cli({ partition = "train" })
is(bridge.cli_pre_submit(o, 0), slurm.SUCCESS, "cli_filter: sbatch -p train (EFA=optional) goes on")
is(o.signal, "B:USR2@60", "  with --signal=B:USR2@60 (no @: Slurm's 60 s)")
like(logs[#logs], "^verbose: efa: %-%-signal=B:USR2@60", "  said at sbatch -v")
o = cli({ partition = "train", signal = "B:USR1@30" })
bridge.cli_pre_submit(o, 0)
is(o.signal, "B:USR1@30", "  a job's own --signal is kept")
o = cli({ partition = "train", signal = "USR1" })
bridge.cli_pre_submit(o, 0)
is(o.signal, "USR1", "  also one without B: or time")
o = cli({ partition = "train", type = "srun" })
bridge.cli_pre_submit(o, 0)
is(o.signal, "0@0", "  srun and salloc get none (there is no batch shell)")
o = cli({ partition = "train" })
bridge.cli_pre_submit(o, 1)
is(o.signal, "0@0", "  nor a heterogeneous job's later components")
o = cli({ partition = "train" }, "off")
bridge.cli_pre_submit(o, 0)
is(o.signal, "0@0", "  nor a job with --efa=off")
o = cli({ partition = "free" })
bridge.cli_pre_submit(o, 0)
is(o.signal, "0@0", "a partition without EFA=: a job without --efa gets none")
o = cli({ partition = "free" }, "set")
bridge.cli_pre_submit(o, 0)
is(o.signal, "B:TERM@120", "  one with a bare --efa gets TERM@120")
o = cli({ partition = "cpu,free" }, "auto")
bridge.cli_pre_submit(o, 0)
is(o.signal, "B:TERM@120", "-p cpu,free --efa=auto: free's (cpu gives none)")
is(scontrol_asked(), 0, "  slurmctld is not asked when the job names its partition")
o = cli({}, "set")
bridge.cli_pre_submit(o, 0)
is(o.signal, "B:TERM@120", "no -p: the default partition's (free), asked of slurmctld")
is(scontrol_asked(), 1, "  once")
write(dir .. "/scontrol-fails", "")
local before = #logs
o = cli({}, "set")
is(bridge.cli_pre_submit(o, 0), slurm.SUCCESS, "slurmctld away: the job still goes")
is(o.signal, "0@0", "  without a signal")
like(logs[#logs], "^error: efa: no checkpoint signal set for this job %(cannot ask slurmctld for the default partition: slurm_load_partitions: Unable to contact", "  saying why")
is(#logs, before + 1, "  in one line")
os.remove(dir .. "/scontrol-fails")
scontrol_asked()
efa_conf("accept")
o = cli({}, "set")
bridge.cli_pre_submit(o, 0)
is(o.signal, "0@0", "no CheckpointSignal= anywhere: nothing set")
is(scontrol_asked(), 0, "  and slurmctld is not asked")

-- run.sh adds its own checks and prints the plan.
os.exit(failed == 0 and 0 or 1)
