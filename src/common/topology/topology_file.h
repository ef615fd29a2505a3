/* SPDX-License-Identifier: Apache-2.0 */
/*
 * topology.conf or topology.yaml on disk: replaced only when its content changes (Slurm
 * re-reads it on every reload, and an unchanged file needs none), with a
 * summary of the change for the log.
 */
#ifndef EFA_TOPOLOGY_FILE_H
#define EFA_TOPOLOGY_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"

#define EFA_TOPOLOGY_MAX_SIZE (64 * 1024 * 1024)

/*
 * Replaces path with text (atomically, mode 0644) unless it holds exactly
 * that already; *changed says which. A missing file counts as empty. When
 * it changed, summary gets what did (see efa_topology_diff).
 */
int efa_topology_update(const char *path, const char *text, bool *changed, char *summary,
			size_t size, struct efa_error *err);

/*
 * What changed from one topology.conf text to another, in Slurm's syntax
 * (SwitchName=/BlockName= with Nodes= and Switches=), or from one
 * topology.yaml to another (its first topology): switches added,
 * removed and moved to another parent; nodes moved, added and removed,
 * with a few names of each.
 */
void efa_topology_diff(const char *before, const char *after, char *summary, size_t size);

#endif
