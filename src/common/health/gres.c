/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/strutil.h"
#include "common/cluster/scontrol.h"
#include "common/health/gres.h"

/* GPU instances of a GPU, and compute instances of one, at most: 7 on an
 * A100 or H100; read bounded beyond. */
#define EFA_MIG_INSTANCES_MAX 16

/*
 * One "name[:type][:count][(...)]" entry of len bytes: its count when it
 * is name's (a missing count is 1, as Slurm reads "gpu" or "gpu:h100"),
 * -1 when it is another GRES's, -2 when its count is not a number.
 */
static long entry_count(const char *entry, size_t len, const char *name)
{
	size_t nlen = strlen(name);
	const char *end = entry + len, *paren = memchr(entry, '(', len), *last;
	char digits[24];
	char *stop;
	long n;

	if (paren)
		end = paren;	/* "(S:0-1)": where the GRES sits, not how many */
	if ((size_t)(end - entry) < nlen || strncmp(entry, name, nlen) ||
	    (entry + nlen != end && entry[nlen] != ':'))
		return -1;
	if (entry + nlen == end)
		return 1;
	last = end;
	while (last[-1] != ':')
		last--;
	if (last == end || (size_t)(end - last) >= sizeof(digits))
		return -2;
	memcpy(digits, last, (size_t)(end - last));
	digits[end - last] = '\0';
	if (digits[0] < '0' || digits[0] > '9')
		return last == entry + nlen + 1 ? 1 : -2;	/* a type, no count */
	n = strtol(digits, &stop, 10);
	return *stop || n < 0 ? -2 : n;
}

long efa_gres_count(const char *gres, const char *name)
{
	long total = -1;

	if (!gres)
		return -1;
	for (const char *at = gres; *at;) {
		size_t len = 0;
		int depth = 0;
		long n;

		/* Entries are split by commas outside parentheses. */
		while (at[len] && (at[len] != ',' || depth)) {
			depth += at[len] == '(' ? 1 : at[len] == ')' ? -1 : 0;
			len++;
		}
		n = entry_count(at, len, name);
		if (n == -2)
			return -2;
		if (n >= 0)
			total = (total < 0 ? 0 : total) + n;
		at += len;
		if (*at == ',')
			at++;
	}
	return total;
}

int efa_gres_of_node(const char *node, long timeout_ms, char *buf, size_t size,
		     struct efa_error *err)
{
	char arg[320], out[8192];
	char *const argv[] = { "scontrol", "-o", "show", "node", arg, NULL };
	const char *at;
	size_t len;

	snprintf(arg, sizeof(arg), "%s", node);
	if (efa_scontrol(argv, timeout_ms, out, sizeof(out))) {
		out[strcspn(out, "\n")] = '\0';
		return efa_error_set(err, "cannot read node %s's GRES: %s", node, out);
	}
	/* One line of " Key=Value" fields; Gres= holds no blank. */
	at = strstr(out, " Gres=");
	if (!at) {
		buf[0] = '\0';
		return 0;
	}
	at += strlen(" Gres=");
	len = strcspn(at, " \n");
	if (len >= size)
		return efa_error_set(err, "node %s's GRES is too long", node);
	memcpy(buf, at, len);
	buf[len] = '\0';
	if (!strcmp(buf, "(null)"))
		buf[0] = '\0';
	return 0;
}

/* Entries of dir whose names are prefix and a number; at most max. */
static int numbered_entries(const char *dir, const char *prefix, char names[][16], int max)
{
	size_t plen = strlen(prefix);
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while (n < max && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (!strncmp(e->d_name, prefix, plen) && len > plen && len < sizeof(names[0]) &&
		    strspn(e->d_name + plen, "0123456789") == len - plen)
			memcpy(names[n++], e->d_name, len + 1);
	}
	closedir(d);
	return n;
}

/*
 * The MIG devices of GPU minor on the node: the nvidia driver gives each
 * compute instance of each GPU instance a capability,
 * /proc/driver/nvidia/capabilities/gpuN/mig/giG/ciC/access (what
 * nvidia-container-toolkit and Slurm's gres/nvml hand a MIG device's job).
 * Slurm counts each MIG device as one "gpu" GRES. 0: none (MIG off, or
 * no instances made).
 */
static long mig_devices(const char *root, int minor)
{
	char dir[PATH_MAX], gis[EFA_MIG_INSTANCES_MAX][16], cis[EFA_MIG_INSTANCES_MAX][16];
	int ngi;
	long n = 0;

	if (snprintf(dir, sizeof(dir), "%s/proc/driver/nvidia/capabilities/gpu%d/mig", root, minor) >=
	    (int)sizeof(dir))
		return 0;
	ngi = numbered_entries(dir, "gi", gis, EFA_MIG_INSTANCES_MAX);
	for (int g = 0; g < ngi; g++) {
		char gi[PATH_MAX];

		if (snprintf(gi, sizeof(gi), "%s/%s", dir, gis[g]) < (int)sizeof(gi))
			n += numbered_entries(gi, "ci", cis, EFA_MIG_INSTANCES_MAX);
	}
	return n;
}

static void judge(const struct efa_node *node, const char *root, const char *gres,
		  const char *name, enum efa_accel_kind kind, const char *what, char *buf,
		  size_t size)
{
	long want = efa_gres_count(gres, name), have = 0, migs = 0;
	char why[512] = "";

	if (want <= 0)
		return;
	for (size_t i = 0; i < node->naccels; i++) {
		const struct efa_accel *a = &node->accels[i];
		long mig;

		if (a->kind != kind || !a->present)
			continue;
		/* A GPU split into MIG devices is as many GRES as it has. */
		mig = kind == EFA_ACCEL_GPU && a->index >= 0 ? mig_devices(root, a->index) : 0;
		have += mig ? mig : 1;
		migs += mig;
	}
	if (have >= want)
		return;
	if (kind == EFA_ACCEL_GPU)
		efa_node_unbound_gpus(root, why, sizeof(why));
	efa_strlcatf(buf, size, "%s%ld/%ld %s%s (Gres=%s)%s", buf[0] ? "; " : "", have, want, what,
		     migs ? " and MIG devices" : "", gres, why);
}

void efa_gres_problems(const struct efa_node *node, const char *root, const char *gres,
		       char *buf, size_t size)
{
	if (efa_gres_count(gres, EFA_GRES_GPU) == -2 || efa_gres_count(gres, EFA_GRES_NEURON) == -2)
		return;		/* not Slurm's syntax: bad input judges nothing */
	judge(node, root, gres, EFA_GRES_GPU, EFA_ACCEL_GPU, "GPUs", buf, size);
	judge(node, root, gres, EFA_GRES_NEURON, EFA_ACCEL_NEURON, "Neuron devices", buf, size);
}
