/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spank_efa.so's plugstack.conf line found as Slurm finds it: slurm.conf
 * (SLURM_CONF, the build's default, the configless cache), its
 * PlugStackConfig= through Include lines, plugstack.conf's include globs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config/plugstack.h"
#include "tap.h"
#include "tmpdir.h"

static const char *found_args(const struct efa_plugstack_line *l)
{
	static char buf[1024];

	buf[0] = '\0';
	for (int i = 0; i < l->argc; i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", i ? " " : "", l->argv[i]);
	return buf;
}

static void test_find_conf(void)
{
	struct efa_error err;
	char buf[4096];

	tmp_put(tmp_base, "etc/slurm.conf", "ClusterName=c\n");
	unsetenv("SLURM_CONF");
	ok(efa_slurm_conf_find(tmp_at("etc/slurm.conf"), buf, sizeof(buf), &err) == 0 &&
	   !strcmp(buf, tmp_at("etc/slurm.conf")), "without SLURM_CONF: the build's default slurm.conf");
	setenv("SLURM_CONF", "/elsewhere/slurm.conf", 1);
	ok(efa_slurm_conf_find(tmp_at("etc/slurm.conf"), buf, sizeof(buf), &err) == 0 &&
	   !strcmp(buf, "/elsewhere/slurm.conf"), "SLURM_CONF wins, as for Slurm's commands");
	unsetenv("SLURM_CONF");
	if (access(EFA_SLURM_CONF_CACHE, F_OK)) {
		ok(efa_slurm_conf_find(tmp_at("etc/none.conf"), buf, sizeof(buf), &err) == -1,
		   "no default and no configless cache: an error");
		has_str(err.msg, EFA_SLURM_CONF_CACHE, "  naming what was looked for");
	} else {
		ok(efa_slurm_conf_find(tmp_at("etc/none.conf"), buf, sizeof(buf), &err) == 0 &&
		   !strcmp(buf, EFA_SLURM_CONF_CACHE), "no default: slurmd's configless cache");
		ok(1, "  (this machine has one)");
	}
}

static void test_find_line(void)
{
	struct efa_plugstack_line l;
	struct efa_error err;

	/* PlugStackConfig= in an included file, a relative include glob. */
	tmp_put(tmp_base, "a/slurm.conf",
		"# a cluster\nClusterName=c SlurmctldPort=7000\nInclude extra.conf\n");
	tmp_put(tmp_base, "a/extra.conf", "plugstackconfig=\"stack/main.conf\"   # the SPANK plugins\n");
	tmp_put(tmp_base, "a/stack/main.conf",
		"optional /usr/lib/slurm/spank_pyxis.so\n# required /x/spank_efa.so config=/commented\n"
		"include conf.d/*.conf\n");
	tmp_put(tmp_base, "a/stack/conf.d/10-other.conf", "required other.so a=b\n");
	tmp_put(tmp_base, "a/stack/conf.d/50-efa.conf",
		"required /usr/lib/x86_64-linux-gnu/slurm/spank_efa.so config=/etc/slurm/efa-%n.conf  root=/fixtures/%n\n"
		"required spank_efa.so config=/second\n");
	err.msg[0] = '\0';
	ok(efa_plugstack_find(tmp_at("a/slurm.conf"), &l, &err) == 0, "found (%s)", err.msg);
	is_str(found_args(&l), "config=/etc/slurm/efa-%n.conf root=/fixtures/%n",
	       "  its arguments, from the first spank_efa.so line, through slurm.conf's Include and PlugStackConfig= and plugstack.conf's include glob");
	has_str(l.file, "a/stack/conf.d/50-efa.conf", "  in the file that holds it");
	is_int(l.line, 1, "  at its line");

	/* No PlugStackConfig=: plugstack.conf beside slurm.conf. */
	tmp_put(tmp_base, "b/slurm.conf", "ClusterName=c\n");
	tmp_put(tmp_base, "b/plugstack.conf", "optional spank_efa.so\n");
	ok(efa_plugstack_find(tmp_at("b/slurm.conf"), &l, &err) == 0 && l.argc == 0,
	   "without PlugStackConfig=: plugstack.conf beside slurm.conf, a line without arguments");

	/* Missing or unreadable: said, never a crash. */
	tmp_put(tmp_base, "c/slurm.conf", "PlugStackConfig=/nonexistent/plugstack.conf\n");
	ok(efa_plugstack_find(tmp_at("c/slurm.conf"), &l, &err) == -1, "a PlugStackConfig= that is not there");
	has_str(err.msg, "cannot read /nonexistent/plugstack.conf", "  says which file");
	tmp_put(tmp_base, "d/slurm.conf", "ClusterName=c\n");
	tmp_put(tmp_base, "d/plugstack.conf", "optional spank_pyxis.so\nrequired spank_efa.so.bak\n");
	ok(efa_plugstack_find(tmp_at("d/slurm.conf"), &l, &err) == -1, "a plugstack without spank_efa.so");
	has_str(err.msg, "loads no spank_efa.so", "  says so");
	has_str(err.msg, "give --config and --root", "  and what to do");
	tmp_put(tmp_base, "e/slurm.conf", "Include e.conf\n");
	tmp_put(tmp_base, "e/e.conf", "Include e.conf\n");
	ok(efa_plugstack_find(tmp_at("e/slurm.conf"), &l, &err) == -1, "an Include that includes itself");
	has_str(err.msg, "included more than", "  is bounded");
	tmp_put(tmp_base, "f/slurm.conf", "ClusterName=c\n");
	tmp_put(tmp_base, "f/plugstack.conf", "include nothing/*.conf\nrequired spank_efa.so a=1\n");
	ok(efa_plugstack_find(tmp_at("f/slurm.conf"), &l, &err) == 0 && !strcmp(found_args(&l), "a=1"),
	   "an include glob that matches nothing includes nothing, as in spank.c");
}

int main(void)
{
	if (tmp_open())
		return done_testing();
	test_find_conf();
	test_find_line();
	tmp_close();
	return done_testing();
}
