/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/node/node.h"
#include "common/node/stack.h"
#include "common/node/sysfs.h"

#define PCI_VENDOR_NVIDIA 0x10de
#define PCI_CLASS_3D_CONTROLLER 0x0302	/* class >> 8 */

static void pci_clear(struct efa_pci *pci)
{
	free(pci->path);
	pci->path = NULL;
}

void efa_node_free(struct efa_node *node)
{
	if (!node)
		return;
	if (node->strings) {
		free(node->stack.libdirs);	/* the list; its strings are in the block */
		free(node->strings);
	} else {
		free(node->instance_type);
		for (size_t i = 0; i < node->nnics; i++) {
			free(node->nics[i].name);
			pci_clear(&node->nics[i].pci);
		}
		for (size_t i = 0; i < node->naccels; i++)
			pci_clear(&node->accels[i].pci);
		efa_stack_clear(&node->stack);
	}
	free(node->nics);
	free(node->accels);
	free(node->closeness);
	free(node);
}

unsigned efa_node_accel_kinds(const struct efa_node *node)
{
	unsigned kinds = 0;

	for (size_t i = 0; i < node->naccels; i++)
		if (node->accels[i].present)
			kinds |= 1u << node->accels[i].kind;
	return kinds;
}

/* Fills pci from the PCI function that dir/name/tail (a sysfs "device"
 * link, or a PCI address's directory) names. The address is the last
 * path component. 1 when the link leads nowhere, -1 without memory. */
static int pci_fill(const struct efa_sysfs *fs, struct efa_pci *pci, const char *dir,
		    const char *name, const char *tail)
{
	const char *base;
	long numa;

	pci->numa = -1;
	if (efa_sysfs_resolve(fs, &pci->path, "%s/%s%s", dir, name, tail))
		return -1;
	if (!pci->path)
		return 1;
	base = strrchr(pci->path, '/');
	snprintf(pci->addr, sizeof(pci->addr), "%s", base ? base + 1 : pci->path);
	if (!efa_sysfs_read_long(fs, &numa, "%s/numa_node", pci->path) && numa >= 0)
		pci->numa = (int)numa;
	return 0;
}

static int detect_instance_type(const struct efa_sysfs *fs, const char *configured,
				struct efa_node *node)
{
	char buf[128];
	const char *type = buf;

	if (configured) {
		node->instance_type_configured = true;
		type = configured;
	} else if (efa_sysfs_read(fs, buf, sizeof(buf),
				  "/sys/devices/virtual/dmi/id/product_name") || !buf[0]) {
		return 0;
	}
	/* SageMaker HyperPod reports "ml.p5.48xlarge". */
	if (!strncmp(type, "ml.", 3))
		type += 3;
	node->instance_type = strdup(type);
	return node->instance_type ? 0 : -1;
}

static int find_uverbs(const struct efa_sysfs *fs, struct efa_nic *nic)
{
	char **entries = efa_sysfs_list(fs, "%s/infiniband_verbs", nic->pci.path);
	char ibdev[64];

	if (!entries)
		return -1;
	nic->uverbs = -1;
	for (char **e = entries; *e; e++) {
		int n;

		if (sscanf(*e, "uverbs%d", &n) != 1)
			continue;
		if (efa_sysfs_read(fs, ibdev, sizeof(ibdev), "%s/infiniband_verbs/%s/ibdev",
				   nic->pci.path, *e) || strcmp(ibdev, nic->name))
			continue;
		nic->uverbs = n;
		break;
	}
	efa_strv_free(entries);
	nic->usable = nic->uverbs >= 0 &&
		      efa_sysfs_exists(fs, "/dev/infiniband/uverbs%d", nic->uverbs);
	return 0;
}

static int pci_addr_cmp(const struct efa_pci *a, const struct efa_pci *b)
{
	return strcmp(a->addr, b->addr);
}

