/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rdma-core's public ABI for the one EFA question slurm-efa asks (does the
 * device do RDMA read), declared here so that rdma-core is not a build
 * dependency: providers/efa/efadv.h's struct efadv_device_attr up to
 * max_rdma_size, the size every libefa since rdma-core 26 accepts as
 * inlen. rdma.c asks through it and the tests' stand-in libefa
 * (test/standins/fakeefa.c) answers through it: one layout for both.
 */
#ifndef EFA_EFADV_ABI_H
#define EFA_EFADV_ABI_H

#include <stdint.h>

struct efadv_device_attr {
	uint64_t comp_mask;
	uint32_t max_sq_wr;
	uint32_t max_rq_wr;
	uint16_t max_sq_sge;
	uint16_t max_rq_sge;
	uint16_t inline_buf_size;
	uint8_t reserved[2];
	uint32_t device_caps;
	uint32_t max_rdma_size;
};

#define EFADV_DEVICE_ATTR_CAPS_RDMA_READ (1u << 0)

#endif
