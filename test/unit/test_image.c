/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container image's EFA software read with the node's discovery:
 * library lookups on a library path and in the loader's cache, reads
 * confined to the image's root, and what a task in it lacks.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/node/image.h"
#include "common/node/libpath.h"
#include "common/node/stack.h"
#include "tap.h"
#include "tmpdir.h"

static int write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, len);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static int mkdirs(const char *rel)
{
	char cmd[4200];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", tmp_at(rel));
	return system(cmd);
}

static void test_names(void)
{
	ok(efa_lib_file("libfabric.so.1", EFA_LIB_FABRIC), "libfabric.so.1 is libfabric");
	ok(!efa_lib_file("libfabric-cuda.a", EFA_LIB_FABRIC), "a static archive is not");
	ok(efa_lib_file("libnccl-net-ofi.so", EFA_LIB_NET_PLUGIN), "libnccl-net-ofi.so is the plugin");
	ok(efa_lib_file("libnccl-net.so.0", EFA_LIB_NET_PLUGIN), "libnccl-net.so.0 too");
	ok(!efa_lib_file("libnccl.so.2", EFA_LIB_NET_PLUGIN), "NCCL itself is not");
	ok(efa_list_has("/a:/b/c:/d", ':', "/b/c", 4), "an entry of a list is found");
	ok(!efa_list_has("/a:/b/cd", ':', "/b/c", 4), "a prefix of an entry is not");
}

static void test_libpath(void)
{
	struct efa_sysfs fs;
	char dir[4096], *path;
	size_t len = 0;

	tmp_setup(mkdirs("lp/empty") || mkdirs("lp/plugin") || mkdirs("lp/fabric") ||
		  write_file(tmp_at("lp/plugin/libnccl-net-ofi.so"), "", 0) ||
		  write_file(tmp_at("lp/fabric/libfabric.so.1"), "", 0),
		  "library directories");
	require(ok(efa_sysfs_open(&fs, tmp_at("lp")) == 0, "root opened"));
	dir[0] = '\0';
	ok(efa_libpath_find(&fs, "relative:/empty:/plugin", NULL, EFA_LIB_NET_PLUGIN, dir, sizeof(dir)),
	   "the plugin's directory is found on a path");
	is_str(dir, "/plugin", "  the first that has it, relative entries left out");
	ok(!efa_libpath_find(&fs, "/empty:/plugin", "/plugin", EFA_LIB_NET_PLUGIN, dir, sizeof(dir)),
	   "an entry in skip is not looked at");
	ok(!efa_libpath_find(&fs, "/plugin", NULL, EFA_LIB_FABRIC, dir, sizeof(dir)),
	   "libfabric is not the plugin");
	ok(!efa_libpath_find(&fs, "", NULL, EFA_LIB_FABRIC, dir, sizeof(dir)) &&
	   !efa_libpath_find(&fs, NULL, NULL, EFA_LIB_FABRIC, dir, sizeof(dir)),
	   "an empty or missing path finds nothing");
	/* Thousands of entries: only the first EFA_LIBPATH_DIRS_MAX are read. */
	path = malloc(20 * 5000 + 32);
	require(ok(path != NULL, "a long path"));
	path[0] = '\0';
	for (int i = 0; i < 5000; i++)
		len += (size_t)sprintf(path + len, "/empty%s", ":");
	strcpy(path + len, "/fabric");
	ok(!efa_libpath_find(&fs, path, NULL, EFA_LIB_FABRIC, dir, sizeof(dir)),
	   "a library path of 5,001 entries is read as far as its first %d", EFA_LIBPATH_DIRS_MAX);
	free(path);
	efa_sysfs_close(&fs);
}

static void test_ldcache(void)
{
	static const char cache[] = "glibc-ld.so.cache1.1\0\0\0\0libnccl-net.so\0/usr/lib/x86_64-linux-gnu/libnccl-net.so\0";
	static const char other[] = "glibc-ld.so.cache1.1\0\0\0\0libc.so.6\0/lib/libc.so.6\0libnccl-net";
	static const char forged[] = "not a cache\0/usr/lib/libnccl-net.so\0";
	struct efa_sysfs fs;

	tmp_setup(mkdirs("lc/etc"), "an etc");
	require(ok(efa_sysfs_open(&fs, tmp_at("lc")) == 0, "root opened"));
	ok(!efa_ldcache_has(&fs, EFA_LIB_NET_PLUGIN), "no cache: nothing in it");
	tmp_setup(write_file(tmp_at("lc/etc/ld.so.cache"), cache, sizeof(cache) - 1), "a cache");
	ok(efa_ldcache_has(&fs, EFA_LIB_NET_PLUGIN), "a cache naming libnccl-net.so has the plugin");
	ok(!efa_ldcache_has(&fs, EFA_LIB_FABRIC), "  and not libfabric");
	tmp_setup(write_file(tmp_at("lc/etc/ld.so.cache"), other, sizeof(other) - 1), "another cache");
	ok(!efa_ldcache_has(&fs, EFA_LIB_NET_PLUGIN), "a name cut at the end of the file is not one");
	tmp_setup(write_file(tmp_at("lc/etc/ld.so.cache"), forged, sizeof(forged) - 1), "a forged cache");
	ok(!efa_ldcache_has(&fs, EFA_LIB_NET_PLUGIN), "a file without the cache's magic is not read");
	efa_sysfs_close(&fs);
}

