/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/node/bind.h"
#include "common/env/launch.h"
#include "tap.h"

static struct efa_node *load(const char *fixture)
{
	char root[512];
	struct efa_error err = { 0 };
	struct efa_node *node = NULL;

	snprintf(root, sizeof(root), "%s/%s", FIXTURES, fixture);
	ok(efa_node_discover(root, NULL, &node, &err) == 0, "%s: discovered (%s)", fixture, err.msg);
	return node;
}

static const struct efa_nic *nic_named(const struct efa_node *n, const char *name, size_t len)
{
	for (size_t i = 0; i < n->nnics; i++)
		if (strlen(n->nics[i].name) == len && !strncmp(n->nics[i].name, name, len))
			return &n->nics[i];
	return NULL;
}

static const struct efa_accel *gpu(const struct efa_node *n, int minor)
{
	for (size_t i = 0; i < n->naccels; i++)
		if (n->accels[i].kind == EFA_ACCEL_GPU && n->accels[i].index == minor)
			return &n->accels[i];
	return NULL;
}

static size_t count_items(const char *list)
{
	size_t n = *list ? 1 : 0;

	for (; *list; list++)
		n += *list == ',';
	return n;
}

/* Every NIC in list is at `level` from the GPU with `minor`. */
static bool all_at(const struct efa_node *n, const char *list, int minor, enum efa_close level)
{
	const struct efa_accel *g = gpu(n, minor);

	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		const struct efa_nic *nic = nic_named(n, p, len);

		if (!g || !nic || efa_closeness(&g->pci, &nic->pci) != level)
			return false;
		p += len + (p[len] == ',');
	}
	return *list != '\0';
}

/* The binding of task k of n over gpus. */
static struct efa_task_binding bind_one(const struct efa_node *node, const int *gpus, size_t ngpus,
				    bool given, unsigned k, unsigned n)
{
	struct efa_bind_request req = { .gpus = gpus, .ngpus = ngpus, .gpus_given = given, .task = k, .ntasks = n };
	struct efa_task_binding b;
	struct efa_error err = { 0 };

	if (efa_bind_task(node, &req, &b, &err))
		printf("# bind: %s\n", err.msg);
	return b;
}

static const int all8[] = { 0, 1, 2, 3, 4, 5, 6, 7 };

static struct efa_task_binding bind_neuron(const struct efa_node *node, int lnc, unsigned k,
					   unsigned n)
{
	struct efa_bind_request req = { .task = k, .ntasks = n, .lnc = lnc };
	struct efa_task_binding b;
	struct efa_error err = { 0 };

	if (efa_bind_task(node, &req, &b, &err))
		printf("# bind: %s\n", err.msg);
	return b;
}

/* Tasks' NIC lists are pairwise disjoint and together use every usable NIC. */
static bool disjoint_cover(const struct efa_node *node, const int *gpus, size_t ngpus, unsigned n)
{
	size_t total = 0;
	char seen[4096] = ",";

	for (unsigned k = 0; k < n; k++) {
		struct efa_task_binding b = bind_one(node, gpus, ngpus, false, k, n);

		for (const char *p = b.nics; *p;) {
			size_t len = strcspn(p, ",");
			char needle[80];

			snprintf(needle, sizeof(needle), ",%.*s,", (int)len, p);
			if (strstr(seen, needle))
				return false;
			strncat(seen, needle + 1, sizeof(seen) - strlen(seen) - 1);
			total++;
			p += len + (p[len] == ',');
		}
	}
	return total == efa_node_usable_nics(node);
}

