/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container image for `slurm-efa env --image`: an unpacked directory as
 * it is, or a squashfs file (what enroot and pyxis run) of which
 * unsquashfs copies out only what is read (the EFA software's directories,
 * /etc/environment, the loader's cache, the libraries of the image's
 * LD_LIBRARY_PATH) into a private temporary directory. Either is read
 * confined to its root: the image's links cannot lead out of it.
 */
#ifndef EFA_CLI_IMAGE_UNPACK_H
#define EFA_CLI_IMAGE_UNPACK_H

#include "common/base/error.h"
#include "common/node/sysfs.h"

struct cli_image {
	struct efa_sysfs fs;
	char *tmp;	/* the unpacked copy, removed by close; NULL for a directory */
	char **env;	/* /etc/environment's NAME=VALUE lines, as enroot reads them */
};

int cli_image_open(const char *path, struct cli_image *img, struct efa_error *err);
void cli_image_close(struct cli_image *img);

/* The value the image's /etc/environment gives name, or NULL. */
const char *cli_image_getenv(const struct cli_image *img, const char *name);

#endif
