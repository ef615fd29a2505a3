/* SPDX-License-Identifier: Apache-2.0 */
/* Checkpoint paths: normalisation never escapes the root it was checked
 * against. Input: "root\npath". */
#include "common/checkpoint/checkpoint.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), *path, norm[EFA_CKPT_PATH_MAX], root[EFA_CKPT_PATH_MAX];
	struct efa_error err;

	if (!s)
		return 0;
	path = strchr(s, '\n');
	if (path) {
		*path++ = '\0';
		if (!efa_path_normalize(s, root, sizeof(root), &err) &&
		    !efa_checkpoint_allowed(root, path, norm, sizeof(norm), &err) &&
		    !efa_path_under(root, norm))
			abort();	/* allowed, yet outside the root */
		efa_checkpoint_default(s, path, "job", 7, NULL, norm, sizeof(norm), &err);
	}
	efa_path_normalize(s, norm, sizeof(norm), &err);
	free(s);
	return 0;
}
