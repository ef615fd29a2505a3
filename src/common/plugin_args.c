#include <string.h>

#include "plugin_args.h"

int efa_args_parse(int argc, char **argv, struct efa_args *args,
		   struct efa_error *err)
{
	int rc = 0;

	args->config = NULL;
	args->root = "/";
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "config=", 7) && argv[i][7]) {
			args->config = argv[i] + 7;
		} else if (!strncmp(argv[i], "root=", 5) && argv[i][5] == '/') {
			args->root = argv[i] + 5;
		} else {
			rc = efa_error_set(err, "plugstack.conf: ignoring argument '%s': spank_efa.so takes config=/path/to/efa.conf and root=/absolute/dir",
					   argv[i]);
		}
	}
	return rc;
}
