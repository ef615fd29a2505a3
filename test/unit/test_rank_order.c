/* SPDX-License-Identifier: Apache-2.0 */
/* Slurm's topology files read back, and a step's nodes put in their order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/topology/hostlist.h"
#include "common/topology/rank_order.h"
#include "common/topology/topology.h"
#include "common/topology/topology_read.h"
#include "tap.h"

/* The order of the nodes of expr under text's topology, as "a b c"; the
 * error message when there is none. */
static char *ordered(const char *text, const char *expr)
{
	static char out[4096];
	struct efa_topo_map m;
	struct efa_error err;
	char **names;
	size_t n, *order;

	out[0] = '\0';
	if (efa_topo_map_parse(text, "topology.conf", EFA_TOPO_PICK_DEFAULT, &m, &err)) {
		snprintf(out, sizeof(out), "error: %s", err.msg);
		return out;
	}
	if (efa_hostlist_expand(expr, &names, &n, &err)) {
		efa_topo_map_clear(&m);
		snprintf(out, sizeof(out), "error: %s", err.msg);
		return out;
	}
	order = calloc(n, sizeof(*order));
	if (efa_rank_order(&m, names, n, order, &err))
		snprintf(out, sizeof(out), "error: %s", err.msg);
	else
		for (size_t i = 0; i < n; i++)
			efa_strlcatf(out, sizeof(out), "%s%s", i ? " " : "", names[order[i]]);
	free(order);
	efa_strv_free(names);
	efa_topo_map_clear(&m);
	return out;
}

static void test_tree(void)
{
	const char *interleaved = "# two leaves, names interleaved\n"
				  "SwitchName=top Switches=leaf[1-2]\n"
				  "SwitchName=leaf1 Nodes=n[1,3] LinkSpeed=100\n"
				  "SwitchName=leaf2 Nodes=n[2,4]\n";
	const char *four = "SwitchName=core Switches=spine[1-2]\n"
			   "SwitchName=spine1 Switches=agg1\n"
			   "SwitchName=spine2 Switches=agg2\n"
			   "SwitchName=agg1 Switches=leaf[1-2]\n"
			   "SwitchName=agg2 Switches=leaf3\n"
			   "SwitchName=leaf1 Nodes=g[01,05]\n"
			   "SwitchName=leaf2 Nodes=g[02,06]\n"
			   "SwitchName=leaf3 Nodes=g[03-04]\n";

	is_str(ordered(interleaved, "n[1-4]"), "n1 n3 n2 n4", "tree: nodes grouped under their leaf");
	is_str(ordered(interleaved, "n[2-4]"), "n2 n4 n3",
	       "a group goes where its first node in Slurm's order went");
	is_str(ordered(interleaved, "n[1-2]"), "n1 n2", "one node per leaf: Slurm's order");
	is_str(ordered(four, "g[01-06]"), "g01 g05 g02 g06 g03 g04",
	       "four layers: leaves of the last layer, in their parents");
	is_str(ordered(four, "g[03,01,02]"), "g03 g01 g02",
	       "the node list's own order is Slurm's order");
	is_str(ordered("SwitchName=s1 Switches=s2 Nodes=a1\nSwitchName=s2 Nodes=a[0,2]\n", "a[0-2]"),
	       "a0 a2 a1", "mixed depths: a node beside a switch keeps its place");
	is_str(ordered(interleaved, "n[1-5]"), "error: node n5 is not in it",
	       "a node the topology does not name: no order");
	is_str(ordered("SwitchName=a Nodes=x1\nSwitchName=b Nodes=x2\n", "x[2,1]"), "x2 x1",
	       "two trees without a common top: Slurm's order between them");
}

