/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A task in a container image on this node: the image's EFA software,
 * read from the image's root by the same discovery as the node's, with
 * the node's hardware; and what such a task could not reach (libraries
 * its loader would not find, EFA devices its /dev does not show). The
 * same questions are asked of a task on the node itself.
 */
#ifndef EFA_IMAGE_H
#define EFA_IMAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/node/libpath.h"
#include "common/node/node.h"
#include "common/node/sysfs.h"

/* The software under image (a container's "/" from inside it, or an
 * unpacked image), with the node's kernel, into *out (efa_stack_clear). */
int efa_image_stack(const struct efa_sysfs *image, const struct efa_stack *node,
		    struct efa_stack *out);

/*
 * Whether a task whose file system is fs and whose library path is
 * ld_path loads lib: from the stack's directories (slurm-efa puts them
 * first), from ld_path, or through the loader's cache.
 */
bool efa_task_finds(const struct efa_stack *stack, const struct efa_sysfs *fs,
		    const char *ld_path, enum efa_lib lib);

/* Whether the node has NVIDIA GPUs, whose NCCL needs the net plugin. */
bool efa_node_has_gpus(const struct efa_node *node);

/* What efa_task_missing checks beyond the net plugin: on the node itself,
 * its discovery has already seen libfabric's directories and the devices. */
enum efa_task_checks {
	EFA_CHECK_LIBFABRIC = 1,	/* an image's libfabric */
	EFA_CHECK_DEVICES = 2,		/* the node's EFA devices in a container's /dev */
	EFA_CHECK_CONTAINER = EFA_CHECK_LIBFABRIC | EFA_CHECK_DEVICES,
};

/*
 * What such a task of an EFA step lacks, for a message ("" when nothing):
 * on NVIDIA GPUs the net plugin, without which NCCL silently uses its
 * socket transport, and what checks (enum efa_task_checks) asks for:
 * libfabric, and one of the node's usable EFA devices as
 * /dev/infiniband/uverbsN under fs.
 */
void efa_task_missing(const struct efa_node *node, const struct efa_sysfs *fs,
		      const char *ld_path, unsigned checks, char *buf, size_t size);

/*
 * The node's EFA software as bind mounts for containers whose image has
 * none of its own (ContainerHostLibraries=yes; enroot's hook mounts them
 * into an image with no EFA software where this discovery looks for it):
 * "SRC:DST,..." with SRC under root (the node's view; root= in tests), DST
 * the path on the node: the stack's library directories and the
 * installer's record. A path holding ':' or ',' is left out. -1 when they
 * do not fit in size.
 */
int efa_image_host_mounts(const struct efa_node *node, const char *root, char *buf, size_t size);

#endif
