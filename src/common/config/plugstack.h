/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spank_efa.so's own plugstack.conf line, found as Slurm finds it, so that
 * the programs Slurm runs on a node (the health check, the enroot hook)
 * read the node's efa.conf and hardware where the plugin does, configured
 * in one place:
 * - slurm.conf: SLURM_CONF when set, else the build's default slurm.conf
 *   when it is there, else slurmd's configless cache
 *   /run/slurm/conf/slurm.conf (read_config.c, _establish_config_source);
 * - its PlugStackConfig=, through its Include lines, else plugstack.conf
 *   beside slurm.conf (get_extra_conf_path);
 * - in that file and the files its include lines name (globs, relative
 *   to the including file's directory: spank.c), the first required or
 *   optional line whose plugin is spank_efa.so.
 * Every file is read bounded (size, lines, include depth) and what cannot
 * be read is said with its file and line.
 */
#ifndef EFA_PLUGSTACK_H
#define EFA_PLUGSTACK_H

#include <limits.h>

#include "common/base/error.h"

#define EFA_PLUGSTACK_ARGS_MAX 32
#define EFA_PLUGSTACK_LINE_MAX 4096
/* The plugin's file name, as it is installed in Slurm's PluginDir. */
#define EFA_PLUGSTACK_PLUGIN "spank_efa.so"
/* Where slurmd keeps a configless cluster's files (slurmd.c, fetch_config.c). */
#define EFA_SLURM_CONF_CACHE "/run/slurm/conf/slurm.conf"

struct efa_plugstack_line {
	char file[PATH_MAX];	/* where the line is */
	int line;
	int argc;
	char *argv[EFA_PLUGSTACK_ARGS_MAX];	/* the plugin's arguments, into text */
	char text[EFA_PLUGSTACK_LINE_MAX];
};

/*
 * The slurm.conf Slurm's commands would read here, into buf: SLURM_CONF,
 * default (the build's) or the configless cache. Returns 0, or -1 with
 * err naming what was looked for.
 */
int efa_slurm_conf_find(const char *default_conf, char *buf, size_t size, struct efa_error *err);

/*
 * spank_efa.so's line in the plugstack of slurm_conf. Returns 0 with out
 * set, or -1 with err saying which file was read and what is missing.
 */
int efa_plugstack_find(const char *slurm_conf, struct efa_plugstack_line *out,
		       struct efa_error *err);

#endif
