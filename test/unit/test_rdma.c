/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Whether the node's EFA does RDMA read: aws-ofi-nccl's platform table,
 * else the device's own answer through libefa, loaded at run time from
 * under the root (here test/standins/fakeefa.c, built as a module).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/node/rdma.h"
#include "tap.h"
#include "tmpdir.h"

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;
	int rc = in && out ? 0 : -1;

	while (!rc && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
	if (in)
		fclose(in);
	if (out && fclose(out))
		rc = -1;
	return rc;
}

static void test_platforms(void)
{
	is_str(efa_platform_gdr("p5.48xlarge"), "p5/p5e", "p5: the table's p5/p5e entry");
	is_str(efa_platform_gdr("p4d.24xlarge"), "p4d.24xlarge", "p4d: its own entry");
	is_str(efa_platform_gdr("trn2.48xlarge"), "Trainium Family", "trn2: Trainium");
	ok(!efa_platform_gdr("p5.4xlarge"), "p5.4xlarge: listed without GPUDirect RDMA");
	ok(!efa_platform_gdr("p3dn.24xlarge"), "p3dn: listed without GPUDirect RDMA");
	ok(!efa_platform_gdr("g4dn.12xlarge"), "g4dn: not listed");
	ok(!efa_platform_gdr("inf1.24xlarge"), "inf1: not listed (the table's inf entry is narrowed to inf2)");
	ok(!efa_platform_gdr(NULL), "no type: not listed");
}

static void test_device(void)
{
	const char *lib = tmp_at("usr/lib64/libefa.so.1");
	char why[512];

	tmp_setup(mkdir(tmp_at("usr"), 0755) || mkdir(tmp_at("usr/lib64"), 0755), "a root");
	is_int(efa_device_rdma_read(tmp_base, why, sizeof(why)), EFA_RDMA_READ_UNKNOWN,
	       "no libefa under the root: unknown");
	has_str(why, "no libefa.so.1", "  said");
	tmp_setup(copy_file(FAKEEFA, lib), "libefa.so.1, a stand-in");

	setenv("FAKEEFA_CAPS", "1", 1);
	is_int(efa_device_rdma_read(tmp_base, why, sizeof(why)), EFA_RDMA_READ_YES,
	       "the device reports RDMA read: yes");
	is_str(why, "rdmap0s0 reports RDMA read (efadv_query_device)", "  naming the device");
	setenv("FAKEEFA_CAPS", "0", 1);
	is_int(efa_device_rdma_read(tmp_base, why, sizeof(why)), EFA_RDMA_READ_NO,
	       "the device reports no RDMA read: no");
	is_str(why, "rdmap0s0 reports no RDMA read (efadv_query_device)", "  said");
	setenv("FAKEEFA_QUERY", "fail", 1);
	is_int(efa_device_rdma_read(tmp_base, why, sizeof(why)), EFA_RDMA_READ_UNKNOWN,
	       "no device answers efadv_query_device (not EFA): unknown");
	unsetenv("FAKEEFA_QUERY");
	setenv("FAKEEFA_DEVICES", "0", 1);
	is_int(efa_device_rdma_read(tmp_base, why, sizeof(why)), EFA_RDMA_READ_UNKNOWN,
	       "no devices: unknown");
	unsetenv("FAKEEFA_DEVICES");

	setenv("FAKEEFA_CAPS", "0", 1);
	is_int(efa_rdma_read_discover(tmp_base, "g4dn.12xlarge", why, sizeof(why)), EFA_RDMA_READ_NO,
	       "g4dn, not in the table: the device's no");
	has_str(why, "aws-ofi-nccl's platform table lists no GPUDirect RDMA for g4dn.12xlarge",
		"  both sources said");

	tmp_setup(unlink(lib) || copy_file(SRCDIR "/test/unit/test_rdma.c", lib),
		  "a libefa.so.1 that is no library");
	is_int(efa_device_rdma_read(tmp_base, why, sizeof(why)), EFA_RDMA_READ_UNKNOWN,
	       "a libefa that does not load: unknown");
	has_str(why, "does not load", "  said");
	is_int(efa_rdma_read_discover(tmp_base, "p5.48xlarge", why, sizeof(why)), EFA_RDMA_READ_YES,
	       "p5, in the table: yes, and the library is not opened");
	has_str(why, "platform table runs GPUDirect RDMA on p5.48xlarge", "  said");
}

int main(void)
{
	test_platforms();
	if (!tmp_open()) {
		test_device();
		tmp_close();
	}
	return done_testing();
}
