/* SPDX-License-Identifier: Apache-2.0 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json_text.h"

const char *efa_json_blank(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The four hex digits of a \u escape at p; -1 when they are not. */
static long hex4(const char *p)
{
	long v = 0;

	for (int i = 0; i < 4; i++) {
		int d = hex_digit(p[i]);

		if (d < 0)
			return -1;
		v = v * 16 + d;
	}
	return v;
}

/* The length of the UTF-8 sequence at p, 0 when it is not a valid one
 * (overlong, a surrogate, past U+10FFFF, cut short). */
static size_t utf8_length(const unsigned char *p)
{
	size_t n;
	unsigned long cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2;
		cp = p[0] & 0x1f;
	} else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		n = 3;
		cp = p[0] & 0x0f;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4;
		cp = p[0] & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Appends code point cp to buf as UTF-8; false when it does not fit. */
static bool put_utf8(char *buf, size_t size, size_t *used, unsigned long cp)
{
	unsigned char out[4];
	size_t n;

	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		out[0] = (unsigned char)(0xc0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		out[0] = (unsigned char)(0xe0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		out[0] = (unsigned char)(0xf0 | (cp >> 18));
		out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		out[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (buf) {
		if (*used + n >= size)
			return false;
		memcpy(buf + *used, out, n);
	}
	*used += n;
	return true;
}

/*
 * The string at p (its opening quote): checked, and unescaped into buf
 * when buf is not NULL; past its closing quote, NULL when it is not one
 * or does not fit in size bytes.
 */
static const char *string_at(const char *p, char *buf, size_t size)
{
	size_t used = 0, n;

	if (*p++ != '"')
		return NULL;
	for (;;) {
		unsigned char c = (unsigned char)*p;
		unsigned long cp;
		long hi, lo;

		if (c == '"')
			break;
		if (c < 0x20)	/* a control character, or the text's end */
			return NULL;
		if (c != '\\') {
			if (!(n = utf8_length((const unsigned char *)p)))
				return NULL;
			if (buf) {
				if (used + n >= size)
					return NULL;
				memcpy(buf + used, p, n);
			}
			used += n;
			p += n;
			continue;
		}
		p++;
		switch (*p) {
		case '"': cp = '"'; break;
		case '\\': cp = '\\'; break;
		case '/': cp = '/'; break;
		case 'b': cp = '\b'; break;
		case 'f': cp = '\f'; break;
		case 'n': cp = '\n'; break;
		case 'r': cp = '\r'; break;
		case 't': cp = '\t'; break;
		case 'u':
			if ((hi = hex4(p + 1)) < 0)
				return NULL;
			p += 4;
			if (hi >= 0xdc00 && hi <= 0xdfff)
				return NULL;	/* a low surrogate alone */
			if (hi >= 0xd800 && hi <= 0xdbff) {
				if (p[1] != '\\' || p[2] != 'u' || (lo = hex4(p + 3)) < 0 ||
				    lo < 0xdc00 || lo > 0xdfff)
					return NULL;
				p += 6;
				cp = 0x10000 + (((unsigned long)hi - 0xd800) << 10) +
				     ((unsigned long)lo - 0xdc00);
			} else {
				cp = (unsigned long)hi;
			}
			if (!cp)
				return NULL;	/* a C string ends there */
			break;
		default:
			return NULL;
		}
		if (!put_utf8(buf, size, &used, cp))
			return NULL;
		p++;
	}
	if (buf) {
		if (used >= size)
			return NULL;
		buf[used] = '\0';
	}
	return p + 1;
}

static bool digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The number at p; past it. *integer: whether it has no fraction or
 * exponent. */
static const char *number_at(const char *p, bool *integer)
{
	*integer = true;
	if (*p == '-')
		p++;
	if (*p == '0')
		p++;
	else if (digit(*p))
		while (digit(*p))
			p++;
	else
		return NULL;
	if (*p == '.') {
		*integer = false;
		if (!digit(*++p))
			return NULL;
		while (digit(*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		*integer = false;
		if (*++p == '+' || *p == '-')
			p++;
		if (!digit(*p))
			return NULL;
		while (digit(*p))
			p++;
	}
	return p;
}

const char *efa_json_integer(const char *p, long long *value)
{
	const char *end, *d;
	unsigned long long magnitude = 0, limit;
	bool integer, negative;

	p = efa_json_blank(p);
	if (!(end = number_at(p, &integer)) || !integer)
		return NULL;
	negative = *p == '-';
	limit = negative ? (unsigned long long)LLONG_MAX + 1 : (unsigned long long)LLONG_MAX;
	for (d = p + negative; d < end; d++) {
		unsigned digit_value = (unsigned)(*d - '0');

		if (magnitude > (limit - digit_value) / 10)
			return NULL;
		magnitude = magnitude * 10 + digit_value;
	}
	*value = negative ? (magnitude ? -(long long)(magnitude - 1) - 1 : 0) : (long long)magnitude;
	return end;
}

/*
 * The next item of the container w walks (opened by open): 1 with *item
 * at its start, 0 with w->p past close, -1 when the text there is
 * neither. After an item, w->p must be moved past it.
 */
static int next_item(struct efa_json_walk *w, char open, char close, const char **item)
{
	const char *q = efa_json_blank(w->p);

	if (!w->inside) {
		if (*q != open)
			return -1;
		w->inside = true;
		q = efa_json_blank(q + 1);
		if (*q == close) {
			w->p = q + 1;
			return 0;
		}
	} else if (*q == ',') {
		q = efa_json_blank(q + 1);
	} else if (*q == close) {
		w->p = q + 1;
		return 0;
	} else {
		return -1;
	}
	*item = q;
	return 1;
}

static const char *skip(const char *p, int depth)
{
	struct efa_json_walk w;
	const char *q, *item;
	long long unused;
	bool integer;
	char close;
	int rc;

	p = efa_json_blank(p);
	switch (*p) {
	case '{':
	case '[':
		if (depth >= EFA_JSON_DEPTH_MAX)
			return NULL;
		close = *p == '{' ? '}' : ']';
		w = (struct efa_json_walk){ .p = p };
		while ((rc = next_item(&w, *p, close, &item)) == 1) {
			/* A member: its key and colon, then its value. */
			if (close == '}' &&
			    (!(item = string_at(item, NULL, 0)) || *(item = efa_json_blank(item)) != ':'))
				return NULL;
			if (!(w.p = skip(item + (close == '}'), depth + 1)))
				return NULL;
		}
		return rc ? NULL : w.p;
	case '"':
		return string_at(p, NULL, 0);
	case 't':
		return strncmp(p, "true", 4) ? NULL : p + 4;
	case 'f':
		return strncmp(p, "false", 5) ? NULL : p + 5;
	case 'n':
		return strncmp(p, "null", 4) ? NULL : p + 4;
	default:
		if (!(q = number_at(p, &integer)))
			return NULL;
		/* An integer past long long is no JSON a parser takes whole. */
		return integer && !efa_json_integer(p, &unused) ? NULL : q;
	}
}

const char *efa_json_skip(const char *p)
{
	return skip(p, 0);
}

bool efa_json_is_object(const char *text)
{
	const char *p = efa_json_blank(text), *end;

	return *p == '{' && (end = efa_json_skip(p)) && !*efa_json_blank(end);
}

const char *efa_json_string(const char *p, char *buf, size_t size)
{
	return string_at(efa_json_blank(p), buf, size);
}

int efa_json_member_next(struct efa_json_walk *w, struct efa_json_member *m)
{
	const char *key, *q;
	int rc = next_item(w, '{', '}', &key);

	if (rc != 1)
		return rc;
	m->key_fits = true;
	if (!(q = string_at(key, m->key, sizeof(m->key)))) {
		/* A key longer than m->key is still a key. */
		if (!(q = string_at(key, NULL, 0)))
			return -1;
		m->key_fits = false;
		m->key[0] = '\0';
	}
	q = efa_json_blank(q);
	if (*q != ':')
		return -1;
	m->value = efa_json_blank(q + 1);
	if (!(m->end = efa_json_skip(m->value)))
		return -1;
	w->p = m->end;
	return 1;
}

int efa_json_element_next(struct efa_json_walk *w, const char **value, const char **end)
{
	int rc = next_item(w, '[', ']', value);

	if (rc != 1)
		return rc;
	if (!(*end = efa_json_skip(*value)))
		return -1;
	w->p = *end;
	return 1;
}

char *efa_json_quote(const char *text)
{
	const unsigned char *p = (const unsigned char *)text;
	/* \u00XX for each byte at most, and the quotes. */
	char *out = malloc(6 * strlen(text) + 3);
	size_t used = 0, n;

	if (!out)
		return NULL;
	out[used++] = '"';
	while (*p) {
		if (*p == '"' || *p == '\\') {
			out[used++] = '\\';
			out[used++] = (char)*p++;
		} else if (*p < 0x20) {
			used += (size_t)sprintf(out + used, "\\u%04x", *p++);
		} else if ((n = utf8_length(p))) {
			memcpy(out + used, p, n);
			used += n;
			p += n;
		} else {
			out[used++] = '?';
			p++;
		}
	}
	out[used++] = '"';
	out[used] = '\0';
	return out;
}
