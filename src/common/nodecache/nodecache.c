/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/base/atomic_write.h"
#include "common/base/dir.h"
#include "common/base/hash.h"
#include "common/base/strutil.h"
#include "common/node/bind.h"
#include "common/node/rdma.h"
#include "common/node/stack.h"
#include "common/nodecache/nodecache.h"

#define PATH_MAX_LEN 4096
#define CACHE_MAX (4u * 1024 * 1024)
#define BOOT_ID "/proc/sys/kernel/random/boot_id"

/* Device directories whose entries discovery reads (node.c). */
static const char *const device_dirs[] = {
	"/sys/class/infiniband", "/sys/class/neuron_device",
	"/sys/bus/pci/drivers/nvidia", "/proc/driver/nvidia/gpus", NULL,
};

/* Where device nodes appear (devtmpfs keeps its directories' times). */
static const char *const dev_dirs[] = { "/dev", "/dev/infiniband", NULL };


static int under_root(const char *root, const char *path, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s%s", strcmp(root, "/") ? root : "", path);

	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* ---- stamps ------------------------------------------------------------- */

struct stamps {
	struct efa_stamp *v;
	size_t n, cap;
};

static void stat_stamp(const struct stat *st, uint64_t *v)
{
	v[0] = st->st_dev;
	v[1] = st->st_ino;
	v[2] = (uint64_t)st->st_size;
	v[3] = (uint64_t)st->st_mtim.tv_sec;
	v[4] = (uint64_t)st->st_mtim.tv_nsec;
	v[5] = (uint64_t)st->st_ctim.tv_sec;
	v[6] = (uint64_t)st->st_ctim.tv_nsec;
}

static int hash_name(const char *name, void *arg)
{
	uint64_t *v = arg, h = efa_fnv1a64(EFA_FNV1A64_SEED, name, strlen(name));

	v[0] += h;
	v[1] ^= h;
	v[2]++;
	return 0;
}

/* The names in a directory, in any order (sysfs does not sort): a sum and
 * a xor of their hashes, and their count; zeros when it is missing. */
static void listing_stamp(const char *path, uint64_t *v)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	memset(v, 0, 7 * sizeof(*v));
	if (fd < 0)
		return;
	efa_dir_each(fd, hash_name, v);
	close(fd);
}

/* The stamp as it is now; -1 when a file stamp's path is gone. */
static int take(const struct efa_stamp *s, uint64_t *v)
{
	struct stat st;

	if (s->kind == EFA_STAMP_LISTING) {
		listing_stamp(s->path, v);
		return 0;
	}
	if (stat(s->path, &st))
		return -1;
	stat_stamp(&st, v);
	return 0;
}

static struct efa_stamp *add_stamp(struct stamps *st, const char *path,
				   enum efa_stamp_kind kind)
{
	struct efa_stamp *s;

	for (size_t i = 0; i < st->n; i++)
		if (!strcmp(st->v[i].path, path))
			return &st->v[i];
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 32;
		struct efa_stamp *grown = realloc(st->v, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		st->v = grown;
		st->cap = cap;
	}
	s = &st->v[st->n];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->path = strdup(path);
	if (!s->path)
		return NULL;
	st->n++;
	return s;
}

/*
 * A path discovery reads or looks for: its times, or, while it does not
 * exist, those of the nearest directory above it that does (where it
 * would appear).
 */
static int watch(struct stamps *st, const char *path)
{
	char up[PATH_MAX_LEN];
	struct efa_stamp *s;
	struct stat sb;
	char *slash;

	if (!stat(path, &sb)) {
		s = add_stamp(st, path, EFA_STAMP_FILE);
		if (!s)
			return -1;
		stat_stamp(&sb, s->v);
		return 0;
	}
	snprintf(up, sizeof(up), "%s", path);
	slash = strrchr(up, '/');
	if (!slash || slash == up)
		return 0;	/* not even "/": nothing to watch */
	*slash = '\0';
	return watch(st, up);
}

static int watch_listing(struct stamps *st, const char *path)
{
	struct efa_stamp *s = add_stamp(st, path, EFA_STAMP_LISTING);

	if (!s)
		return -1;
	listing_stamp(path, s->v);
	return 0;
}

