/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Environment profiles: data files ("NAME.profile" in ProfileDir) that say
 * which variables a kind of node gets.
 *
 *   # p5.profile
 *   Match=p5.48xlarge,p5e.48xlarge     instance types, fnmatch(3) patterns
 *   Accelerator=nvidia                 or: nodes with these devices
 *   Include=efa-cuda                   other profiles, applied first
 *   Env=FI_EFA_USE_DEVICE_RDMA=1 If=libfabric<1.18
 *   EFADevices=p5.48xlarge:32          EFA devices a healthy node shows
 *   EFADevicesWait=15                  seconds they may take to appear
 *
 * Env lines apply in order, included profiles first; a later line whose
 * conditions hold replaces an earlier value. Conditions (comma-separated,
 * all must hold) compare a component of the EFA stack (installer,
 * libfabric, rdma-core, ofi-nccl, efa-driver) or the kernel release with a
 * version using <, <=,
 * >, >=, == or !=; a condition on a version the node does not record does
 * not hold. The profile for a node is the one whose Match names its type
 * exactly, else the pattern with the most literal characters.
 */
#ifndef EFA_PROFILE_H
#define EFA_PROFILE_H

#include <stddef.h>

#include "common/base/error.h"
#include "common/node/node.h"

enum efa_cmp {
	EFA_CMP_LT,
	EFA_CMP_LE,
	EFA_CMP_GT,
	EFA_CMP_GE,
	EFA_CMP_EQ,
	EFA_CMP_NE,
};
#define EFA_CMP_COUNT (EFA_CMP_NE + 1)

struct efa_cond {
	char *component;
	enum efa_cmp cmp;
	char *version;
};

struct efa_profile_var {
	char *name;
	char *value;
	struct efa_cond *conds;
	size_t nconds;
	char *where;			/* "p5.profile:12" */
};

/* EFADevices=TYPE:N: how many EFA devices a healthy TYPE shows. */
struct efa_expect {
	char *type;
	int count;
};

struct efa_profile {
	char *name;			/* file name without ".profile" */
	char **match;			/* NULL-terminated; NULL: include-only */
	char **includes;		/* NULL-terminated or NULL */
	char **accelerators;		/* "nvidia", "neuron": for nodes with them
					 * whose type only "*" matches */
	struct efa_profile_var *vars;
	size_t nvars;
	struct efa_expect *expect;
	size_t nexpect;
	int expect_wait;		/* EFADevicesWait=, seconds */
};

struct efa_profiles {
	struct efa_profile *v;
	size_t n;
	/* A set decoded from the node cache holds its profiles' strings in
	 * this one block; NULL: each is allocated on its own. */
	char *strings;
};

/* Loads every *.profile in dir; errors name the file and line. */
int efa_profiles_load(const char *dir, struct efa_profiles **out, struct efa_error *err);

/* Parses one profile's text (name without ".profile"), for tests/fuzzing. */
int efa_profile_parse(const char *text, size_t len, const char *name,
		      struct efa_profile *out, struct efa_error *err);

void efa_profiles_free(struct efa_profiles *set);

/*
 * The EFA devices the profile says an instance of this type has (0: it
 * does not say), and in *wait how long a node may take to show them all.
 */
int efa_profile_expected_nics(const struct efa_profile *p, const char *instance_type,
			      int *wait);

/* Frees what efa_profile_parse filled in. */
void efa_profile_clear(struct efa_profile *p);

/*
 * The profile for an instance type (NULL type: only a "*" match), or NULL.
 * A type that no pattern but "*" names gets the profile whose
 * Accelerator= names a kind the node has: accels has bit 1 << kind set
 * for each enum efa_accel_kind present.
 */
const struct efa_profile *efa_profiles_match(const struct efa_profiles *set,
					     const char *instance_type, unsigned accels);

const struct efa_profile *efa_profiles_find(const struct efa_profiles *set,
					    const char *name);

/*
 * Keeps in set only what a node of this type with these accelerators uses:
 * the profile efa_profiles_match picks and those it includes, in their
 * order, so that the same match and includes follow from the rest (what
 * the node cache keeps, decoded at every step). The set is left whole when
 * nothing matches or the rest would match otherwise. Returns 0, or -1 out
 * of memory (the set whole).
 */
int efa_profiles_keep_matching(struct efa_profiles *set, const char *instance_type,
			       unsigned accels);

/*
 * Whether cond holds for stack; why gets a short explanation either way
 * ("libfabric 2.1.0amzn5.0 is not < 1.18").
 */
bool efa_cond_holds(const struct efa_cond *cond, const struct efa_stack *stack,
		    char *why, size_t size);

#endif
