/* SPDX-License-Identifier: Apache-2.0 */
#include <string.h>

#include "common/base/fields.h"

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

size_t efa_field_next(const char **at, const char **word)
{
	const char *p = *at;
	size_t len = 0;

	while (blank(*p))
		p++;
	*word = p;
	while (p[len] && p[len] != '\n' && !blank(p[len]))
		len++;
	*at = p + len;
	return len;
}

bool efa_field_word(const char **at, char *buf, size_t size)
{
	const char *word;
	size_t len = efa_field_next(at, &word);

	if (!len || len >= size)
		return false;
	memcpy(buf, word, len);
	buf[len] = '\0';
	return true;
}

static bool digits(const char *s, size_t len, uint64_t *value)
{
	uint64_t v = 0;

	if (!len)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*value = v;
	return true;
}

bool efa_field_u64(const char **at, uint64_t *value)
{
	const char *word;
	size_t len = efa_field_next(at, &word);

	return digits(word, len, value);
}

bool efa_field_i64(const char **at, int64_t *value)
{
	const char *word;
	size_t len = efa_field_next(at, &word);
	bool negative = len && word[0] == '-';
	uint64_t v;

	if (!digits(word + negative, len - negative, &v) ||
	    v > (uint64_t)INT64_MAX + negative)
		return false;
	*value = negative ? (int64_t)(0 - v) : (int64_t)v;
	return true;
}

bool efa_field_hex(const char **at, uint64_t *value)
{
	const char *word;
	size_t len = efa_field_next(at, &word);
	uint64_t v = 0;

	if (!len || len > 16)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = word[i];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return false;
		v = v << 4 | d;
	}
	*value = v;
	return true;
}

char *efa_field_put_u64(char *at, uint64_t value)
{
	char digit[20];
	size_t n = 0;

	do {
		digit[n++] = (char)('0' + value % 10);
		value /= 10;
	} while (value);
	while (n)
		*at++ = digit[--n];
	return at;
}

char *efa_field_put_i64(char *at, int64_t value)
{
	if (value >= 0)
		return efa_field_put_u64(at, (uint64_t)value);
	*at++ = '-';
	return efa_field_put_u64(at, 0 - (uint64_t)value);
}

char *efa_field_put_hex(char *at, uint64_t value)
{
	char digit[16];
	size_t n = 0;

	do {
		digit[n++] = "0123456789abcdef"[value & 0xf];
		value >>= 4;
	} while (value);
	while (n)
		*at++ = digit[--n];
	return at;
}

char *efa_field_put(char *at, const char *s)
{
	size_t len = strlen(s);

	memcpy(at, s, len);
	return at + len;
}
