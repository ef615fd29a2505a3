/* SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config/efa_conf.h"
#include "common/config/plugin_args.h"
#include "common/env/spank_env.h"
#include "tap.h"
#include "tmpdir.h"

/* config=DIR/%n.conf: each node its own efa.conf. */
static void test_load_config(void)
{
	char long_pattern[PATH_MAX + 8];
	struct efa_args args = { .root = "/" };
	struct efa_config *cfg = NULL;
	struct efa_error err = { 0 };
	FILE *f;

	if (tmp_open())
		return;
	f = fopen(tmp_at("n7.conf"), "w");
	tmp_setup(f && fputs("InstanceType=p5.48xlarge\n", f) >= 0 && !fclose(f) ? 0 : -1,
		  "node n7's efa.conf");
	args.config = tmp_at("%n.conf");
	ok(efa_args_load_config(&args, "n7", &cfg, &err) == 0, "config=DIR/%%n.conf loads node n7's file");
	is_str(cfg ? cfg->instance_type : NULL, "p5.48xlarge", "  with what it says");
	efa_config_free(cfg);
	cfg = NULL;
	ok(efa_args_load_config(&args, "n8", &cfg, &err) == -1 && !cfg, "  another node's missing file is an error");
	ok(efa_args_load_config(&args, "..", &cfg, &err) == -1 && !cfg, "  so is a name unsafe in a path");
	has_str(err.msg, "cannot name node ..'s efa.conf", "  saying which node's file config= cannot name");
	memset(long_pattern, 'x', sizeof(long_pattern) - 1);
	long_pattern[0] = '/';
	long_pattern[sizeof(long_pattern) - 1] = '\0';
	args.config = long_pattern;
	ok(efa_args_load_config(&args, "n7", &cfg, &err) == -1 && !cfg, "a config= longer than a path is an error");
	tmp_close();
}

int main(void)
{
	struct efa_error err = { 0 };
	struct efa_args args;
	char *good[] = { "config=/etc/slurm/efa.conf", "root=/fixtures/%n" };
	char *bad[] = { "root=/x", "verbose", "config=", "root=relative" };

	ok(efa_args_parse(0, NULL, &args, &err) == 0, "no arguments");
	ok(args.config == NULL, "  config: the usual search");
	is_str(args.root, "/", "  root defaults to /");

	ok(efa_args_parse(2, good, &args, &err) == 0, "config= and root=");
	is_str(args.config, "/etc/slurm/efa.conf", "  config");
	is_str(args.root, "/fixtures/%n", "  root keeps %%n for the caller");

	ok(efa_args_parse(4, bad, &args, &err) == -1, "unknown arguments reported");
	is_str(args.root, "/x", "  good arguments still applied");
	has_str(err.msg, "'root=relative'", "  message names the bad argument");
	has_str(err.msg, "config=/path/to/efa.conf", "  and says what is accepted");

	{
		char buf[64];

		ok(efa_node_name_from_topology("n1", "node", buf, sizeof(buf)) == 0, "topology/none address");
		is_str(buf, "n1", "  is the node name");
		efa_node_name_from_topology("s0.s1.gpu-a.example", "switch.switch.node", buf, sizeof(buf));
		is_str(buf, "gpu-a.example", "switch components skipped, dots in the node name kept");
		ok(efa_node_name_from_topology("s0", "switch.node", buf, sizeof(buf)) == -1,
		   "an address shorter than its pattern is refused");
		ok(efa_node_name_from_topology(NULL, NULL, buf, sizeof(buf)) == -1, "no address");
		efa_node_name_from_topology("n7", NULL, buf, sizeof(buf));
		is_str(buf, "n7", "no pattern: the whole address");

		ok(efa_expand_node_name("/fixtures/%n/x", "n2", buf, sizeof(buf)) == 0, "root %%n expands");
		is_str(buf, "/fixtures/n2/x", "  to the node name");
		efa_expand_node_name("/a%%n", "n2", buf, sizeof(buf));
		is_str(buf, "/a%n", "%%%% is a literal %%");
		ok(efa_expand_node_name("/fixtures/%n", "a-very-long-node-name-that-does-not-fit-in-sixteen",
				   buf, 16) == -1, "a root that does not fit is refused");

		/* The job's environment holds SLURM_TOPOLOGY_ADDR: its user
		 * chooses it, and root builds paths from it. */
		ok(efa_node_name_from_topology("s0.../../etc", "switch.node", buf, sizeof(buf)) == -1,
		   "a topology address whose node name holds '/' is refused");
		ok(efa_node_name_from_topology("..", "node", buf, sizeof(buf)) == -1 &&
		   efa_node_name_from_topology("s0...", "switch.node", buf, sizeof(buf)) == -1 &&
		   efa_node_name_from_topology("s0.", "switch.node", buf, sizeof(buf)) == -1,
		   "  so are '..', '.' and an empty name");
		ok(efa_node_name_from_topology("n1\nx", "node", buf, sizeof(buf)) == -1,
		   "  and one with a control character");
		ok(efa_expand_node_name("/fixtures/%n/x", "..", buf, sizeof(buf)) == -1 &&
		   efa_expand_node_name("/fixtures/%n", "a/b", buf, sizeof(buf)) == -1,
		   "root=/fixtures/%%n never takes '..' or a '/' from a node name");
		ok(efa_expand_node_name("/etc/efa.conf", "..", buf, sizeof(buf)) == 0,
		   "  a pattern without %%n does not care");
	}
	{
		char name[64], tiny[16];

		ok(efa_spank_env_name("efa-bind", name, sizeof(name)) == 0, "an option's variable name");
		is_str(name, "SLURM_SPANK__SLURM_SPANK_OPTION_efa_efa_bind", "  as sbatch spells it ('-' as '_')");
		ok(efa_spank_env_name("efa", tiny, sizeof(tiny)) == -1, "  a buffer too small is an error");
	}
	test_load_config();
	return done_testing();
}
