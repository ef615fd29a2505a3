/* SPDX-License-Identifier: Apache-2.0 */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cluster/scontrol.h"
#include "common/topology/topology.h"
#include "job_topology.h"

#define SCONTROL_OUT_MAX (256 * 1024)
#define PATH_MAX_LEN 4096

/* VALUE of "NAME=VALUE" (scontrol -o) or "NAME = VALUE" (show config)
 * in text, into buf. */
static int field(const char *text, const char *name, char *buf, size_t size)
{
	size_t len = strlen(name);

	for (const char *p = text; (p = strstr(p, name)); p += len) {
		const char *v = p + len;
		size_t n;

		if (p != text && p[-1] != ' ' && p[-1] != '\n')
			continue;
		v += strspn(v, " ");
		if (*v++ != '=')
			continue;
		v += strspn(v, " ");
		n = strcspn(v, " \n");
		if (n >= size)
			return -1;
		memcpy(buf, v, n);
		buf[n] = '\0';
		return 0;
	}
	return -1;
}

int cli_job_nodes(const char *job, const char *nodes, char *buf, size_t size)
{
	const char *env = getenv("SLURM_JOB_NODELIST");
	char *argv[] = { "scontrol", "-o", "show", "job", (char *)job, NULL };
	char *out;
	int rc = -1;

	if (nodes || !job) {
		const char *list = nodes ? nodes : env;

		if (!list) {
			fprintf(stderr, "slurm-efa: no job: run inside one, or give --job ID or --nodes LIST\n");
			return -1;
		}
		return snprintf(buf, size, "%s", list) < (int)size ? 0 : -1;
	}
	if (!(out = malloc(SCONTROL_OUT_MAX)))
		return -1;
	if (efa_scontrol(argv, EFA_SCONTROL_TIMEOUT_MS, out, SCONTROL_OUT_MAX))
		fprintf(stderr, "slurm-efa: job %s: %s\n", job, out);
	else if (field(out, "NodeList", buf, size) || !strcmp(buf, "(null)"))
		fprintf(stderr, "slurm-efa: job %s has no nodes yet\n", job);
	else
		rc = 0;
	free(out);
	return rc;
}

int cli_slurm_topology_path(char *buf, size_t size)
{
	char *argv[] = { "scontrol", "show", "config", NULL };
	char conf[PATH_MAX_LEN], version[64], *out, *dir;
	int rc = -1;

	if (!(out = malloc(SCONTROL_OUT_MAX)))
		return -1;
	if (efa_scontrol(argv, EFA_SCONTROL_TIMEOUT_MS, out, SCONTROL_OUT_MAX)) {
		fprintf(stderr, "slurm-efa: cannot ask Slurm where its topology file is: %s (give --topology FILE)\n",
			out);
		goto out;
	}
	if (field(out, "SLURM_CONF", conf, sizeof(conf))) {
		fprintf(stderr, "slurm-efa: scontrol show config names no SLURM_CONF (give --topology FILE)\n");
		goto out;
	}
	if (field(out, "SLURM_VERSION", version, sizeof(version)))
		version[0] = '\0';
	dir = dirname(conf);
	snprintf(buf, size, "%s/topology.yaml", dir);
	if (snprintf(buf, size, "%s/%s", dir,
		     efa_topology_file_name(version[0] ? version : NULL,
					    !access(buf, F_OK))) < (int)size)
		rc = 0;
out:
	free(out);
	return rc;
}
