/* SPDX-License-Identifier: Apache-2.0 */
/* slurm-efa: running a command an admin configured, from a daemon. */
#ifndef EFA_CLI_SHELL_H
#define EFA_CLI_SHELL_H

#include <stddef.h>

/*
 * Runs cmd with /bin/sh -c, stdin from /dev/null, its stdout and stderr
 * into out (NUL-terminated, newlines as spaces, cut at size), for at most
 * timeout seconds: then its process group is killed. Returns the exit
 * status, 128 + the signal that ended it, or -1 when it could not start
 * (out says why).
 */
int cli_shell(const char *cmd, int timeout, char *out, size_t size);

#endif
