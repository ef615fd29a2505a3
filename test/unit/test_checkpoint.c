/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/checkpoint/checkpoint.h"
#include "common/checkpoint/checkpoint_dir.h"
#include "tap.h"
#include "tmpdir.h"

/* The result of a call that writes a path into buf: the path, or the error. */
static const char *result(int rc, const char *buf, const struct efa_error *err)
{
	return rc ? err->msg : buf;
}

static void normalizes(const char *in, const char *want)
{
	char buf[EFA_CKPT_PATH_MAX];
	struct efa_error err = { 0 };
	int rc = efa_path_normalize(in, buf, sizeof(buf), &err);

	is_str(result(rc, buf, &err), want, "normalize '%s'", in);
}

static void test_normalize(void)
{
	char small[8];
	struct efa_error err = { 0 };

	normalizes("/", "/");
	normalizes("//", "/");
	normalizes("/fsx//ckpt/", "/fsx/ckpt");
	normalizes("/fsx/./ckpt/.", "/fsx/ckpt");
	normalizes("/fsx/ckpt/../other", "/fsx/other");
	normalizes("/a/b/c/../../d", "/a/d");
	normalizes("/fsx/..", "/");
	normalizes("/../../etc", "/etc");
	normalizes("/a/..b/.c/...", "/a/..b/.c/...");
	normalizes("fsx/ckpt", "'fsx/ckpt' is not an absolute path");
	normalizes("", "'' is not an absolute path");
	normalizes("./fsx", "'./fsx' is not an absolute path");
	normalizes("/fsx/a\nb", "'/fsx/a\nb' contains a control character");
	ok(efa_path_normalize("/abcdefgh", small, sizeof(small), &err) == -1,
	   "a path longer than the buffer is refused");
	has_str(err.msg, "longer than 7 bytes", "  and said so");
	ok(efa_path_normalize("/a/b/../..", small, sizeof(small), &err) == 0 &&
	   !strcmp(small, "/"), "what it collapses to is what must fit");
}

static void allows(const char *root, const char *path, const char *want)
{
	char buf[EFA_CKPT_PATH_MAX];
	struct efa_error err = { 0 };
	int rc = efa_checkpoint_allowed(root, path, buf, sizeof(buf), &err);

	ok(rc == 0, "%s is allowed under %s", path, root);
	is_str(result(rc, buf, &err), want, "  normalized");
}

static void refuses(const char *root, const char *path, const char *want)
{
	char buf[EFA_CKPT_PATH_MAX];
	struct efa_error err = { 0 };

	ok(efa_checkpoint_allowed(root, path, buf, sizeof(buf), &err) == -1,
	   "%s is refused under %s", path, root);
	has_str(err.msg, want, "  message: %s", want);
}

static void test_allowed(void)
{
	allows("/fsx/ckpt", "/fsx/ckpt", "/fsx/ckpt");
	allows("/fsx/ckpt", "/fsx/ckpt/alice/run1/", "/fsx/ckpt/alice/run1");
	allows("/fsx/ckpt/", "/fsx//ckpt/./alice", "/fsx/ckpt/alice");
	allows("/fsx/ckpt", "/fsx/ckpt/alice/../bob", "/fsx/ckpt/bob");
	allows("/", "/home/alice/run1", "/home/alice/run1");
	refuses("/fsx/ckpt", "/fsx/ckpt2/alice",
		"/fsx/ckpt2/alice is outside the checkpoint root /fsx/ckpt: use a directory under /fsx/ckpt");
	refuses("/fsx/ckpt", "/fsx/ckpt/../../etc",
		"/fsx/ckpt/../../etc (/etc once normalized) is outside the checkpoint root /fsx/ckpt");
	refuses("/fsx/ckpt/", "/fsx", "outside the checkpoint root /fsx/ckpt:");
	refuses("/fsx/ckpt", "ckpt/alice", "'ckpt/alice' is not an absolute path");
}

static void test_names(void)
{
	char long_name[EFA_CKPT_NAME_MAX + 2];

	ok(efa_checkpoint_name_ok("train-llama"), "a plain job name is a directory name");
	ok(efa_checkpoint_name_ok("my job ..."), "spaces and dots are fine");
	ok(!efa_checkpoint_name_ok(""), "an empty name is not");
	ok(!efa_checkpoint_name_ok(NULL), "no name is not");
	ok(!efa_checkpoint_name_ok("."), "'.' is not");
	ok(!efa_checkpoint_name_ok(".."), "'..' is not");
	ok(!efa_checkpoint_name_ok("a/b"), "a name with '/' is not");
	ok(!efa_checkpoint_name_ok("tab\there"), "a control character is not");
	ok(!efa_checkpoint_name_ok("caf\xc3\xa9"), "non-ASCII is not");
	memset(long_name, 'x', EFA_CKPT_NAME_MAX);
	long_name[EFA_CKPT_NAME_MAX] = '\0';
	ok(efa_checkpoint_name_ok(long_name), "%d bytes is fine", EFA_CKPT_NAME_MAX);
	strcat(long_name, "x");
	ok(!efa_checkpoint_name_ok(long_name), "%d bytes is too long", EFA_CKPT_NAME_MAX + 1);
}

