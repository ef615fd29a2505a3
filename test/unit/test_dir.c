/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Removing a tree from directory descriptors (dir.h, efa_remove_tree):
 * links inside are removed, never followed, and a directory swapped for a
 * link while the walk runs (by whoever owns part of the tree: the image
 * reader gives an image's owner its unpacked root) deletes nothing outside.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base/dir.h"
#include "tap.h"
#include "tmpdir.h"

#define VICTIMS 200
#define ROUNDS 300

static int count_victims(void)
{
	char path[4096];
	int n = 0;

	for (int i = 0; i < VICTIMS; i++) {
		snprintf(path, sizeof(path), "%s/%d", tmp_at("victim"), i);
		n += access(path, F_OK) == 0;
	}
	return n;
}

/* A tree: t/a/b/{f0..f9}, t/a/{g0..g9}, t/link -> victim; 0 when made
 * whole (the race below may move t/a while it is made). */
static int make_tree(const char *t)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/a/b' 2>/dev/null && for i in 0 1 2 3 4 5 6 7 8 9; do : >'%s/a/b/f'$i; : >'%s/a/g'$i; done 2>/dev/null && ln -sfn '%s' '%s/link'",
		 t, t, t, tmp_at("victim"), t);
	return system(cmd);
}

static void test_remove(void)
{
	struct efa_error err;
	char cmd[8192];
	int top, survivors;
	pid_t swapper;

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && for i in $(seq 0 %d); do : >'%s'/$i; done",
		 tmp_at("victim"), VICTIMS - 1, tmp_at("victim"));
	tmp_setup(system(cmd), "200 files outside the tree");
	top = open(tmp_base, O_RDONLY | O_DIRECTORY);
	require(top >= 0);

	tmp_setup(make_tree(tmp_at("t")), "a tree with a link to the files outside");
	ok(!efa_remove_tree(top, "t", &err), "a tree with a link to a directory outside is removed");
	ok(access(tmp_at("t"), F_OK) != 0, "  all of it");
	is_int(count_victims(), VICTIMS, "  the link removed, what it pointed to untouched");
	ok(!efa_remove_tree(top, "t", &err), "a tree already gone: done");

	/* The race: a process swaps t/a (a directory) for a link to the
	 * victims and back, as fast as it can, while the tree is removed
	 * again and again. */
	swapper = fork();
	require(swapper >= 0);
	if (!swapper) {
		char a[4096], held[4096], link[4096];

		snprintf(a, sizeof(a), "%s/a", tmp_at("t"));
		snprintf(held, sizeof(held), "%s/held", tmp_base);
		snprintf(link, sizeof(link), "%s/a.link", tmp_base);
		for (;;) {
			unlink(link);
			if (symlink(tmp_at("victim"), link))
				continue;
			if (!rename(a, held)) {
				rename(link, a);	/* a is now the link */
				unlink(a);
				rename(held, a);	/* and a directory again */
			}
		}
	}
	for (int r = 0; r < ROUNDS; r++) {
		make_tree(tmp_at("t"));			/* whole or not */
		efa_remove_tree(top, "t", &err);	/* may fail on a swapped name: never follows */
	}
	kill(swapper, SIGKILL);
	waitpid(swapper, NULL, 0);
	survivors = count_victims();
	is_int(survivors, VICTIMS, "a directory swapped for a link while the tree is removed (300 rounds): nothing outside deleted");
	close(top);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/t' '%s/held' '%s/a.link'", tmp_base, tmp_base, tmp_base);
	tmp_setup(system(cmd), "what the race left removed");
}

int main(void)
{
	if (!tmp_open()) {
		test_remove();
		tmp_close();
	}
	return done_testing();
}
