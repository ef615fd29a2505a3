/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node cache: a step finds the description kept; every change to
 * what it was read from, and every file that cannot be trusted, makes it
 * read the node again and replace the file.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config/efa_conf.h"
#include "common/health/node_check.h"
#include "common/nodecache/nodecache.h"
#include "common/nodecache/nodedesc.h"
#include "failalloc.h"
#include "tap.h"
#include "tmpdir.h"

static struct efa_config *cfg;
static struct efa_node_cache cache;
static char note[1024];

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* One step's look at the node under root; the description is dropped. */
static int step(const char *root, size_t *nnics)
{
	struct efa_nodedesc d;
	struct efa_error err;
	int rc = efa_node_describe(root, cfg, &cache, &d, note, sizeof(note), &err);

	if (rc < 0)
		printf("# %s\n", err.msg);
	if (nnics)
		*nnics = rc < 0 ? 0 : d.node->nnics;
	efa_nodedesc_clear(&d);
	return rc;
}

/* Changes are made a tick after the last read: a file system's times
 * have a resolution of a few milliseconds. */
static void later(void)
{
	usleep(30000);
}

/* The one file the cache keeps for the root: in this test's own
 * directory (another run's, left over or running beside it, is not it). */
static const char *cache_file(void)
{
	static char path[4096];
	char cmd[4200];
	FILE *p;

	path[0] = '\0';
	snprintf(cmd, sizeof(cmd), "ls -d %s/node-* 2>/dev/null | head -1", tmp_at("cache"));
	p = popen(cmd, "r");
	if (p) {
		if (fgets(path, sizeof(path), p))
			path[strcspn(path, "\n")] = '\0';
		pclose(p);
	}
	return path;
}

static void expect_rebuild(const char *root, const char *why, const char *what)
{
	is_int(step(root, NULL), EFA_NODE_CACHE_BUILT, "%s: the node is read again", what);
	has_str(note, why, "  and the note says why");
	is_int(step(root, NULL), EFA_NODE_CACHE_HIT, "  the next step finds the new description");
}

static void test_hit_and_changes(const char *root)
{
	size_t fresh, cached;

	is_int(step(root, &fresh), EFA_NODE_CACHE_BUILT, "first step: read from the node");
	has_str(note, "no description kept yet", "  because nothing was kept");
	is_int(step(root, &cached), EFA_NODE_CACHE_HIT, "second step: from the cache");
	is_int(cached, fresh, "  with the node's %zu EFA devices", fresh);
	ok(fresh == 32, "  (the p5.48xlarge fixture has 32)");

	later();
	sh("echo 22222222-2222-2222-2222-222222222222 >%s/proc/sys/kernel/random/boot_id", root);
	expect_rebuild(root, "booted since", "another boot id");
	later();
	sh("echo 'Env=FI_UNIT_TEST=1' >>%s/p5.profile", tmp_at("profiles"));
	expect_rebuild(root, "p5.profile changed", "a profile edited in place");
	later();
	sh("printf 'Match=x9.*\\n' >%s/x9.profile", tmp_at("profiles"));
	expect_rebuild(root, "profiles changed", "a profile added");
	later();
	sh("echo 'libfabric-aws-9.9.9' >>%s/opt/amazon/efa_installed_packages", root);
	expect_rebuild(root, "efa_installed_packages changed", "the installer record rewritten");
	later();
	sh("mkdir %s/opt/aws-ofi-nccl", root);
	expect_rebuild(root, "/opt changed", "an install prefix appearing");
	later();
	sh("rm %s/sys/class/infiniband/rdmap113s0", root);
	is_int(step(root, &cached), EFA_NODE_CACHE_BUILT, "an EFA device gone from sysfs: the node is read again");
	has_str(note, "/sys/class/infiniband changed", "  and the note names the directory");
	is_int(cached, fresh - 1, "  which shows one device fewer");
	is_int(step(root, NULL), EFA_NODE_CACHE_HIT, "  the next step finds the new description");
	later();
	sh("mv %s/dev/infiniband/uverbs0 %s/dev/infiniband/gone", root, root);
	expect_rebuild(root, "/dev/infiniband changed", "a uverbs node gone from /dev");

	later();
	free(cfg->instance_type);
	cfg->instance_type = strdup("p5e.48xlarge");
	expect_rebuild(root, "InstanceType= changed", "efa.conf's InstanceType= changed");
}

