/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/node/node.h"
#include "common/node/stack.h"
#include "tap.h"
#include "tmpdir.h"

static struct efa_node *discover(const char *fixture, const char *type)
{
	char root[512];
	struct efa_error err = { 0 };
	struct efa_node *node = NULL;

	snprintf(root, sizeof(root), "%s/%s", FIXTURES, fixture);
	ok(efa_node_discover(root, type, &node, &err) == 0, "%s: discovered (%s)", fixture, err.msg);
	return node;
}

static size_t count_kind(const struct efa_node *n, enum efa_accel_kind kind, bool present_only)
{
	size_t c = 0;

	for (size_t i = 0; i < n->naccels; i++)
		c += n->accels[i].kind == kind && (!present_only || n->accels[i].present);
	return c;
}

static const struct efa_accel *gpu_at(const struct efa_node *n, const char *addr)
{
	for (size_t i = 0; i < n->naccels; i++)
		if (!strcmp(n->accels[i].pci.addr, addr))
			return &n->accels[i];
	return NULL;
}

static void test_p5(void)
{
	struct efa_node *n = discover("p5.48xlarge", NULL);
	char problem[256];

	if (!n)
		return;
	is_str(n->instance_type, "p5.48xlarge", "p5: instance type from DMI");
	require(is_int(n->nnics, 32, "p5: 32 EFA devices"));
	is_int(efa_node_usable_nics(n), 32, "p5: all usable");
	is_str(n->nics[0].pci.addr, "0000:4f:00.0", "p5: NICs sorted by PCI address");
	is_str(n->nics[0].name, "rdmap79s0", "p5: first NIC name");
	is_int(n->nics[0].uverbs, 0, "p5: first NIC is uverbs0");
	is_int(n->nics[31].uverbs, 31, "p5: last NIC is uverbs31");
	is_int(n->nics[0].pci.numa, 0, "p5: first NIC on NUMA 0");
	is_int(n->nics[31].pci.numa, 1, "p5: last NIC on NUMA 1");
	has_str(n->nics[0].pci.path, "/sys/devices/pci0000:44/", "p5: NIC path under /sys/devices, root stripped");
	ok(strncmp(n->nics[0].pci.path, FIXTURES, strlen(FIXTURES)), "p5: no fixture prefix in the path");
	require(is_int(count_kind(n, EFA_ACCEL_GPU, true), 8, "p5: 8 GPUs present"));
	require(ok(gpu_at(n, "0000:97:00.0") && gpu_at(n, "0000:a8:00.0") && gpu_at(n, "0000:53:00.0"),
		   "p5: GPUs at 97:00.0, a8:00.0 and 53:00.0"));
	is_int(gpu_at(n, "0000:97:00.0")->index, 5, "p5: minor from the driver, not PCI order (97 -> 5)");
	is_int(gpu_at(n, "0000:a8:00.0")->index, 4, "p5: a8 -> 4");
	is_int(gpu_at(n, "0000:53:00.0")->pci.numa, 0, "p5: GPU 53 on NUMA 0");
	is_int(n->accels[0].index, 0, "p5: GPUs sorted by minor");
	is_str(n->accels[4].pci.addr, "0000:a8:00.0", "p5: minor 4 is a8");
	is_str(n->stack.installer, "1.43.2", "p5: installer version");
	is_str(n->stack.libfabric, "2.1.0amzn5.0", "p5: libfabric version (deb name)");
	is_str(n->stack.ofi_nccl, "1.16.3", "p5: aws-ofi-nccl version");
	is_str(n->stack.rdma_core, "58.amzn0", "p5: rdma-core version");
	is_str(n->stack.efa_driver, "2.17.2", "p5: efa driver version");
	is_str(n->stack.libdirs[0], "/opt/amazon/efa/lib", "p5: libfabric dir (Ubuntu lib)");
	is_str(n->stack.libdirs[1], "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu", "p5: plugin multiarch dir");
	ok(n->stack.libdirs[2] == NULL, "p5: no other library dirs");
	efa_node_efa_problem(n, problem, sizeof(problem));
	is_str(problem, "", "p5: no EFA problem");
	efa_node_free(n);
}

