/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A listing read without building what nobody reads. slurmrestd's nodes
 * answer carries some 70 fields per node (16.9 MiB for 10,000 nodes at
 * v0.0.45) and sync reads eight: a whole Jansson tree of it costs several
 * times the answer's size and most of sync's time. Here the answer's syntax
 * is checked from end to end, and only what is kept is handed to Jansson,
 * each value from its own bytes: every top-level member, and of each object
 * in the listing the fields named. Skipped values are checked for JSON's
 * syntax, not for what Jansson also refuses in values it builds (invalid
 * UTF-8, \u0000, numbers out of range).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* Jansson's own nesting limit (JSON_PARSER_MAX_DEPTH). */
#define SPARSE_MAX_DEPTH 2048

static const char out_of_memory[] = "out of memory";

struct cursor {
	const char *start, *p, *end;
	const char *error;	/* what is wrong at p */
};

static int fail(struct cursor *c, const char *what)
{
	c->error = what;
	return -1;
}

static void skip_space(struct cursor *c)
{
	const char *p = c->p;

	while (p < c->end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	c->p = p;
}

static int is_digit(const struct cursor *c)
{
	return c->p < c->end && *c->p >= '0' && *c->p <= '9';
}

static int is_hex(char ch)
{
	return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* The bytes that end a run of plain text in a string: the closing quote,
 * an escape, and the control characters JSON refuses there. */
static bool ends_plain(unsigned char ch)
{
	return ch == '"' || ch == '\\' || ch < 0x20;
}

/*
 * Where the plain text from p ends (see ends_plain), or end. Eight bytes at
 * a time while eight are left: in (x - 0x01..01) & ~x & 0x80..80 the lowest
 * byte set is x's lowest zero byte (a borrow only marks bytes above it), and
 * in (v - n * 0x01..01) & ~v & 0x80..80 (n <= 0x80) the lowest byte of v
 * below n. Strings in an answer are short (9 bytes on average): the word
 * that holds the closing quote says where it is.
 */
static const char *plain_end(const char *p, const char *end)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;

	while (end - p >= 8) {
		uint64_t v, quote, escape, found;

		memcpy(&v, p, sizeof(v));
		quote = v ^ (ones * '"');
		escape = v ^ (ones * '\\');
		found = (((quote - ones) & ~quote) | ((escape - ones) & ~escape) |
			 ((v - ones * 0x20) & ~v)) & highs;
		if (found) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return p + (__builtin_ctzll(found) >> 3);
#else
			break;
#endif
		}
		p += 8;
	}
	while (p < end && !ends_plain((unsigned char)*p))
		p++;
	return p;
}

