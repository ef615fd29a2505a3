/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Key=Value line syntax shared by efa.conf and profile files, as in
 * slurm.conf: words separated by blanks, blanks allowed around '=',
 * values double-quoted when they hold blanks (\" and \\ escape inside
 * quotes), '#' starts a comment.
 */
#ifndef EFA_KVLINE_H
#define EFA_KVLINE_H

#include "common/base/error.h"

/*
 * Cuts the next Key=Value word out of the line at *cursor, modifying it in
 * place. Returns 1 with key and value pointing into the line, 0 at the end
 * of the line, -1 with err describing the problem (without file or line).
 */
int efa_kv_next(char **cursor, char **key, char **value, struct efa_error *err);

/*
 * Cuts the next line out of the NUL-terminated text at *cursor, in place
 * (its '\n' becomes the end); NULL past the last line. Start with
 * *cursor at the text.
 */
char *efa_line_next(char **cursor);

#endif
