/* SPDX-License-Identifier: Apache-2.0 */
#include <stdlib.h>
#include <string.h>

#include "common/cluster/partition_default.h"
#include "common/cluster/policy.h"
#include "common/cluster/scontrol.h"

/* A partition is a line of " Key=Value" fields: a few hundred bytes each. */
#define PARTITIONS_TEXT_MAX (1024 * 1024)

/* The value of " key=" (or key= at the line's start) within one line. */
static const char *field(const char *line, const char *end, const char *key, size_t *len)
{
	size_t klen = strlen(key);

	for (const char *at = line; at + klen <= end; at++) {
		if ((at == line || at[-1] == ' ') && !strncmp(at, key, klen)) {
			at += klen;
			*len = strcspn(at, " \n");
			if (at + *len > end)
				*len = (size_t)(end - at);
			return at;
		}
	}
	return NULL;
}

int efa_default_partition_parse(const char *text, char *name, size_t size)
{
	for (const char *line = text; *line;) {
		const char *end = line + strcspn(line, "\n");
		const char *value, *flag;
		size_t len, flen;

		flag = field(line, end, "Default=", &flen);
		value = field(line, end, "PartitionName=", &len);
		if (flag && value && flen == 3 && !strncmp(flag, "YES", 3)) {
			if (len >= size)
				return -1;
			memcpy(name, value, len);
			name[len] = '\0';
			return 0;
		}
		line = *end ? end + 1 : end;
	}
	return 1;
}

int efa_default_partition(long timeout_ms, char *name, size_t size, struct efa_error *err)
{
	char *const argv[] = { "scontrol", "-o", "show", "partition", NULL };
	char *out = malloc(PARTITIONS_TEXT_MAX);
	int rc;

	if (!out)
		return efa_error_set(err, "out of memory");
	if (efa_scontrol(argv, timeout_ms, out, PARTITIONS_TEXT_MAX)) {
		out[strcspn(out, "\n")] = '\0';
		rc = efa_error_set(err, "cannot ask slurmctld for the default partition: %s", out);
		goto out;
	}
	rc = efa_default_partition_parse(out, name, size);
	if (rc < 0)
		rc = efa_error_set(err, "the default partition's name is too long");
out:
	free(out);
	return rc;
}

int efa_submit_checkpoint_signal(const struct efa_config *cfg, const char *partition,
				 const char *efa, char *out, size_t size, struct efa_error *err)
{
	char fallback[256];
	int rc;

	if (!partition) {
		if (!efa_policy_any_checkpoint_signal(cfg))
			return 0;
		rc = efa_default_partition(EFA_DEFAULT_PARTITION_TIMEOUT_MS, fallback,
					   sizeof(fallback), err);
		if (rc)
			return rc < 0 ? -1 : 0;	/* no default: slurmctld refuses the job */
		partition = fallback;
	}
	return efa_policy_checkpoint_signal(cfg, partition, efa, out, size) > 0;
}
