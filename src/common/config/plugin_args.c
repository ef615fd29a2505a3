/* SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/config/plugin_args.h"
#include "common/config/efa_conf.h"

int efa_args_parse(int argc, char **argv, struct efa_args *args,
		   struct efa_error *err)
{
	int rc = 0;

	args->config = NULL;
	args->root = "/";
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "config=", 7) && argv[i][7]) {
			args->config = argv[i] + 7;
		} else if (!strncmp(argv[i], "root=", 5) && argv[i][5] == '/') {
			args->root = argv[i] + 5;
		} else {
			rc = efa_error_set(err, "plugstack.conf: ignoring argument '%s': spank_efa.so takes config=/path/to/efa.conf and root=/absolute/dir",
					   argv[i]);
		}
	}
	return rc;
}

bool efa_node_name_safe(const char *name)
{
	if (!name || !*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return false;
	for (const char *p = name; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

int efa_node_name_from_topology(const char *addr, const char *pattern,
				char *buf, size_t size)
{
	const char *name = addr;

	if (!addr || !*addr)
		return -1;
	for (const char *p = pattern; p && *p; p++) {
		if (*p != '.')
			continue;
		name = strchr(name, '.');
		if (!name)
			return -1;
		name++;
	}
	if (!efa_node_name_safe(name))
		return -1;
	return snprintf(buf, size, "%s", name) >= (int)size ? -1 : 0;
}

int efa_expand_node_name(const char *pattern, const char *node_name, char *buf, size_t size)
{
	size_t used = 0;

	for (const char *p = pattern; *p; p++) {
		const char *piece = p;
		size_t len = 1;

		if (p[0] == '%' && p[1] == 'n') {
			if (!efa_node_name_safe(node_name))
				return -1;
			piece = node_name;
			len = strlen(node_name);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			p++;
		}
		if (used + len >= size)
			return -1;
		memcpy(buf + used, piece, len);
		used += len;
	}
	if (used >= size)
		return -1;
	buf[used] = '\0';
	return 0;
}

int efa_args_load_config(const struct efa_args *args, const char *node_name,
			 struct efa_config **cfg, struct efa_error *err)
{
	char path[PATH_MAX];

	if (!args->config)
		return efa_config_find_and_load(NULL, cfg, err);
	if (efa_expand_node_name(args->config, node_name, path, sizeof(path)))
		return efa_error_set(err, "config=%s cannot name node %s's efa.conf: too long, or the name cannot stand in a path",
				     args->config, node_name);
	return efa_config_find_and_load(path, cfg, err);
}
