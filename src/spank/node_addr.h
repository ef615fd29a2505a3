/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The address Slurm itself reaches a node by, asked of the Slurm that
 * loaded the plugin: slurmstepd knows every node of its step, from
 * slurm.conf's NodeAddr= and, for dynamic (slurmd -Z) and cloud nodes,
 * from the addresses slurmctld sent with the launch
 * (add_remote_nodes_to_conf_tbls in slurmstepd). Node names often do not
 * resolve (cloud nodes, Slinky's pods); their addresses do.
 */
#ifndef SPANK_EFA_NODE_ADDR_H
#define SPANK_EFA_NODE_ADDR_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The NodeAddr of node into buf. false when this Slurm does not say (no
 * such node, or a Slurm without slurm_conf_get_address). In slurmstepd's
 * own process only: never in a task's, forked while another thread may
 * hold the configuration's lock.
 */
bool efa_slurm_node_addr(const char *node, char *buf, size_t size);

#endif
