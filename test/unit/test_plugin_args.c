#include "common/plugin_args.h"
#include "tap.h"

int main(void)
{
	struct efa_error err = { "" };
	struct efa_args args;
	char *good[] = { "config=/etc/slurm/efa.conf", "root=/fixtures/%n" };
	char *bad[] = { "root=/x", "verbose", "config=", "root=relative" };

	ok(efa_args_parse(0, NULL, &args, &err) == 0, "no arguments");
	ok(args.config == NULL, "  config: the usual search");
	is_str(args.root, "/", "  root defaults to /");

	ok(efa_args_parse(2, good, &args, &err) == 0, "config= and root=");
	is_str(args.config, "/etc/slurm/efa.conf", "  config");
	is_str(args.root, "/fixtures/%n", "  root keeps %%n for the caller");

	ok(efa_args_parse(4, bad, &args, &err) == -1, "unknown arguments reported");
	is_str(args.root, "/x", "  good arguments still applied");
	has_str(err.msg, "'root=relative'", "  message names the bad argument");
	has_str(err.msg, "config=/path/to/efa.conf", "  and says what is accepted");
	return done_testing();
}