static void array_defaults_to(const char *root, const char *user, const char *name,
			      unsigned long id, const char *task, const char *want)
{
	char buf[EFA_CKPT_PATH_MAX];
	struct efa_error err = { 0 };
	int rc = efa_checkpoint_default(root, user, name, id, task, buf, sizeof(buf), &err);

	is_str(result(rc, buf, &err), want, "default for user %s, job '%s' (%lu)%s%s under %s",
	       user ? user : "(null)", name ? name : "(null)", id, task ? ", array task " : "",
	       task ? task : "", root);
}

static void defaults_to(const char *root, const char *user, const char *name,
			unsigned long id, const char *want)
{
	array_defaults_to(root, user, name, id, NULL, want);
}

static void test_default(void)
{
	defaults_to("/fsx/ckpt", "alice", "train", 42, "/fsx/ckpt/alice/train");
	defaults_to("/fsx/ckpt/", "alice", "train", 42, "/fsx/ckpt/alice/train");
	defaults_to("/fsx/ckpt", "alice", "a/b", 42, "/fsx/ckpt/alice/42");
	defaults_to("/fsx/ckpt", "alice", "..", 42, "/fsx/ckpt/alice/42");
	defaults_to("/fsx/ckpt", "alice", NULL, 7, "/fsx/ckpt/alice/7");
	defaults_to("/", "alice", "train", 42, "/alice/train");
	defaults_to("/fsx/ckpt", "../bob", "train", 42, "user name '../bob' cannot be a directory name");
	array_defaults_to("/fsx/ckpt", "alice", "sweep", 40, "3", "/fsx/ckpt/alice/sweep_3");
	array_defaults_to("/fsx/ckpt", "alice", "a/b", 40, "3", "/fsx/ckpt/alice/40_3");
	array_defaults_to("/fsx/ckpt", "alice", "sweep", 0, "%a", "/fsx/ckpt/alice/sweep_%a");
}

static void test_options(void)
{
	char buf[EFA_CKPT_PATH_MAX];
	struct efa_error err = { 0 };
	long keep = -7;

	ok(efa_checkpoint_dir_parse("/fsx/ckpt/run1/", buf, sizeof(buf), &err) == 0 &&
	   !strcmp(buf, "/fsx/ckpt/run1"), "--checkpoint-dir is normalized");
	ok(efa_checkpoint_dir_parse("run1", buf, sizeof(buf), &err) == -1,
	   "--checkpoint-dir=run1 is refused");
	has_str(err.msg, "invalid --checkpoint-dir value 'run1': 'run1' is not an absolute path: use an absolute path",
		"  saying what works");
	ok(efa_checkpoint_dir_parse("", buf, sizeof(buf), &err) == -1, "an empty --checkpoint-dir is refused");
	has_str(err.msg, "--checkpoint-dir needs a path", "  and said so");
	ok(efa_checkpoint_dir_parse(NULL, buf, sizeof(buf), &err) == -1, "no value is refused");

	ok(efa_checkpoint_keep_parse("3", &keep, &err) == 0 && keep == 3, "--checkpoint-keep=3");
	ok(efa_checkpoint_keep_parse("0", &keep, &err) == 0 && keep == 0, "--checkpoint-keep=0");
	ok(efa_checkpoint_keep_parse("100000", &keep, &err) == 0 && keep == 100000, "the largest value");
	keep = 5;
	ok(efa_checkpoint_keep_parse("100001", &keep, &err) == -1, "one more is refused");
	ok(efa_checkpoint_keep_parse("-1", &keep, &err) == -1, "a negative value is refused");
	ok(efa_checkpoint_keep_parse("3x", &keep, &err) == -1, "trailing text is refused");
	ok(efa_checkpoint_keep_parse(" 3", &keep, &err) == -1, "leading space is refused");
	ok(efa_checkpoint_keep_parse("", &keep, &err) == -1, "empty is refused");
	ok(efa_checkpoint_keep_parse(NULL, &keep, &err) == -1, "no value is refused");
	is_int(keep, 5, "  a refused value leaves the old one");
	has_str(err.msg, "invalid --checkpoint-keep value '': use a whole number", "  message");
}

