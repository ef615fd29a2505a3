/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a node's checkpoint file systems answer. A hung FSx for Lustre
 * (or NFS) client leaves every checkpoint a job tries to write, and every
 * ls of the mount, waiting for ever: the node cannot run a job that saves
 * there, however healthy its GPUs and EFA are. Each partition's
 * CheckpointRoot= is looked at (statfs, then the first entry of the
 * directory) in a child with CheckpointTimeout= as its deadline; only a
 * file system that does not answer in time is the node's fault. A root
 * that is not there or not readable answers: that is efa.conf's or the
 * mount's business, never a reason to drain (bad input drains nothing).
 */
#ifndef EFA_HEALTH_CHECKPOINT_ANSWER_H
#define EFA_HEALTH_CHECKPOINT_ANSWER_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/deadline.h"
#include "common/config/efa_conf.h"

/*
 * Looks at the CheckpointRoot= of partition (the job's, in the job
 * prolog), or of every partition when partition is NULL (the health check,
 * which does not know the node's partitions), each root once. When one
 * does not answer within cfg's CheckpointTimeout=, appends the problem to
 * buf ("; " after what is there) and returns true; the roots after it are
 * not looked at, so a check takes at most one timeout (and the reaping of
 * its child). A child stuck in the file system is left behind (child.h).
 * With dl, the timeout is what is left of it when that is less; a root
 * there is no time left for is a problem too (the check ran out).
 */
bool efa_checkpoint_answer_problem(const struct efa_config *cfg, const char *partition,
				   const struct efa_deadline *dl, char *buf, size_t size);

#endif
