/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>

#include "common/base/error.h"

static int vset(struct efa_error *err, int code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

static int vset(struct efa_error *err, int code, const char *fmt, va_list ap)
{
	if (!err)
		return -1;
	err->code = code;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	return -1;
}

int efa_error_set(struct efa_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int efa_error_code_set(struct efa_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vset(err, code, fmt, ap);
	va_end(ap);
	return -1;
}

int efa_error_wrap(struct efa_error *err, const char *before, const char *after)
{
	char was[EFA_ERROR_MAX];

	if (!err)
		return -1;
	snprintf(was, sizeof(was), "%s", err->msg);
	snprintf(err->msg, sizeof(err->msg), "%s%s%s", before ? before : "", was, after ? after : "");
	return -1;
}
