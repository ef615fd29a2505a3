/* Arguments of the plugstack.conf line: config=FILE root=DIR. */
#ifndef EFA_PLUGIN_ARGS_H
#define EFA_PLUGIN_ARGS_H

#include "error.h"

struct efa_args {
	const char *config;	/* NULL: the usual search (see config.h) */
	const char *root;	/* prefix for /sys, /proc, /dev, /opt; "/" */
};

/*
 * Parses argv into args (pointing into argv). Every argument is looked
 * at: the last error, if any, is in err and -1 returned, with the good
 * arguments still applied.
 */
int efa_args_parse(int argc, char **argv, struct efa_args *args,
		   struct efa_error *err);

#endif
