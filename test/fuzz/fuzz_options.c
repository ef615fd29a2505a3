/* SPDX-License-Identifier: Apache-2.0 */
/* Values users control: SPANK option arguments (also arriving through the
 * job environment), plugin arguments, GPU lists and host lists. */
#include "common/node/bind.h"
#include "common/checkpoint/checkpoint.h"
#include "common/env/launch.h"
#include "common/config/mode.h"
#include "common/config/plugin_args.h"
#include "common/node/stack.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size), path[EFA_CKPT_PATH_MAX], buf[256];
	struct efa_stack stack = { 0 };
	struct efa_args args;
	struct efa_error err;
	enum efa_mode mode;
	enum efa_bind bind;
	int gpus[64];
	long keep;

	if (!s)
		return 0;
	efa_mode_parse(s, &mode, &err);
	efa_bind_parse(s, &bind, &err);
	efa_checkpoint_dir_parse(s, path, sizeof(path), &err);
	efa_checkpoint_keep_parse(s, &keep, &err);
	efa_parse_index_list(s, gpus, 64);
	efa_hostlist_first(s, buf, sizeof(buf));
	efa_node_name_from_topology(s, "switch.switch.node", buf, sizeof(buf));
	efa_expand_node_name(s, "n1", path, sizeof(path));
	efa_args_parse(1, &s, &args, &err);
	if (!efa_stack_parse_installed(s, &stack))
		efa_stack_clear(&stack);
	free(s);
	return 0;
}
