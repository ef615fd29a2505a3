/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The accelerators a node's Gres= promises against those it shows
 * (gres.h): Slurm's GRES syntax, and a p4d whose GPU lost its driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/health/gres.h"
#include "common/node/node.h"
#include "tap.h"
#include "tmpdir.h"

static void test_count(void)
{
	is_int((int)efa_gres_count("gpu:8", "gpu"), 8, "gpu:8 holds 8 GPUs");
	is_int((int)efa_gres_count("gpu:h100:8(S:0-1)", "gpu"), 8, "a type and sockets: the count is the last field");
	is_int((int)efa_gres_count("gpu:a100:4,gpu:h100:4", "gpu"), 8, "two types add up");
	is_int((int)efa_gres_count("gpu:4(S:0-1),neuron:16", "neuron"), 16, "another GRES beside it");
	is_int((int)efa_gres_count("gpu", "gpu"), 1, "the name alone is one, as Slurm reads it");
	is_int((int)efa_gres_count("gpu:h100", "gpu"), 1, "a type without a count is one");
	is_int((int)efa_gres_count("gpus:4,mps:100", "gpu"), -1, "gpus and mps are not gpu");
	is_int((int)efa_gres_count("", "gpu"), -1, "no GRES names none");
	is_int((int)efa_gres_count(NULL, "gpu"), -1, "nor does none at all");
	is_int((int)efa_gres_count("gpu:h100:x", "gpu"), -2, "a count that is not a number does not parse");
	is_int((int)efa_gres_count("gpu:", "gpu"), -2, "nor does an empty one");
}

static void test_problems(void)
{
	struct efa_node *node = NULL;
	struct efa_error err;
	char cmd[8192], buf[1024];
	const char *root;

	root = tmp_at("p4d");
	snprintf(cmd, sizeof(cmd), "cp -a '%s/p4d.24xlarge' '%s'", FIXTURES, root);
	tmp_setup(system(cmd), "a copy of the p4d fixture");
	require(!efa_node_discover(root, NULL, &node, &err));
	buf[0] = '\0';
	efa_gres_problems(node, root, "gpu:8", buf, sizeof(buf));
	is_str(buf, "", "a p4d with its 8 GPUs meets Gres=gpu:8");
	efa_gres_problems(node, root, "gpu:a100:4,gpu:a100:4(S:0-1)", buf, sizeof(buf));
	is_str(buf, "", "  and two types of 4");
	efa_gres_problems(node, root, "gpu:10", buf, sizeof(buf));
	is_str(buf, "8/10 GPUs (Gres=gpu:10)", "it lacks 2 of Gres=gpu:10");
	buf[0] = '\0';
	efa_gres_problems(node, root, "gpu:8,neuron:16", buf, sizeof(buf));
	is_str(buf, "0/16 Neuron devices (Gres=gpu:8,neuron:16)", "a GRES of Neuron devices it does not have");
	buf[0] = '\0';
	efa_gres_problems(node, root, "gpu:8:x", buf, sizeof(buf));
	is_str(buf, "", "a Gres= that does not parse judges nothing");
	efa_node_free(node);
	node = NULL;

	/* The driver lets go of one GPU: it leaves the driver's lists. */
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && rm sys/bus/pci/drivers/nvidia/0000:10:1c.0 sys/devices/pci0000:10/0000:10:1c.0/driver && rm -r proc/driver/nvidia/gpus/0000:10:1c.0",
		 root);
	tmp_setup(system(cmd), "the first GPU unbound");
	require(!efa_node_discover(root, NULL, &node, &err));
	efa_gres_problems(node, root, "gpu:8", buf, sizeof(buf));
	is_str(buf, "7/8 GPUs (Gres=gpu:8); 0000:10:1c.0 has no nvidia driver",
	       "a GPU without its driver: counted and named");
	efa_node_free(node);
}

/* MIG: each MIG device is one "gpu" in Slurm's Gres=. */
static void test_mig(void)
{
	struct efa_node *node = NULL;
	struct efa_error err;
	char cmd[8192], buf[1024];
	const char *root;

	root = tmp_at("p4d-mig");
	snprintf(cmd, sizeof(cmd), "cp -a '%s/p4d-mig' '%s'", FIXTURES, root);
	tmp_setup(system(cmd), "a copy of the p4d-mig fixture");
	require(!efa_node_discover(root, NULL, &node, &err));
	buf[0] = '\0';
	efa_gres_problems(node, root, "gpu:1g.5gb:7,gpu:3g.20gb:2,gpu:1c.3g.20gb:3,gpu:a100:5", buf,
			  sizeof(buf));
	is_str(buf, "", "a p4d with 12 MIG devices on 3 GPUs and 5 whole GPUs meets Gres= of 17 gpu");
	efa_gres_problems(node, root, "gpu:a100:8", buf, sizeof(buf));
	is_str(buf, "", "  and a Gres= of its 8 physical GPUs (more than enough)");
	efa_gres_problems(node, root, "gpu:1g.5gb:7,gpu:3g.20gb:2,gpu:1c.3g.20gb:3,gpu:a100:6", buf,
			  sizeof(buf));
	is_str(buf, "17/18 GPUs and MIG devices (Gres=gpu:1g.5gb:7,gpu:3g.20gb:2,gpu:1c.3g.20gb:3,gpu:a100:6)",
	       "  one more than it has: counted and said");
	efa_node_free(node);
	node = NULL;

	/* GPU 0's instances gone (a MIG layout lost): it counts as one. */
	snprintf(cmd, sizeof(cmd), "rm -r '%s/proc/driver/nvidia/capabilities/gpu0/mig/'gi*", root);
	tmp_setup(system(cmd), "GPU 0's MIG instances removed");
	require(!efa_node_discover(root, NULL, &node, &err));
	buf[0] = '\0';
	efa_gres_problems(node, root, "gpu:1g.5gb:7,gpu:3g.20gb:2,gpu:1c.3g.20gb:3,gpu:a100:5", buf,
			  sizeof(buf));
	is_str(buf, "11/17 GPUs and MIG devices (Gres=gpu:1g.5gb:7,gpu:3g.20gb:2,gpu:1c.3g.20gb:3,gpu:a100:5)",
	       "7 MIG devices gone: 11 of 17");
	efa_node_free(node);
}

int main(void)
{
	test_count();
	if (!tmp_open()) {
		test_problems();
		test_mig();
		tmp_close();
	}
	return done_testing();
}
