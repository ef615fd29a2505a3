/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "common/config/kvline.h"

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

int efa_kv_next(char **cursor, char **key, char **value, struct efa_error *err)
{
	char *p = *cursor, *out;

	while (blank(*p))
		p++;
	if (!*p || *p == '#')
		return 0;
	*key = p;
	while (*p && *p != '=' && !blank(*p) && *p != '#')
		p++;
	if (*p != '=') {
		*p = '\0';
		return efa_error_set(err, "expected Key=Value, found '%s'", *key);
	}
	*p++ = '\0';
	if (!**key)
		return efa_error_set(err, "missing key before '='");
	*value = out = p;
	if (*p == '"') {
		p++;
		while (*p && *p != '"') {
			if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
				p++;
			*out++ = *p++;
		}
		if (*p != '"')
			return efa_error_set(err, "%s: unterminated quoted value", *key);
		p++;
		if (*p && !blank(*p) && *p != '#')
			return efa_error_set(err, "%s: text after closing quote", *key);
	} else {
		while (*p && !blank(*p) && *p != '#')
			out++, p++;
	}
	/* A '#' right after the value still ends the line on the next call
	 * (unquoted, the NUL written below replaces it). */
	*cursor = (*p == '\0' || *p == '#') ? p : p + 1;
	*out = '\0';
	if (!**value)
		return efa_error_set(err, "%s: empty value", *key);
	return 1;
}

char *efa_line_next(char **cursor)
{
	char *line = *cursor, *end;

	if (!line)
		return NULL;
	end = strchr(line, '\n');
	if (end)
		*end++ = '\0';
	*cursor = end;
	return line;
}