/* The health check with the cache (the job prolog's gate): the node's
 * description may come from it, its faults never do. */
static void test_health_check(void)
{
	char root[4096];
	struct efa_node_check c;
	struct efa_error err;

	snprintf(root, sizeof(root), "%s", tmp_at("checked"));
	tmp_setup(sh("cp -a %s %s && mkdir -p %s/proc/sys/kernel/random && "
		     "echo 33333333-3333-3333-3333-333333333333 >%s/proc/sys/kernel/random/boot_id",
		     FIXTURES "/p5.48xlarge", root, root, root), "another p5.48xlarge node");
	later();
	ok(!efa_node_check(root, cfg, &cache, NULL, NULL, false, NULL, &c, &err) && !c.problem[0] &&
	   c.node->nnics == 32, "a healthy node passes, read once");
	efa_node_check_clear(&c);
	is_int(step(root, NULL), EFA_NODE_CACHE_HIT, "  and its description is kept");
	later();
	sh("echo '1: DOWN' >%s/sys/class/infiniband/rdmap114s0/ports/1/state", root);
	ok(!efa_node_check(root, cfg, &cache, NULL, NULL, false, NULL, &c, &err), "a port gone down");
	has_str(c.problem, "rdmap114s0", "  fails the check, the description kept or not");
	efa_node_check_clear(&c);
	sh("echo '4: ACTIVE' >%s/sys/class/infiniband/rdmap114s0/ports/1/state", root);
	later();
	sh("rm %s/sys/class/infiniband/rdmap115s0", root);
	ok(!efa_node_check(root, cfg, &cache, NULL, NULL, false, NULL, &c, &err) && c.node->nnics == 31,
	   "an EFA device gone: the check reads the node again");
	has_str(c.problem, "31", "  and fails it, naming the count");
	efa_node_check_clear(&c);
	ok(!efa_node_check(root, cfg, NULL, NULL, NULL, false, NULL, &c, &err) && c.node->nnics == 31 &&
	   c.problem[0], "the same verdict without the cache");
	efa_node_check_clear(&c);
}

/* One health check of the node under root, and the first one's verdict. */
struct check_run {
	const char *root;
	char verdict[EFA_NODE_PROBLEM_MAX];
	bool told;		/* another verdict was shown */
};

static enum failalloc_result check_once(void *ctx, long n)
{
	struct check_run *r = ctx;
	struct efa_node_check c;
	struct efa_error err;
	enum failalloc_result result = FAILALLOC_SAME;

	if (efa_node_check(r->root, cfg, NULL, NULL, NULL, false, NULL, &c, &err))
		result = FAILALLOC_FAILED;
	else if (!n)
		snprintf(r->verdict, sizeof(r->verdict), "%s", c.problem);
	else if (strcmp(c.problem, r->verdict)) {
		result = FAILALLOC_OTHER;
		if (!r->told)
			printf("# allocation %ld failing: \"%s\", not \"%s\"\n", n, c.problem,
			       r->verdict);
		r->told = true;
	}
	efa_node_check_clear(&c);
	return result;
}

/*
 * The health check with its n-th allocation failing, for every n it
 * makes, on a node under root whose verdict without failures is known:
 * no verdict (-1: the gate then drains nothing), or that same verdict.
 * Never another one: a node whose devices could not be listed for want
 * of memory is not a node that lost them.
 */
static void check_failing(const char *root, const char *what)
{
	struct check_run r = { .root = root };
	struct failalloc_tally t;
	int rc = failalloc_each(check_once, &r, &t);

	if (!ok(!rc, "%s: checked with %ld allocations", what, t.total))
		return;
	ok(t.failed > 0, "  %ld of the %ld failures gave no verdict", t.failed, t.total);
	is_int(t.other, 0, "  none gave another verdict");
	is_int(t.leaked, 0, "  none left memory allocated");
}