static void test_p5_pod(void)
{
	struct efa_node *n = discover("p5-pod", NULL);
	char problem[256];

	if (!n)
		return;
	is_str(n->instance_type, "p5.48xlarge", "pod: 'ml.' stripped from the HyperPod name");
	is_int(n->nnics, 32, "pod: every EFA device visible in sysfs");
	is_int(efa_node_usable_nics(n), 16, "pod: 16 usable (uverbs nodes present)");
	require(is_int(n->naccels, 8, "pod: 8 GPUs visible in sysfs"));
	is_int(count_kind(n, EFA_ACCEL_GPU, true), 4, "pod: 4 GPUs usable");
	is_int(n->accels[0].index, 4, "pod: usable GPUs first, by minor");
	is_int(n->accels[7].index, -1, "pod: GPUs the driver does not list have no minor");
	efa_node_efa_problem(n, problem, sizeof(problem));
	is_str(problem, "", "pod: EFA usable");
	efa_node_free(n);
}

static void test_p4d(void)
{
	struct efa_node *n = discover("p4d.24xlarge", NULL);

	if (!n)
		return;
	require(is_int(n->nnics, 4, "p4d: 4 EFA devices"));
	is_str(n->nics[0].name, "rdmap16s27", "p4d: first NIC");
	is_str(n->nics[0].pci.path, "/sys/devices/pci0000:10/0000:10:1b.0", "p4d: flat root bus path");
	is_int(n->nics[2].pci.numa, 1, "p4d: bus 0x90 on NUMA 1");
	is_int(count_kind(n, EFA_ACCEL_GPU, true), 8, "p4d: 8 GPUs");
	is_str(n->stack.installer, "1.21.0", "p4d: old installer");
	is_str(n->stack.libfabric, "1.16.1amzn3.0", "p4d: libfabric from the rpm name");
	ok(n->stack.ofi_nccl == NULL, "p4d: plugin version unknown (not from the installer)");
	is_str(n->stack.libdirs[0], "/opt/amazon/efa/lib64", "p4d: lib64 (Amazon Linux)");
	is_str(n->stack.libdirs[1], "/opt/aws-ofi-nccl/lib", "p4d: plugin built from source");
	efa_node_free(n);

	n = discover("p4d-nonuma", NULL);
	if (!n)
		return;
	require(is_int(n->nnics, 4, "p4d-nonuma: 4 EFA devices"));
	is_int(n->nics[0].pci.numa, -1, "p4d-nonuma: NUMA unknown");
	require(is_int(count_kind(n, EFA_ACCEL_GPU, true), 8, "p4d-nonuma: 8 GPUs without driver proc files"));
	is_str(n->accels[3].pci.addr, "0000:20:1d.0", "p4d-nonuma: minors follow PCI order");
	efa_node_free(n);
}

