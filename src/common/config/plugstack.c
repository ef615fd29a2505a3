/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config/plugstack.h"

/* Files nested through Include (slurm.conf) or include (plugstack.conf). */
#define INCLUDE_DEPTH_MAX 8
/* Lines read from one file: a bound, not a limit a real one reaches. */
#define LINES_MAX 100000

int efa_slurm_conf_find(const char *default_conf, char *buf, size_t size, struct efa_error *err)
{
	const char *env = getenv("SLURM_CONF");
	const char *path = NULL;

	if (env && env[0])
		path = env;
	else if (default_conf && !access(default_conf, F_OK))
		path = default_conf;
	else if (!access(EFA_SLURM_CONF_CACHE, F_OK))
		path = EFA_SLURM_CONF_CACHE;
	if (!path)
		return efa_error_set(err, "no slurm.conf: SLURM_CONF is not set, and neither %s (this Slurm's default) nor %s (slurmd's configless cache) is there",
				     default_conf ? default_conf : "(none)", EFA_SLURM_CONF_CACHE);
	if (snprintf(buf, size, "%s", path) >= (int)size)
		return efa_error_set(err, "the path of slurm.conf is too long: %s", path);
	return 0;
}

/* dirname(file)/name into buf (name as it is when absolute). */
static int beside(const char *file, const char *name, char *buf, size_t size)
{
	const char *slash = strrchr(file, '/');
	int n;

	if (name[0] == '/' || !slash)
		n = snprintf(buf, size, "%s", name);
	else
		n = snprintf(buf, size, "%.*s/%s", (int)(slash - file), file, name);
	return n < 0 || n >= (int)size ? -1 : 0;
}

typedef int (*line_fn)(void *ctx, const char *file, int lineno, char *line, int depth,
		       struct efa_error *err);

/* Calls fn for each line of file, '#' comments cut; 1 from fn stops. */
static int each_line(const char *file, int depth, line_fn fn, void *ctx, struct efa_error *err)
{
	char line[EFA_PLUGSTACK_LINE_MAX];
	int lineno = 0, rc = 0;
	FILE *f;

	if (depth > INCLUDE_DEPTH_MAX)
		return efa_error_set(err, "%s: included more than %d files deep", file, INCLUDE_DEPTH_MAX);
	f = fopen(file, "re");
	if (!f)
		return efa_error_set(err, "cannot read %s: %s", file, strerror(errno));
	while (!rc && fgets(line, sizeof(line), f)) {
		char *hash;

		if (++lineno > LINES_MAX) {
			rc = efa_error_set(err, "%s: more than %d lines", file, LINES_MAX);
			break;
		}
		if (!strchr(line, '\n') && !feof(f)) {
			rc = efa_error_set(err, "%s:%d: line longer than %d characters", file, lineno,
					   EFA_PLUGSTACK_LINE_MAX - 2);
			break;
		}
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		rc = fn(ctx, file, lineno, line, depth, err);
	}
	if (!rc && ferror(f))
		rc = efa_error_set(err, "cannot read %s", file);
	fclose(f);
	return rc;
}

