/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <sys/stat.h>

#include "container.h"

static struct {
	bool known;
	dev_t dev;
	ino_t ino;
} host_ns;

void efa_container_note_host(void)
{
	struct stat st;

	host_ns.known = !stat("/proc/self/ns/mnt", &st);
	host_ns.dev = st.st_dev;
	host_ns.ino = st.st_ino;
}

bool efa_container_entered(void)
{
	struct stat st;

	if (!host_ns.known || stat("/proc/self/ns/mnt", &st))
		return false;
	return st.st_dev != host_ns.dev || st.st_ino != host_ns.ino;
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
