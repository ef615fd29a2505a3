/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/child.h"
#include "common/base/dir.h"
#include "common/base/strutil.h"
#include "common/node/libpath.h"
#include "common/node/stack.h"
#include "image_unpack.h"

#define ENVIRONMENT_MAX 65536
#define ENVIRONMENT_VARS_MAX 1024
#define SQUASHFS_MAGIC "hsqs"
/* unsquashfs's arguments: the fixed ones, the stack's roots, and two
 * patterns for each of the LD_LIBRARY_PATH entries looked at. */
#define UNSQUASHFS_ARGS_MAX (16 + 2 * EFA_LIBPATH_DIRS_MAX)
/* It copies out a few files, but reads the image's whole directory table. */
#define UNSQUASHFS_TIMEOUT_MS 120000

/*
 * The temporary directory removed from descriptors (efa_remove_tree):
 * root may have given its root/ to the image's owner, who could swap a
 * directory in it for a link while it is removed; a path-based walk
 * would then delete what the link points to.
 */
static void remove_unpacked(const char *tmp)
{
	const char *slash = strrchr(tmp, '/');
	char parent[4096];
	struct efa_error err;
	int fd;

	if (!slash || snprintf(parent, sizeof(parent), "%.*s", (int)(slash - tmp), tmp) >=
			      (int)sizeof(parent))
		return;
	fd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (efa_remove_tree(fd, slash + 1, &err))
		fprintf(stderr, "slurm-efa: %s: %s\n", tmp, err.msg);
	close(fd);
}

void cli_image_close(struct cli_image *img)
{
	efa_sysfs_close(&img->fs);
	if (img->tmp) {
		remove_unpacked(img->tmp);
		free(img->tmp);
	}
	efa_strv_free(img->env);
	img->tmp = NULL;
	img->env = NULL;
}