static void test_p5(void)
{
	struct efa_node *n = load("p5.48xlarge");
	struct efa_task_binding b;
	bool each = true;

	if (!n)
		return;
	require(is_int(n->nnics, 32, "p5: 32 EFA devices"));
	require(ok(gpu(n, 0) && gpu(n, 4), "p5: GPUs with minors 0 and 4"));
	is_str(efa_close_name(efa_closeness(&gpu(n, 0)->pci, &n->nics[0].pci)), "PXB",
	       "p5: GPU0 and the first NIC share a PCIe switch");
	is_str(efa_close_name(efa_closeness(&gpu(n, 0)->pci, &n->nics[4].pci)), "NODE",
	       "p5: GPU0 and the next switch's NIC share only the NUMA node");
	is_str(efa_close_name(efa_closeness(&gpu(n, 0)->pci, &n->nics[31].pci)), "SYS",
	       "p5: GPU0 and the last NIC are on different NUMA nodes");

	b = bind_one(n, all8, 8, false, 0, 8);
	is_str(b.nics, "rdmap79s0,rdmap80s0,rdmap81s0,rdmap82s0", "p5 8x8: task 0 gets GPU0's four NICs");
	is_int(b.first, 0, "  and GPU position 0");
	is_int(b.count, 1, "  one GPU");
	for (unsigned k = 0; k < 8; k++) {
		b = bind_one(n, all8, 8, false, k, 8);
		each = each && count_items(b.nics) == 4 && all_at(n, b.nics, (int)k, EFA_CLOSE_SWITCH);
	}
	ok(each, "p5 8x8: every task gets the 4 NICs behind its GPU's switch");
	ok(disjoint_cover(n, all8, 8, 8), "p5 8x8: no NIC serves two tasks; all 32 are used");
	{
		struct efa_task_binding before = bind_one(n, all8, 8, false, 5, 16);

		ok(efa_bind_index(n) == 0 && n->closeness, "the closeness index is built once");
		b = bind_one(n, all8, 8, false, 5, 16);
		is_str(b.nics, before.nics, "  and binds exactly as without it");
	}

	b = bind_one(n, all8, 8, false, 1, 4);
	is_int(b.first, 2, "p5 4x8: task 1 gets GPUs at positions 2..3");
	is_int(b.count, 2, "  two GPUs");
	is_int(count_items(b.nics), 8, "  and the 8 NICs of their two switches");
	ok(disjoint_cover(n, all8, 8, 4), "p5 4x8: NICs disjoint, all used");

	b = bind_one(n, all8, 8, false, 0, 2);
	is_int(count_items(b.nics), 16, "p5 2x8: 16 NICs per task");

	b = bind_one(n, all8, 8, false, 3, 16);
	ok(b.shared, "p5 16x8: tasks share GPUs");
	is_int(b.first, 1, "  task 3 uses GPU position 1");
	is_int(count_items(b.nics), 2, "  and 2 of that GPU's 4 NICs");
	ok(all_at(n, b.nics, 1, EFA_CLOSE_SWITCH), "  behind GPU1's switch");
	ok(disjoint_cover(n, all8, 8, 16), "p5 16x8: the two tasks of a GPU split its NICs");

	{
		static const int upper[] = { 4, 5, 6, 7 };

		b = bind_one(n, upper, 4, false, 0, 4);
		ok(all_at(n, b.nics, 4, EFA_CLOSE_SWITCH), "p5 GPUs 4-7: task 0 gets /dev/nvidia4's NICs");
		is_str(gpu(n, 4)->pci.addr, "0000:a8:00.0", "  (minor 4 is a8:00.0, not PCI order)");
		ok(!all_at(n, b.nics, 5, EFA_CLOSE_SWITCH), "  not those of 97:00.0 (minor 5)");
		b = bind_one(n, upper, 4, false, 3, 4);
		ok(all_at(n, b.nics, 7, EFA_CLOSE_SWITCH) && count_items(b.nics) == 4,
		   "p5 GPUs 4-7: task 3 gets /dev/nvidia7's 4 NICs");
	}
	{
		static const int three[] = { 3 };

		b = bind_one(n, three, 1, true, 2, 8);
		ok(all_at(n, b.nics, 3, EFA_CLOSE_SWITCH) && count_items(b.nics) == 4,
		   "p5: a GPU Slurm bound to the task keeps its 4 NICs");
		is_int(b.count, 0, "  and the task's GPUs are not re-shared");
	}
	efa_node_free(n);
}

