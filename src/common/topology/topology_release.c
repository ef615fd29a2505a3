/* SPDX-License-Identifier: Apache-2.0 */
/* What each Slurm release reads of a topology (topology.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/topology/topology.h"

/* Whether version ("26.05.3") is major.minor or later; false when unknown. */
static bool slurm_at_least(const char *version, unsigned major, unsigned minor)
{
	unsigned ma = 0, mi = 0;

	return version && sscanf(version, "%u.%u", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

bool efa_slurm_takes_empty_blocks(const char *slurm_version)
{
	return slurm_at_least(slurm_version, 26, 5);
}

bool efa_slurm_reads_topology_yaml(const char *slurm_version)
{
	return !slurm_version || slurm_at_least(slurm_version, 25, 5);
}

const char *efa_topology_file_name(const char *slurm_version, bool yaml_exists)
{
	return yaml_exists && efa_slurm_reads_topology_yaml(slurm_version) ? "topology.yaml" :
									      "topology.conf";
}

enum efa_topology_format efa_topology_format_for(enum efa_topology_format configured,
						 const char *path, const char *slurm_version)
{
	size_t len = path ? strlen(path) : 0;

	if (configured != EFA_TOPOLOGY_FORMAT_AUTO)
		return configured;
	if (len > 5 && !strcmp(path + len - 5, ".yaml"))
		return EFA_TOPOLOGY_FORMAT_YAML;
	if (len > 5 && !strcmp(path + len - 5, ".conf"))
		return EFA_TOPOLOGY_FORMAT_CONF;
	return slurm_version && efa_slurm_reads_topology_yaml(slurm_version) ?
	       EFA_TOPOLOGY_FORMAT_YAML : EFA_TOPOLOGY_FORMAT_CONF;
}
