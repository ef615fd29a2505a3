/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Runs a fuzz harness over files instead of libFuzzer's generated inputs:
 * how `make check` replays the seeds and every crash ever found
 * (test/fuzz/regress/) with an ordinary compiler.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		unsigned char *buf;
		long size;

		if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
			perror(argv[i]);
			return 2;
		}
		buf = malloc((size_t)size + 1);
		if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
			fprintf(stderr, "%s: cannot read\n", argv[i]);
			return 2;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, (size_t)size);
		free(buf);
	}
	return 0;
}