static const char record[] =
	"# EFA installer version: 1.43.2\n"
	"libfabric1-aws_2.1.0amzn5.0_amd64 libnccl-ofi_1.14.2-1_amd64\n";

/* An image whose /opt/amazon is an absolute link to a tree outside it. */
static void test_confined(void)
{
	struct efa_sysfs open_fs, confined;
	struct efa_stack plain, image, host = { .kernel = (char *)"6.1.0" };
	char *big;

	tmp_setup(mkdirs("outside/opt/amazon/efa/lib") || mkdirs("img/opt") ||
		  write_file(tmp_at("outside/opt/amazon/efa_installed_packages"), record, strlen(record)) ||
		  write_file(tmp_at("outside/opt/amazon/efa/lib/libfabric.so.1"), "", 0) ||
		  symlink(tmp_at("outside/opt/amazon"), tmp_at("img/opt/amazon")),
		  "an image with a link out of it");
	require(ok(efa_sysfs_open(&open_fs, tmp_at("img")) == 0 &&
		   efa_sysfs_open_confined(&confined, tmp_at("img")) == 0, "roots opened"));
	require(ok(efa_stack_discover_software(&open_fs, &plain) == 0, "read as a node's root"));
	ok(plain.installer && plain.has_libfabric, "  the link is followed (installer %s)",
	   plain.installer ? plain.installer : "unknown");
	ok(efa_image_stack(&confined, &host, &image) == 0, "the image's stack is read");
	ok(!image.installer && !image.libfabric && !image.has_libfabric && !image.libdirs[0],
	   "confined to the image, the link leads nowhere: nothing of the host's is read");
	is_str(image.kernel, "6.1.0", "the image's stack has the node's kernel");
	efa_stack_clear(&plain);
	efa_stack_clear(&image);

	/* The same tree inside the image, with a relative link that climbs
	 * out: it stays inside. */
	tmp_setup(unlink(tmp_at("img/opt/amazon")) || mkdirs("img/real/amazon/efa/lib") ||
		  write_file(tmp_at("img/real/amazon/efa_installed_packages"), record, strlen(record)) ||
		  write_file(tmp_at("img/real/amazon/efa/lib/libfabric.so.1"), "", 0) ||
		  symlink("../../../../real/amazon", tmp_at("img/opt/amazon")),
		  "a relative link inside the image");
	ok(efa_image_stack(&confined, &host, &image) == 0 && image.installer &&
	   !strcmp(image.installer, "1.43.2") && image.has_libfabric && !image.has_net_plugin,
	   "a link inside the image resolves inside it, \"..\" past its root included");
	efa_stack_clear(&image);

	/* An oversized record: versions unknown, no harm. */
	big = malloc(200000);
	require(ok(big != NULL, "a big record"));
	memset(big, 'x', 200000);
	memcpy(big, record, strlen(record));
	tmp_setup(write_file(tmp_at("img/real/amazon/efa_installed_packages"), big, 200000),
		  "an oversized record");
	ok(efa_image_stack(&confined, &host, &image) == 0 && !image.installer && image.has_libfabric,
	   "an oversized installer record is not read; the libraries still are");
	efa_stack_clear(&image);
	/* A binary record: NULs, control bytes, no newline at the end. */
	for (size_t i = 0; i < 4096; i++)
		big[i] = (char)(i * 7919 % 256);
	memcpy(big + 100, "libfabric-aws-9.9.9", 19);
	tmp_setup(write_file(tmp_at("img/real/amazon/efa_installed_packages"), big, 4096),
		  "a binary record");
	ok(efa_image_stack(&confined, &host, &image) == 0 && image.has_libfabric,
	   "a binary installer record is read without harm");
	efa_stack_clear(&image);
	free(big);

	/* One directory's entries: a file, never a link out, and in the
	 * image never a FIFO (it would block the reader). */
	{
		char buf[64];
		int dir;

		tmp_setup(write_file(tmp_at("img/real/value"), "42\n", 3) ||
			  mkfifo(tmp_at("img/real/fifo"), 0600) ||
			  symlink(tmp_at("outside/opt/amazon/efa_installed_packages"),
				  tmp_at("img/real/link")),
			  "a directory with a file, a FIFO and a link");
		dir = efa_sysfs_open_dir(&confined, "/real");
		require(ok(dir >= 0, "a directory of the image is opened"));
		ok(!efa_sysfs_read_in(&confined, dir, "value", buf, sizeof(buf)) && !strcmp(buf, "42"),
		   "  its file is read, without the newline");
		ok(efa_sysfs_read_in(&confined, dir, "fifo", buf, sizeof(buf)) && !buf[0],
		   "  a FIFO is not opened");
		ok(efa_sysfs_read_in(&confined, dir, "link", buf, sizeof(buf)) && !buf[0],
		   "  a link is not followed");
		ok(efa_sysfs_read_in(&confined, dir, "../real/value", buf, sizeof(buf)) &&
		   efa_sysfs_read_in(&confined, dir, "..", buf, sizeof(buf)),
		   "  a name with a slash, or \"..\", is refused");
		close(dir);
		dir = efa_sysfs_open_dir(&open_fs, "/real");
		ok(!efa_sysfs_read_in(&open_fs, dir, "value", buf, sizeof(buf)) && !strcmp(buf, "42") &&
		   efa_sysfs_read_in(&open_fs, dir, "link", buf, sizeof(buf)),
		   "a node's root: the file is read, the link is not followed either");
		close(dir);
		ok(efa_sysfs_open_dir(&open_fs, "/real/value") < 0 &&
		   efa_sysfs_open_dir(&open_fs, "/no/such") < 0, "a file or nothing is no directory");
	}
	efa_sysfs_close(&open_fs);
	efa_sysfs_close(&confined);
}

