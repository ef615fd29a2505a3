/* SPDX-License-Identifier: Apache-2.0 */
#include <dlfcn.h>
#include <stdio.h>

#include "node_addr.h"

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