static int nic_cmp(const void *a, const void *b)
{
	return pci_addr_cmp(&((const struct efa_nic *)a)->pci,
			    &((const struct efa_nic *)b)->pci);
}

static int discover_nics(const struct efa_sysfs *fs, struct efa_node *node)
{
	char **names = efa_sysfs_list(fs, "/sys/class/infiniband");
	char driver[64];
	size_t n = 0;
	int rc = -1;

	if (!names)
		return -1;
	for (char **it = names; *it; it++)
		n++;
	node->nics = calloc(n ? n : 1, sizeof(*node->nics));
	if (!node->nics)
		goto out;
	for (char **it = names; *it; it++) {
		struct efa_nic *nic = &node->nics[node->nnics];
		int filled;

		if (efa_sysfs_link_name(fs, driver, sizeof(driver),
					"/sys/class/infiniband/%s/device/driver", *it) ||
		    strcmp(driver, "efa"))
			continue;
		nic->name = strdup(*it);
		filled = nic->name ? pci_fill(fs, &nic->pci, "/sys/class/infiniband", *it, "/device") : -1;
		if (filled) {
			free(nic->name);
			pci_clear(&nic->pci);
			if (filled < 0)
				goto out;
			continue;	/* a dangling link: not a device */
		}
		node->nnics++;
		if (find_uverbs(fs, nic))
			goto out;
	}
	qsort(node->nics, node->nnics, sizeof(*node->nics), nic_cmp);
	rc = 0;
out:
	efa_strv_free(names);
	return rc;
}

static int add_accel(struct efa_node *node, size_t *cap, struct efa_accel **out)
{
	if (node->naccels == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct efa_accel *grown = realloc(node->accels, ncap * sizeof(*grown));

		if (!grown)
			return -1;
		node->accels = grown;
		*cap = ncap;
	}
	*out = &node->accels[node->naccels++];
	memset(*out, 0, sizeof(**out));
	(*out)->pci.numa = -1;
	(*out)->index = -1;
	(*out)->lnc = 1;
	return 0;
}

/* "Device Minor: \t 3" in /proc/driver/nvidia/gpus/<addr>/information. */
static int nvidia_minor(const struct efa_sysfs *fs, const char *addr)
{
	char info[2048];
	const char *line;
	int minor;

	if (efa_sysfs_read(fs, info, sizeof(info),
			   "/proc/driver/nvidia/gpus/%s/information", addr))
		return -1;
	line = strstr(info, "Device Minor:");
	if (!line || sscanf(line + strlen("Device Minor:"), " %d", &minor) != 1)
		return -1;
	return minor;
}

/* An NVIDIA 3D controller: a GPU, not an NVSwitch (a bridge the nvidia
 * driver also holds). */
static bool gpu_function(const struct efa_sysfs *fs, const char *addr)
{
	long vendor, class;

	return !efa_sysfs_read_long(fs, &vendor, "/sys/bus/pci/devices/%s/vendor", addr) &&
	       vendor == PCI_VENDOR_NVIDIA &&
	       !efa_sysfs_read_long(fs, &class, "/sys/bus/pci/devices/%s/class", addr) &&
	       (class >> 8) == PCI_CLASS_3D_CONTROLLER;
}

/*
 * The PCI functions that can be GPUs: those bound to the NVIDIA driver
 * when it is loaded (a node has hundreds of PCI functions, and reading
 * every one's vendor was most of a step's discovery), else all of them.
 */
static char **gpu_candidates(const struct efa_sysfs *fs)
{
	char **bound = efa_sysfs_list(fs, "/sys/bus/pci/drivers/nvidia");

	if (!bound)
		return NULL;
	for (char **it = bound; *it; it++)
		if (strchr(*it, ':'))
			return bound;
	efa_strv_free(bound);
	return efa_sysfs_list(fs, "/sys/bus/pci/devices");
}

