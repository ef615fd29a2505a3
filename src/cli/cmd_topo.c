/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa topo: accelerators x EFA NICs, as nvidia-smi topo -m shows GPUs. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config/efa_conf.h"
#include "common/node/bind.h"
#include "common/node/node.h"
#include "cli.h"

/* Every form of topo, also what --cluster and its --job/--nodes form
 * print after a usage error. */
const char cmd_topo_usage[] =
	"usage: slurm-efa topo [--config FILE] [--root DIR] [--json]\n"
	"       slurm-efa topo --cluster [--snapshot] [--json] [--config FILE]\n"
	"                      [--url URL] [--user U] [--token-file F] [--timeout MS]\n"
	"                      [--api-version vX.Y.Z]\n"
	"       slurm-efa topo --cluster --job ID | --nodes LIST [--topology FILE] [--json]\n";

static const char *accel_label(const struct efa_accel *a, char *buf, size_t size)
{
	if (a->index < 0)
		snprintf(buf, size, "%s?", a->kind == EFA_ACCEL_GPU ? "GPU" : "NEURON");
	else
		snprintf(buf, size, "%s%d", a->kind == EFA_ACCEL_GPU ? "GPU" : "NEURON", a->index);
	return buf;
}

/* NEURON_RT_VISIBLE_CORES counts logical cores: the caller's
 * NEURON_LOGICAL_NC_CONFIG, as a job's, else each device's default. */
static int caller_lnc(void)
{
	int lnc = efa_neuron_lnc_parse(getenv("NEURON_LOGICAL_NC_CONFIG"));

	return lnc > 0 ? lnc : 0;
}

static void print_neuron_cores(const struct efa_node *node)
{
	size_t logical = 0, physical = 0, first = 0;
	int lnc = caller_lnc();

	for (size_t a = 0; a < node->naccels; a++) {
		const struct efa_accel *acc = &node->accels[a];
		int n = efa_neuron_logical_cores(acc, lnc);

		if (acc->kind != EFA_ACCEL_NEURON)
			continue;
		if (!logical)
			printf("\nNeuronCores (NEURON_RT_VISIBLE_CORES numbers logical cores%s):\n",
			       lnc ? ", NEURON_LOGICAL_NC_CONFIG from the environment" : "");
		if (acc->present)
			printf("  NEURON%-3d cores %zu-%zu (%d physical, %d per logical core)\n",
			       acc->index, first, first + (size_t)n - 1, acc->cores > 0 ? acc->cores : 1,
			       (acc->cores > 0 ? acc->cores : 1) / n);
		else
			printf("  NEURON%-3d %d cores, not usable here\n", acc->index, n);
		if (acc->present)
			first += (size_t)n;
		logical += (size_t)n;
		physical += (size_t)(acc->cores > 0 ? acc->cores : 1);
	}
	if (logical)
		printf("  %zu logical NeuronCores, %zu physical\n", logical, physical);
}

static void print_text(const struct efa_node *node)
{
	char label[32];

	printf("%-9s", "");
	for (size_t n = 0; n < node->nnics; n++)
		printf(" NIC%-3zu", n);
	printf(" %-5s %s\n", "NUMA", "PCI");
	for (size_t a = 0; a < node->naccels; a++) {
		const struct efa_accel *acc = &node->accels[a];

		printf("%-9s", accel_label(acc, label, sizeof(label)));
		for (size_t n = 0; n < node->nnics; n++)
			printf(" %-6s", efa_close_name(efa_closeness(&acc->pci, &node->nics[n].pci)));
		printf(" %-5d %s%s\n", acc->pci.numa, acc->pci.addr[0] ? acc->pci.addr : "unknown",
		       acc->present ? "" : " (not usable here)");
	}
	printf("\nNICs:\n");
	for (size_t n = 0; n < node->nnics; n++) {
		const struct efa_nic *nic = &node->nics[n];

		printf("  NIC%-3zu %-12s %s NUMA %d", n, nic->name, nic->pci.addr, nic->pci.numa);
		if (nic->uverbs >= 0)
			printf(" uverbs%d%s\n", nic->uverbs, nic->usable ? "" : " (no /dev node: not usable)");
		else
			printf(" (no uverbs: not usable)\n");
	}
	print_neuron_cores(node);
	printf("\nLegend: PXB = same PCIe switch, PHB = same host bridge, NODE = same NUMA node,\n"
	       "        SYS = across NUMA nodes (or unknown)\n");
}

static json_t *to_json(const struct efa_node *node)
{
	json_t *accels = json_array(), *nics = json_array();

	for (size_t n = 0; n < node->nnics; n++) {
		const struct efa_nic *nic = &node->nics[n];

		json_array_append_new(nics, json_pack("{s:s, s:s, s:i, s:i, s:b}", "name", nic->name,
						      "pci", nic->pci.addr, "numa", nic->pci.numa,
						      "uverbs", nic->uverbs, "usable", nic->usable));
	}
	for (size_t a = 0; a < node->naccels; a++) {
		const struct efa_accel *acc = &node->accels[a];
		json_t *levels = json_object();

		for (size_t n = 0; n < node->nnics; n++)
			json_object_set_new(levels, node->nics[n].name,
					    json_string(efa_close_name(efa_closeness(&acc->pci,
										     &node->nics[n].pci))));
		json_array_append_new(accels, json_pack("{s:s, s:i, s:s?, s:i, s:i, s:i, s:b, s:o}",
			"kind", acc->kind == EFA_ACCEL_GPU ? "gpu" : "neuron", "index", acc->index,
			"pci", acc->pci.addr[0] ? acc->pci.addr : NULL, "numa", acc->pci.numa,
			"cores", acc->kind == EFA_ACCEL_NEURON ? efa_neuron_logical_cores(acc, caller_lnc()) : 0,
			"physical_cores", acc->cores, "usable", acc->present, "nics", levels));
	}
	return json_pack("{s:s?, s:o, s:o}", "instance_type", node->instance_type,
			 "accelerators", accels, "nics", nics);
}

int cmd_topo(int argc, char **argv, const struct cli_common *common)
{
	struct efa_config *cfg = NULL;
	struct efa_node *node = NULL;
	struct efa_error err;
	int rc = EXIT_USAGE;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--cluster"))
			return cmd_topo_cluster(argc, argv, common);
	if (argc > 1) {
		fprintf(stderr, "slurm-efa topo: unexpected argument '%s'\n%s", argv[1], cmd_topo_usage);
		return EXIT_USAGE;
	}
	if (efa_config_find_and_load(common->config, &cfg, &err) ||
	    efa_node_discover(common->root, cfg->instance_type, &node, &err)) {
		fprintf(stderr, "slurm-efa: %s\n", err.msg);
		goto out;
	}
	if (common->json) {
		if (cli_print_json(to_json(node))) {
			fprintf(stderr, "slurm-efa: out of memory\n");
			goto out;
		}
	} else {
		printf("%s: %zu accelerator%s, %zu EFA NIC%s\n\n",
		       node->instance_type ? node->instance_type : "unknown instance type",
		       node->naccels, node->naccels == 1 ? "" : "s", node->nnics,
		       node->nnics == 1 ? "" : "s");
		print_text(node);
	}
	rc = 0;
out:
	efa_node_free(node);
	efa_config_free(cfg);
	return rc;
}