static unsigned long fake_magic;

static int fake_statfs(const char *path, struct statfs *st)
{
	(void)path;
	memset(st, 0, sizeof(*st));
	st->f_type = (long)fake_magic;
	return 0;
}

static int missing_statfs(const char *path, struct statfs *st)
{
	(void)path;
	(void)st;
	errno = ENOENT;
	return -1;
}

static void test_fs(void)
{
	struct efa_error err = { 0 };

	fake_magic = EFA_LUSTRE_SUPER_MAGIC;
	ok(efa_checkpoint_fs_check("/fsx/ckpt", EFA_CKPT_FS_LUSTRE, fake_statfs, &err) == 0,
	   "a root on Lustre passes CheckpointFS=lustre");
	fake_magic = 0xEF53;
	ok(efa_checkpoint_fs_check("/fsx/ckpt", EFA_CKPT_FS_LUSTRE, fake_statfs, &err) == -1,
	   "a root on ext4 fails CheckpointFS=lustre");
	is_str(err.msg, "checkpoint root /fsx/ckpt is on ext4, not Lustre (CheckpointFS=lustre): is FSx for Lustre mounted there?",
	       "  naming the path and the file system found");
	fake_magic = 0x12345678;
	ok(efa_checkpoint_fs_check("/fsx/ckpt", EFA_CKPT_FS_LUSTRE, fake_statfs, &err) == -1,
	   "an unknown file system fails");
	has_str(err.msg, "on a file system with magic 0x12345678, not Lustre", "  named by its magic");
	ok(efa_checkpoint_fs_check("/fsx/ckpt", EFA_CKPT_FS_LUSTRE, missing_statfs, &err) == -1,
	   "a root that cannot be checked fails");
	has_str(err.msg, "cannot check the file system of checkpoint root /fsx/ckpt: No such file or directory: is it mounted?",
		"  and says why");
	ok(efa_checkpoint_fs_check("/fsx/ckpt", EFA_CKPT_FS_ANY, missing_statfs, &err) == 0,
	   "CheckpointFS=any does not look");
	ok(efa_checkpoint_fs_check("/nonexistent-efa-root", EFA_CKPT_FS_LUSTRE, NULL, &err) == -1,
	   "without a stand-in, statfs(2) is asked");
	has_str(err.msg, "/nonexistent-efa-root: No such file or directory", "  about the root");
	is_str(efa_fs_name(0x6969), "nfs", "NFS is named");
	is_str(efa_fs_name(0x01021994), "tmpfs", "tmpfs is named");
	is_str(efa_fs_name(0x794c7630), "overlay", "overlay is named");
	ok(efa_fs_name(0x1) == NULL, "an unknown magic has no name");
}

static int opens(const char *root, const char *dir, uid_t uid, bool create, mode_t mode,
		 struct efa_error *err)
{
	int fd = efa_checkpoint_open(root, dir, uid, create, mode, err);

	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : -1;
}

static unsigned mode_of(const char *path)
{
	struct stat st;

	return lstat(path, &st) ? 0 : (unsigned)(st.st_mode & 07777);
}

static void open_fails(const char *root, const char *dir, uid_t uid, bool create,
		       const char *want, const char *what)
{
	struct efa_error err = { 0 };

	ok(opens(root, dir, uid, create, 0700, &err) == -1, "%s", what);
	has_str(err.msg, want, "  message: %s", want);
}

