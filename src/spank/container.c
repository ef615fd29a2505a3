/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <sys/stat.h>

#include "common/env/env.h"
#include "common/node/image.h"
#include "container.h"

void efa_container_note_host(struct efa_step *step)
{
	struct stat st;

	step->host_root.known = !stat("/", &st);
	step->host_root.dev = st.st_dev;
	step->host_root.ino = st.st_ino;
}

/*
 * "/" itself, not the mount namespace: a namespace of the node's own root
 * (job_container/tmpfs, Slurm 26.05's contained SPANK calls) shows the
 * node's software, and a stat of "/" costs a task a path walk of one
 * component, where /proc/self/ns/mnt had procfs look the new process up
 * (some 57 µs of CPU a task on the test machine).
 */
bool efa_container_entered(const struct efa_step *step)
{
	struct stat st;

	if (!step->host_root.known || stat("/", &st))
		return false;
	return st.st_dev != step->host_root.dev || st.st_ino != step->host_root.ino;
}

bool efa_container_image(spank_t sp, char *buf, size_t size)
{
	/*
	 * Slurm looks a remote option up in the step's option cache by its
	 * name alone, whichever plugin registered it, so pyxis's
	 * --container-image is readable here (Slurm 22.05 to 26.05,
	 * spank_option_getopt). pyxis 0.21 and later also take the image from
	 * PYXIS_CONTAINER_IMAGE, and a batch step has the option in its
	 * environment.
	 */
	struct spank_option image = { .name = "container-image", .has_arg = 1 };
	static const char *const vars[] = {
		"PYXIS_CONTAINER_IMAGE",
		"SLURM_SPANK__SLURM_SPANK_OPTION_pyxis_container_image",
	};
	char *arg = NULL;

	if (spank_option_getopt(sp, &image, &arg) == ESPANK_SUCCESS && arg && arg[0]) {
		snprintf(buf, size, "%s", arg);
		return true;
	}
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (spank_getenv(sp, vars[i], buf, (int)size) == ESPANK_SUCCESS && buf[0])
			return true;
	buf[0] = '\0';
	return false;
}

void efa_container_host_mounts(const struct efa_step *step, spank_t sp)
{
	char mounts[EFA_STEP_LIST_MAX];
	spank_err_t rc;

	/* enroot's hook mounts what this names: only what is decided here. */
	spank_unsetenv(sp, EFA_ENV_HOST_MOUNTS_VAR);
	if (!step->env.plan || step->cfg->container_host_libraries != EFA_YES || !step->env.image[0])
		return;
	if (efa_image_host_mounts(step->node, step->root, mounts, sizeof(mounts))) {
		slurm_error("efa: node %s: the node's EFA libraries are too many to mount into containers",
			    step->node_name);
		return;
	}
	rc = spank_setenv(sp, EFA_ENV_HOST_MOUNTS_VAR, mounts, 1);
	if (rc != ESPANK_SUCCESS)
		slurm_error("efa: cannot set %s: %s", EFA_ENV_HOST_MOUNTS_VAR, spank_strerror(rc));
}
