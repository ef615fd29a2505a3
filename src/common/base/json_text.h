/* SPDX-License-Identifier: Apache-2.0 */
/*
 * JSON read where it stands (RFC 8259), without building a tree: a
 * value's extent, an object's members, strings and integers. For text the
 * caller does not own and must keep as it is around what it changes (a
 * job's AdminComment: common/usage/job_record.c), and for code that runs
 * where a JSON library would be one more shared object to load (the SPANK
 * plugin, loaded by every srun and slurmstepd).
 *
 * Every function takes p at or before a value (blanks are skipped) and
 * returns the end of what it read, or NULL when the text there is not what
 * it reads: malformed JSON, invalid UTF-8, a control character or an
 * escaped NUL in a string (which C strings cannot hold), an integer past
 * long long, values nested deeper than EFA_JSON_DEPTH_MAX.
 */
#ifndef EFA_JSON_TEXT_H
#define EFA_JSON_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#define EFA_JSON_DEPTH_MAX 512

/* Past the blanks JSON allows between tokens. */
const char *efa_json_blank(const char *p);

/* Past the value at p. */
const char *efa_json_skip(const char *p);

/* Whether text is one JSON object and nothing else but blanks. */
bool efa_json_is_object(const char *text);

/*
 * The string at p, unescaped into buf (size bytes with the NUL); past it.
 * NULL also when it does not fit.
 */
const char *efa_json_string(const char *p, char *buf, size_t size);

/* The integer at p (a number without fraction or exponent); past it. */
const char *efa_json_integer(const char *p, long long *value);

/* A walk through an object's members or an array's elements: start it
 * with p at or before the opening bracket, inside false. */
struct efa_json_walk {
	const char *p;		/* where it is; past the closing bracket at the end */
	bool inside;		/* past the opening bracket */
};

/* One member of an object: the key (unescaped; key_fits false when it
 * was longer than key), where its value starts (after blanks) and ends. */
struct efa_json_member {
	char key[64];
	bool key_fits;
	const char *value, *end;
};

/* The object's next member: 1 with m filled, 0 at its end, -1 when it is
 * malformed. */
int efa_json_member_next(struct efa_json_walk *w, struct efa_json_member *m);

/* The array's next element: 1 with *value at its start and *end past it,
 * 0 at its end, -1 when it is malformed. */
int efa_json_element_next(struct efa_json_walk *w, const char **value, const char **end);

/*
 * text as a JSON string, quotes included (malloc'd; NULL out of memory):
 * a byte that is not part of valid UTF-8 becomes '?', as JSON holds only
 * Unicode.
 */
char *efa_json_quote(const char *text);

#endif
