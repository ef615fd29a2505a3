/* SPDX-License-Identifier: Apache-2.0 */
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#include <slurm/slurm_version.h>

#include "common/topology/topology.h"
#include "slurm_conf.h"

/*
 * libslurmfull's slurm_conf_get_address(), in every release from 22.05 to
 * 26.05 (src/common/read_config.c): NodeAddr= for a NodeName, xstrdup'd,
 * freed with slurm_xfree_ptr (xmalloc.c). Looked up at run time, so that a
 * Slurm without it gives no address instead of a plugin that fails to
 * load.
 */
typedef char *(*get_address_fn)(const char *node_name);
typedef void (*xfree_ptr_fn)(void *ptr);

bool efa_slurm_node_addr(const char *node, char *buf, size_t size)
{
	get_address_fn get_address = (get_address_fn)dlsym(RTLD_DEFAULT, "slurm_conf_get_address");
	xfree_ptr_fn xfree_ptr = (xfree_ptr_fn)dlsym(RTLD_DEFAULT, "slurm_xfree_ptr");
	char *addr;
	bool found;

	if (!get_address || !xfree_ptr || !node || !node[0])
		return false;
	addr = get_address(node);
	found = addr && addr[0] && snprintf(buf, size, "%s", addr) < (int)size;
	xfree_ptr(addr);
	return found;
}

/*
 * libslurmfull's get_extra_conf_path() under its exported alias, in every
 * release from 22.05 to 26.05 (read_config.c): the path of a file named
 * relative to slurm.conf, xstrdup'd.
 */
typedef char *(*extra_conf_path_fn)(const char *conf_name);

static bool extra_conf_path(const char *name, char *buf, size_t size)
{
	extra_conf_path_fn get_path =
		(extra_conf_path_fn)dlsym(RTLD_DEFAULT, "slurm_get_extra_conf_path");
	xfree_ptr_fn xfree_ptr = (xfree_ptr_fn)dlsym(RTLD_DEFAULT, "slurm_xfree_ptr");
	char *path;
	bool found;

	if (!get_path || !xfree_ptr)
		return false;
	path = get_path(name);
	found = path && path[0] && snprintf(buf, size, "%s", path) < (int)size;
	xfree_ptr(path);
	return found;
}

bool efa_slurm_topology_path(char *buf, size_t size)
{
	/* The release the plugin was built for, which is the one running it:
	 * Slurm loads only plugins of its own version. */
	char version[32];
	bool yaml;

	snprintf(version, sizeof(version), "%u.%u", SLURM_VERSION_MAJOR(SLURM_VERSION_NUMBER),
		 SLURM_VERSION_MINOR(SLURM_VERSION_NUMBER));
	yaml = extra_conf_path("topology.yaml", buf, size) && !access(buf, F_OK);

	return extra_conf_path(efa_topology_file_name(version, yaml), buf, size);
}
