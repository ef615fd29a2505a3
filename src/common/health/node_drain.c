/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/base/atomic_write.h"
#include "common/base/strutil.h"
#include "common/health/drain_rules.h"
#include "common/cluster/scontrol.h"
#include "common/health/node_drain.h"

#define REASON_MAX 256
#define ANSWER_MAX 8192

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

/* A count that cannot be kept only delays a return: said, not fatal. */
static void write_passes(const char *dir, const char *path, long passes, char *msg, size_t size)
{
	char text[32];
	struct efa_error err;
	int n = snprintf(text, sizeof(text), "%ld\n", passes);

	if (mkdir(dir, 0755) && errno != EEXIST) {
		efa_strlcatf(msg, size, "%scannot keep the count of passing checks in %s: %s",
			     msg[0] ? "; " : "", dir, strerror(errno));
		return;
	}
	if (efa_write_atomic(path, text, (size_t)n, 0600, &err))
		efa_strlcatf(msg, size, "%s%s", msg[0] ? "; " : "", err.msg);
}

/* scontrol's own limit, or what is left of the check's; 0: none left. */
static long scontrol_limit(const struct efa_deadline *dl, const char *what, const char *node,
			   struct efa_error *err)
{
	long limit = efa_deadline_cap(dl, EFA_SCONTROL_TIMEOUT_MS);

	if (!limit)
		efa_error_set(err, "cannot %s node %s: the health check ran out of its HealthTimeout= first",
			      what, node);
	return limit;
}

static int drain(const char *node, const char *problem, const struct efa_deadline *dl, char *did,
		 size_t size, struct efa_error *err)
{
	char node_arg[300], reason_arg[REASON_MAX + 16], answer[ANSWER_MAX];
	char *const argv[] = { "scontrol", "update", node_arg, "State=DRAIN", reason_arg, NULL };
	long limit = scontrol_limit(dl, "drain", node, err);

	if (!limit)
		return -1;
	snprintf(node_arg, sizeof(node_arg), "NodeName=%s", node);
	snprintf(reason_arg, sizeof(reason_arg), "Reason=%s %.*s", EFA_DRAIN_REASON_PREFIX,
		 REASON_MAX, problem);
	if (efa_scontrol(argv, limit, answer, sizeof(answer)))
		return efa_error_set(err, "cannot drain node %s: %s", node, answer);
	snprintf(did, size, "drained node %s: %s", node, reason_arg + strlen("Reason="));
	return 0;
}

static int resume(const char *node, long passes, const struct efa_deadline *dl, char *did,
		  size_t size, struct efa_error *err)
{
	char node_arg[300], answer[ANSWER_MAX];
	char *const argv[] = { "scontrol", "update", node_arg, "State=RESUME", NULL };
	long limit = scontrol_limit(dl, "return to service", node, err);

	if (!limit)
		return -1;
	snprintf(node_arg, sizeof(node_arg), "NodeName=%s", node);
	if (efa_scontrol(argv, limit, answer, sizeof(answer)))
		return efa_error_set(err, "cannot return node %s to service: %s", node, answer);
	snprintf(did, size, "returned node %s to service: %ld checks in a row passed since slurm-efa drained it",
		 node, passes);
	return 0;
}

int efa_node_health_act(const struct efa_config *cfg, const char *node, bool healthy,
			const char *problem, bool may_return, const struct efa_deadline *dl,
			char *did, size_t size, struct efa_error *err)
{
	char answer[ANSWER_MAX], reason_buf[REASON_MAX * 2], path[4096];
	char *const show[] = { "scontrol", "show", "node", (char *)node, "-o", NULL };
	struct efa_node_state st;
	enum efa_drain_action act;
	long passes, limit;
	int rc = 0;

	did[0] = '\0';
	if (healthy && !may_return)
		return 0;
	if (!(limit = scontrol_limit(dl, "read", node, err)))
		return -1;
	if (efa_scontrol(show, limit, answer, sizeof(answer)) ||
	    !efa_node_state_parse(answer, &st, reason_buf, sizeof(reason_buf)))
		return efa_error_set(err, "cannot read node %s from Slurm: %s", node, answer);
	if (snprintf(path, sizeof(path), "%s/health-%s", cfg->node_cache_dir, node) >=
	    (int)sizeof(path))
		return efa_error_set(err, "NodeCacheDir=%s is too long", cfg->node_cache_dir);
	passes = read_passes(path);
	act = efa_drain_decide(healthy, &st, &passes, may_return ? cfg->health_return_passes : 0);
	if (act == EFA_DRAIN_DRAIN)
		rc = drain(node, problem, dl, did, size, err);
	else if (act == EFA_DRAIN_RESUME)
		rc = resume(node, cfg->health_return_passes, dl, did, size, err);
	else if (!healthy && st.reason && !efa_drain_reason_ours(st.reason))
		snprintf(did, size, "node %s is already out of service (%s): left as it is", node,
			 st.reason);
	else if (healthy && (st.drained || st.down) && efa_drain_reason_ours(st.reason))
		snprintf(did, size, "node %s: %ld of %ld passing checks before it returns to service",
			 node, passes, cfg->health_return_passes);
	if (!rc)
		write_passes(cfg->node_cache_dir, path, passes, did, size);
	return rc;
}