static void test_p4d(void)
{
	struct efa_node *n = load("p4d.24xlarge");
	struct efa_task_binding b;

	if (!n)
		return;
	require(is_int(n->nnics, 4, "p4d: 4 EFA devices"));
	require(ok(gpu(n, 0), "p4d: a GPU with minor 0"));
	is_str(efa_close_name(efa_closeness(&gpu(n, 0)->pci, &n->nics[0].pci)), "PHB",
	       "p4d: GPU0 and its NIC share a root bus (the switch, as the VM shows it)");
	is_str(efa_close_name(efa_closeness(&gpu(n, 0)->pci, &n->nics[1].pci)), "NODE",
	       "p4d: bus 0x20's NIC is on the same NUMA node");
	is_str(efa_close_name(efa_closeness(&gpu(n, 0)->pci, &n->nics[2].pci)), "SYS",
	       "p4d: bus 0x90's NIC is on the other");
	b = bind_one(n, all8, 8, false, 0, 8);
	is_str(b.nics, "rdmap16s27", "p4d 8x8: GPU0 gets the NIC on its bus");
	b = bind_one(n, all8, 8, false, 1, 8);
	is_str(b.nics, "rdmap16s27", "p4d 8x8: GPU1 shares it (one NIC per two GPUs)");
	b = bind_one(n, all8, 8, false, 7, 8);
	is_str(b.nics, "rdmap160s27", "p4d 8x8: GPU7 gets bus 0xa0's NIC");
	b = bind_one(n, all8, 8, false, 1, 4);
	is_str(b.nics, "rdmap32s27", "p4d 4x8: task 1 (GPUs 2,3) gets bus 0x20's NIC");
	efa_node_free(n);

	n = load("p4d-nonuma");
	if (!n)
		return;
	require(is_int(n->nnics, 4, "p4d-nonuma: 4 EFA devices"));
	require(ok(gpu(n, 0), "p4d-nonuma: a GPU with minor 0"));
	is_str(efa_close_name(efa_closeness(&gpu(n, 0)->pci, &n->nics[1].pci)), "SYS",
	       "p4d without NUMA: another bus is just SYS");
	b = bind_one(n, all8, 8, false, 3, 8);
	is_str(b.nics, "rdmap32s27", "p4d without NUMA or driver files: GPU3 still gets its bus's NIC");
	efa_node_free(n);
}

static void test_p5en_trn1(void)
{
	struct efa_node *n = load("p5en.48xlarge");
	struct efa_task_binding b;

	if (n) {
		bool two = true;

		for (unsigned k = 0; k < 8; k++) {
			b = bind_one(n, all8, 8, false, k, 8);
			two = two && count_items(b.nics) == 2 &&
			      all_at(n, b.nics, (int)k, EFA_CLOSE_SWITCH);
		}
		ok(two, "p5en 8x8: each GPU gets 2 of the 4 NICs on the switch it shares with another GPU");
		ok(disjoint_cover(n, all8, 8, 8), "p5en 8x8: the two GPUs of a switch split its NICs");
		efa_node_free(n);
	}
	n = load("trn1.32xlarge");
	if (!n)
		return;
	b = bind_one(n, NULL, 0, false, 0, 16);
	is_str(b.neuron_cores, "0-1", "trn1 16 tasks: task 0 gets NeuronCores 0-1 (one device)");
	b = bind_one(n, NULL, 0, false, 15, 16);
	is_str(b.neuron_cores, "30-31", "trn1 16 tasks: task 15 gets cores 30-31");
	is_int(count_items(b.nics), 1, "  and one NIC (two tasks per NIC)");
	b = bind_one(n, NULL, 0, false, 1, 2);
	is_str(b.neuron_cores, "16-31", "trn1 2 tasks: task 1 gets devices 8-15");
	is_int(count_items(b.nics), 4, "  and half the NICs");
	b = bind_one(n, NULL, 0, false, 5, 32);
	is_str(b.neuron_cores, "5", "trn1 32 tasks: one core each");
	b = bind_one(n, NULL, 0, false, 40, 64);
	ok(b.shared, "trn1 64 tasks: cores shared");
	efa_node_free(n);
}

