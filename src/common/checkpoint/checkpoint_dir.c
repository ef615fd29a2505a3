/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/checkpoint/checkpoint.h"
#include "common/checkpoint/checkpoint_dir.h"

static const struct {
	uint32_t magic;
	const char *name;
} fs_names[] = {
	{ EFA_LUSTRE_SUPER_MAGIC, "lustre" },
	{ 0xEF53, "ext4" },
	{ 0x58465342, "xfs" },
	{ 0x01021994, "tmpfs" },
	{ 0x858458f6, "ramfs" },
	{ 0x794c7630, "overlay" },
	{ 0x6969, "nfs" },
	{ 0xFF534D42, "cifs" },
	{ 0xFE534D42, "smb2" },
	{ 0x9123683E, "btrfs" },
	{ 0x2fc12fc1, "zfs" },
	{ 0x65735546, "fuse" },
	{ 0x00c36400, "ceph" },
	{ 0x47504653, "gpfs" },
	{ 0x19830326, "beegfs" },
	{ 0x73717368, "squashfs" },
	{ 0x0187, "autofs" },
};

const char *efa_fs_name(unsigned long magic)
{
	for (size_t i = 0; i < sizeof(fs_names) / sizeof(fs_names[0]); i++)
		if (fs_names[i].magic == (uint32_t)magic)
			return fs_names[i].name;
	return NULL;
}

int efa_checkpoint_fs_check(const char *root, enum efa_ckpt_fs fs, efa_statfs_fn fs_stat,
			    struct efa_error *err)
{
	struct statfs st;
	unsigned long magic;
	const char *name;

	if (fs != EFA_CKPT_FS_LUSTRE)
		return 0;
	if ((fs_stat ? fs_stat : statfs)(root, &st))
		return efa_error_set(err, "cannot check the file system of checkpoint root %s: %s: is it mounted?",
				     root, strerror(errno));
	magic = (uint32_t)st.f_type;
	if (magic == EFA_LUSTRE_SUPER_MAGIC)
		return 0;
	name = efa_fs_name(magic);
	if (name)
		return efa_error_set(err, "checkpoint root %s is on %s, not Lustre (CheckpointFS=lustre): is FSx for Lustre mounted there?",
				     root, name);
	return efa_error_set(err, "checkpoint root %s is on a file system with magic 0x%lx, not Lustre (CheckpointFS=lustre): is FSx for Lustre mounted there?",
			     root, magic);
}

/*
 * What is wrong with a component that openat(O_DIRECTORY|O_NOFOLLOW)
 * refused: a link and a plain file both give ENOTDIR. root is NULL for
 * a component below the root.
 */
static int open_error(int dirfd, const char *name, const char *dir, size_t len,
		      const char *root, int errnum, struct efa_error *err)
{
	struct stat st;

	if (errnum == ENOENT && root)
		return efa_error_set(err, "%.*s does not exist on this node: is the file system of checkpoint root %s mounted?",
				     (int)len, dir, root);
	if (errnum == ENOTDIR && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISLNK(st.st_mode))
			return efa_error_set(err, "%.*s is a symbolic link: checkpoint paths may not contain links; use the real path, or remove the link",
					     (int)len, dir);
		return efa_error_set(err, "%.*s exists and is not a directory", (int)len, dir);
	}
	return efa_error_set(err, "cannot open %.*s: %s", (int)len, dir, strerror(errnum));
}

/*
 * Someone else's directory is safe on the path only when they cannot
 * swap what is inside it: root's, and not writable by all unless
 * sticky. Group-writable directories are a site's deliberate sharing.
 */
static int check_dir(int fd, const char *dir, size_t len, uid_t uid, bool last,
		     struct efa_error *err)
{
	struct stat st;

	if (fstat(fd, &st))
		return efa_error_set(err, "cannot stat %.*s: %s", (int)len, dir, strerror(errno));
	if (st.st_uid == uid)
		return 0;
	if (last)
		return efa_error_set(err, "%.*s is owned by uid %u, not by the job's user (uid %u): a job's checkpoint directory must be its own; remove it or use another --checkpoint-dir",
				     (int)len, dir, (unsigned)st.st_uid, (unsigned)uid);
	if (st.st_uid != 0)
		return efa_error_set(err, "%.*s is owned by uid %u, neither root nor the job's user (uid %u): only they may own directories on a checkpoint path",
				     (int)len, dir, (unsigned)st.st_uid, (unsigned)uid);
	if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
		return efa_error_set(err, "%.*s is writable by every user without the sticky bit: anyone could replace what is inside; chmod +t it",
				     (int)len, dir);
	return 0;
}

/* The next component of dir at *p; advances *p past it. */
static int next_name(const char **p, char *name, struct efa_error *err)
{
	const char *end = strchrnul(*p, '/');
	size_t n = (size_t)(end - *p);

	if (n > NAME_MAX)
		return efa_error_set(err, "a component of the checkpoint path is longer than %d bytes",
				     NAME_MAX);
	memcpy(name, *p, n);
	name[n] = '\0';
	*p = *end ? end + 1 : end;
	return 0;
}

int efa_checkpoint_open(const char *root, const char *dir, uid_t uid, bool create,
			mode_t mode, struct efa_error *err)
{
	size_t root_len;
	const char *p = dir + 1;
	int fd;

	if (!root)
		root = "/";
	if (dir[0] != '/' || !efa_path_under(root, dir))
		return efa_error_set(err, "%s is not under the checkpoint root %s", dir, root);
	root_len = strlen(root);
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return efa_error_set(err, "cannot open /: %s", strerror(errno));
	if (check_dir(fd, "/", 1, uid, !dir[1], err))
		goto fail;
	while (*p) {
		char name[NAME_MAX + 1];
		size_t len;
		bool in_root, made = false;
		int next;

		if (next_name(&p, name, err))
			goto fail;
		len = (size_t)(p - dir) - (*p ? 1 : 0);
		in_root = len <= root_len;
		if (create && !in_root) {
			made = !mkdirat(fd, name, mode);
			if (!made && errno != EEXIST) {
				efa_error_set(err, "cannot create %.*s: %s", (int)len, dir, strerror(errno));
				goto fail;
			}
		}
		next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			open_error(fd, name, dir, len, in_root ? root : NULL, errno, err);
			goto fail;
		}
		close(fd);
		fd = next;
		if (check_dir(fd, dir, len, uid, !*p, err))
			goto fail;
		if (made && fchmod(fd, mode)) {
			efa_error_set(err, "cannot set mode %04o on %.*s: %s", (unsigned)mode, (int)len,
				      dir, strerror(errno));
			goto fail;
		}
	}
	return fd;
fail:
	close(fd);
	return -1;
}
