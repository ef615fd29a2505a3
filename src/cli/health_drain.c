/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slurm-efa check --node --drain: a health check's result applied to this
 * node in Slurm, through scontrol (as Slurm's HealthCheckProgram runs it,
 * on the node, as root). The rules are common/cluster/drain.h's; this
 * file asks Slurm, keeps the count of passing checks, and acts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common/base/atomic_write.h"
#include "common/base/strutil.h"
#include "common/cluster/drain.h"
#include "common/cluster/scontrol.h"
#include "common/config/plugin_args.h"
#include "health_drain.h"

#define REASON_MAX 256
#define ANSWER_MAX 8192

/* This node's name in Slurm: slurmd's (HealthCheckProgram runs under it),
 * else the host's. It names the pass count's file, so it must be safe in a
 * path, as the plugin's is. */
static int node_name(char *buf, size_t size)
{
	const char *env = getenv("SLURMD_NODENAME");

	if (env && *env) {
		if (!efa_node_name_safe(env))
			return -1;
		return snprintf(buf, size, "%s", env) >= (int)size ? -1 : 0;
	}
	return gethostname(buf, size);
}

/* How many checks in a row passed while slurm-efa's drain held. */
static long read_passes(const char *path)
{
	char *text = NULL;
	size_t len;
	long n = 0;

	if (!efa_read_file(path, 64, &text, &len, NULL))
		n = strtol(text, NULL, 10);
	free(text);
	return n > 0 ? n : 0;
}

static void write_passes(const char *dir, const char *path, long passes)
{
	char text[32];
	struct efa_error err;
	int n = snprintf(text, sizeof(text), "%ld\n", passes);

	if (mkdir(dir, 0755) && errno != EEXIST)
		return;
	if (efa_write_atomic(path, text, (size_t)n, 0600, &err))
		fprintf(stderr, "slurm-efa check: %s\n", err.msg);
}

int cli_health_act(const struct efa_config *cfg, bool healthy, const char *problem)
{
	char name[256], answer[ANSWER_MAX], reason_buf[REASON_MAX * 2], path[4096];
	char node_arg[300], reason_arg[REASON_MAX + 16];
	struct efa_node_state st;
	enum efa_drain_action act;
	long passes;

	if (node_name(name, sizeof(name))) {
		fprintf(stderr, "slurm-efa check: cannot tell this node's name: set SLURMD_NODENAME to its Slurm name (no '/', not . or ..)\n");
		return EXIT_USAGE;
	}
	{
		char *const show[] = { "scontrol", "show", "node", name, "-o", NULL };

		if (efa_scontrol(show, EFA_SCONTROL_TIMEOUT_MS, answer, sizeof(answer)) ||
		    !efa_node_state_parse(answer, &st, reason_buf, sizeof(reason_buf))) {
			fprintf(stderr, "slurm-efa check: cannot read node %s from Slurm: %s\n", name, answer);
			return EXIT_REFUSED;
		}
	}
	if (snprintf(path, sizeof(path), "%s/health-%s", cfg->node_cache_dir, name) >= (int)sizeof(path))
		return EXIT_USAGE;
	passes = read_passes(path);
	act = efa_drain_decide(healthy, &st, &passes, cfg->health_return_passes);
	snprintf(node_arg, sizeof(node_arg), "NodeName=%s", name);
	if (act == EFA_DRAIN_DRAIN) {
		char *const drain[] = { "scontrol", "update", node_arg, "State=DRAIN", reason_arg, NULL };

		snprintf(reason_arg, sizeof(reason_arg), "Reason=%s %.*s", EFA_DRAIN_REASON_PREFIX,
			 REASON_MAX, problem);
		if (efa_scontrol(drain, EFA_SCONTROL_TIMEOUT_MS, answer, sizeof(answer))) {
			fprintf(stderr, "slurm-efa check: cannot drain node %s: %s\n", name, answer);
			return EXIT_REFUSED;
		}
		printf("drained node %s: %s\n", name, reason_arg + strlen("Reason="));
	} else if (act == EFA_DRAIN_RESUME) {
		char *const resume[] = { "scontrol", "update", node_arg, "State=RESUME", NULL };

		if (efa_scontrol(resume, EFA_SCONTROL_TIMEOUT_MS, answer, sizeof(answer))) {
			fprintf(stderr, "slurm-efa check: cannot return node %s to service: %s\n", name, answer);
			return EXIT_REFUSED;
		}
		printf("returned node %s to service: %ld checks in a row passed since slurm-efa drained it\n",
		       name, cfg->health_return_passes);
	} else if (!healthy && st.reason && !efa_drain_reason_ours(st.reason)) {
		printf("node %s is already out of service (%s): left as it is\n", name, st.reason);
	} else if (healthy && (st.drained || st.down) && efa_drain_reason_ours(st.reason)) {
		printf("node %s: %ld of %ld passing checks before it returns to service\n", name, passes,
		       cfg->health_return_passes);
	}
	write_passes(cfg->node_cache_dir, path, passes);
	return 0;
}