static void test_health_check_failing(void)
{
	char root[4096];

	snprintf(root, sizeof(root), "%s", tmp_at("failing"));
	tmp_setup(sh("cp -a %s %s && mkdir -p %s/proc/sys/kernel/random && "
		     "echo 44444444-4444-4444-4444-444444444444 >%s/proc/sys/kernel/random/boot_id",
		     FIXTURES "/p5.48xlarge", root, root, root), "a third p5.48xlarge node");
	check_failing(root, "a healthy node");
	sh("echo '1: DOWN' >%s/sys/class/infiniband/rdmap114s0/ports/1/state", root);
	check_failing(root, "a node with a port down");
	sh("rm %s/sys/class/infiniband/rdmap115s0", root);
	check_failing(root, "a node with an EFA device gone too");
}

/* root= is a link the tests point at one fixture, then another. */
static void test_other_root(void)
{
	const char *dir = cache.dir;
	size_t n;

	cache.dir = strdup(tmp_at("cache-roots"));
	require(cache.dir);
	sh("ln -sfn %s %s", FIXTURES "/p4d.24xlarge", tmp_at("node"));
	is_int(step(tmp_at("node"), &n), EFA_NODE_CACHE_BUILT, "root= linked to a p4d: read from the node");
	is_int(n, 4, "  its 4 EFA devices");
	is_int(step(tmp_at("node"), &n), EFA_NODE_CACHE_HIT, "  then from the cache");
	sh("ln -sfn %s %s", FIXTURES "/p5.48xlarge", tmp_at("node"));
	is_int(step(tmp_at("node"), &n), EFA_NODE_CACHE_BUILT, "the same root= linked to a p5: never the p4d's description");
	is_int(n, 32, "  its 32 EFA devices");
	free((char *)cache.dir);
	cache.dir = dir;
}

static void test_untrusted(const char *root)
{
	char file[4096];
	struct stat st;

	is_int(step(root, NULL), EFA_NODE_CACHE_HIT, "set-up: a description kept");
	sh("printf 'X' | dd of=%s bs=1 seek=200 conv=notrunc status=none", cache_file());
	expect_rebuild(root, "checksum mismatch", "a byte changed in the file");
	sh("truncate -s -10 %s", cache_file());
	expect_rebuild(root, "truncated", "a truncated file");
	sh("truncate -s 10 %s", cache_file());
	expect_rebuild(root, "not a node description", "a file cut to its first bytes");
	sh("printf '\\007' | dd of=%s bs=1 seek=8 conv=notrunc status=none", cache_file());
	expect_rebuild(root, "format version 7", "a file of another format version");
	chmod(cache_file(), 0666);
	expect_rebuild(root, "writable by others", "a file anyone may write");
	ok(!stat(cache_file(), &st) && (st.st_mode & 0777) == 0644, "  replaced by one of mode 0644");
	if (geteuid() == 0) {
		ok(!chown(cache_file(), 1, 1), "set-up: the file given to uid 1");
		expect_rebuild(root, "owned by uid 1, not root", "a file of another user");
		ok(!stat(cache_file(), &st) && st.st_uid == 0, "  replaced by root's");
	} else {
		ok(1, "# SKIP another user's file needs root");
	}
	snprintf(file, sizeof(file), "%s", cache_file());
	unlink(file);
	mkdir(file, 0755);
	is_int(step(root, NULL), EFA_NODE_CACHE_UNWRITABLE, "a directory where the file goes: read from the node");
	has_str(note, "not a regular file", "  and said");
	rmdir(file);
	chmod(tmp_at("cache"), 0777);
	is_int(step(root, NULL), EFA_NODE_CACHE_UNWRITABLE, "NodeCacheDir= writable by others: nothing kept there");
	has_str(note, "must be root's and writable by root alone", "  and the admin is told what to fix");
	ok(access(file, F_OK), "  (nothing written)");
	chmod(tmp_at("cache"), 0755);
}

