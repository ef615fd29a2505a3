/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A scratch directory for unit tests that need a real file system:
 * tmp_open() makes it, tmp_at("a/b") names a path inside, tmp_close()
 * removes it. Header-only, like tap.h.
 */
#ifndef EFA_TEST_TMPDIR_H
#define EFA_TEST_TMPDIR_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static char tmp_base[] = "/tmp/efa-unit-test.XXXXXX";

static inline int tmp_open(void)
{
	if (mkdtemp(tmp_base))
		return 0;
	ok(0, "mkdtemp: %s", strerror(errno));
	return -1;
}

/* tmp_base/rel; valid for the next 7 calls. */
static inline const char *tmp_at(const char *rel)
{
	static char path[8][4096];
	static int next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", tmp_base, rel);
	return p;
}

/* A set-up step the tests after it rely on: one TAP line. */
static inline void tmp_setup(int rc, const char *what)
{
	ok(rc == 0, "set-up: %s (%s)", what, rc ? strerror(errno) : "ok");
}

/* Writes text to root/rel, its directories made first (root is any
 * scratch tree: tmp_base, or a test's own). */
static inline void tmp_put(const char *root, const char *rel, const char *text)
{
	char path[4096], cmd[8192];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	require(system(cmd) == 0);
	f = fopen(path, "w");
	require(f != NULL);
	fputs(text, f);
	fclose(f);
}

static inline void tmp_close(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp_base);
	if (system(cmd))
		printf("# could not remove %s\n", tmp_base);
}

#endif
