/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Steps in containers started by pyxis. pyxis's task_init enters the
 * container's namespaces, so when spank_efa is listed after pyxis (the
 * supported order) its own task_init runs inside the container, with the
 * image's variables in place, and reads the image's software from "/".
 */
#ifndef SPANK_EFA_CONTAINER_H
#define SPANK_EFA_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>

#include <slurm/spank.h>

#include "step.h"

/* In init_post_opt: remembers slurmstepd's own root directory, the node's. */
void efa_container_note_host(struct efa_step *step);

/* In task_init: whether the task's root directory is no longer the
 * node's: a plugin listed earlier started a container (pyxis joins the
 * mount namespace enroot pivot_root'ed into the image, so "/" is the
 * image's: pyxis_slurmstepd.c, "enroot does a pivot_root"). */
bool efa_container_entered(const struct efa_step *step);

/*
 * The image pyxis was asked to run (--container-image, or
 * PYXIS_CONTAINER_IMAGE in the job's environment), copied into buf;
 * false when the step asked for none. In user_init (efa_task_note_image).
 */
bool efa_container_image(spank_t sp, char *buf, size_t size);

/* In user_init, after efa_task_note_image and before pyxis starts the
 * container: names the node's EFA libraries for enroot's hook when
 * efa.conf says ContainerHostLibraries=yes (EFA_ENV_HOST_MOUNTS_VAR), and
 * nothing else. */
void efa_container_host_mounts(const struct efa_step *step, spank_t sp);

#endif