/* topology.conf's lines as Slurm's parser reads them (parse_config.c). */
static void test_conf_syntax(void)
{
	is_str(ordered("SwitchName=top Switches=leaf[1-2]\n"
		       "SwitchName=leaf1 \\\n  Nodes=n[1,3]\n"
		       "SwitchName=leaf2 Nodes=n2,\\\nn4\n", "n[1-4]"),
	       "n1 n3 n2 n4", "a backslash at the end joins the next line (between keys, inside a list)");
	is_str(ordered("SwitchName = top Switches=\"leaf[1-2]\"\n"
		       "SwitchName=leaf1 Nodes = n[1,3]   \r\n"
		       "SwitchName=leaf2\tNodes=n[2,4] # a comment \\\n", "n[1-4]"),
	       "n1 n3 n2 n4", "blanks around '=', a quoted value, CRLF, a backslash inside a comment");
	is_str(ordered("SwitchName=top Switches=leaf[1-2] \\  \n"
		       "# the leaves\n"
		       "SwitchName=leaf1 Nodes=n[1,3]\n"
		       "SwitchName=leaf2 Nodes=n[2,4]\n", "n[1-4]"),
	       "n1 n3 n2 n4", "blanks after the backslash: still joined (to a comment)");
	is_str(ordered("SwitchName=a \\\nNodes=n1\nSwitchName=b Nodes=n1\n", "n1"),
	       "error: topology.conf:3: node n1 is under a already (line 1)",
	       "lines are counted in the file, joined ones too");
	is_str(ordered("SwitchName=a Nodes=n1 \\\\\nSwitchName=b Nodes=n2\n", "n1"),
	       "error: topology.conf:1: '\\' is not KEY=VALUE",
	       "two backslashes do not join: they are one, escaped");
	is_str(ordered("SwitchName=a Nodes=\n", "n1"), "error: topology.conf:1: Nodes= without a value",
	       "a key without a value");
	is_str(ordered("SwitchName=a Switches= Nodes=n1\n", "n1"),
	       "error: topology.conf:1: Switches= without a value", "  before the next key");
	has_str(ordered("SwitchName=a n1\n", "n1"), "topology.conf:1: 'n1' is not KEY=VALUE",
		"a word without '='");
	has_str(ordered("SwitchName=a Nodes=n1\n include topology.d/leaves.conf\n", "n1"),
		"topology.conf:2: include topology.d/leaves.conf: slurm-efa does not follow Include lines",
		"an Include line: refused by name (the caller keeps Slurm's order)");
}

/* Two topologies, a tree and blocks; cluster_default goes in the second. */
static const char *yaml_text(const char *cluster_default)
{
	static char text[2048];

	snprintf(text, sizeof(text),
		 "---\n"
		 "- topology: tree1\n"
		 "  tree:\n"
		 "    switches:\n"
		 "      - switch: top\n"
		 "        children: l[1-2]\n"
		 "      - switch: l1\n"
		 "        nodes: n[1-2]\n"
		 "      - switch: l2\n"
		 "        nodes: \"n[3-4]\"\n"
		 "- topology: blocks\n"
		 "%s"
		 "  block:\n"
		 "    block_sizes: [2, 4]\n"
		 "    blocks:\n"
		 "      - block: b1\n"
		 "        nodes: n[1,3] # a comment\n"
		 "      - block: b2\n"
		 "        nodes: [n2, n4]\n",
		 cluster_default);
	return text;
}

static void test_block_and_yaml(void)
{
	const char *blocks = "BlockName=b1 Nodes=n[1,3]\nBlockName=b2 Nodes=n[2,4]\nBlockSizes=2,4\n";

	is_str(ordered(blocks, "n[1-4]"), "n1 n3 n2 n4", "blocks: nodes grouped by block");
	is_str(ordered(yaml_text(""), "n[1-4]"), "n1 n2 n3 n4", "topology.yaml: the first topology");
	is_str(ordered(yaml_text(""), "n[1,3,2]"), "n1 n2 n3", "  a tree");
	is_str(ordered(yaml_text("  cluster_default: true\n"), "n[1-4]"), "n1 n3 n2 n4", "topology.yaml: the cluster_default one");
	is_str(ordered(yaml_text("  cluster_default: Yes # as Slurm's data.c reads it\n"), "n[1-4]"),
	       "n1 n3 n2 n4", "  cluster_default: Yes");
	is_str(ordered(yaml_text("  cluster_default: \"on\"\n"), "n[1-4]"), "n1 n3 n2 n4",
	       "  cluster_default: \"on\"");
	is_str(ordered(yaml_text("  cluster_default: false\n"), "n[1-4]"), "n1 n2 n3 n4",
	       "  cluster_default: false leaves the first");
	is_str(ordered("- topology: f\n  cluster_default: true\n  flat: true\n", "n1"),
	       "error: topology.conf:3: the cluster's topology is flat: only a tree or blocks group nodes",
	       "a flat topology orders nothing");
}

