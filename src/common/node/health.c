/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/node/health.h"
#include "common/node/sysfs.h"

/* One problem more: "WHAT: DETAIL", after "; " from the ones before. */
static void add(char *buf, size_t size, int *n, const char *what, const char *detail)
{
	efa_strlcatf(buf, size, "%s%s %s", *n ? "; " : "", what, detail);
	(*n)++;
}

static int port_problems(const struct efa_sysfs *fs, const struct efa_nic *nic, char *buf,
			 size_t size, int *n)
{
	char **ports = efa_sysfs_list(fs, "/sys/class/infiniband/%s/ports", nic->name);
	char state[64], what[256];

	if (!ports)
		return -1;
	for (char **p = ports; *p; p++) {
		if (efa_sysfs_read(fs, state, sizeof(state), "/sys/class/infiniband/%s/ports/%s/state",
				   nic->name, *p)) {
			snprintf(what, sizeof(what), "%s: port %s has no state", nic->name, *p);
			add(buf, size, n, "EFA device", what);
			continue;
		}
		/* "4: ACTIVE"; the number alone on older kernels' files. */
		if (!strstr(state, "ACTIVE") && strcmp(state, "4")) {
			snprintf(what, sizeof(what), "%s: port %s is %s, not ACTIVE", nic->name, *p, state);
			add(buf, size, n, "EFA device", what);
		}
	}
	efa_strv_free(ports);
	return 0;
}

int efa_node_health_problems(const struct efa_node *node, const char *root, char *buf,
			     size_t size)
{
	struct efa_sysfs fs;
	int n = 0;

	/* The node was read under root a moment ago: it is there. */
	if (efa_sysfs_open(&fs, root))
		return -1;
	for (size_t i = 0; i < node->nnics && n >= 0; i++)
		if (port_problems(&fs, &node->nics[i], buf, size, &n))
			n = -1;
	efa_sysfs_close(&fs);
	return n;
}