static void test_others(void)
{
	struct efa_node *n = discover("p5en.48xlarge", NULL);
	char problem[256];

	if (n) {
		is_int(n->nnics, 16, "p5en: 16 EFA devices");
		is_int(count_kind(n, EFA_ACCEL_GPU, true), 8, "p5en: 8 GPUs");
		is_str(n->stack.libdirs[1], "/opt/amazon/ofi-nccl/lib", "p5en: plugin without multiarch dir");
		efa_node_free(n);
	}
	n = discover("trn1.32xlarge", NULL);
	if (n) {
		is_int(n->nnics, 8, "trn1: 8 EFA devices");
		require(is_int(count_kind(n, EFA_ACCEL_NEURON, true), 16, "trn1: 16 Neuron devices"));
		is_int(count_kind(n, EFA_ACCEL_GPU, false), 0, "trn1: no GPUs");
		is_int(n->accels[15].index, 15, "trn1: Neuron devices by index");
		is_int(n->accels[0].cores, 2, "trn1: 2 NeuronCores per device");
		is_int(efa_neuron_logical_cores(&n->accels[0], 0), 2,
		       "trn1: one physical core per logical core (NDv2)");
		efa_node_free(n);
	}
	n = discover("trn2.48xlarge", NULL);
	if (n) {
		size_t logical = 0, physical = 0;

		is_str(n->instance_type, "trn2.48xlarge", "trn2: instance type");
		is_int(n->nnics, 16, "trn2: 16 EFA devices");
		ok(efa_node_usable_nics(n) == 16, "trn2: all usable");
		require(is_int(count_kind(n, EFA_ACCEL_NEURON, true), 16, "trn2: 16 Trainium2 devices"));
		for (size_t i = 0; i < n->naccels; i++) {
			logical += (size_t)efa_neuron_logical_cores(&n->accels[i], 0);
			physical += (size_t)n->accels[i].cores;
		}
		is_int((int)physical, 128, "trn2: 128 physical NeuronCores (8 per device)");
		is_int((int)logical, 64, "trn2: 64 logical NeuronCores by the runtime's default");
		is_int(efa_neuron_logical_cores(&n->accels[3], 1), 8,
		       "trn2: NEURON_LOGICAL_NC_CONFIG=1 gives each device 8");
		efa_node_free(n);
	}
	n = discover("trn2.48xlarge", "trn2u.48xlarge");
	if (n) {
		is_int(efa_neuron_logical_cores(&n->accels[0], 0), 4,
		       "trn2u (same devices, UltraServer type name): 4 logical cores per device");
		efa_node_free(n);
	}
	is_int(efa_neuron_lnc_parse("1"), 1, "NEURON_LOGICAL_NC_CONFIG=1");
	is_int(efa_neuron_lnc_parse("2"), 2, "NEURON_LOGICAL_NC_CONFIG=2");
	is_int(efa_neuron_lnc_parse("4"), -1, "NEURON_LOGICAL_NC_CONFIG=4: not a value the runtime takes");
	is_int(efa_neuron_lnc_parse("2x"), -1, "NEURON_LOGICAL_NC_CONFIG=2x: refused");
	is_int(efa_neuron_lnc_parse(NULL), -1, "unset: no value");
	n = discover("cpu-only", NULL);
	if (n) {
		is_str(n->instance_type, "c6i.4xlarge", "cpu-only: instance type");
		is_int(n->nnics + n->naccels, 0, "cpu-only: no devices");
		ok(n->stack.installer == NULL && n->stack.libdirs[0] == NULL, "cpu-only: no EFA software");
		efa_node_efa_problem(n, problem, sizeof(problem));
		has_str(problem, "no EFA device", "cpu-only: the problem is named");
		efa_node_free(n);
	}
	n = discover("cpu-only", "p5.48xlarge");
	if (n) {
		is_str(n->instance_type, "p5.48xlarge", "InstanceType= overrides DMI");
		ok(n->instance_type_configured, "  and says so");
		efa_node_free(n);
	}
	{
		struct efa_error err = { 0 };

		ok(efa_node_discover("/nonexistent/root", NULL, &n, &err) == -1, "missing root is an error");
		has_str(err.msg, "root=/nonexistent/root", "  naming it");
	}
}

static void test_versions(void)
{
	struct efa_stack s = { 0 };
	bool known;

	ok(efa_version_cmp("1.16.1amzn3.0", "1.18") < 0, "1.16.1amzn3.0 < 1.18");
	ok(efa_version_cmp("2.1.0amzn5.0", "1.18") > 0, "2.1.0amzn5.0 > 1.18");
	ok(efa_version_cmp("1.18", "1.18.0") == 0, "1.18 == 1.18.0");
	ok(efa_version_cmp("1.29.1", "1.29.10") < 0, "numeric, not textual");
	ok(efa_version_cmp("abc", "0") == 0, "garbage compares as 0");
	ok(efa_stack_parse_installed("# EFA installer version: 1.30.0\nlibfabric-aws-devel-1.19.0-1.x86_64 libfabric-aws-1.19.0amzn4.0-1.amzn2.x86_64 aws-ofi-nccl-1.7.4-1.x86_64\n", &s) == 0,
	   "installer record parses");
	is_str(s.installer, "1.30.0", "installer version");
	is_str(s.libfabric, "1.19.0amzn4.0", "-devel package is not libfabric itself");
	is_str(efa_stack_version(&s, "ofi-nccl", &known), "1.7.4", "aws-ofi-nccl rpm name");
	ok(known, "ofi-nccl is a known component");
	ok(efa_stack_version(&s, "nccl", &known) == NULL && !known, "nccl is not a component");
	efa_stack_clear(&s);
}

/* rel (under the scratch root) with its parent directories. */
static int put(const char *rel, const char *text, const char *link_to)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s", tmp_at(rel));
	for (char *c = path + strlen(tmp_base) + 1; (c = strchr(c, '/')); c++) {
		*c = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -1;
		*c = '/';
	}
	if (link_to)
		return symlink(link_to, path);
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* Two NVIDIA GPUs on the PCI bus, bound to the driver as the test says. */
/* Every install layout of the EFA software: where its libraries are,
 * and aws-ofi-nccl's version where no installer record has it. */
