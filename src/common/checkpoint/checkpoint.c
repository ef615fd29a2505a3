/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/checkpoint/checkpoint.h"

int efa_path_normalize(const char *path, char *buf, size_t size, struct efa_error *err)
{
	const char *p = path;
	size_t len = 0;

	if (size < 2)
		return efa_error_set(err, "no room for a path");
	if (!path || path[0] != '/')
		return efa_error_set(err, "'%.80s' is not an absolute path", path ? path : "");
	for (const char *c = path; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return efa_error_set(err, "'%.80s' contains a control character", path);
	while (*p) {
		const char *start;
		size_t n;

		while (*p == '/')
			p++;
		start = p;
		while (*p && *p != '/')
			p++;
		n = (size_t)(p - start);
		if (n == 0 || (n == 1 && start[0] == '.'))
			continue;
		if (n == 2 && start[0] == '.' && start[1] == '.') {
			while (len && buf[--len] != '/')
				;
			continue;
		}
		if (len + 1 + n + 1 > size)
			return efa_error_set(err, "'%.80s...' is longer than %zu bytes", path, size - 1);
		buf[len++] = '/';
		memcpy(buf + len, start, n);
		len += n;
	}
	if (!len)
		buf[len++] = '/';
	buf[len] = '\0';
	return 0;
}

bool efa_path_under(const char *root, const char *path)
{
	size_t len = strlen(root);

	return len == 1 || (!strncmp(path, root, len) && (!path[len] || path[len] == '/'));
}

int efa_checkpoint_allowed(const char *root, const char *path, char *buf, size_t size,
			   struct efa_error *err)
{
	char r[EFA_CKPT_PATH_MAX];

	if (efa_path_normalize(root, r, sizeof(r), err) ||
	    efa_path_normalize(path, buf, size, err))
		return -1;
	if (efa_path_under(r, buf))
		return 0;
	if (strcmp(buf, path))
		return efa_error_set(err, "%s (%s once normalized) is outside the checkpoint root %s: use a directory under %s, or no --checkpoint-dir for the default",
				     path, buf, r, r);
	return efa_error_set(err, "%s is outside the checkpoint root %s: use a directory under %s, or no --checkpoint-dir for the default",
			     path, r, r);
}

bool efa_checkpoint_name_ok(const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (!len || len > EFA_CKPT_NAME_MAX || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (const char *c = name; *c; c++)
		if (*c == '/' || (unsigned char)*c < 0x20 || (unsigned char)*c > 0x7e)
			return false;
	return true;
}

int efa_checkpoint_default(const char *root, const char *user, const char *job_name,
			   unsigned long job_id, const char *array_task, char *buf, size_t size,
			   struct efa_error *err)
{
	char path[EFA_CKPT_PATH_MAX + EFA_CKPT_NAME_MAX * 2 + 32];
	const char *sep = array_task ? "_" : "";

	if (!array_task)
		array_task = "";
	if (!efa_checkpoint_name_ok(user))
		return efa_error_set(err, "user name '%s' cannot be a directory name", user ? user : "");
	if (efa_checkpoint_name_ok(job_name))
		snprintf(path, sizeof(path), "%s/%s/%s%s%.20s", root, user, job_name, sep, array_task);
	else
		snprintf(path, sizeof(path), "%s/%s/%lu%s%.20s", root, user, job_id, sep, array_task);
	return efa_path_normalize(path, buf, size, err);
}

int efa_checkpoint_dir_parse(const char *arg, char *buf, size_t size, struct efa_error *err)
{
	struct efa_error why;

	if (!arg || !*arg)
		return efa_error_set(err, "--checkpoint-dir needs a path: use --checkpoint-dir=/absolute/path");
	if (efa_path_normalize(arg, buf, size, &why))
		return efa_error_set(err, "invalid --checkpoint-dir value '%.80s': %s: use an absolute path, e.g. --checkpoint-dir=/fsx/checkpoints/$USER/run1",
				     arg, why.msg);
	return 0;
}

const char *efa_checkpoint_note(const char *dir, char *buf, size_t size)
{
	size_t used = (size_t)snprintf(buf, size, "slurm-efa: checkpoints in ");

	for (const unsigned char *p = (const unsigned char *)dir; *p && used + 4 < size; p++) {
		if (*p == '{' || *p == '}' || *p < 0x20 || *p == 0x7f)
			used += (size_t)snprintf(buf + used, size - used, "%%%02X", *p);
		else
			buf[used++] = (char)*p;
	}
	if (used < size)
		buf[used] = '\0';
	return buf;
}