/* The runtime's logical NeuronCores: 64 on a trn2.48xlarge by default. */
static void test_trn2(void)
{
	static const struct {
		int lnc;
		unsigned task, ntasks;
		const char *cores;
		const char *what;
	} cases[] = {
		{ 0, 0, 16, "0-3", "trn2 16 tasks: task 0 gets its device's 4 logical cores" },
		{ 0, 15, 16, "60-63", "trn2 16 tasks: the last task ends at core 63, not 127" },
		{ 0, 63, 64, "63", "trn2 64 tasks: one logical core each, all within 0-63" },
		{ 0, 1, 2, "32-63", "trn2 2 tasks: task 1 gets devices 8-15" },
		{ 1, 15, 16, "120-127", "trn2 NEURON_LOGICAL_NC_CONFIG=1: 8 cores per device, 128 in all" },
		{ 1, 127, 128, "127", "trn2 NEURON_LOGICAL_NC_CONFIG=1, 128 tasks: one physical core each" },
		{ 2, 15, 16, "60-63", "trn2 NEURON_LOGICAL_NC_CONFIG=2: as the default" },
	};
	struct efa_node *n = load("trn2.48xlarge");
	struct efa_task_binding b;

	if (!n)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		b = bind_neuron(n, cases[i].lnc, cases[i].task, cases[i].ntasks);
		is_str(b.neuron_cores, cases[i].cores, "%s", cases[i].what);
	}
	b = bind_neuron(n, 0, 0, 16);
	is_int(count_items(b.nics), 1, "trn2 16 tasks: one of the 16 EFA NICs each");
	b = bind_neuron(n, 0, 64, 65);
	ok(b.shared, "trn2 65 tasks: more tasks than logical cores share them");
	efa_node_free(n);

	n = load("trn1.32xlarge");
	if (!n)
		return;
	b = bind_neuron(n, 2, 15, 16);
	is_str(b.neuron_cores, "30-31", "trn1 with NEURON_LOGICAL_NC_CONFIG=2: Trainium1 has no logical grouping");
	efa_node_free(n);
}

static void test_helpers(void)
{
	int v[8];
	char host[64];

	require(is_int(efa_parse_index_list("0,1,4", v, 8), 3, "index list"));
	is_int(v[2], 4, "  third entry");
	is_int(efa_parse_index_list("0,,1", v, 8), -1, "empty entry refused");
	is_int(efa_parse_index_list("0,x", v, 8), -1, "garbage refused");
	is_int(efa_parse_index_list("-1", v, 8), -1, "negative refused");
	is_int(efa_parse_index_list("0,1,2", v, 2), -1, "too many refused");

	efa_hostlist_first("n[1-4]", host, sizeof(host));
	is_str(host, "n1", "first host of n[1-4]");
	efa_hostlist_first("gpu-[001-004,010]-x,y", host, sizeof(host));
	is_str(host, "gpu-001-x", "zero padding and suffix kept");
	efa_hostlist_first("login,n2", host, sizeof(host));
	is_str(host, "login", "plain list");
	is_int(efa_hostlist_first("n[", host, sizeof(host)), -1, "broken list refused");
	is_int(efa_master_port(1234, 0, 29500, 29999), 29500 + 1234 % 500, "port from the job id");
	is_int(efa_master_port(1234, 0xfffffffbU, 29500, 29999), 29500 + 1234 % 500,
	       "the batch step counts as step 0");
	is_int(efa_master_port(1234, 3, 29500, 29999), 29500 + 1237 % 500, "steps of one job differ");
	is_int(efa_master_port(7, 0, 40000, 40000), 40000, "a one-port range");
}