static int discover_gpus(const struct efa_sysfs *fs, struct efa_node *node,
			 size_t *cap)
{
	char **addrs = gpu_candidates(fs);
	bool have_proc = efa_sysfs_exists(fs, "/proc/driver/nvidia/gpus");
	int pci_order = 0, rc = -1;

	if (!addrs)
		return -1;
	for (char **it = addrs; *it; it++) {
		struct efa_accel *gpu;
		int filled;

		if (!gpu_function(fs, *it))
			continue;
		if (add_accel(node, cap, &gpu))
			goto out;
		gpu->kind = EFA_ACCEL_GPU;
		filled = pci_fill(fs, &gpu->pci, "/sys/bus/pci/devices", *it, "");
		if (filled) {
			node->naccels--;
			if (filled < 0)
				goto out;
			continue;
		}
		/* Without the driver's proc files, minors follow PCI order
		 * (what nvidia.ko does on a fresh boot); with them, a GPU the
		 * driver does not list is not this node's to use. */
		gpu->index = have_proc ? nvidia_minor(fs, gpu->pci.addr) : pci_order;
		pci_order++;
		gpu->present = gpu->index >= 0 &&
			       efa_sysfs_exists(fs, "/dev/nvidia%d", gpu->index);
	}
	rc = 0;
out:
	efa_strv_free(addrs);
	return rc;
}

/*
 * A Neuron device's architecture generation from its PCI device id, as
 * aws-neuron-driver's neuron_pci_set_device_architecture decides it
 * (neuron_device.h): 0x7064-0x7067 Inferentia1 (V1), 0x7164 Trainium1 and
 * 0x7264 Inferentia2 (V2), 0x7364 Trainium2 (V3), 0x7564 and 0x7565
 * Trainium3 (V4). 0 for an id it does not know.
 */
static int neuron_arch_of_pci_id(long id)
{
	switch (id) {
	case 0x7064: case 0x7065: case 0x7066: case 0x7067:
		return 1;
	case 0x7164: case 0x7264:
		return 2;
	case 0x7364:
		return 3;
	case 0x7564: case 0x7565:
		return 4;
	default:
		return 0;
	}
}

/*
 * The generation of the node's Neuron devices from the PCI functions the
 * Neuron driver (PCI driver "neuron-driver") has bound: an instance holds
 * one kind. Current drivers give a Neuron device no link to its function,
 * so the functions are read from the driver's side; 0 when none is known.
 */
static int neuron_arch_from_pci(const struct efa_sysfs *fs)
{
	char **fns = efa_sysfs_list(fs, "/sys/bus/pci/drivers/neuron-driver");
	int arch = 0;
	long id;

	for (char **it = fns; it && *it && !arch; it++)
		if (strchr(*it, ':') &&
		    !efa_sysfs_read_long(fs, &id, "/sys/bus/pci/drivers/neuron-driver/%s/device", *it))
			arch = neuron_arch_of_pci_id(id);
	efa_strv_free(fns);
	return arch;
}

/*
 * Logical NeuronCores of two physical cores are the runtime's default from
 * Trainium2 on (the Neuron SDK's "Logical NeuronCore configuration": LNC=2
 * is the default, LNC applies to Trn2 and Trn3); earlier devices have only
 * LNC=1. The driver names a device's generation in
 * info/architecture/arch_type ("NDv2" Trainium1 and Inferentia2, "NDv3"
 * Trainium2: nsysfsmetric_get_neuron_architecture, neuron_dhal_v3.c);
 * where an older driver or another layout lacks it, the PCI device id says
 * the same (pci_arch, read once per node; -1 until then).
 */
static int default_lnc(const struct efa_sysfs *fs, const char *name, int *pci_arch)
{
	char arch[32];
	int gen;

	if (efa_sysfs_read(fs, arch, sizeof(arch),
			   "/sys/class/neuron_device/%s/info/architecture/arch_type", name) ||
	    sscanf(arch, "NDv%d", &gen) != 1) {
		if (*pci_arch < 0)
			*pci_arch = neuron_arch_from_pci(fs);
		gen = *pci_arch;
	}
	return gen >= 3 ? 2 : 1;
}