/* dir and what is in it: its subdirectories, or its files ending in suffix. */
static int watch_dir(struct stamps *st, const char *dir, const char *suffix)
{
	char path[PATH_MAX_LEN];
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (watch(st, dir))
		return -1;
	while (d && !rc && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct stat sb;

		if (e->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (suffix ? len > strlen(suffix) && !strcmp(e->d_name + len - strlen(suffix), suffix)
			   : !stat(path, &sb) && S_ISDIR(sb.st_mode))
			rc = watch(st, path);
	}
	if (d)
		closedir(d);
	return rc;
}

/* Everything node.c, stack.c, rdma.c and profile.c read, for this root. */
static int watch_all(const char *root, const char *profile_dir, struct stamps *st)
{
	char path[PATH_MAX_LEN];

	for (const char *const *d = device_dirs; *d; d++)
		if (under_root(root, *d, path, sizeof(path)) || watch_listing(st, path))
			return -1;
	for (const char *const *d = dev_dirs; *d; d++)
		if (under_root(root, *d, path, sizeof(path)) || watch(st, path))
			return -1;
	if (under_root(root, efa_stack_record, path, sizeof(path)) || watch(st, path))
		return -1;
	for (const char *const *p = efa_stack_prefixes; *p; p++) {
		if (under_root(root, *p, path, sizeof(path)) || watch(st, path) ||
		    strlen(path) + sizeof("/lib64") > sizeof(path))
			return -1;
		strcat(path, "/lib64");
		if (watch(st, path))
			return -1;
		path[strlen(path) - 2] = '\0';
		if (watch_dir(st, path, NULL))
			return -1;
	}
	for (const char *const *d = efa_libefa_dirs; *d; d++)
		if (under_root(root, *d, path, sizeof(path)) || watch(st, path))
			return -1;
	return watch_dir(st, profile_dir, ".profile");
}

/* ---- the key ------------------------------------------------------------ */

static int read_boot_id(const char *root, char *buf, size_t size)
{
	char path[PATH_MAX_LEN];
	ssize_t n = -1;
	int fd;

	buf[0] = '\0';
	if (under_root(root, BOOT_ID, path, sizeof(path)))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int current_key(const char *root, const struct efa_config *cfg,
		       struct efa_nodedesc_key *k, struct efa_error *err)
{
	char boot[64];
	struct stat st;

	memset(k, 0, sizeof(*k));
	if (stat(root, &st) || !S_ISDIR(st.st_mode))
		return efa_error_set(err, "cannot use root=%s: it must be an existing directory",
				     root);
	k->root_dev = st.st_dev;
	k->root_ino = st.st_ino;
	if (read_boot_id(root, boot, sizeof(boot)))
		return efa_error_set(err, "root=%s is too long", root);
	k->boot_id = strdup(boot);
	k->instance_type = cfg->instance_type ? strdup(cfg->instance_type) : NULL;
	k->profile_dir = strdup(cfg->profile_dir);
	if (!k->boot_id || !k->profile_dir || (cfg->instance_type && !k->instance_type))
		return efa_error_set(err, "out of memory");
	return 0;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Whether the cached key still holds; why says what changed when not. */
static bool key_holds(const struct efa_nodedesc_key *was, const struct efa_nodedesc_key *now,
		      char *why, size_t size)
{
	uint64_t v[7];

	if (was->root_dev != now->root_dev || was->root_ino != now->root_ino)
		snprintf(why, size, "it describes another root= directory");
	else if (strcmp(was->boot_id, now->boot_id))
		snprintf(why, size, "the node booted since");
	else if (!same_str(was->instance_type, now->instance_type))
		snprintf(why, size, "InstanceType= changed");
	else if (strcmp(was->profile_dir, now->profile_dir))
		snprintf(why, size, "ProfileDir= changed");
	else
		why[0] = '\0';
	for (size_t i = 0; !why[0] && i < was->nstamps; i++)
		if (take(&was->stamps[i], v) || memcmp(v, was->stamps[i].v, sizeof(v)))
			snprintf(why, size, "%s changed", was->stamps[i].path);
	return !why[0];
}

/* ---- the file ----------------------------------------------------------- */

static int cache_file(const char *dir, const struct efa_nodedesc_key *k, char *buf, size_t size)
{
	uint64_t h = EFA_FNV1A64_SEED;
	int n;

	/* One file per root: nodes sharing a host in tests, each with its
	 * own root=, do not take turns replacing it. */
	h = efa_fnv1a64(h, &k->root_dev, sizeof(k->root_dev));
	h = efa_fnv1a64(h, &k->root_ino, sizeof(k->root_ino));
	n = snprintf(buf, size, "%s/node-%016llx", dir, (unsigned long long)h);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* The cached description, when it can be trusted; why says why not. */
static int read_cache(const char *path, struct efa_nodedesc *desc, char *why, size_t size)
{
	struct efa_error err;
	char *buf = NULL;
	size_t got = 0;
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0) {
		if (errno == ENOENT)
			snprintf(why, size, "no description kept yet");
		else
			snprintf(why, size, "%s cannot be opened: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, size, "%s is not a regular file", path);
		goto fail;
	}
	if (!trusted_owner(st.st_uid)) {
		snprintf(why, size, "%s is owned by uid %u, not root", path, (unsigned)st.st_uid);
		goto fail;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, size, "%s is writable by others", path);
		goto fail;
	}
	if ((size_t)st.st_size > CACHE_MAX || !(buf = malloc((size_t)st.st_size + 1))) {
		snprintf(why, size, "%s is too large", path);
		goto fail;
	}
	n = efa_pread_full(fd, buf, (size_t)st.st_size, 0);
	got = n > 0 ? (size_t)n : 0;
	if (efa_nodedesc_decode(buf, got, desc, &err)) {
		snprintf(why, size, "%s is unusable (%s)", path, err.msg);
		goto fail;
	}
	free(buf);
	close(fd);
	return 0;
fail:
	free(buf);
	close(fd);
	return -1;
}

/* NodeCacheDir=, made when missing; only root's (or the caller's), and
 * writable by no one else: what it holds decides what steps get. */
static int cache_dir_ready(const char *dir, struct efa_error *err)
{
	struct stat st;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return efa_error_set(err, "cannot create NodeCacheDir=%s: %s", dir, strerror(errno));
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode))
		return efa_error_set(err, "NodeCacheDir=%s is not a directory", dir);
	if (!trusted_owner(st.st_uid) || (st.st_mode & (S_IWGRP | S_IWOTH)))
		return efa_error_set(err, "NodeCacheDir=%s must be root's and writable by root alone (chown root %s; chmod 0755 %s)",
				     dir, dir, dir);
	return 0;
}

static int store_description(const struct efa_node_cache *cache, const char *path,
		const struct efa_nodedesc *desc, struct efa_error *err)
{
	char *buf = NULL;
	size_t len;
	int rc;

	if (cache_dir_ready(cache->dir, err))
		return -1;
	if (efa_nodedesc_encode(desc, &buf, &len))
		return efa_error_set(err, "out of memory");
	rc = efa_write_atomic(path, buf, len, 0644, err);
	free(buf);
	return rc;
}

/*
 * A stamp whose file changed later than settle seconds before started,
 * or NULL: a file system stamps times from a clock of a few milliseconds'
 * resolution, so a file changed again within the same tick would keep
 * its times.
 */
static const struct efa_stamp *unsettled(const struct stamps *st, const struct timespec *started,
					 int settle)
{
	int64_t limit = ((int64_t)started->tv_sec - settle) * 1000000000 + started->tv_nsec;

	for (size_t i = 0; i < st->n; i++)
		if (st->v[i].kind == EFA_STAMP_FILE &&
		    (int64_t)st->v[i].v[5] * 1000000000 + (int64_t)st->v[i].v[6] >= limit)
			return &st->v[i];
	return NULL;
}

/* Reads the node and its profiles; the stamps are taken first, so that
 * a change while reading shows next time. */
static int build(const char *root, const struct efa_config *cfg, struct stamps *st,
		 struct efa_nodedesc *desc, struct efa_error *err)
{
	struct efa_error perr;
	int rc = watch_all(root, cfg->profile_dir, st);

	desc->key.stamps = st->v;
	desc->key.nstamps = st->n;
	if (rc)
		return efa_error_set(err, "out of memory reading the node's devices");
	if (efa_node_discover(root, cfg->instance_type, &desc->node, err))
		return -1;
	/* Every --efa-bind=closest step needs it: computed once with the rest. */
	if (efa_bind_index(desc->node))
		return efa_error_set(err, "out of memory indexing the node's topology");
	if (efa_profiles_load(cfg->profile_dir, &desc->profiles, &perr)) {
		if (!(desc->profiles_error = strdup(perr.msg)))
			return efa_error_set(err, "out of memory");
		return 0;
	}
	/* Every step decodes what is kept: only the profiles this node uses. */
	if (efa_profiles_keep_matching(desc->profiles, desc->node->instance_type,
				       efa_node_accel_kinds(desc->node)))
		return efa_error_set(err, "out of memory");
	return 0;
}

int efa_node_describe(const char *root, const struct efa_config *cfg,
		      const struct efa_node_cache *cache, struct efa_nodedesc *out,
		      char *note, size_t size, struct efa_error *err)
{
	struct efa_nodedesc cached = { 0 }, fresh = { 0 };
	struct stamps st = { 0 };
	const struct efa_stamp *recent;
	struct efa_error kerr;
	char path[PATH_MAX_LEN];
	struct timespec started;

	note[0] = '\0';
	memset(out, 0, sizeof(*out));
	if (current_key(root, cfg, &fresh.key, err))
		goto fail;
	if (cache_file(cache->dir, &fresh.key, path, sizeof(path))) {
		efa_error_set(err, "NodeCacheDir=%s is too long", cache->dir);
		goto fail;
	}
	if (!read_cache(path, &cached, note, size) && key_holds(&cached.key, &fresh.key, note, size)) {
		efa_nodedesc_clear(&fresh);
		*out = cached;
		return EFA_NODE_CACHE_HIT;
	}
	efa_nodedesc_clear(&cached);
	clock_gettime(CLOCK_REALTIME, &started);
	if (build(root, cfg, &st, &fresh, err))
		goto fail;
	*out = fresh;
	recent = unsettled(&st, &started, cache->settle);
	if (recent) {
		efa_strlcatf(note, size, "; not kept: %s changed less than %d s ago", recent->path,
			     cache->settle);
		return EFA_NODE_CACHE_BUILT;
	}
	if (store_description(cache, path, out, &kerr)) {
		efa_strlcatf(note, size, "; cannot keep the node's description: %s", kerr.msg);
		return EFA_NODE_CACHE_UNWRITABLE;
	}
	return EFA_NODE_CACHE_BUILT;
fail:
	efa_nodedesc_clear(&fresh);	/* the stamps with it */
	return -1;
}
