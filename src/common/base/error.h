/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The project's one error convention: a fixed-size message the caller logs
 * with its own prefix (slurm_error, lua_error, stderr), so no layer logs
 * itself, and a code for callers that act on the kind of failure (the HTTP
 * layer's enum http_code; 0 where there is none). libslurmrest turns it
 * into its public slurmrest_error at its edge.
 */
#ifndef EFA_ERROR_H
#define EFA_ERROR_H

#define EFA_ERROR_MAX 512

struct efa_error {
	char msg[EFA_ERROR_MAX];
	int code;
};

/* Sets err->msg, and code 0; err may be NULL. Always returns -1 so callers
 * can "return efa_error_set(...)". */
int efa_error_set(struct efa_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same with a code. */
int efa_error_code_set(struct efa_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Puts before and after around the message err holds, keeping its code:
 * where a caller knows more than the layer that failed. Returns -1. */
int efa_error_wrap(struct efa_error *err, const char *before, const char *after);

#endif