static int discover_neuron(const struct efa_sysfs *fs, struct efa_node *node,
			   size_t *cap)
{
	char **names = efa_sysfs_list(fs, "/sys/class/neuron_device");
	int pci_arch = -1;

	if (!names)
		return -1;
	for (char **it = names; *it; it++) {
		struct efa_accel *dev;
		long cores;
		int index;

		if (sscanf(*it, "neuron%d", &index) != 1)
			continue;
		if (add_accel(node, cap, &dev))
			goto fail;
		dev->kind = EFA_ACCEL_NEURON;
		dev->index = index;
		if (!efa_sysfs_read_long(fs, &cores, "/sys/class/neuron_device/%s/core_count", *it) &&
		    cores > 0)
			dev->cores = (int)cores;
		dev->lnc = default_lnc(fs, *it, &pci_arch);
		dev->present = efa_sysfs_exists(fs, "/dev/neuron%d", index);
		/* Current drivers give Neuron devices no parent; use the
		 * PCI function when a driver links one. */
		if (efa_sysfs_exists(fs, "/sys/class/neuron_device/%s/device", *it) &&
		    pci_fill(fs, &dev->pci, "/sys/class/neuron_device", *it, "/device") < 0)
			goto fail;
	}
	efa_strv_free(names);
	return 0;
fail:
	efa_strv_free(names);
	return -1;
}

static int accel_cmp(const void *a, const void *b)
{
	const struct efa_accel *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->index != y->index) {
		if (x->index < 0)
			return 1;	/* devices without an index last */
		if (y->index < 0)
			return -1;
		return x->index - y->index;
	}
	return pci_addr_cmp(&x->pci, &y->pci);
}

int efa_node_discover(const char *root, const char *instance_type,
		      struct efa_node **out, struct efa_error *err)
{
	struct efa_node *node = calloc(1, sizeof(*node));
	struct efa_sysfs fs;
	size_t cap = 0;

	if (!node)
		return efa_error_set(err, "out of memory");
	if (efa_sysfs_open(&fs, root)) {
		free(node);
		return efa_error_set(err, "cannot use root=%s: it must be an existing directory",
				     root);
	}
	if (detect_instance_type(&fs, instance_type, node) ||
	    discover_nics(&fs, node) ||
	    discover_gpus(&fs, node, &cap) ||
	    discover_neuron(&fs, node, &cap) ||
	    efa_stack_discover(&fs, &node->stack)) {
		efa_error_set(err, "out of memory reading the node's devices");
		goto fail;
	}
	if (node->nnics)
		node->rdma_read = efa_rdma_read_discover(root, node->instance_type,
							 node->rdma_read_why,
							 sizeof(node->rdma_read_why));
	if (node->naccels)
		qsort(node->accels, node->naccels, sizeof(*node->accels), accel_cmp);
	efa_sysfs_close(&fs);
	*out = node;
	return 0;
fail:
	efa_sysfs_close(&fs);
	efa_node_free(node);
	return -1;
}

size_t efa_node_usable_nics(const struct efa_node *node)
{
	size_t n = 0;

	for (size_t i = 0; i < node->nnics; i++)
		n += node->nics[i].usable;
	return n;
}

#define PCI_VENDOR_AMAZON 0x1d0f

/* EFA's PCI device ids are 0xefa0 to 0xefaf (rdma-core's efa provider
 * lists 0xefa0-0xefa3); ENA, with the same vendor and class, is 0xec20. */
static bool efa_function(const struct efa_sysfs *fs, const char *addr)
{
	long vendor, device;

	return !efa_sysfs_read_long(fs, &vendor, "/sys/bus/pci/devices/%s/vendor", addr) &&
	       vendor == PCI_VENDOR_AMAZON &&
	       !efa_sysfs_read_long(fs, &device, "/sys/bus/pci/devices/%s/device", addr) &&
	       (device >> 4) == 0xefa;
}

