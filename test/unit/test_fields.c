/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The state files' words and numbers (fields.h): what they read, where a
 * line ends, numbers that do not fit, and writing back what was read.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/base/fields.h"
#include "tap.h"

static void test_words(void)
{
	const char *at = "  alpha\tbeta  \ngamma", *word;
	char buf[6];

	is_int((int)efa_field_next(&at, &word), 5, "blanks before a word are skipped");
	ok(!strncmp(word, "alpha", 5), "  the word");
	ok(efa_field_word(&at, buf, sizeof(buf)) && !strcmp(buf, "beta"), "a tab separates words");
	ok(!efa_field_word(&at, buf, sizeof(buf)), "a line ends at its newline");
	at = "toolong";
	ok(!efa_field_word(&at, buf, sizeof(buf)), "a word that does not fit is refused");
	at = "";
	ok(!efa_field_word(&at, buf, sizeof(buf)), "an empty line has no word");
}

static void test_numbers(void)
{
	const char *at;
	uint64_t u;
	int64_t i;

	at = "0 18446744073709551615 18446744073709551616";
	ok(efa_field_u64(&at, &u) && u == 0, "0");
	ok(efa_field_u64(&at, &u) && u == UINT64_MAX, "the largest 64-bit number");
	ok(!efa_field_u64(&at, &u), "one more does not fit");
	at = "-1 +1 12x 0x10";
	ok(!efa_field_u64(&at, &u), "no sign");
	ok(!efa_field_u64(&at, &u), "  either");
	ok(!efa_field_u64(&at, &u), "digits only");
	ok(!efa_field_u64(&at, &u), "  no prefix");
	at = "-9223372036854775808 9223372036854775807 9223372036854775808 - -0";
	ok(efa_field_i64(&at, &i) && i == INT64_MIN, "the least signed number");
	ok(efa_field_i64(&at, &i) && i == INT64_MAX, "the largest");
	ok(!efa_field_i64(&at, &i), "one more does not fit");
	ok(!efa_field_i64(&at, &i), "a sign alone is no number");
	ok(efa_field_i64(&at, &i) && i == 0, "-0 is 0");
	at = "1fff ABC 0x1 12345678901234567";
	ok(efa_field_hex(&at, &u) && u == 0x1fff, "hexadecimal");
	ok(efa_field_hex(&at, &u) && u == 0xabc, "  upper case too");
	ok(!efa_field_hex(&at, &u), "  no prefix");
	ok(!efa_field_hex(&at, &u), "  at most 16 digits");
}

static void test_put(void)
{
	const uint64_t values[] = { 0, 9, 10, 4294967296ULL, UINT64_MAX };
	char buf[64];

	for (size_t n = 0; n < sizeof(values) / sizeof(values[0]); n++) {
		char want[32];
		const char *at = buf;
		uint64_t back;

		*efa_field_put_u64(buf, values[n]) = '\0';
		snprintf(want, sizeof(want), "%" PRIu64, values[n]);
		is_str(buf, want, "%s in decimal", want);
		ok(efa_field_u64(&at, &back) && back == values[n], "  reads back");
		*efa_field_put_hex(buf, values[n]) = '\0';
		snprintf(want, sizeof(want), "%" PRIx64, values[n]);
		is_str(buf, want, "  %s in hexadecimal", want);
	}
	{
		const int64_t signed_values[] = { 0, -1, 42, INT64_MIN, INT64_MAX };

		for (size_t n = 0; n < sizeof(signed_values) / sizeof(signed_values[0]); n++) {
			char want[32];
			const char *at = buf;
			int64_t back;

			*efa_field_put_i64(buf, signed_values[n]) = '\0';
			snprintf(want, sizeof(want), "%" PRId64, signed_values[n]);
			is_str(buf, want, "%s, signed", want);
			ok(efa_field_i64(&at, &back) && back == signed_values[n], "  reads back");
		}
	}
	*efa_field_put(efa_field_put(buf, "ab"), "") = '\0';
	is_str(buf, "ab", "strings");
}

int main(void)
{
	test_words();
	test_numbers();
	test_put();
	return done_testing();
}
