/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/topology/topology.h"
#include "common/topology/topology_file.h"
#include "shell.h"
#include "topology_sync.h"

/* A failure is said when it starts or changes, not every round it lasts. */
static void say_failure(struct topology_sync *ts, topology_say say, const char *msg)
{
	if (strncmp(ts->said, msg, sizeof(ts->said) - 1))
		say("topology: %s; trying again next round", msg);
	ts->said[0] = '\0';
	efa_strlcatf(ts->said, sizeof(ts->said), "%s", msg);
}

/* The file could not be brought up to date: the next round tries again. */
static void failed(struct topology_sync *ts, topology_say say, const char *msg)
{
	ts->retry = true;
	say_failure(ts, say, msg);
}

static void reload(struct topology_sync *ts, const struct efa_config *cfg, topology_say say)
{
	char out[1024], msg[2048];
	int rc = cli_shell(cfg->topology_reload, TOPOLOGY_RELOAD_TIMEOUT, out, sizeof(out));

	ts->reload_failed = rc != 0;
	if (!rc) {
		say("topology: TopologyReload '%s' done%s%s", cfg->topology_reload, out[0] ? ": " : "",
		    out);
		return;
	}
	if (rc < 0)
		snprintf(msg, sizeof(msg), "TopologyReload '%s' could not run: %s",
			 cfg->topology_reload, out);
	else
		snprintf(msg, sizeof(msg), "TopologyReload '%s' exited %d%s%s: Slurm may still use the previous topology",
			 cfg->topology_reload, rc, out[0] ? ": " : "", out);
	say_failure(ts, say, msg);
}

bool topology_sync(struct topology_sync *ts, const struct efa_config *cfg,
		   const struct efa_cluster *c, bool fresh, topology_say say)
{
	enum efa_topology_format format;
	struct efa_topo_tree tree;
	struct efa_error err;
	char summary[1024], msg[EFA_ERROR_MAX], yaml_note[128] = "", *text;
	bool changed, reloaded = false;

	if (cfg->topology == EFA_TOPOLOGY_NONE || (!fresh && !ts->retry && !ts->reload_failed))
		return false;
	if (!cfg->topology_file) {
		failed(ts, say, "Topology= needs TopologyFile= (topology.conf or topology.yaml beside slurm.conf)");
		return false;
	}
	format = efa_topology_format_for(cfg->topology_format, cfg->topology_file, c->slurm_version);
	if (format == EFA_TOPOLOGY_FORMAT_YAML && !efa_slurm_reads_topology_yaml(c->slurm_version)) {
		snprintf(msg, sizeof(msg), "Slurm %s reads no topology.yaml (25.05 and later do): set TopologyFormat=conf and point TopologyFile= at topology.conf",
			 c->slurm_version);
		failed(ts, say, msg);
		return false;
	}
	if (efa_topology_build(c, &tree, &err)) {
		failed(ts, say, err.msg);
		return false;
	}
	if (format == EFA_TOPOLOGY_FORMAT_YAML) {
		text = efa_topology_render_yaml(&tree, cfg->topology);
		snprintf(yaml_note, sizeof(yaml_note), " as topology.yaml (topologies %s and %s, %s the default)",
			 EFA_TOPO_YAML_TREE, EFA_TOPO_YAML_BLOCK,
			 cfg->topology == EFA_TOPOLOGY_BLOCK ? EFA_TOPO_YAML_BLOCK : EFA_TOPO_YAML_TREE);
	} else {
		text = efa_topology_render(&tree, cfg->topology);
	}
	if (!text || efa_topology_update(cfg->topology_file, text, &changed, summary, sizeof(summary), &err)) {
		failed(ts, say, text ? err.msg : "out of memory");
		goto out;
	}
	ts->retry = false;
	if (changed || !ts->reported)
		say("topology: %s %s%s: %zu switches, %zu nodes (%zu without layer features, %zu with contradicting ones%s%s)%s%s",
		    changed ? "wrote" : "unchanged", cfg->topology_file, yaml_note, tree.nswitches, c->nnodes,
		    tree.without_layers, tree.inconsistent, tree.inconsistent ? ": " : "", tree.note,
		    changed ? ": " : "", changed ? summary : "");
	ts->reported = true;
	if ((changed || ts->reload_failed) && cfg->topology_reload) {
		reload(ts, cfg, say);
		reloaded = true;
	}
	if (!ts->reload_failed)
		ts->said[0] = '\0';
out:
	free(text);
	efa_topology_clear(&tree);
	return reloaded;
}