static bool nic_at(const struct efa_node *node, const char *addr)
{
	for (size_t i = 0; i < node->nnics; i++)
		if (!strcmp(node->nics[i].pci.addr, addr))
			return true;
	return false;
}

int efa_node_missing_nics(const struct efa_node *node, const char *root, int expected,
			  char *buf, size_t size)
{
	struct efa_sysfs fs;
	char **addrs;
	size_t named = 0;

	buf[0] = '\0';
	if (expected <= 0 || node->nnics >= (size_t)expected)
		return 0;
	/* The node was read under root a moment ago: it is there. */
	if (efa_sysfs_open(&fs, root))
		return -1;
	addrs = efa_sysfs_list(&fs, "/sys/bus/pci/devices");
	if (!addrs) {
		efa_sysfs_close(&fs);
		return -1;
	}
	snprintf(buf, size, "%zu of the %d EFA devices a%s %s has (%d missing",
		 node->nnics, expected, node->instance_type && strchr("aeiou", node->instance_type[0]) ? "n" : "",
		 node->instance_type ? node->instance_type : "node of its type",
		 expected - (int)node->nnics);
	for (char **a = addrs; *a; a++) {
		if (nic_at(node, *a) || !efa_function(&fs, *a))
			continue;
		efa_strlcatf(buf, size, "%s%s", named++ ? ", " : ": PCI ", *a);
	}
	efa_strv_free(addrs);
	efa_sysfs_close(&fs);
	efa_strlcatf(buf, size, "%s)", named ? " without the efa driver" :
		     ": not on the PCI bus at all");
	return 0;
}

void efa_node_unbound_gpus(const char *root, char *buf, size_t size)
{
	struct efa_sysfs fs;
	char **addrs;

	if (efa_sysfs_open(&fs, root))
		return;
	addrs = efa_sysfs_list(&fs, "/sys/bus/pci/devices");
	for (char **a = addrs; a && *a; a++) {
		char driver[64];

		if (!gpu_function(&fs, *a))
			continue;
		if (efa_sysfs_link_name(&fs, driver, sizeof(driver), "/sys/bus/pci/devices/%s/driver",
					*a) ||
		    strcmp(driver, "nvidia"))
			efa_strlcatf(buf, size, "; %s has no nvidia driver", *a);
	}
	efa_strv_free(addrs);
	efa_sysfs_close(&fs);
}

int efa_neuron_logical_cores(const struct efa_accel *dev, int lnc)
{
	int physical = dev->cores > 0 ? dev->cores : 1;

	/* Devices before Trainium2 have one physical core per logical one,
	 * whatever the job asks. */
	if (lnc <= 0 || dev->lnc <= 1)
		lnc = dev->lnc > 0 ? dev->lnc : 1;
	return physical >= lnc ? physical / lnc : 1;
}

int efa_neuron_lnc_parse(const char *value)
{
	if (value && (!strcmp(value, "1") || !strcmp(value, "2")))
		return value[0] - '0';
	return -1;
}

void efa_node_efa_problem(const struct efa_node *node, char *buf, size_t size)
{
	size_t with_uverbs = 0;

	buf[0] = '\0';
	if (efa_node_usable_nics(node))
		return;
	if (!node->nnics) {
		snprintf(buf, size, "no EFA device (no /sys/class/infiniband device bound to the efa driver)");
		return;
	}
	for (size_t i = 0; i < node->nnics; i++)
		with_uverbs += node->nics[i].uverbs >= 0;
	if (!with_uverbs)
		snprintf(buf, size, "%zu EFA device%s but no uverbs interface (is the ib_uverbs module loaded?)",
			 node->nnics, node->nnics == 1 ? "" : "s");
	else
		snprintf(buf, size, "%zu EFA device%s but no /dev/infiniband/uverbs* node to open (in a container, request the vpc.amazonaws.com/efa resource or mount /dev/infiniband)",
			 node->nnics, node->nnics == 1 ? "" : "s");
}