static void test_errors(void)
{
	static const struct {
		const char *text, *error, *what;
	} cases[] = {
		{ "SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n2\n",
		  "topology.conf:2: node n2 is under a already (line 1)", "a node named twice" },
		{ "SwitchName=a Nodes=n1\n\nSwitchName=a Nodes=n2\n",
		  "topology.conf:3: a is defined again (line 1)", "a switch defined twice" },
		{ "SwitchName=a Switches=b\n", "topology.conf:1: switch b under a is not defined",
		  "a child never defined" },
		{ "SwitchName=a Switches=c\nSwitchName=b Switches=c\nSwitchName=c Nodes=n1\n",
		  "topology.conf:2: switch c is under a already", "a switch under two parents" },
		{ "SwitchName=a Switches=b Nodes=n1\nSwitchName=b Switches=a\n",
		  "topology.conf:1: switch a is below itself (a loop)", "a loop" },
		{ "SwitchName=a Nodes=n1 Color=red\n", "topology.conf:1: unknown key 'Color'",
		  "a key Slurm does not know" },
		{ "SwitchName=a Nodes=n1\nBlockName=b Nodes=n2\n",
		  "topology.conf:2: switches and blocks in one topology: Slurm reads one or the other",
		  "tree and block in one file" },
		{ "SwitchName=a Nodes=n[1-\n", "topology.conf:1: ", "a list Slurm cannot expand" },
		{ "SwitchName=a Nodes=n1\nSwitchName=b Nodes=n[2-3,]\n",
		  "topology.conf:2: 'n[2-3,]': a range must be NUMBER or LO-HI",
		  "a list with an empty range, which Slurm refuses" },
		{ "Nodes=n1\n", "topology.conf:1: Nodes= or Switches= without a SwitchName= or BlockName=",
		  "nodes under nothing" },
		{ "SwitchName= Nodes=n1\n", "topology.conf:1: a SwitchName= without a name",
		  "a switch without a name" },
		{ "BlockName=b Switches=c\n", "topology.conf:1: a block has no Switches=",
		  "a block above a switch" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct efa_topo_map m;
		struct efa_error err = { 0 };

		if (!is_int(efa_topo_map_parse(cases[i].text, "topology.conf", EFA_TOPO_PICK_DEFAULT, &m, &err), -1, "%s: refused",
			    cases[i].what))
			efa_topo_map_clear(&m);
		has_str(err.msg, cases[i].error, "  with file and line");
	}
}

static void test_tasks(void)
{
	unsigned t[6];
	struct efa_error err;
	size_t order[4] = { 0, 2, 1, 3 };
	unsigned tasks[4] = { 2, 3, 1, 4 };
	struct efa_rank_place p;

	require(is_int(efa_tasks_per_node_parse("2(x3),1", t, 4, &err), 0, "tasks per node"));
	ok(t[0] == 2 && t[1] == 2 && t[2] == 2 && t[3] == 1, "  2(x3),1 is 2 2 2 1");
	is_int(efa_tasks_per_node_parse("8", t, 1, &err), 0, "one node");
	is_int(efa_tasks_per_node_parse("2(x3)", t, 2, &err), -1, "more counts than nodes");
	is_int(efa_tasks_per_node_parse("2,2", t, 3, &err), -1, "fewer counts than nodes");
	is_int(efa_tasks_per_node_parse("2(x0)", t, 1, &err), -1, "a zero repeat");
	is_int(efa_tasks_per_node_parse("x", t, 1, &err), -1, "not a number");
	is_int(efa_tasks_per_node_parse("", t, 1, &err), -1, "nothing");
	has_str(err.msg, "do not name 1 nodes' tasks", "  saying so");

	efa_rank_place(order, tasks, 4, 1, &p);
	ok(p.node_rank == 2 && p.rank_base == 3 && p.first == 0,
	   "node 1 comes third: its ranks after nodes 0 and 2's tasks");
	efa_rank_place(order, tasks, 4, 0, &p);
	ok(p.node_rank == 0 && p.rank_base == 0, "the first node starts at rank 0");
}

/*
 * Generated EC2-like trees (3 or 4 layers) whose node names follow no
 * layout: every leaf's and every switch's nodes come out together, in
 * Slurm's order inside a leaf, and the result is a permutation.
 */
static void test_generated(void)
{
	for (int layers = 3; layers <= 4; layers++) {
		size_t n = 256, leaves = 32, fan = 4, bad = 0;
		char *text = NULL, **names = calloc(n + 1, sizeof(*names));
		size_t len = 0, *order = calloc(n, sizeof(*order)), *leaf_of = calloc(n, sizeof(size_t));
		FILE *f = open_memstream(&text, &len);
		struct efa_topo_map m;
		struct efa_error err;
		bool *seen = calloc(n, sizeof(bool));

		srand(7 + layers);
		for (size_t i = 0; i < n; i++) {
			leaf_of[i] = (size_t)rand() % leaves;
			if (asprintf(&names[i], "ip-%03zu", i) < 0)
				abort();
		}
		/* count[k] switches at layer k: the leaves at the last layer,
		 * fan times fewer at each layer above. */
		size_t count[5];

		count[layers] = leaves;
		for (int k = layers - 1; k >= 1; k--)
			count[k] = count[k + 1] / fan ? count[k + 1] / fan : 1;
		for (int k = 1; k < layers; k++)
			for (size_t p = 0; p < count[k]; p++) {
				fprintf(f, "SwitchName=L%d-%zu Switches=", k, p);
				for (size_t c = 0, first = 1; c < count[k + 1]; c++)
					if (c % count[k] == p) {
						fprintf(f, "%sL%d-%zu", first ? "" : ",", k + 1, c);
						first = 0;
					}
				fputc('\n', f);
			}
		for (size_t l = 0; l < leaves; l++) {
			fprintf(f, "SwitchName=L%d-%zu Nodes=", layers, l);
			for (size_t i = 0, first = 1; i < n; i++)
				if (leaf_of[i] == l) {
					fprintf(f, "%s%s", first ? "" : ",", names[i]);
					first = 0;
				}
			fputc('\n', f);
		}
		fclose(f);
		/* Leaves that drew no node have "Nodes=": give them none. */
		for (char *p = text; (p = strstr(p, "Nodes=\n"));)
			memset(p, ' ', 6);
		if (!is_int(efa_topo_map_parse(text, "generated", EFA_TOPO_PICK_DEFAULT, &m, &err), 0, "%d layers, %zu nodes: read",
			    layers, n))
			printf("# %s\n", err.msg);
		is_int((int)m.depth, layers, "  %d switches above a node", layers);
		require(is_int(efa_rank_order(&m, names, n, order, &err), 0, "  ordered"));
		for (size_t i = 0; i < n; i++) {
			if (seen[order[i]])
				bad++;
			seen[order[i]] = true;
		}
		is_int((int)bad, 0, "  a permutation");
		/* Each leaf's nodes in one run, ascending (Slurm's order). */
		bad = 0;
		for (size_t i = 1; i < n; i++) {
			size_t a = order[i - 1], b = order[i];

			if (leaf_of[a] == leaf_of[b] && a > b)
				bad++;
			if (leaf_of[a] != leaf_of[b])
				for (size_t j = 0; j + 1 < i; j++)
					if (leaf_of[order[j]] == leaf_of[b])
						bad++;
		}
		is_int((int)bad, 0, "  every leaf's nodes together, in Slurm's order");
		{
			size_t cross[5], limit[5], slurm_cross[5], *slurm = calloc(n, sizeof(size_t));

			for (size_t i = 0; i < n; i++)
				slurm[i] = i;
			require(!efa_ring_crossings(&m, names, order, n, cross, limit, &err) &&
				!efa_ring_crossings(&m, names, slurm, n, slurm_cross, limit, &err));
			bad = 0;
			for (int k = 0; k < layers; k++)
				bad += cross[k] != limit[k] || slurm_cross[k] < limit[k];
			is_int((int)bad, 0, "  the ring crosses each layer the least it can (%zu leaves), Slurm's %zu times",
			       limit[layers - 1], slurm_cross[layers - 1]);
			free(slurm);
		}
		efa_topo_map_clear(&m);
		efa_strv_free(names);
		free(text);
		free(order);
		free(leaf_of);
		free(seen);
	}
}

static void test_crossings(void)
{
	const char *text = "SwitchName=top Switches=leaf[1-2]\n"
			   "SwitchName=leaf1 Nodes=n[1,3]\n"
			   "SwitchName=leaf2 Nodes=n[2,4]\n";
	char *names[] = { "n1", "n2", "n3", "n4", NULL };
	size_t slurm[] = { 0, 1, 2, 3 }, topo[4], cross[2], limit[2];
	struct efa_topo_map m;
	struct efa_error err;

	require(is_int(efa_topo_map_parse(text, "t", EFA_TOPO_PICK_DEFAULT, &m, &err), 0, "read"));
	require(is_int(efa_rank_order(&m, names, 4, topo, &err), 0, "ordered"));
	require(is_int(efa_ring_crossings(&m, names, slurm, 4, cross, limit, &err), 0,
		       "crossings in Slurm's order"));
	ok(cross[0] == 0 && limit[0] == 0, "  one top switch: nothing crosses it");
	ok(cross[1] == 4 && limit[1] == 2, "  every ring edge crosses a leaf; two is the least");
	require(is_int(efa_ring_crossings(&m, names, topo, 4, cross, limit, &err), 0,
		       "crossings in topology order"));
	ok(cross[1] == 2 && limit[1] == 2, "  topology order reaches the least");
	names[3] = "n9";
	is_int(efa_ring_crossings(&m, names, slurm, 4, cross, limit, &err), -1,
	       "a node the topology does not name");
	efa_topo_map_clear(&m);
}

static void test_file_name(void)
{
	is_str(efa_topology_file_name("22.05", true), "topology.conf", "22.05 reads topology.conf only");
	is_str(efa_topology_file_name("26.05", true), "topology.yaml", "26.05: topology.yaml first");
	is_str(efa_topology_file_name("26.05", false), "topology.conf", "  else topology.conf");
}

int main(void)
{
	test_tree();
	test_conf_syntax();
	test_block_and_yaml();
	test_errors();
	test_tasks();
	test_generated();
	test_crossings();
	test_file_name();
	return done_testing();
}
