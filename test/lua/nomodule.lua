-- SPDX-License-Identifier: Apache-2.0
-- The bridge without its C module: prints what slurm_job_submit returned,
-- which OnSnapshotMissing= decides.
slurm = { SUCCESS = 0, ERROR = -1, log_info = function() end,
	log_error = function(fmt, ...) io.stderr:write(string.format(fmt, ...) .. "\n") end,
	log_user = function() end }
local bridge = require("slurm_efa_bridge")
print(bridge.job_submit({ partition = "gpu", min_nodes = 2, spank_job_env_size = 0 }, {}, 1000))
