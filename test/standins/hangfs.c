/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A FUSE file system that hangs on demand, standing for an FSx for Lustre
 * (or NFS) mount whose servers stopped answering: while GATE exists, every
 * request but those on its root directory waits (as a hung network file
 * system makes its callers wait); without it, the tree is an empty
 * directory "ckpt" under the root. Root only; for the cluster tests.
 *
 *   hangfs MOUNTPOINT GATE
 *
 * Runs in the foreground until unmounted (fusermount3 -u MOUNTPOINT).
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *gate;

/* A request waits while the gate exists, as a hung server makes it. */
static void wait_gate(void)
{
	while (access(gate, F_OK) == 0)
		usleep(100000);
}

static int hang_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 3;
		return 0;
	}
	wait_gate();
	if (strcmp(path, "/ckpt"))
		return -ENOENT;
	st->st_mode = S_IFDIR | 01777;
	st->st_nlink = 2;
	return 0;
}

static int hang_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	wait_gate();
	memset(sv, 0, sizeof(*sv));
	sv->f_bsize = 4096;
	sv->f_namemax = 255;
	return 0;
}

static int hang_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
			struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	wait_gate();
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	if (!strcmp(path, "/"))
		fill(buf, "ckpt", NULL, 0, 0);
	return 0;
}

static int hang_mkdir(const char *path, mode_t mode)
{
	(void)path;
	(void)mode;
	wait_gate();
	return -EROFS;
}

static const struct fuse_operations ops = {
	.getattr = hang_getattr,
	.statfs = hang_statfs,
	.readdir = hang_readdir,
	.mkdir = hang_mkdir,
};

int main(int argc, char **argv)
{
	char *fargv[] = { argv[0], "-f", "-o", "allow_other", NULL, NULL };

	if (argc != 3) {
		fprintf(stderr, "usage: hangfs MOUNTPOINT GATE\n");
		return 2;
	}
	gate = argv[2];
	fargv[4] = argv[1];
	return fuse_main(5, fargv, &ops, NULL);
}