static char *skip_blanks(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

/* slurm.conf: the last PlugStackConfig=, through Include lines. */
struct conf_search {
	char plugstack[PATH_MAX];
	char where[PATH_MAX + 32];
};

static int conf_line(void *ctx, const char *file, int lineno, char *line, int depth,
		     struct efa_error *err)
{
	struct conf_search *s = ctx;
	char *p = skip_blanks(line), *tok, *save = NULL;

	/* parse_config.c: "Include FILE", relative to slurm.conf's directory. */
	if (!strncasecmp(p, "include", 7) && isspace((unsigned char)p[7])) {
		char path[PATH_MAX];
		char *name = strtok_r(p + 7, " \t\r\n", &save);

		if (!name)
			return 0;
		if (beside(file, name, path, sizeof(path)))
			return efa_error_set(err, "%s:%d: the included path is too long", file, lineno);
		return each_line(path, depth + 1, conf_line, ctx, err) < 0 ? -1 : 0;
	}
	for (tok = strtok_r(p, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
		char *value;
		size_t len;

		if (strncasecmp(tok, "PlugStackConfig=", 16))
			continue;
		value = tok + 16;
		len = strlen(value);
		if (len >= 2 && value[0] == '"' && value[len - 1] == '"') {
			value[len - 1] = '\0';
			value++;
		}
		if (beside(file, value, s->plugstack, sizeof(s->plugstack)))
			return efa_error_set(err, "%s:%d: PlugStackConfig= is too long", file, lineno);
		snprintf(s->where, sizeof(s->where), "%s:%d", file, lineno);
	}
	return 0;
}

/* plugstack.conf: the first line of spank_efa.so, through include globs. */
struct stack_search {
	struct efa_plugstack_line *out;
	bool found;
};

static int stack_line(void *ctx, const char *file, int lineno, char *line, int depth,
		      struct efa_error *err)
{
	struct stack_search *s = ctx;
	struct efa_plugstack_line *out = s->out;
	char *save = NULL, *kind, *plugin, *base, *arg;

	kind = strtok_r(line, " \t\r\n", &save);
	if (!kind)
		return 0;
	plugin = strtok_r(NULL, " \t\r\n", &save);
	if (!strcmp(kind, "include") && plugin) {
		char pattern[PATH_MAX];
		glob_t gl;
		int rc = 0;

		if (beside(file, plugin, pattern, sizeof(pattern)))
			return efa_error_set(err, "%s:%d: the included path is too long", file, lineno);
		if (glob(pattern, 0, NULL, &gl))
			return 0;	/* no match: nothing included, as in spank.c */
		for (size_t i = 0; i < gl.gl_pathc && !rc; i++)
			rc = each_line(gl.gl_pathv[i], depth + 1, stack_line, ctx, err);
		globfree(&gl);
		return rc;
	}
	if ((strcmp(kind, "required") && strcmp(kind, "optional")) || !plugin)
		return 0;	/* spank.c ignores an invalid line */
	base = strrchr(plugin, '/');
	base = base ? base + 1 : plugin;
	if (strcmp(base, EFA_PLUGSTACK_PLUGIN))
		return 0;
	snprintf(out->file, sizeof(out->file), "%s", file);
	out->line = lineno;
	out->argc = 0;
	/* The arguments are kept in out->text, where argv points. */
	while ((arg = strtok_r(NULL, " \t\r\n", &save))) {
		size_t used = out->argc ? (size_t)(out->argv[out->argc - 1] - out->text) +
					  strlen(out->argv[out->argc - 1]) + 1 : 0;

		if (out->argc >= EFA_PLUGSTACK_ARGS_MAX || used + strlen(arg) + 1 > sizeof(out->text))
			return efa_error_set(err, "%s:%d: too many arguments for %s", file, lineno,
					     EFA_PLUGSTACK_PLUGIN);
		memcpy(out->text + used, arg, strlen(arg) + 1);
		out->argv[out->argc++] = out->text + used;
	}
	s->found = true;
	return 1;
}

int efa_plugstack_find(const char *slurm_conf, struct efa_plugstack_line *out,
		       struct efa_error *err)
{
	struct conf_search conf = { "", "" };
	struct stack_search stack = { out, false };

	memset(out, 0, sizeof(*out));
	if (each_line(slurm_conf, 0, conf_line, &conf, err) < 0)
		return -1;
	/* read_config.c: without PlugStackConfig=, plugstack.conf beside slurm.conf. */
	if (!conf.plugstack[0] && beside(slurm_conf, "plugstack.conf", conf.plugstack,
					 sizeof(conf.plugstack)))
		return efa_error_set(err, "the path of %s is too long", slurm_conf);
	if (each_line(conf.plugstack, 0, stack_line, &stack, err) < 0)
		return -1;
	if (!stack.found)
		return efa_error_set(err, "%s loads no %s (PlugStackConfig= %s): add its line, or give --config and --root",
				     conf.plugstack, EFA_PLUGSTACK_PLUGIN,
				     conf.where[0] ? conf.where : "not set: plugstack.conf beside slurm.conf");
	return 0;
}