/* From the opening quote; *escaped tells whether the text has escapes. */
static int skip_string(struct cursor *c, int *escaped)
{
	*escaped = 0;
	c->p++;
	while (c->p < c->end) {
		unsigned char ch;

		/* Most of an answer is plain text */
		c->p = plain_end(c->p, c->end);
		if (c->p == c->end)
			break;
		ch = (unsigned char)*c->p;
		if (ch == '"') {
			c->p++;
			return 0;
		}
		if (ch < 0x20)
			return fail(c, "control character in a string");
		*escaped = 1;
		if (c->end - c->p < 2)
			break;
		ch = (unsigned char)c->p[1];
		if (ch == 'u') {
			if (c->end - c->p < 6 || !is_hex(c->p[2]) || !is_hex(c->p[3]) ||
			    !is_hex(c->p[4]) || !is_hex(c->p[5]))
				return fail(c, "invalid \\u escape");
			c->p += 6;
		} else if (ch && strchr("\"\\/bfnrt", ch)) {
			c->p += 2;
		} else {
			return fail(c, "invalid escape");
		}
	}
	return fail(c, "the answer ends inside a string");
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static int skip_number(struct cursor *c)
{
	if (*c->p == '-')
		c->p++;
	if (!is_digit(c))
		return fail(c, "invalid number");
	if (*c->p++ != '0')
		while (is_digit(c))
			c->p++;
	if (c->p < c->end && *c->p == '.') {
		c->p++;
		if (!is_digit(c))
			return fail(c, "invalid number");
		while (is_digit(c))
			c->p++;
	}
	if (c->p < c->end && (*c->p == 'e' || *c->p == 'E')) {
		c->p++;
		if (c->p < c->end && (*c->p == '+' || *c->p == '-'))
			c->p++;
		if (!is_digit(c))
			return fail(c, "invalid number");
		while (is_digit(c))
			c->p++;
	}
	return 0;
}

static int skip_scalar(struct cursor *c)
{
	static const char *const literals[] = { "true", "false", "null" };
	int escaped;

	if (*c->p == '"')
		return skip_string(c, &escaped);
	if (*c->p == '-' || is_digit(c))
		return skip_number(c);
	for (size_t i = 0; i < sizeof(literals) / sizeof(literals[0]); i++) {
		size_t len = strlen(literals[i]);

		if ((size_t)(c->end - c->p) >= len && !memcmp(c->p, literals[i], len)) {
			c->p += len;
			return 0;
		}
	}
	return fail(c, "invalid value");
}

/* A member's name as read: the bytes between its quotes. */
struct name {
	const char *text;
	size_t len;
	int escaped;
};

static int member_name(struct cursor *c, struct name *name)
{
	const char *from;

	skip_space(c);
	if (c->p >= c->end || *c->p != '"')
		return fail(c, "expected a member name");
	from = c->p;
	if (skip_string(c, &name->escaped))
		return -1;
	name->text = from + 1;
	name->len = (size_t)(c->p - from) - 2;
	skip_space(c);
	if (c->p >= c->end || *c->p != ':')
		return fail(c, "expected ':'");
	c->p++;
	return 0;
}

/* After a member or an item: 1 when a comma says another follows, 0 past
 * the closing bracket. */
static int another(struct cursor *c, char closing)
{
	skip_space(c);
	if (c->p < c->end && *c->p == ',') {
		c->p++;
		return 1;
	}
	if (c->p < c->end && *c->p == closing) {
		c->p++;
		return 0;
	}
	return fail(c, closing == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
}

/* Any value, checked and passed over; iterative, so depth costs no stack. */
static int skip_value(struct cursor *c)
{
	char closing[SPARSE_MAX_DEPTH];
	size_t depth = 0;
	int need_value = 1;
	struct name name;

	for (;;) {
		if (!need_value && !depth)
			return 0;
		skip_space(c);
		if (c->p >= c->end)
			return fail(c, "the answer ends inside a value");
		if (need_value && (*c->p == '{' || *c->p == '[')) {
			if (depth == SPARSE_MAX_DEPTH)
				return fail(c, "nesting too deep");
			closing[depth++] = *c->p == '{' ? '}' : ']';
			c->p++;
			skip_space(c);
			if (c->p < c->end && *c->p == closing[depth - 1]) {
				c->p++;
				depth--;
				need_value = 0;
			} else if (closing[depth - 1] == '}' && member_name(c, &name)) {
				return -1;
			}
		} else if (need_value) {
			if (skip_scalar(c))
				return -1;
			need_value = 0;
		} else {
			int more = another(c, closing[depth - 1]);

			if (more < 0)
				return -1;
			if (!more)
				depth--;
			else if (closing[depth - 1] == '}' && member_name(c, &name))
				return -1;
			need_value = more;
		}
	}
}

/*
 * An array of plain strings (no escapes), the shape of most fields kept
 * (features, partitions, state), built without Jansson's parser, whose
 * every call costs some 5,000 instructions before the first byte: 1 with
 * *out, 0 when it is anything else (c at its start again), -1 out of
 * memory.
 */
static int plain_string_array(struct cursor *c, json_t **out)
{
	const char *from = c->p;
	json_t *array = json_array(), *item;
	int escaped;

	if (!array)
		return fail(c, out_of_memory);
	c->p++;
	skip_space(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		*out = array;
		return 1;
	}
	for (;;) {
		const char *text = c->p;
		int more;

		if (c->p >= c->end || *c->p != '"' || skip_string(c, &escaped) || escaped)
			goto other;
		/* NULL also for invalid UTF-8: Jansson's parser says so */
		if (!(item = json_stringn(text + 1, (size_t)(c->p - text) - 2)))
			goto other;
		if (json_array_append_new(array, item)) {
			json_decref(array);
			return fail(c, out_of_memory);
		}
		if ((more = another(c, ']')) < 0)
			goto other;	/* skip_value says what is wrong */
		if (!more)
			break;
		skip_space(c);
	}
	*out = array;
	return 1;
other:
	json_decref(array);
	c->p = from;
	c->error = NULL;
	return 0;
}

/* The next value, built by Jansson from its own bytes. */
static json_t *load_value(struct cursor *c)
{
	const char *from;
	json_error_t jerr;
	json_t *v;
	int escaped;

	skip_space(c);
	from = c->p;
	if (from < c->end && *from == '"') {
		if (skip_string(c, &escaped))
			return NULL;
		/* Most values read are plain strings: no parser needed, and
		 * json_stringn still refuses invalid UTF-8. */
		if (!escaped && (v = json_stringn(from + 1, (size_t)(c->p - from) - 2)))
			return v;
	} else if (from < c->end && *from == '[') {
		int rc = plain_string_array(c, &v);

		if (rc)
			return rc > 0 ? v : NULL;
		if (skip_value(c))
			return NULL;
	} else if (skip_value(c)) {
		return NULL;
	}
	if (!(v = json_loadb(from, (size_t)(c->p - from), JSON_DECODE_ANY, &jerr))) {
		c->p = from + (jerr.position > 0 ? jerr.position : 0);
		fail(c, "invalid value");
	}
	return v;
}

/* A member name as text, decoded by Jansson (escapes, UTF-8). */
static char *name_text(struct cursor *c, const struct name *name)
{
	json_t *decoded = json_loadb(name->text - 1, name->len + 2, JSON_DECODE_ANY, NULL);
	char *text = NULL;

	/* Jansson refuses names with NUL in objects it builds. */
	if (!decoded || strlen(json_string_value(decoded)) != json_string_length(decoded))
		fail(c, "invalid member name");
	else if (!(text = strdup(json_string_value(decoded))))
		fail(c, out_of_memory);
	json_decref(decoded);
	return text;
}

/*
 * Members up to the closing brace, the opening one passed, each handed to
 * take(c, obj, name, arg) with c at its value: it stores or skips it.
 */
static int members(struct cursor *c, json_t *obj,
		   int (*take)(struct cursor *c, json_t *obj, const struct name *name, const void *arg),
		   const void *arg)
{
	struct name name;

	skip_space(c);
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return 0;
	}
	for (;;) {
		int more;

		if (member_name(c, &name) || take(c, obj, &name, arg))
			return -1;
		if ((more = another(c, '}')) <= 0)
			return more;
	}
}

static int store(struct cursor *c, json_t *obj, const char *key, json_t *value)
{
	if (!value)
		return -1;
	if (json_object_set_new(obj, key, value))
		return fail(c, out_of_memory);
	return 0;
}

static int take_field(struct cursor *c, json_t *obj, const struct name *name, const void *arg)
{
	const char *const *field;
	char *text = NULL;
	int rc;

	if (name->escaped && !(text = name_text(c, name)))
		return -1;
	/* Some 70 members a node, of which a few are kept: most names
	 * differ from every field at their first byte. */
	for (field = arg; *field; field++)
		if (text ? !strcmp(text, *field)
			 : name->len && (*field)[0] == name->text[0] &&
			   !strncmp(*field, name->text, name->len) && !(*field)[name->len])
			break;
	rc = *field ? store(c, obj, *field, load_value(c)) : skip_value(c);
	free(text);
	return rc;
}

/* An object of the listing with the named fields only; others whole. */
static json_t *list_item(struct cursor *c, const char *const *fields)
{
	json_t *obj;

	skip_space(c);
	if (c->p >= c->end || *c->p != '{')
		return load_value(c);
	c->p++;
	if (!(obj = json_object())) {
		fail(c, out_of_memory);
		return NULL;
	}
	if (members(c, obj, take_field, fields)) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* The listing's array: its items kept in it, or handed to listing->take. */
static json_t *read_list(struct cursor *c, const struct rest_listing *listing)
{
	json_t *array = json_array(), *item;

	if (!array) {
		fail(c, out_of_memory);
		return NULL;
	}
	c->p++;
	skip_space(c);
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return array;
	}
	for (;;) {
		int more;

		if (!(item = list_item(c, listing->fields)))
			break;
		if (listing->take ? listing->take(listing->arg, item) : json_array_append_new(array, item)) {
			fail(c, out_of_memory);
			break;
		}
		if ((more = another(c, ']')) < 0)
			break;
		if (!more)
			return array;
	}
	json_decref(array);
	return NULL;
}

static int take_top(struct cursor *c, json_t *obj, const struct name *name, const void *arg)
{
	const struct rest_listing *listing = arg;
	char *text = name_text(c, name);
	int rc;

	if (!text)
		return -1;
	skip_space(c);
	if (!strcmp(text, listing->name) && c->p < c->end && *c->p == '[')
		rc = store(c, obj, text, read_list(c, listing));
	else
		rc = store(c, obj, text, load_value(c));
	free(text);
	return rc;
}

json_t *rest_parse_listing(const char *body, size_t len, const char *what,
			   const struct rest_listing *listing, slurmrest_error *err)
{
	struct cursor c = { body, body, body + len, NULL };
	json_t *root;

	skip_space(&c);
	/* Anything but an object: the whole parser's messages. */
	if (c.p >= c.end || *c.p != '{')
		return rest_parse_body(body, len, what, err);
	c.p++;
	if (!(root = json_object())) {
		fail(&c, out_of_memory);
	} else if (!members(&c, root, take_top, listing)) {
		skip_space(&c);
		if (c.p == c.end)
			return root;
		fail(&c, "end of the answer expected");
	}
	json_decref(root);
	if (c.error == out_of_memory)
		rest_set_error(err, SLURMREST_E_NOMEM, "%s", out_of_memory);
	else
		rest_set_error(err, SLURMREST_E_PARSE,
			       "slurmrestd's answer to %s is not JSON (%s at byte %zu): is the URL a slurmrestd?",
			       what, c.error, (size_t)(c.p - c.start));
	return NULL;
}
