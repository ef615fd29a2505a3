/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Adding a single-zone requirement to a job's --constraint. Slurm's
 * matching OR "[az-a|az-b]" makes every node of a job share one
 * alternative; a job may have only one such bracket, and a feature no node
 * has makes the submission fail, so the bracket lists only zones that
 * exist and can hold the job.
 */
#ifndef EFA_CONSTRAINT_H
#define EFA_CONSTRAINT_H

#include <stddef.h>

#include "common/base/error.h"

enum efa_constraint_result {
	EFA_CONSTRAINT_SET,		/* *out is the new constraint */
	EFA_CONSTRAINT_KEEP,		/* the user's already keeps one zone */
	EFA_CONSTRAINT_REFUSE,		/* cannot be made single-zone: err says how to fix */
};

/*
 * user: the job's constraint (NULL or "" for none); zones: the zone
 * features to allow, best first (at least one); prefix: the zone feature
 * prefix (a feature is a zone feature with or without Slinky's "k8s/").
 * Returns the result, or -1 on ENOMEM; *out is malloc'd for _SET.
 */
int efa_constraint_single_zone(const char *user, char *const *zones, const char *prefix,
			       char **out, struct efa_error *err);

#endif
