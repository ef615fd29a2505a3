/* SPDX-License-Identifier: Apache-2.0 */
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/base/dir.h"

/* The kernel's directory entry (getdents64(2)); glibc declares no
 * wrapper before 2.30. */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

int efa_dir_each(int fd, int (*fn)(const char *name, void *arg), void *arg)
{
	char buf[4096] __attribute__((aligned(8)));
	long got;

	while ((got = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long at = 0; at < got;) {
			const struct linux_dirent64 *de = (const void *)(buf + at);
			const char *name = de->d_name;
			int rc;

			at += de->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if ((rc = fn(name, arg)))
				return rc;
		}
	}
	return got < 0 ? -1 : 0;
}
