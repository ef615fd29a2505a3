/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/node/image.h"
#include "common/node/stack.h"

int efa_image_stack(const struct efa_sysfs *image, const struct efa_stack *node,
		    struct efa_stack *out)
{
	if (efa_stack_discover_software(image, out))
		goto fail;
	/* Version conditions on the kernel are about the node's: an image
	 * has none of its own. */
	if (node->kernel && !(out->kernel = strdup(node->kernel)))
		goto fail;
	return 0;
fail:
	efa_stack_clear(out);
	return -1;
}

bool efa_task_finds(const struct efa_stack *stack, const struct efa_sysfs *fs,
		    const char *ld_path, enum efa_lib lib)
{
	char dir[4096];

	if (lib == EFA_LIB_FABRIC ? stack->has_libfabric : stack->has_net_plugin)
		return true;
	/* Without memory to look (-1), nothing is said to be missing. */
	return efa_libpath_find(fs, ld_path, NULL, lib, dir, sizeof(dir)) ||
	       efa_ldcache_has(fs, lib);
}

bool efa_node_has_gpus(const struct efa_node *node)
{
	for (size_t i = 0; i < node->naccels; i++)
		if (node->accels[i].kind == EFA_ACCEL_GPU && node->accels[i].present)
			return true;
	return false;
}

/* Whether one of the node's usable EFA devices is under fs's /dev; *n counts them. */
static bool devices_visible(const struct efa_node *node, const struct efa_sysfs *fs, size_t *n)
{
	*n = 0;
	for (size_t i = 0; i < node->nnics; i++) {
		if (!node->nics[i].usable)
			continue;
		(*n)++;
		if (efa_sysfs_exists(fs, "/dev/infiniband/uverbs%d", node->nics[i].uverbs))
			return true;
	}
	return false;
}

void efa_task_missing(const struct efa_node *node, const struct efa_sysfs *fs,
		      const char *ld_path, unsigned checks, char *buf, size_t size)
{
	size_t n;

	buf[0] = '\0';
	if ((checks & EFA_CHECK_LIBFABRIC) && !efa_task_finds(&node->stack, fs, ld_path, EFA_LIB_FABRIC))
		efa_strlcatf(buf, size, "no %s (looked in /opt/amazon/efa, LD_LIBRARY_PATH and /etc/ld.so.cache)",
			     efa_lib_name(EFA_LIB_FABRIC));
	if (efa_node_has_gpus(node) && !efa_task_finds(&node->stack, fs, ld_path, EFA_LIB_NET_PLUGIN))
		efa_strlcatf(buf, size, "%sno %s (looked in /opt/amazon/ofi-nccl, /opt/amazon/aws-ofi-nccl, /opt/aws-ofi-nccl, LD_LIBRARY_PATH and /etc/ld.so.cache)",
			     buf[0] ? "; " : "", efa_lib_name(EFA_LIB_NET_PLUGIN));
	if ((checks & EFA_CHECK_DEVICES) && !devices_visible(node, fs, &n))
		efa_strlcatf(buf, size, "%snone of the node's %zu EFA devices in its /dev/infiniband (enroot's ENROOT_RESTRICT_DEV=y hides them)",
			     buf[0] ? "; " : "", n);
}

static int add_mount(const char *root, const char *path, char *buf, size_t size)
{
	size_t rlen = strlen(root);

	while (rlen && root[rlen - 1] == '/')
		rlen--;
	if (strpbrk(path, ":,") || strpbrk(root, ":,"))
		return 0;
	return efa_strlcatf(buf, size, "%s%.*s%s:%s", buf[0] ? "," : "", (int)rlen, root, path, path);
}

int efa_image_host_mounts(const struct efa_node *node, const char *root, char *buf, size_t size)
{
	buf[0] = '\0';
	for (char **d = node->stack.libdirs; d && *d; d++)
		if (add_mount(root, *d, buf, size))
			return -1;
	if (node->stack.installer &&
	    add_mount(root, efa_stack_record, buf, size))
		return -1;
	return 0;
}