static const char *entry_value(const struct efa_env_entry *e, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return e[i].value;
	return NULL;
}

/* MASTER_ADDR is the first node's address as Slurm reaches it: node names
 * often do not resolve (cloud and dynamic nodes, Slinky's pods). */
static void test_launch(void)
{
	struct efa_launch l = {
		.rank = 3, .local_rank = 1, .world_size = 4, .local_world_size = 2, .node_rank = 1,
		.first_node = "t1", .job_id = 1234, .port_lo = 29500, .port_hi = 29999,
		.neuron = true,
	};
	struct efa_env_entry e[EFA_LAUNCH_VARS];
	struct efa_error err;
	int n;

	n = efa_launch_entries(&l, e, &err);
	require(is_int(n, 8, "launch variables, Neuron's root too"));
	is_str(entry_value(e, n, "MASTER_ADDR"), "t1", "without an address: the first node's name");
	is_str(entry_value(e, n, "RANK"), "3", "  RANK");
	is_str(entry_value(e, n, "NODE_RANK"), "1", "  NODE_RANK");
	is_str(entry_value(e, n, "LOCAL_RANK"), "1", "  LOCAL_RANK");
	is_str(entry_value(e, n, "WORLD_SIZE"), "4", "  WORLD_SIZE");
	is_str(entry_value(e, n, "LOCAL_WORLD_SIZE"), "2", "  LOCAL_WORLD_SIZE");
	is_str(entry_value(e, n, "MASTER_PORT"), "29734", "  MASTER_PORT: 29500 + 1234 %% 500");
	is_str(entry_value(e, n, "NEURON_RT_ROOT_COMM_ID"), "t1:29735", "  Neuron's root, the next port");
	has_str(e[0].reason, "(DistributedEnv=yes)", "  in Slurm's order");
	efa_launch_entries_free(e, (size_t)n);
	l.rank = 0;
	l.world_size = 4294967295U;
	n = efa_launch_entries(&l, e, &err);
	is_str(entry_value(e, n, "RANK"), "0", "rank 0 is \"0\"");
	is_str(entry_value(e, n, "WORLD_SIZE"), "4294967295", "  the largest count in full");
	efa_launch_entries_free(e, (size_t)n);
	l.rank = 3;
	l.world_size = 4;
	l.topology_order = true;
	n = efa_launch_entries(&l, e, &err);
	require(is_int(n, 8, "launch variables in topology order"));
	has_str(e[0].reason, "--efa-rank-order=topology", "  say the order they are in");
	efa_launch_entries_free(e, (size_t)n);
	l.topology_order = false;
	l.first_node = "";
	is_int(efa_launch_entries(&l, e, &err), -1, "no first node: refused");
	has_str(err.msg, "first node", "  saying so");
	l.first_node = "t1";
	l.master_addr = "10.1.2.3";
	l.master_from = "the step's first node, t1, at the address Slurm reaches it by (NodeAddr)";
	n = efa_launch_entries(&l, e, &err);
	require(is_int(n, 8, "launch variables with the first node's address"));
	is_str(entry_value(e, n, "MASTER_ADDR"), "10.1.2.3", "MASTER_ADDR is the address Slurm reaches it by");
	has_str(e[5].reason, "(NodeAddr)", "  and says where it came from");
	is_str(e[5].name, "MASTER_ADDR", "  (that entry is MASTER_ADDR)");
	is_str(entry_value(e, n, "NEURON_RT_ROOT_COMM_ID"), "10.1.2.3:29735",
	       "NEURON_RT_ROOT_COMM_ID at the same address, the next port");
	efa_launch_entries_free(e, (size_t)n);
	l.node_shared = true;
	n = efa_launch_entries(&l, e, &err);
	require(is_int(n, 6, "what the node's tasks share: all but two"));
	ok(!entry_value(e, n, "RANK") && !entry_value(e, n, "LOCAL_RANK"),
	   "  not RANK nor LOCAL_RANK, each task's own");
	is_str(entry_value(e, n, "WORLD_SIZE"), "4", "  WORLD_SIZE");
	is_str(entry_value(e, n, "MASTER_PORT"), "29734", "  MASTER_PORT");
	efa_launch_entries_free(e, (size_t)n);
}

