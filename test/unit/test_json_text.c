/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON read where it stands (json_text.h): what RFC 8259 takes and what
 * it does not, as a JSON library would judge the whole text; members and
 * elements walked; strings unescaped; integers to the edge of long long;
 * text quoted back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/json_text.h"
#include "tap.h"

static void test_objects(void)
{
	static const char *const good[] = {
		"{}", " {\"a\":1} ", "{\"a\":[1,2,{\"b\":null}],\"c\":\"x\"}", "{\"a\":-0.5e+10}",
		"{\"a\":true,\"b\":false}", "{\"\\u00e9\\ud83d\\ude00\":\"caf\xc3\xa9\"}",
		"{\"a\":9223372036854775807,\"b\":-9223372036854775808}", "{\"a\":1,\"a\":2}",
		"\t{\n\"a\" :\r 1\n}\n",
	};
	static const char *const bad[] = {
		"", "[]", "\"x\"", "{", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{a:1}",
		"{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1e}", "{\"a\":-}", "{\"a\":+1}",
		"{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"x\ny\"}", "{\"a\":\"\\x\"}",
		"{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
		"{\"a\":\"\\u0000\"}", "{\"a\":\"\xff\"}", "{\"a\":\"\xc0\xaf\"}",
		"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf4\x90\x80\x80\"}",
		"{\"a\":9223372036854775808}", "{\"a\":-9223372036854775809}", "{} x", "{}{}",
		"{\"a\":[1 2]}", "{\"a\":[1,]}", "{\"a\":{\"b\":1} {}", "{\"\":{}{}",
		"{\"a\":[[1] []}",
	};

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(efa_json_is_object(good[i]), "a JSON object: %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(!efa_json_is_object(bad[i]), "not one: %s", bad[i]);
}

static char *nested(size_t depth, char open, char close)
{
	char *s = malloc(2 * depth + 8), *p = s;

	*p++ = '{';
	*p++ = '"';
	*p++ = 'a';
	*p++ = '"';
	*p++ = ':';
	memset(p, open, depth);
	p += depth;
	memset(p, close, depth);
	p += depth;
	*p++ = '}';
	*p = '\0';
	return s;
}

static void test_depth(void)
{
	char *s;

	s = nested(EFA_JSON_DEPTH_MAX - 1, '[', ']');
	ok(efa_json_is_object(s), "%d levels deep: read", EFA_JSON_DEPTH_MAX);
	free(s);
	s = nested(EFA_JSON_DEPTH_MAX, '[', ']');
	ok(!efa_json_is_object(s), "one more: refused, as a parser's depth limit does");
	free(s);
	s = nested(200000, '[', ']');
	ok(!efa_json_is_object(s), "200,000 levels: refused without running out of stack");
	free(s);
}

static void test_members(void)
{
	const char *text = "{ \"a\" : 1, \"\\u0062\":[true, {\"c\":2}] ,"
			   "\"a-key-longer-than-the-sixty-four-bytes-a-member-keeps-of-its-name-xyz\":null,"
			   "\"a\":\"last\" }tail";
	struct efa_json_walk w = { .p = text };
	const char *value, *end;
	struct efa_json_member m;
	char buf[16];
	int n = 0, rc;

	while ((rc = efa_json_member_next(&w, &m)) == 1) {
		n++;
		if (n == 1) {
			is_str(m.key, "a", "the first member's key");
			ok(!strncmp(m.value, "1,", 2), "  its value starts after the blanks");
		} else if (n == 2) {
			is_str(m.key, "b", "a key written with an escape is read unescaped");
			ok(*m.value == '[' && m.end[-1] == ']', "  its value is the whole array");
		} else if (n == 3) {
			ok(!m.key_fits && !m.key[0], "a key longer than the member keeps: told so");
		} else {
			is_str(m.key, "a", "a key given twice is given twice");
			ok(efa_json_string(m.value, buf, sizeof(buf)) == m.end, "  its string read to its end");
			is_str(buf, "last", "  unescaped");
		}
	}
	is_int(rc, 0, "the walk ends at the closing brace");
	is_int(n, 4, "  after 4 members");
	is_str(w.p, "tail", "  and stops past it");

	w = (struct efa_json_walk){ .p = "[ 1 , \"x\", [2] ]" };
	n = 0;
	while ((rc = efa_json_element_next(&w, &value, &end)) == 1)
		n++;
	ok(rc == 0 && n == 3 && !*w.p, "an array's 3 elements walked");
	w = (struct efa_json_walk){ .p = "[]" };
	ok(efa_json_element_next(&w, &value, &end) == 0 && !*w.p, "an empty array has none");
	w = (struct efa_json_walk){ .p = "{\"a\" 1}" };
	is_int(efa_json_member_next(&w, &m), -1, "a member without its colon: malformed");
	w = (struct efa_json_walk){ .p = "{\"a\":1 {}" };
	ok(efa_json_member_next(&w, &m) == 1 && efa_json_member_next(&w, &m) == -1,
	   "a brace after a member is no new object (found by fuzz_record)");
}

static void test_strings(void)
{
	char buf[8];

	ok(efa_json_string("\"a\\\"b\\\\c\\/\"", buf, sizeof(buf)) != NULL, "escapes unescaped");
	is_str(buf, "a\"b\\c/", "  to the characters they stand for");
	ok(efa_json_string("\"\\ud83d\\ude00\"", buf, sizeof(buf)) != NULL, "a surrogate pair");
	is_str(buf, "\xf0\x9f\x98\x80", "  is one code point in UTF-8");
	ok(efa_json_string("\"1234567\"", buf, sizeof(buf)) != NULL, "7 bytes fit 8 with the NUL");
	ok(efa_json_string("\"12345678\"", buf, sizeof(buf)) == NULL, "8 do not: refused, not cut");
	ok(efa_json_string("1", buf, sizeof(buf)) == NULL, "a number is no string");
}

static void test_integers(void)
{
	long long v = 0;

	ok(efa_json_integer(" 42,", &v) && v == 42, "42");
	ok(efa_json_integer("-0", &v) && v == 0, "-0 is 0");
	ok(efa_json_integer("9223372036854775807", &v) && v == 9223372036854775807LL,
	   "the largest long long");
	ok(efa_json_integer("-9223372036854775808", &v) && v == -9223372036854775807LL - 1,
	   "the smallest");
	ok(!efa_json_integer("9223372036854775808", &v), "one past the largest: none");
	ok(!efa_json_integer("1.0", &v), "a fraction: none");
	ok(!efa_json_integer("1e3", &v), "an exponent: none");
	ok(!efa_json_integer("\"1\"", &v), "a string: none");
}

static void test_quote(void)
{
	char *q, buf[64];

	q = efa_json_quote("p5-[001-002]");
	is_str(q, "\"p5-[001-002]\"", "a node list quoted");
	free(q);
	q = efa_json_quote("a\"b\\c\n\x01");
	is_str(q, "\"a\\\"b\\\\c\\u000a\\u0001\"", "quotes, backslashes and control characters escaped");
	ok(efa_json_string(q, buf, sizeof(buf)) && !strcmp(buf, "a\"b\\c\n\x01"), "  and read back as they were");
	free(q);
	q = efa_json_quote("caf\xc3\xa9 \xff\xc3");
	is_str(q, "\"caf\xc3\xa9 ??\"", "valid UTF-8 kept, bytes that are not become '?'");
	free(q);
}

int main(void)
{
	test_objects();
	test_depth();
	test_members();
	test_strings();
	test_integers();
	test_quote();
	return done_testing();
}