const char *cli_image_getenv(const struct cli_image *img, const char *name)
{
	size_t len = strlen(name);

	for (char **e = img->env; e && *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

/* NAME=VALUE lines; "export " and quotes around the value as a shell would. */
static int parse_environment(const char *text, char ***out)
{
	char **env = calloc(ENVIRONMENT_VARS_MAX + 1, sizeof(*env));
	size_t n = 0;

	if (!env)
		return -1;
	for (const char *p = text; *p && n < ENVIRONMENT_VARS_MAX;) {
		size_t len = strcspn(p, "\n"), vlen;
		const char *line = p, *eq, *value;

		p += len + (p[len] ? 1 : 0);
		while (len && (*line == ' ' || *line == '\t'))
			line++, len--;
		if (len > 7 && !strncmp(line, "export ", 7))
			line += 7, len -= 7;
		eq = memchr(line, '=', len);
		if (!len || *line == '#' || !eq || eq == line)
			continue;
		value = eq + 1;
		vlen = len - (size_t)(value - line);
		if (vlen >= 2 && (*value == '"' || *value == '\'') && value[vlen - 1] == *value)
			value++, vlen -= 2;
		if (asprintf(&env[n], "%.*s=%.*s", (int)(eq - line), line, (int)vlen, value) < 0) {
			env[n] = NULL;
			efa_strv_free(env);
			return -1;
		}
		n++;
	}
	*out = env;
	return 0;
}

/* unsquashfs's arguments and who it runs as, for the child. */
struct unsquashfs_job {
	const char **argv;
	uid_t uid;	/* 0: as the caller */
	gid_t gid;
};

/*
 * The child: as root it first becomes an unprivileged user, so that an
 * image cannot make it create device nodes, root-owned setuid files or
 * privileged xattrs on this host. Its messages go to the pipe.
 */
static int run_unsquashfs(void *arg, int fd)
{
	const struct unsquashfs_job *job = arg;

	efa_child_stdio(fd);
	if (job->uid && (setgroups(0, NULL) || setgid(job->gid) || setuid(job->uid))) {
		dprintf(fd, "cannot become uid %u: %s", (unsigned)job->uid, strerror(errno));
		return 126;
	}
	execvp(job->argv[0], (char *const *)job->argv);
	return 127;
}

static int unsquashfs(const char *file, const char *dest, char **patterns,
		      const struct unsquashfs_job *as, struct efa_error *err)
{
	/* -no-xattrs: an image's xattrs (capabilities, security labels)
	 * are not this reader's business. */
	const char *argv[UNSQUASHFS_ARGS_MAX + 8] = {
		"unsquashfs", "-no-progress", "-quiet", "-no-xattrs", "-f", "-d", dest, file,
	};
	struct unsquashfs_job job = *as;
	struct efa_child child;
	char out[512];
	size_t n = 8;

	for (char **p = patterns; *p && n < UNSQUASHFS_ARGS_MAX; p++)
		argv[n++] = *p;
	argv[n] = NULL;
	job.argv = argv;
	if (efa_child_run(run_unsquashfs, &job, UNSQUASHFS_TIMEOUT_MS, true, out, sizeof(out),
			  &child, err))
		return -1;
	out[strcspn(out, "\n")] = '\0';
	if (child.killed)
		return efa_error_set(err, "unsquashfs took more than %d s to read %s",
				     UNSQUASHFS_TIMEOUT_MS / 1000, file);
	if (child.status == 127)
		return efa_error_set(err, "cannot run unsquashfs (squashfs-tools) to read %s", file);
	if (child.status)
		return efa_error_set(err, "unsquashfs cannot read %s: a corrupt image?%s%s", file,
				     out[0] ? " " : "", out);
	return 0;
}

/* Adds the pattern a followed by b. */
static int add_pattern(char **patterns, size_t *n, const char *a, const char *b)
{
	if (*n == UNSQUASHFS_ARGS_MAX)
		return 0;
	if (asprintf(&patterns[*n], "%s%s", a, b) < 0) {
		patterns[*n] = NULL;
		return -1;
	}
	(*n)++;
	return 0;
}

/* The second pass: the libraries of the directories LD_LIBRARY_PATH names. */
static int library_patterns(const char *ld_path, char **patterns, size_t *n)
{
	unsigned looked = 0;

	for (const char *p = ld_path; p && *p && looked < EFA_LIBPATH_DIRS_MAX;) {
		size_t len = strcspn(p, ":");
		char dir[4096];

		if (len && len < sizeof(dir) && p[0] == '/') {
			snprintf(dir, sizeof(dir), "%.*s/", (int)len - 1, p + 1);
			looked++;
			if (add_pattern(patterns, n, dir, "libfabric.so*") ||
			    add_pattern(patterns, n, dir, "libnccl-net*"))
				return -1;
		}
		p += len + (p[len] ? 1 : 0);
	}
	return 0;
}

static int read_environment(struct cli_image *img, struct efa_error *err)
{
	char *text = NULL;
	size_t len;
	struct efa_error ignored;
	int rc;

	if (efa_sysfs_read_file(&img->fs, ENVIRONMENT_MAX, &text, &len, &ignored, "/etc/environment"))
		text = NULL;	/* an image without one has no variables of its own */
	rc = parse_environment(text ? text : "", &img->env);
	free(text);
	return rc ? efa_error_set(err, "out of memory") : 0;
}

/* Every slot is cleared: the list is read up to its first NULL. */
static void free_patterns(char **patterns, size_t *n)
{
	while (*n) {
		--*n;
		free(patterns[*n]);
		patterns[*n] = NULL;
	}
}

/*
 * Who unsquashfs runs as: the caller, unless that is root, who reads a
 * user's image as the user who owns it, into a directory that user owns
 * (dest, made here; the temporary directory above it stays root's): the
 * image can then make nothing its owner could not make already.
 */
static int unsquashfs_user(const char *tmp, const char *dest, const struct stat *image,
			   struct unsquashfs_job *as, struct efa_error *err)
{
	as->uid = 0;
	as->gid = 0;
	if (mkdir(dest, 0700))
		return efa_error_set(err, "cannot make %s: %s", dest, strerror(errno));
	if (geteuid() || !image->st_uid)
		return 0;
	as->uid = image->st_uid;
	as->gid = image->st_gid;
	/* The user passes through the temporary directory, never writes
	 * to it or lists it. */
	if (chmod(tmp, 0711))
		return efa_error_set(err, "cannot open %s to uid %u: %s", tmp, (unsigned)as->uid,
				     strerror(errno));
	if (chown(dest, as->uid, as->gid))
		return efa_error_set(err, "cannot give %s to uid %u: %s", dest, (unsigned)as->uid,
				     strerror(errno));
	return 0;
}

static int unpack(const char *file, const struct stat *st, struct cli_image *img,
		  struct efa_error *err)
{
	char *patterns[UNSQUASHFS_ARGS_MAX + 1] = { 0 }, root[4096];
	struct unsquashfs_job as;
	size_t n = 0;
	int rc = -1;

	/* The pid in the name says whose copy it is (an admin's look, the
	 * tests' check that none is left behind). */
	if (asprintf(&img->tmp, "/tmp/slurm-efa-image.%ld.XXXXXX", (long)getpid()) < 0)
		img->tmp = NULL;
	if (!img->tmp || !mkdtemp(img->tmp)) {
		free(img->tmp);
		img->tmp = NULL;
		return efa_error_set(err, "cannot make a temporary directory: %s", strerror(errno));
	}
	snprintf(root, sizeof(root), "%s/root", img->tmp);
	if (unsquashfs_user(img->tmp, root, st, &as, err))
		return -1;
	if (add_pattern(patterns, &n, "etc/environment", "") ||
	    add_pattern(patterns, &n, "etc/ld.so.cache", ""))
		goto nomem;
	for (const char *const *r = efa_stack_roots; *r; r++)
		if (add_pattern(patterns, &n, *r + 1, ""))
			goto nomem;
	if (unsquashfs(file, root, patterns, &as, err))
		goto out;
	if (efa_sysfs_open_confined(&img->fs, root)) {
		efa_error_set(err, "cannot read %s unpacked in %s", file, root);
		goto out;
	}
	if (read_environment(img, err))
		goto out;
	free_patterns(patterns, &n);
	if (library_patterns(cli_image_getenv(img, "LD_LIBRARY_PATH"), patterns, &n))
		goto nomem;
	rc = n ? unsquashfs(file, root, patterns, &as, err) : 0;
	goto out;
nomem:
	efa_error_set(err, "out of memory");
out:
	free_patterns(patterns, &n);
	return rc;
}

int cli_image_open(const char *path, struct cli_image *img, struct efa_error *err)
{
	char magic[4], arg[4096];
	struct stat st;
	int fd;

	memset(img, 0, sizeof(*img));
	img->fs.dirfd = -1;
	/* Looked at without opening it: a device node is never opened. */
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		efa_error_set(err, "cannot read image %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		if (efa_sysfs_open_confined(&img->fs, path))
			return efa_error_set(err, "cannot open image directory %s", path);
		if (read_environment(img, err))
			goto fail;
		return 0;
	}
	fd = efa_reopen_regular(fd, O_RDONLY | O_NONBLOCK);
	if (fd < 0 || read(fd, magic, sizeof(magic)) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, SQUASHFS_MAGIC, sizeof(magic))) {
		if (fd >= 0)
			close(fd);
		return efa_error_set(err, "%s is neither a squashfs image nor a directory", path);
	}
	close(fd);
	/* A name that starts with '-' is a file to unsquashfs, not an option. */
	if (snprintf(arg, sizeof(arg), "%s%s", path[0] == '-' ? "./" : "", path) >= (int)sizeof(arg))
		return efa_error_set(err, "image path %s is too long", path);
	if (unpack(arg, &st, img, err))
		goto fail;
	return 0;
fail:
	cli_image_close(img);
	return -1;
}
