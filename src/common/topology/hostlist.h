/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Slurm hostlist expressions: "n[1-3],gpu-[001-004],login". The compressor
 * writes what Slurm's own parser reads back into the same names (a range
 * keeps the width of its first number, so zero padding survives); the
 * expander reads that form back, for comparing files we wrote earlier.
 */
#ifndef EFA_HOSTLIST_H
#define EFA_HOSTLIST_H

#include <stddef.h>

#include "common/base/error.h"

/* More names than this in one expression is an error, not a malloc storm:
 * four times the largest Slurm clusters run today. */
#define EFA_HOSTLIST_MAX (1 << 18)

/*
 * The names (in any order, duplicates dropped) as one expression, sorted:
 * by prefix, then by number. NULL on ENOMEM; "" for no names.
 */
char *efa_hostlist_compress(char *const *names, size_t n);

/*
 * Expands expr into *names (NULL-terminated, free with efa_strv_free) and
 * *n, in the order Slurm's hostlist_create() gives. Items are separated by
 * commas, blanks or newlines (empty ones skipped); each is a name or
 * "prefix[ranges]suffix", where prefix may hold [ranges] of its own.
 */
int efa_hostlist_expand(const char *expr, char ***names, size_t *n, struct efa_error *err);

#endif
