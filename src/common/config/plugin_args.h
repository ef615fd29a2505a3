/* SPDX-License-Identifier: Apache-2.0 */
/* Arguments of the plugstack.conf line: config=FILE root=DIR (both may
 * hold %n, the node's name). */
#ifndef EFA_PLUGIN_ARGS_H
#define EFA_PLUGIN_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"

struct efa_config;

struct efa_args {
	const char *config;	/* NULL: the usual search (see config.h) */
	const char *root;	/* prefix for /sys, /proc, /dev, /opt; "/" */
};

/*
 * Parses argv into args (pointing into argv). Every argument is looked
 * at: the last error, if any, is in err and -1 returned, with the good
 * arguments still applied.
 */
int efa_args_parse(int argc, char **argv, struct efa_args *args,
		   struct efa_error *err);

/*
 * Whether a node name can stand in a path (root=/fixtures/%n): not empty,
 * not "." or "..", no '/' and no control characters. The name slurmstepd
 * sees comes from the job's environment, which its user controls.
 */
bool efa_node_name_safe(const char *name);

/*
 * The Slurm node name inside slurmstepd before any task exists, from
 * SLURM_TOPOLOGY_ADDR ("s1.s2.n1") and SLURM_TOPOLOGY_ADDR_PATTERN
 * ("switch.switch.node"): what follows the switch components, so node
 * names with dots survive. Returns 0, or -1 when addr is missing or the
 * name is not safe in a path (efa_node_name_safe).
 */
int efa_node_name_from_topology(const char *addr, const char *pattern,
				char *buf, size_t size);

/*
 * Expands %n (node name) and %% in a root= or config= argument into buf:
 * one plugstack.conf line for nodes whose files differ. Returns 0, or -1
 * when the result does not fit or the pattern names an unsafe node name.
 */
int efa_expand_node_name(const char *pattern, const char *node_name, char *buf, size_t size);

/*
 * Loads the efa.conf this plugstack.conf line names for node_name: its
 * config= with %n expanded, or the usual search without one. Returns 0
 * with *cfg set (free it with efa_config_free), or -1 with err set.
 */
int efa_args_load_config(const struct efa_args *args, const char *node_name,
			 struct efa_config **cfg, struct efa_error *err);

#endif
