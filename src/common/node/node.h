/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a node has: instance type, EFA devices, accelerators (NVIDIA GPUs,
 * Neuron devices) and the EFA software stack, read from sysfs, procfs, /dev
 * and /opt under a root prefix. Counts are never assumed per instance
 * type: pods see subsets, and new instance types appear.
 */
#ifndef EFA_NODE_H
#define EFA_NODE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/base/error.h"
#include "common/node/rdma.h"

#define EFA_PCI_ADDR_MAX 16

struct efa_pci {
	char addr[EFA_PCI_ADDR_MAX];	/* "0000:53:00.0"; "" when unknown */
	char *path;			/* "/sys/devices/pci0000:44/.../0000:53:00.0" */
	int numa;			/* -1 when unknown */
};

struct efa_nic {
	char *name;			/* "rdmap79s0" */
	struct efa_pci pci;
	int uverbs;			/* N of uverbsN, -1 when none */
	bool usable;			/* /dev/infiniband/uverbsN exists */
};

enum efa_accel_kind {
	EFA_ACCEL_GPU,
	EFA_ACCEL_NEURON,
};

struct efa_accel {
	enum efa_accel_kind kind;
	int index;			/* /dev/nvidiaN minor or neuronN; -1 unknown */
	struct efa_pci pci;
	int cores;			/* physical NeuronCores; 0 for GPUs */
	int lnc;			/* physical cores per logical NeuronCore by
					 * the runtime's default; 1 for GPUs */
	bool present;			/* its /dev node exists */
};

/* Versions are as installed ("2.1.0amzn5.0"), NULL when unknown. */
struct efa_stack {
	char *installer;
	char *libfabric;
	char *rdma_core;
	char *ofi_nccl;
	char *efa_driver;
	char *kernel;			/* /proc/sys/kernel/osrelease */
	char **libdirs;			/* node paths, NULL-terminated */
	bool has_libfabric;		/* in one of libdirs */
	bool has_net_plugin;		/* aws-ofi-nccl's libnccl-net*.so, in libdirs */
};

struct efa_node {
	char *instance_type;		/* "ml." stripped; NULL when unknown */
	bool instance_type_configured;	/* from efa.conf, not DMI */
	struct efa_nic *nics;		/* sorted by PCI address */
	size_t nnics;
	struct efa_accel *accels;	/* GPUs then Neuron devices, by index */
	size_t naccels;
	struct efa_stack stack;
	enum efa_rdma_read rdma_read;	/* of its EFA devices (rdma.h) */
	char rdma_read_why[384];
	unsigned char *closeness;	/* naccels x nnics, see efa_bind_index() */
	/* A node decoded from the node cache holds every string above in
	 * this one block; NULL: each is allocated on its own. Either way
	 * efa_node_free frees them; nothing else replaces one. */
	char *strings;
};

/*
 * Reads the node under root ("/" on a real node). instance_type, when not
 * NULL, overrides DMI. A node without devices is a success with zero
 * counts; only an unusable root or ENOMEM is an error.
 */
int efa_node_discover(const char *root, const char *instance_type,
		      struct efa_node **out, struct efa_error *err);
void efa_node_free(struct efa_node *node);

/* The kinds of accelerator the node has present: bit 1 << kind set for
 * each (what a profile's match falls back on, efa_profiles_match). */
unsigned efa_node_accel_kinds(const struct efa_node *node);

size_t efa_node_usable_nics(const struct efa_node *node);

/*
 * When the node shows fewer EFA devices than expected (a profile's
 * EFADevices=), says how many and which are missing for a message ("" when
 * none are): EFA PCI functions no efa driver is bound to are named; a NIC
 * that did not attach at all can only be counted. root is the node's.
 * -1 without the memory to look (buf is then "").
 */
int efa_node_missing_nics(const struct efa_node *node, const char *root, int expected,
			  char *buf, size_t size);

/*
 * Appends "; ADDR has no nvidia driver" to buf for each NVIDIA GPU under
 * root that the nvidia driver does not hold: what a node short of its
 * GPUs names.
 */
void efa_node_unbound_gpus(const char *root, char *buf, size_t size);

/*
 * The Neuron runtime numbers logical NeuronCores: on Trainium2 one is two
 * physical cores unless NEURON_LOGICAL_NC_CONFIG says 1 (aws-neuron-sdk
 * about-neuron/arch/neuron-features/logical-neuroncore-config.rst: "LNC=2
 * (default)", 64 cores on a trn2.48xlarge). lnc is the job's
 * NEURON_LOGICAL_NC_CONFIG, 0 for the device's default.
 */
int efa_neuron_logical_cores(const struct efa_accel *dev, int lnc);

/* NEURON_LOGICAL_NC_CONFIG's value: 1 or 2 (the only ones the runtime
 * takes), else -1. */
int efa_neuron_lnc_parse(const char *value);

/*
 * Explains why EFA cannot be used on this node, for a message that tells
 * the user what is missing; "" when at least one device is usable.
 */
void efa_node_efa_problem(const struct efa_node *node, char *buf, size_t size);

#endif
