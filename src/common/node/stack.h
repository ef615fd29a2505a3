/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node's EFA software stack: versions from the EFA installer's record
 * (/opt/amazon/efa_installed_packages), the kernel release and the library
 * directories that exist, plus version comparison for profile conditions.
 */
#ifndef EFA_STACK_H
#define EFA_STACK_H

#include "common/node/node.h"
#include "common/node/sysfs.h"

/* Every file the discovery reads lies under one of these (NULL-terminated):
 * what must be copied out of an image to read its stack. */
extern const char *const efa_stack_roots[];

/* The EFA installer's record, and the install prefixes whose lib, lib64
 * and lib/<multiarch> directories are searched for libraries. */
extern const char efa_stack_record[];
extern const char *const efa_stack_prefixes[];

int efa_stack_discover(const struct efa_sysfs *fs, struct efa_stack *stack);

/*
 * The software alone (installer record, libraries), without the kernel:
 * what a container image brings. The same layouts are looked for under
 * any root, the node's or an image's.
 */
int efa_stack_discover_software(const struct efa_sysfs *fs, struct efa_stack *stack);
void efa_stack_clear(struct efa_stack *stack);

/* Parses efa_installed_packages text into stack's versions. */
int efa_stack_parse_installed(const char *text, struct efa_stack *stack);

/*
 * The installed version of a component named in profiles: "installer",
 * "libfabric", "rdma-core", "ofi-nccl", "efa-driver", or the running
 * "kernel" ("5.10.228-219.884.amzn2.x86_64" compares as 5.10.228).
 * *known is false for an unknown name (a profile error), and the result
 * NULL when the node does not say.
 */
const char *efa_stack_version(const struct efa_stack *stack, const char *component,
			      bool *known);

/*
 * Compares the leading dotted numbers of two versions ("2.1.0amzn5.0" is
 * 2.1.0; missing parts are 0): <0, 0, >0.
 */
int efa_version_cmp(const char *a, const char *b);

#endif
