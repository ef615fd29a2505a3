/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lines of the state files a step reads and writes on its way in and
 * out (a node's usage store: a p5's reading is 416 lines): words separated
 * by blanks, numbers in decimal. sscanf and sprintf cost a step about a
 * millisecond there; these do the same work without parsing a format.
 */
#ifndef EFA_FIELDS_H
#define EFA_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The next word of a line: *at moves past the blanks (spaces and tabs)
 * before it and past the word; a word ends at a blank, a newline or the
 * end. Returns its length (0: the line has no more words) and *word its
 * start.
 */
size_t efa_field_next(const char **at, const char **word);

/* The next word, copied into buf (NUL-terminated): false when the line
 * has no more words or the word does not fit. */
bool efa_field_word(const char **at, char *buf, size_t size);

/* The next word as a decimal number of digits only: false when there is
 * none, it has another character or it does not fit 64 bits. */
bool efa_field_u64(const char **at, uint64_t *value);

/* The same, optionally signed ("-12"). */
bool efa_field_i64(const char **at, int64_t *value);

/* The next word as a hexadecimal number (digits and a-f, no "0x"). */
bool efa_field_hex(const char **at, uint64_t *value);

/* Writes value in decimal at at (no NUL); returns the end. At most 20
 * characters. */
char *efa_field_put_u64(char *at, uint64_t value);

/* Writes value in hexadecimal, lower case (no "0x", no NUL); returns the
 * end. At most 16 characters. */
char *efa_field_put_hex(char *at, uint64_t value);

/* The same, signed. At most 20 characters. */
char *efa_field_put_i64(char *at, int64_t value);

/* Writes the string at at (no NUL); returns the end. */
char *efa_field_put(char *at, const char *s);

#endif
