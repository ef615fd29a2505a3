/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether a node's EFA devices do RDMA read: libfabric aborts a process
 * that sets FI_EFA_USE_DEVICE_RDMA=1 on a device without it (libfabric
 * v1.17.0 prov/efa/src/rxr/rxr_env.c, rxr_env_param_get; v2.1.0
 * prov/efa/src/rdm/efa_rdm_util.c, efa_rdm_get_use_device_rdma; fi_efa(7),
 * FI_EFA_USE_DEVICE_RDMA), so nothing sets it without a yes from the
 * device itself or from aws-ofi-nccl's list of GPUDirect RDMA platforms.
 * The PCI device id does not tell: p4d's RDMA-read NICs are 0xefa0.
 */
#ifndef EFA_RDMA_H
#define EFA_RDMA_H

#include <stddef.h>

enum efa_rdma_read {
	EFA_RDMA_READ_UNKNOWN,		/* neither source says */
	EFA_RDMA_READ_NO,		/* the device says no */
	EFA_RDMA_READ_YES,
};

/*
 * The entry of aws-ofi-nccl's platform table (src/platform-aws.cpp,
 * platform_data_map, first match wins) that lists type with GPUDirect
 * RDMA required, or NULL when the table does not say so.
 */
const char *efa_platform_gdr(const char *type);

/*
 * Asks the first EFA device that answers, through rdma-core's libefa
 * (efadv_query_device, device_caps & EFADV_DEVICE_ATTR_CAPS_RDMA_READ),
 * loaded at run time from the node's library directories under root:
 * not a build dependency, and absent from fixtures unless a test puts a
 * stand-in there. why tells where the answer came from, or why there is
 * none.
 */
enum efa_rdma_read efa_device_rdma_read(const char *root, char *why, size_t size);

/* Where libefa.so.1 is looked for, in order (NULL-terminated). */
extern const char *const efa_libefa_dirs[];

/*
 * Both sources: yes where the table lists the type (no device is opened
 * on the types AWS runs GPUDirect RDMA on), else the device's answer.
 */
enum efa_rdma_read efa_rdma_read_discover(const char *root, const char *type,
					  char *why, size_t size);

#endif