static void test_layouts(void)
{
	static const struct {
		const char *fixture, *fabric_dir, *plugin_dir, *ofi_nccl, *what;
	} cases[] = {
		{ "p5.48xlarge", "/opt/amazon/efa/lib", "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu",
		  "1.16.3", "Debian installer, multiarch plugin directory" },
		{ "p5en.48xlarge", "/opt/amazon/efa/lib", "/opt/amazon/ofi-nccl/lib", "1.18.0",
		  "Debian installer, plugin in lib" },
		{ "stack-deb-arm64", "/opt/amazon/efa/lib", "/opt/amazon/ofi-nccl/lib/aarch64-linux-gnu",
		  "1.16.3", "Debian installer on aarch64" },
		{ "stack-rpm-al2023", "/opt/amazon/efa/lib64", "/opt/amazon/ofi-nccl/lib64", "1.16.3",
		  "RPMs (Amazon Linux 2023): lib64 for both" },
		{ "stack-ngc-v1", "/opt/amazon/efa/lib", "/opt/amazon/aws-ofi-nccl/lib", "1.14.0",
		  "libnccl-ofi-ngc-v1 (libnccl-net-aws-ofi.so), version from the library" },
		{ "stack-ngc-v2", "/opt/amazon/efa/lib", "/opt/amazon/aws-ofi-nccl/lib", "1.16.3",
		  "libnccl-ofi-ngc-v2, version from the library" },
		{ "stack-source-1.5", "/opt/amazon/efa/lib64", "/opt/aws-ofi-nccl/lib", "1.5.0aws",
		  "built from source, 1.5 (\"Using aws-ofi-nccl ...\")" },
		{ "stack-source-1.11", "/opt/amazon/efa/lib", "/opt/aws-ofi-nccl/lib", "1.11.0-aws",
		  "built from source, 1.11 (\"Initializing aws-ofi-nccl ...\")" },
		{ "p4d.24xlarge", "/opt/amazon/efa/lib64", "/opt/aws-ofi-nccl/lib", NULL,
		  "built from source, a library without the version string" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct efa_stack st = { 0 };
		struct efa_sysfs fs;
		char root[512];

		snprintf(root, sizeof(root), "%s/%s", FIXTURES, cases[i].fixture);
		if (!ok(!efa_sysfs_open(&fs, root) && !efa_stack_discover_software(&fs, &st),
			"%s: %s: discovered", cases[i].fixture, cases[i].what))
			continue;
		is_str(st.libdirs[0], cases[i].fabric_dir, "%s: libfabric's directory", cases[i].fixture);
		is_str(st.libdirs[1], cases[i].plugin_dir, "%s: aws-ofi-nccl's directory", cases[i].fixture);
		ok(!st.libdirs[1] || !st.libdirs[2], "%s: no other directory", cases[i].fixture);
		ok(st.has_libfabric && st.has_net_plugin, "%s: libfabric and the NCCL plugin found",
		   cases[i].fixture);
		if (cases[i].ofi_nccl)
			is_str(st.ofi_nccl, cases[i].ofi_nccl, "%s: aws-ofi-nccl's version", cases[i].fixture);
		else
			ok(!st.ofi_nccl, "%s: aws-ofi-nccl's version unknown", cases[i].fixture);
		efa_stack_clear(&st);
		efa_sysfs_close(&fs);
	}
}

/* The plugin's version string read in pieces, across a piece's end, and
 * not past the bound. */
static void test_plugin_version_read(void)
{
	static const char text[] = "Initializing aws-ofi-nccl 1.9.2-aws";
	static const struct {
		off_t at;
		const char *want, *what;
	} cases[] = {
		{ 65536 - 20, "1.9.2-aws", "cut by the first piece's end" },
		{ 3 * 1024 * 1024 + 7, "1.9.2-aws", "3 MiB into the library" },
		{ 65 * 1024 * 1024, NULL, "past the 64 MiB read: not looked for" },
	};

	char dir[] = "/tmp/efa-unit-plugin.XXXXXX", path[128], cmd[160];

	if (!ok(mkdtemp(dir) != NULL, "set-up: a scratch root"))
		return;
	snprintf(path, sizeof(path), "%s/opt/aws-ofi-nccl/lib", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", path);
	tmp_setup(system(cmd), "its /opt/aws-ofi-nccl/lib");
	strcat(path, "/libnccl-net.so");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct efa_stack st = { 0 };
		struct efa_sysfs fs;
		FILE *f = fopen(path, "w");
		int bad = !f;

		if (f) {
			bad = fseeko(f, cases[i].at, SEEK_SET) ||
			      fwrite(text, 1, sizeof(text), f) != sizeof(text);
			bad |= fclose(f);
		}
		tmp_setup(bad ? -1 : 0, "a sparse plugin library with its version string");
		if (efa_sysfs_open(&fs, dir))
			continue;
		ok(!efa_stack_discover_software(&fs, &st), "%s: discovered", cases[i].what);
		if (cases[i].want)
			is_str(st.ofi_nccl, cases[i].want, "version %s", cases[i].what);
		else
			ok(!st.ofi_nccl, "version %s", cases[i].what);
		efa_stack_clear(&st);
		efa_sysfs_close(&fs);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

/* A driver (or layout) without info/architecture/arch_type: the PCI device
 * id of the functions neuron-driver bound says Trainium2. */
static void test_trn2_without_arch_type(void)
{
	char dir[] = "/tmp/efa-trn2-noarch.XXXXXX", cmd[16384];
	struct efa_error err = { 0 };
	struct efa_node *n = NULL;
	size_t logical = 0;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "cp -a '%s/trn2.48xlarge/.' '%s' && find '%s' -path '*/neuron_device/neuron*/info/architecture/arch_type' -delete",
		 FIXTURES, dir, dir);
	tmp_setup(system(cmd), "a trn2 without the driver's arch_type");
	ok(efa_node_discover(dir, NULL, &n, &err) == 0, "trn2 without arch_type: discovered (%s)", err.msg);
	for (size_t i = 0; n && i < n->naccels; i++)
		logical += (size_t)efa_neuron_logical_cores(&n->accels[i], 0);
	is_int((int)logical, 64, "  still 64 logical NeuronCores: LNC=2, from PCI device id 0x7364");
	efa_node_free(n);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		printf("# could not remove %s\n", dir);
}

static void test_gpu_driver_list(void)
{
	static const char *const gpus[] = { "0000:00:01.0", "0000:00:02.0" };
	struct efa_error err = { 0 };
	struct efa_node *n = NULL;
	char rel[256], target[256];
	int rc = 0;

	if (tmp_open())
		return;
	for (size_t i = 0; i < 2; i++) {
		snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/vendor", gpus[i]);
		rc |= put(rel, "0x10de\n", NULL);
		snprintf(rel, sizeof(rel), "sys/devices/pci0000:00/%s/class", gpus[i]);
		rc |= put(rel, "0x030200\n", NULL);
		snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s", gpus[i]);
		snprintf(target, sizeof(target), "../../../devices/pci0000:00/%s", gpus[i]);
		rc |= put(rel, NULL, target);
		snprintf(rel, sizeof(rel), "dev/nvidia%zu", i);
		rc |= put(rel, "", NULL);
	}
	rc |= put("sys/bus/pci/drivers/nvidia/bind", "", NULL);
	tmp_setup(rc, "two GPUs, a driver directory binding none");
	ok(efa_node_discover(tmp_base, NULL, &n, &err) == 0 && n->naccels == 2,
	   "a driver directory without devices: every NVIDIA GPU on the bus counts (%s)", err.msg);
	efa_node_free(n);
	n = NULL;
	tmp_setup(put("sys/bus/pci/drivers/nvidia/0000:00:02.0", NULL,
		      "../../../../devices/pci0000:00/0000:00:02.0"), "the driver binds the second");
	ok(efa_node_discover(tmp_base, NULL, &n, &err) == 0 && n->naccels == 1,
	   "with the driver bound to some, only those are the node's GPUs (%s)", err.msg);
	if (n && n->naccels == 1) {
		is_str(n->accels[0].pci.addr, "0000:00:02.0", "  the bound one");
		is_str(n->accels[0].pci.path, "/sys/devices/pci0000:00/0000:00:02.0",
		       "  its PCI path resolved through the links");
		is_int(n->accels[0].index, 0, "  the driver's first minor");
	}
	efa_node_free(n);
	tmp_close();
}

int main(void)
{
	test_p5();
	test_p5_pod();
	test_p4d();
	test_others();
	test_versions();
	test_gpu_driver_list();
	test_trn2_without_arch_type();
	test_layouts();
	test_plugin_version_read();
	return done_testing();
}
