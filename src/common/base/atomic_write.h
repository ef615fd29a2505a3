/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Replacing a file so that a reader (slurmctld, the job_submit bridge)
 * sees the old content or the new, never half of one: a temporary file
 * beside it, fsync, rename, and an fsync of the directory.
 */
#ifndef EFA_ATOMIC_WRITE_H
#define EFA_ATOMIC_WRITE_H

#include <stddef.h>
#include <sys/types.h>

#include "common/base/error.h"

int efa_write_atomic(const char *path, const char *text, size_t len, mode_t mode,
		     struct efa_error *err);

/*
 * The same without the fsyncs: readers still see the old file or the new
 * one, but a crash may leave either. For files made again from scratch
 * whenever they are lost (state in /run, figures node_exporter serves),
 * where a disk flush on every step would cost more than the file is worth.
 */
int efa_write_replace(const char *path, const char *text, size_t len, mode_t mode,
		      struct efa_error *err);

#endif
