/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the Slurm that loaded the plugin knows of its own configuration,
 * asked of it in slurmstepd: the address it reaches a node by, and where
 * its topology file is.
 */
#ifndef SPANK_EFA_SLURM_CONF_H
#define SPANK_EFA_SLURM_CONF_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The NodeAddr of node into buf: slurmstepd knows every node of its step,
 * from slurm.conf's NodeAddr= and, for dynamic (slurmd -Z) and cloud
 * nodes, from the addresses slurmctld sent with the launch
 * (add_remote_nodes_to_conf_tbls in slurmstepd). Node names often do not
 * resolve (cloud nodes, Slinky's pods); their addresses do. false when
 * this Slurm does not say (no such node, or a Slurm without
 * slurm_conf_get_address). In slurmstepd's own process only: never in a
 * task's, forked while another thread may hold the configuration's lock.
 */
bool efa_slurm_node_addr(const char *node, char *buf, size_t size);

/*
 * The topology file this Slurm reads (topology.yaml or topology.conf,
 * topology.h) where it reads it: beside slurm.conf, or in slurmd's cache
 * of a configless cluster (get_extra_conf_path, read_config.c). false
 * when this Slurm does not say.
 */
bool efa_slurm_topology_path(char *buf, size_t size);

#endif
