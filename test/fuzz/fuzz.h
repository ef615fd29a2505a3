/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the fuzz harnesses: the input as a NUL-terminated string. */
#ifndef EFA_FUZZ_H
#define EFA_FUZZ_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

#endif
