/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/env/env.h"
#include "common/node/stack.h"

/*
 * What aws-ofi-nccl tunes itself, and the first release that does: a site
 * value overrides the plugin only from there on. Checked against the
 * plugin's tags (src/nccl_ofi_net.c, src/platform-aws.c, later
 * src/platform-aws.cpp and src/tuner/): NCCL_TOPO_FILE on p4d from 1.1.1;
 * NCCL_PROTO=simple where the NIC lacks ordering from 1.6.0; the tuner
 * (which picks NCCL_ALGO and NCCL_PROTO, and steps aside when either is
 * set), NCCL_NET_FORCE_FLUSH and NCCL_NVLSTREE_MAX_CHUNKSIZE from 1.8.0;
 * NCCL_NVLS_CHUNKSIZE from 1.9.0; the platform table's NCCL_BUFFSIZE,
 * NCCL_P2P_NET_CHUNKSIZE and NCCL_TUNER_PLUGIN from 1.16.0;
 * NCCL_NETDEVS_POLICY from 1.17.0. The other NCCL_NVLS* switches choose
 * among the algorithms the tuner picks from 1.8.0.
 */
static const char *plugin_tunes_since(const char *name)
{
	static const struct {
		const char *name, *since;
	} vars[] = {
		{ "NCCL_TOPO_FILE", "1.1.1" },
		{ "NCCL_PROTO", "1.6.0" },
		{ "NCCL_ALGO", "1.8.0" },
		{ "NCCL_NET_FORCE_FLUSH", "1.8.0" },
		{ "NCCL_NVLSTREE_MAX_CHUNKSIZE", "1.8.0" },
		{ "NCCL_NVLS_CHUNKSIZE", "1.9.0" },
		{ "NCCL_BUFFSIZE", "1.16.0" },
		{ "NCCL_P2P_NET_CHUNKSIZE", "1.16.0" },
		{ "NCCL_TUNER_PLUGIN", "1.16.0" },
		{ "NCCL_NETDEVS_POLICY", "1.17.0" },
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (!strcmp(name, vars[i].name))
			return vars[i].since;
	return strncmp(name, "NCCL_NVLS", 9) ? NULL : "1.8.0";
}

/*
 * The release from which the node's aws-ofi-nccl tunes name itself, or
 * NULL when it does not (or never does). An unknown plugin version counts
 * as one that does: the warning is cheap, a silent override is not.
 */
static const char *plugin_tunes(const char *name, const char *ofi)
{
	const char *since = plugin_tunes_since(name);

	if (!since || (ofi && efa_version_cmp(ofi, since) < 0))
		return NULL;
	return since;
}

static int add_warning(char ***list, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int add_warning(char ***list, size_t *n, const char *fmt, ...)
{
	char **grown = realloc(*list, (*n + 2) * sizeof(*grown));
	va_list ap;
	int rc;

	if (!grown)
		return -1;
	*list = grown;
	va_start(ap, fmt);
	rc = vasprintf(&grown[*n], fmt, ap);
	va_end(ap);
	if (rc < 0) {
		grown[*n] = NULL;	/* undefined after a failure: keep the list freeable */
		return -1;
	}
	grown[++*n] = NULL;
	return 0;
}

int efa_env_plan_warnings(const struct efa_env_plan *plan, const struct efa_config *cfg,
			  const struct efa_node *node, char ***out)
{
	const char *ofi = node->stack.ofi_nccl, *since;
	size_t n = 0;

	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -1;
	for (size_t i = 0; plan && i < plan->n; i++) {
		const struct efa_env_entry *e = &plan->v[i];

		if (e->value && (since = plugin_tunes(e->name, ofi)) &&
		    add_warning(out, &n, "%.*s sets %s, which aws-ofi-nccl tunes per platform from %s on%s: it overrides the plugin's choice for every job; remove it unless measured on this platform",
				(int)strcspn(e->reason, ","), e->reason, e->name, since,
				ofi ? "" : " (this node's is unknown)"))
			goto nomem;
	}
	for (char **f = cfg ? cfg->force_env : NULL; f && *f; f++)
		if ((since = plugin_tunes(*f, ofi)) &&
		    add_warning(out, &n, "ForceEnv= forces %s, which aws-ofi-nccl tunes per platform from %s on%s, over every job's own value; remove it unless measured on this platform",
				*f, since, ofi ? "" : " (this node's is unknown)"))
			goto nomem;
	return 0;
nomem:
	efa_strv_free(*out);
	*out = NULL;
	return -1;
}