static void test_create(void)
{
	uid_t me = geteuid();
	struct efa_error err = { 0 };
	char root[512];
	int failed = 0;

	snprintf(root, sizeof(root), "%s", tmp_at("root"));
	tmp_setup(mkdir(root, 0755), "mkdir root");
	umask(077);
	ok(opens(root, tmp_at("root/alice/run1"), me, true, 0750, &err) == 0,
	   "creates <root>/alice/run1 (%s)", err.msg);
	is_int(mode_of(tmp_at("root/alice")), 0750, "  each missing component with the mode given");
	is_int(mode_of(tmp_at("root/alice/run1")), 0750, "  exactly, whatever the umask");
	ok(opens(root, tmp_at("root/alice/run1"), me, true, 0700, &err) == 0, "an existing directory is fine");
	is_int(mode_of(tmp_at("root/alice/run1")), 0750, "  and its mode is left alone");
	ok(opens(root, tmp_at("root/alice/run1"), me, false, 0, &err) == 0, "opening without create");
	ok(opens(NULL, tmp_at("root/alice/run2"), me, true, 0700, &err) == 0,
	   "without a root, the whole path is walked from / (%s)", err.msg);

	/* Many nodes and steps create the same directory at once. */
	for (int i = 0; i < 8; i++) {
		if (fork() == 0)
			_exit(opens(root, tmp_at("root/alice/same/a/b/c"), me, true, 0700, NULL) ? 1 : 0);
	}
	for (int i = 0; i < 8; i++) {
		int status = 0;

		wait(&status);
		failed += !WIFEXITED(status) || WEXITSTATUS(status);
	}
	is_int(failed, 0, "8 processes creating the same path at once all succeed");

	tmp_setup(mkdir(tmp_at("target"), 0777), "mkdir target");
	tmp_setup(symlink(tmp_at("target"), tmp_at("root/alice/link")), "symlink root/alice/link -> target");
	open_fails(root, tmp_at("root/alice/link/run1"), me, true, "root/alice/link is a symbolic link: checkpoint paths may not contain links",
		   "a symbolic link on the path fails");
	ok(access(tmp_at("target/run1"), F_OK) == -1 && errno == ENOENT, "  and nothing is created at its target");
	open_fails(root, tmp_at("root/alice/link"), me, true, "root/alice/link is a symbolic link",
		   "a symbolic link as the directory itself fails");
	tmp_setup(symlink(tmp_at("root"), tmp_at("rootlink")), "symlink rootlink -> root");
	open_fails(tmp_at("rootlink"), tmp_at("rootlink/alice"), me, true, "rootlink is a symbolic link",
		   "a root reached through a link fails: CheckpointRoot= must be the real path");
	tmp_setup(close(open(tmp_at("root/alice/file"), O_CREAT | O_WRONLY, 0600)), "a file root/alice/file");
	open_fails(root, tmp_at("root/alice/file/run1"), me, true, "root/alice/file exists and is not a directory",
		   "a file on the path fails");
	open_fails(tmp_at("gone"), tmp_at("gone/alice"), me, true, "gone does not exist on this node: is the file system of checkpoint root /tmp/",
		   "a missing root fails, saying the file system may not be mounted");
	ok(opens(tmp_at("gone/ckpt"), tmp_at("gone/ckpt/alice"), me, true, 0700, &err) == -1 &&
	   strstr(err.msg, "/gone does not exist on this node") && strstr(err.msg, "/gone/ckpt mounted?"),
	   "  also when a directory above the root is missing (%s)", err.msg);
	ok(access(tmp_at("gone"), F_OK) == -1, "  and the root is not created");
	open_fails(root, tmp_at("root/alice/run3"), me, false, "cannot open", "without create, a missing directory fails");
	open_fails(root, tmp_at("elsewhere/run1"), me, true, "is not under the checkpoint root", "a directory outside the root fails");

	if (me != 0) {
		open_fails(root, tmp_at("root/alice/run1"), me + 1, false, "neither root nor the job's user",
			   "a path through another user's directory fails");
		return;
	}
	/* As root: other users' directories. */
	tmp_setup(mkdir(tmp_at("root/bob"), 0755), "mkdir root/bob");
	tmp_setup(chown(tmp_at("root/bob"), 65534, 65534), "chown root/bob to uid 65534");
	open_fails(root, tmp_at("root/bob/run1"), 0, true, "root/bob is owned by uid 65534, neither root nor the job's user (uid 0)",
		   "a path through another user's directory fails");
	ok(access(tmp_at("root/bob/run1"), F_OK) == -1, "  before creating anything in it");
	open_fails(root, tmp_at("root/bob"), 0, true, "root/bob is owned by uid 65534, not by the job's user (uid 0): a job's checkpoint directory must be its own",
		   "another user's directory as the job's fails");
	tmp_setup(mkdir(tmp_at("root/open"), 0777), "mkdir root/open");
	tmp_setup(chmod(tmp_at("root/open"), 0777), "chmod 0777 root/open");
	tmp_setup(mkdir(tmp_at("root/open/x"), 0700), "mkdir root/open/x");
	tmp_setup(chown(tmp_at("root/open/x"), 4242, 4242), "chown root/open/x to uid 4242");
	open_fails(root, tmp_at("root/open/x"), 4242, false, "root/open is writable by every user without the sticky bit",
		   "a world-writable directory of root's without the sticky bit fails");
	tmp_setup(chmod(tmp_at("root/open"), 01777), "chmod 1777 root/open");
	ok(opens(root, tmp_at("root/open/x"), 4242, false, 0, &err) == 0, "  with the sticky bit it is fine (%s)", err.msg);
}

int main(void)
{
	test_normalize();
	test_allowed();
	test_names();
	test_default();
	test_options();
	test_fs();
	if (tmp_open())
		return done_testing();
	test_create();
	tmp_close();
	return done_testing();
}
