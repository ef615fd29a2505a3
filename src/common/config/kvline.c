/* SPDX-License-Identifier: Apache-2.0 */
#include <stdbool.h>
#include <string.h>

#include "common/config/kvline.h"

static int blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static char *skip_blanks(char *p)
{
	while (blank(*p))
		p++;
	return p;
}

int efa_kv_next(char **cursor, char **key, char **value, struct efa_error *err)
{
	char *p = skip_blanks(*cursor), *key_end, *out;
	bool spaced_after_only;

	if (!*p || *p == '#')
		return 0;
	*key = p;
	while (*p && *p != '=' && !blank(*p) && *p != '#')
		p++;
	/* Blanks around '=' are allowed, as Slurm's parser allows them in
	 * slurm.conf (parse_config.c's keyvalue_pattern). */
	key_end = p;
	p = skip_blanks(p);
	if (*p != '=') {
		*key_end = '\0';
		return efa_error_set(err, "expected Key=Value, found '%s'", *key);
	}
	/* "Key= Other=x" (a blank after '=' only) leaves Key empty before the
	 * next pair; "Key = NAME=VALUE" is a value holding '=' (a profile's
	 * Env). */
	spaced_after_only = key_end == p && blank(p[1]);
	*key_end = '\0';
	if (!**key)
		return efa_error_set(err, "missing key before '='");
	p = skip_blanks(p + 1);
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
		if (spaced_after_only && memchr(*value, '=', (size_t)(out - *value)))
			return efa_error_set(err, "%s: empty value", *key);
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