/*
 * The step's groups worked out once (as the plugin does before the tasks
 * fork) give every task the binding it works out alone, on every fixture,
 * for 1 to 17 tasks over all GPUs, half of them, or the Neuron devices.
 */
static void test_step_groups(void)
{
	static const char *const fixtures[] = { "p5.48xlarge", "p4d.24xlarge", "p5en.48xlarge",
						"trn1.32xlarge", "trn2.48xlarge" };
	static const int upper[] = { 4, 5, 6, 7 };
	size_t compared = 0, differ = 0;

	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		struct efa_node *n = load(fixtures[f]);

		for (int list = 0; n && list < 2; list++) {
			const int *gpus = list ? upper : all8;
			size_t ngpus = list ? 4 : 8;
			bool has_gpus = false;

			for (size_t i = 0; i < n->naccels; i++)
				has_gpus |= n->accels[i].kind == EFA_ACCEL_GPU;
			if (!has_gpus)
				ngpus = 0;
			for (unsigned tasks = 1; tasks <= 17; tasks++) {
				bool *groups = efa_bind_step_groups(n, gpus, ngpus, tasks);

				if (!groups) {
					differ++;
					continue;
				}
				for (unsigned k = 0; k < tasks; k++) {
					struct efa_bind_request alone = { .gpus = gpus, .ngpus = ngpus,
									  .task = k, .ntasks = tasks };
					struct efa_bind_request shared = alone;
					struct efa_task_binding a, b;
					struct efa_error err;

					shared.groups = groups;
					compared++;
					if (efa_bind_task(n, &alone, &a, &err) || efa_bind_task(n, &shared, &b, &err) ||
					    strcmp(a.nics, b.nics) || strcmp(a.neuron_cores, b.neuron_cores) ||
					    a.first != b.first || a.count != b.count || a.shared != b.shared) {
						if (differ++ < 5)
							printf("# %s, %u tasks, task %u: '%s' alone, '%s' from the step's groups\n",
							       fixtures[f], tasks, k, a.nics, b.nics);
					}
				}
				free(groups);
			}
		}
		efa_node_free(n);
	}
	ok(compared > 500 && !differ,
	   "the step's groups, worked out once, bind each of %zu tasks as it binds alone (%zu differ)",
	   compared, differ);
}

/* How a task's NIC list is built: whole names or none. */
static void test_list_append(void)
{
	char buf[12] = "";

	ok(!efa_list_append(buf, sizeof(buf), ",", "rdmap0") && !strcmp(buf, "rdmap0"),
	   "the first item without a separator");
	ok(!efa_list_append(buf, sizeof(buf), ",", "r1") && !strcmp(buf, "rdmap0,r1"),
	   "  the next after one");
	ok(efa_list_append(buf, sizeof(buf), ",", "r2") && !strcmp(buf, "rdmap0,r1"),
	   "  one that does not fit whole is left out, the list as it was");
	ok(!efa_list_append(buf, sizeof(buf), ",", "r") && !strcmp(buf, "rdmap0,r1,r"),
	   "  one that fills the last byte but the NUL goes in");
}

int main(void)
{
	test_list_append();
	test_p5();
	test_p4d();
	test_p5en_trn1();
	test_trn2();
	test_helpers();
	test_launch();
	test_step_groups();
	return done_testing();
}