static void test_settle(const char *root)
{
	struct efa_node_cache patient = { .dir = tmp_at("cache2"), .settle = 3600 };
	struct efa_nodedesc d;
	struct efa_error err;

	is_int(efa_node_describe(root, cfg, &patient, &d, note, sizeof(note), &err),
	       EFA_NODE_CACHE_BUILT, "inputs changed within the settle time: read from the node");
	has_str(note, "not kept", "  and not kept, as they may change again unseen");
	efa_nodedesc_clear(&d);
	ok(access(tmp_at("cache2"), F_OK), "  (nothing written)");
}

/* Every prefix of a good file, and every byte flipped, is refused cleanly. */
static void test_decode_damage(const char *root)
{
	struct efa_nodedesc d;
	struct efa_error err;
	size_t len = 0, refused = 0, flipped = 0;
	char *buf = NULL;
	int rc = efa_node_describe(root, cfg, &cache, &d, note, sizeof(note), &err);

	require(rc >= 0 && !efa_nodedesc_encode(&d, &buf, &len));
	efa_nodedesc_clear(&d);
	ok(!efa_nodedesc_decode(buf, len, &d, &err), "a description decodes");
	ok(d.profiles && d.node && d.node->closeness, "  with its profiles and the node's closeness index");
	{
		const struct efa_profile *p = d.profiles && d.node ?
			efa_profiles_match(d.profiles, d.node->instance_type, efa_node_accel_kinds(d.node)) :
			NULL;
		char names[256] = "";

		for (size_t i = 0; d.profiles && i < d.profiles->n; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? " " : "",
				 d.profiles->v[i].name);
		is_str(p ? p->name : NULL, "p5e", "  the profile its type matches is kept (InstanceType=p5e.48xlarge, set above)");
		is_str(names, "efa-common efa-cuda p5e", "  with what it includes, and nothing else (of the shipped set)");
	}
	efa_nodedesc_clear(&d);
	for (size_t cut = 0; cut < len; cut++)
		refused += efa_nodedesc_decode(buf, cut, &d, &err) != 0;
	is_int(refused, len, "each of its %zu truncations is refused", len);
	for (size_t i = 0; i < len; i += 7) {
		buf[i] ^= 0x5a;
		flipped += efa_nodedesc_decode(buf, len, &d, &err) != 0;
		buf[i] ^= 0x5a;
	}
	is_int(flipped, (len + 6) / 7, "each flipped byte is refused");
	free(buf);
}

int main(void)
{
	static char cache_dir[4096];
	char root[4096];

	if (tmp_open())
		return done_testing();
	snprintf(root, sizeof(root), "%s", tmp_at("root"));
	tmp_setup(sh("cp -a %s %s && mkdir -p %s/proc/sys/kernel/random && "
		     "echo 11111111-1111-1111-1111-111111111111 >%s/proc/sys/kernel/random/boot_id && "
		     "mkdir %s && cp %s/etc/profiles/*.profile %s",
		     FIXTURES "/p5.48xlarge", root, root, root, tmp_at("profiles"), SRCDIR,
		     tmp_at("profiles")), "a p5.48xlarge node and the shipped profiles");
	cfg = efa_config_defaults();
	if (!ok(cfg, "set-up: efa.conf's defaults"))
		return done_testing();
	free(cfg->profile_dir);
	cfg->profile_dir = strdup(tmp_at("profiles"));
	snprintf(cache_dir, sizeof(cache_dir), "%s", tmp_at("cache"));
	cache.dir = cache_dir;
	cache.settle = 0;
	later();

	test_hit_and_changes(root);
	test_other_root();
	test_untrusted(root);
	test_settle(root);
	test_decode_damage(root);
	test_health_check();
	test_health_check_failing();
	is_int(step(tmp_at("missing"), NULL), -1, "a root= that does not exist is an error");

	efa_config_free(cfg);
	tmp_close();
	return done_testing();
}
