/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A job's nodes and the topology file Slurm reads, as a login host sees
 * them (through scontrol), for the commands that order a job's nodes the
 * way --efa-rank-order=topology does: hostfile and topo --cluster --job.
 */
#ifndef EFA_CLI_JOB_TOPOLOGY_H
#define EFA_CLI_JOB_TOPOLOGY_H

#include <stddef.h>

/*
 * The node list (Slurm's order) of: nodes when given, else job's (from
 * scontrol), else the job this runs in (SLURM_JOB_NODELIST). -1 after
 * printing why.
 */
int cli_job_nodes(const char *job, const char *nodes, char *buf, size_t size);

/*
 * The topology file Slurm reads: beside the slurm.conf scontrol reads,
 * topology.yaml first where the release reads it. -1 after printing why.
 */
int cli_slurm_topology_path(char *buf, size_t size);

#endif