static void test_missing(void)
{
	struct efa_nic nic = { .uverbs = 3, .usable = true };
	struct efa_accel gpu = { .kind = EFA_ACCEL_GPU, .present = true };
	struct efa_node node = { .nics = &nic, .nnics = 1, .accels = &gpu, .naccels = 1 };
	struct efa_sysfs fs;
	char buf[1024];

	tmp_setup(mkdirs("task/dev/infiniband") || mkdirs("task/lib"), "a task's root");
	require(ok(efa_sysfs_open(&fs, tmp_at("task")) == 0, "root opened"));
	efa_task_missing(&node, &fs, "", 0, buf, sizeof(buf));
	has_str(buf, "no aws-ofi-nccl", "on NVIDIA GPUs, the net plugin is missing");
	ok(!strstr(buf, "libfabric") && !strstr(buf, "devices"), "  and nothing else is checked on the node (%s)", buf);
	efa_task_missing(&node, &fs, "", EFA_CHECK_CONTAINER, buf, sizeof(buf));
	has_str(buf, "no libfabric", "in a container libfabric is checked");
	has_str(buf, "none of the node's 1 EFA devices", "  and the node's devices");
	tmp_setup(write_file(tmp_at("task/dev/infiniband/uverbs3"), "", 0) ||
		  write_file(tmp_at("task/lib/libfabric.so.1"), "", 0) ||
		  write_file(tmp_at("task/lib/libnccl-net.so"), "", 0), "the task's libraries and device");
	efa_task_missing(&node, &fs, "/lib", EFA_CHECK_CONTAINER, buf, sizeof(buf));
	is_str(buf, "", "with both libraries on LD_LIBRARY_PATH and uverbs3 in /dev, nothing is missing");
	node.naccels = 0;
	tmp_setup(unlink(tmp_at("task/lib/libnccl-net.so")), "no plugin");
	efa_task_missing(&node, &fs, "/lib", EFA_CHECK_CONTAINER, buf, sizeof(buf));
	is_str(buf, "", "without NVIDIA GPUs the plugin is not needed");
	efa_sysfs_close(&fs);
}

static void test_host_mounts(void)
{
	char *dirs[] = { (char *)"/opt/amazon/efa/lib", (char *)"/opt/odd:dir", (char *)"/opt/amazon/ofi-nccl/lib", NULL };
	struct efa_node node = { .stack = { .libdirs = dirs, .installer = (char *)"1.43.2" } };
	char buf[512], tiny[16];

	ok(efa_image_host_mounts(&node, "/roots/n1/", buf, sizeof(buf)) == 0, "the node's libraries as mounts");
	is_str(buf, "/roots/n1/opt/amazon/efa/lib:/opt/amazon/efa/lib,"
		    "/roots/n1/opt/amazon/ofi-nccl/lib:/opt/amazon/ofi-nccl/lib,"
		    "/roots/n1/opt/amazon/efa_installed_packages:/opt/amazon/efa_installed_packages",
	       "  from under root to the node's path, a path with ':' left out, the record last");
	ok(efa_image_host_mounts(&node, "/", buf, sizeof(buf)) == 0 &&
	   !strncmp(buf, "/opt/amazon/efa/lib:/opt/amazon/efa/lib,", 40), "  root / adds nothing (%s)", buf);
	ok(efa_image_host_mounts(&node, "/", tiny, sizeof(tiny)) == -1, "  too many for the buffer is an error");
	node.stack.installer = NULL;
	ok(efa_image_host_mounts(&node, "/", buf, sizeof(buf)) == 0 && !strstr(buf, "installed_packages"),
	   "  a node without the record mounts none");
}

int main(void)
{
	if (tmp_open())
		return done_testing();
	test_names();
	test_libpath();
	test_ldcache();
	test_confined();
	test_missing();
	test_host_mounts();
	tmp_close();
	return done_testing();
}
