/* SPDX-License-Identifier: Apache-2.0 */
#include <stdarg.h>
#include <stdio.h>

#include "common/base/error.h"

int efa_error_set(struct efa_error *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}
