/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Errors from src/common: a fixed-size message the caller logs with its own
 * prefix (slurm_error, lua_error, stderr), so common code never logs itself.
 */
#ifndef EFA_ERROR_H
#define EFA_ERROR_H

#define EFA_ERROR_MAX 512

struct efa_error {
	char msg[EFA_ERROR_MAX];
};

/* Sets err->msg; err may be NULL. Always returns -1 so callers can
 * "return efa_error_set(...)". */
int efa_error_set(struct efa_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
