/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <expat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aws_query.h"

#define XML_DEPTH 16
#define XML_PATH_MAX 512
#define XML_TEXT_MAX 4096

static void encode(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (isalnum(ch) || strchr("-_.~", ch))
			fputc(ch, out);
		else
			fprintf(out, "%%%02X", ch);
	}
}

int aws_query_add(struct aws_query *q, const char *value, const char *fmt, ...)
{
	char name[128], *param = NULL, **grown;
	size_t len;
	va_list ap;
	FILE *out;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (!(out = open_memstream(&param, &len)))
		return -1;
	encode(out, name);
	fputc('=', out);
	encode(out, value);
	if (fclose(out))
		goto fail;
	if (!(grown = realloc(q->params, (q->n + 1) * sizeof(*grown))))
		goto fail;
	q->params = grown;
	q->params[q->n++] = param;
	return 0;
fail:
	free(param);
	return -1;
}

void aws_query_clear(struct aws_query *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->params[i]);
	free(q->params);
	memset(q, 0, sizeof(*q));
}

char *aws_query_body(const struct aws_query *q)
{
	char *body = NULL;
	size_t len;
	FILE *out = open_memstream(&body, &len);

	if (!out)
		return NULL;
	for (size_t i = 0; i < q->n; i++)
		fprintf(out, "%s%s", i ? "&" : "", q->params[i]);
	if (fclose(out)) {
		free(body);
		return NULL;
	}
	return body;
}

struct walk {
	char path[XML_PATH_MAX];	/* below the root: "a/b/c" */
	size_t ends[XML_DEPTH];
	int depth;
	char text[XML_TEXT_MAX];
	size_t tlen;
	/* called at each element's end with its path and text */
	int (*on_end)(void *ctx, const char *path, const char *text);
	void *ctx;
	int failed;
	XML_Parser parser;
};

static void XMLCALL on_start(void *data, const XML_Char *name, const XML_Char **attrs)
{
	struct walk *w = data;
	size_t len = strlen(w->path);

	(void)attrs;
	if (w->depth >= XML_DEPTH) {
		w->failed = 1;
		XML_StopParser(w->parser, XML_FALSE);
		return;
	}
	w->ends[w->depth++] = len;
	if (w->depth > 1)	/* the root's name is not part of the path */
		snprintf(w->path + len, sizeof(w->path) - len, "%s%s", len ? "/" : "", name);
	w->tlen = 0;
	w->text[0] = '\0';
}

static void XMLCALL on_text(void *data, const XML_Char *s, int len)
{
	struct walk *w = data;
	size_t n = (size_t)len;

	if (w->tlen + n >= sizeof(w->text))
		n = sizeof(w->text) - 1 - w->tlen;
	memcpy(w->text + w->tlen, s, n);
	w->tlen += n;
	w->text[w->tlen] = '\0';
}

static void XMLCALL on_end(void *data, const XML_Char *name)
{
	struct walk *w = data;

	(void)name;
	if (w->on_end(w->ctx, w->path, w->text)) {
		w->failed = 1;
		XML_StopParser(w->parser, XML_FALSE);
		return;
	}
	w->path[w->ends[--w->depth]] = '\0';
	w->tlen = 0;
	w->text[0] = '\0';
}

int aws_xml_walk(const char *body, size_t len, int (*fn)(void *, const char *, const char *),
		 void *ctx, const char *service, struct efa_error *err)
{
	struct walk w = { .on_end = fn, .ctx = ctx };
	int rc = 0;

	if (!(w.parser = XML_ParserCreate("UTF-8"))) {
		efa_error_set(err, "out of memory");
		return -1;
	}
	XML_SetUserData(w.parser, &w);
	XML_SetElementHandler(w.parser, on_start, on_end);
	XML_SetCharacterDataHandler(w.parser, on_text);
	if (XML_Parse(w.parser, body ? body : "", (int)len, XML_TRUE) != XML_STATUS_OK || w.failed) {
		efa_error_set(err, "the answer of %s is not the XML expected (%s)", service,
			 w.failed ? "out of memory or too deep" :
			 XML_ErrorString(XML_GetErrorCode(w.parser)));
		rc = -1;
	}
	XML_ParserFree(w.parser);
	return rc;
}

static int on_error_end(void *ctx, const char *path, const char *text)
{
	struct aws_error *ae = ctx;

	if (!strcmp(path, "Errors/Error/Code"))
		snprintf(ae->code, sizeof(ae->code), "%s", text);
	else if (!strcmp(path, "Errors/Error/Message"))
		snprintf(ae->message, sizeof(ae->message), "%s", text);
	return 0;
}

void aws_error_read(const char *body, size_t len, struct aws_error *ae)
{
	struct efa_error ignored;

	ae->code[0] = ae->message[0] = '\0';
	aws_xml_walk(body, len, on_error_end, ae, "", &ignored);
}
