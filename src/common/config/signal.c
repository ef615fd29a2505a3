/* SPDX-License-Identifier: Apache-2.0 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/config/signal.h"

/*
 * The names sbatch's --signal knows (Slurm's proc_args.c,
 * signals_mapping): a name outside it would be refused at submission.
 * KILL and STOP are among them but cannot be caught.
 */
static const struct {
	const char *name;
	int number;
} signal_names[] = {
	{ "HUP", SIGHUP }, { "INT", SIGINT }, { "QUIT", SIGQUIT }, { "ABRT", SIGABRT },
	{ "KILL", SIGKILL }, { "ALRM", SIGALRM }, { "TERM", SIGTERM }, { "CHLD", SIGCHLD },
	{ "USR1", SIGUSR1 }, { "USR2", SIGUSR2 }, { "PIPE", SIGPIPE }, { "URG", SIGURG },
	{ "CONT", SIGCONT }, { "STOP", SIGSTOP }, { "TSTP", SIGTSTP }, { "TTIN", SIGTTIN },
	{ "TTOU", SIGTTOU }, { "XCPU", SIGXCPU },
};

#define NSIGNAL_NAMES (sizeof(signal_names) / sizeof(signal_names[0]))

static int signal_number(const char *name, size_t len)
{
	char digits[8];
	char *end;
	long n;

	if (len && isdigit((unsigned char)name[0])) {
		if (len >= sizeof(digits))
			return -1;
		memcpy(digits, name, len);
		digits[len] = '\0';
		errno = 0;
		n = strtol(digits, &end, 10);
		return errno || *end || n < 1 || n > SIGRTMAX ? -1 : (int)n;
	}
	if (len > 3 && !strncasecmp(name, "SIG", 3)) {
		name += 3;
		len -= 3;
	}
	for (size_t i = 0; i < NSIGNAL_NAMES; i++)
		if (strlen(signal_names[i].name) == len && !strncasecmp(name, signal_names[i].name, len))
			return signal_names[i].number;
	return -1;
}

int efa_signal_parse(const char *text, struct efa_signal *out, struct efa_error *err)
{
	const char *at = strchr(text, '@');
	size_t len = at ? (size_t)(at - text) : strlen(text);
	int number = signal_number(text, len);
	long seconds = EFA_SIGNAL_SECONDS_DEFAULT;

	if (number < 0)
		return efa_error_set(err, "unknown signal '%.*s': use a name sbatch --signal knows (USR1, USR2, TERM, INT, HUP, ...) or a number",
				     (int)(len > 32 ? 32 : len), text);
	if (number == SIGKILL || number == SIGSTOP)
		return efa_error_set(err, "signal '%.*s' cannot be caught, so a job could not save on it: use USR1, USR2 or TERM",
				     (int)(len > 32 ? 32 : len), text);
	if (at) {
		char *end;

		errno = 0;
		seconds = strtol(at + 1, &end, 10);
		if (errno || end == at + 1 || *end || !isdigit((unsigned char)at[1]) ||
		    seconds > EFA_SIGNAL_SECONDS_MAX)
			return efa_error_set(err, "invalid time '%.32s' after '@': use whole seconds before the time limit, 0 to %ld",
					     at + 1, EFA_SIGNAL_SECONDS_MAX);
	}
	out->number = number;
	out->seconds = seconds;
	return 0;
}

int efa_signal_batch_option(const struct efa_signal *sig, char *out, size_t size)
{
	const char *name = NULL;
	int n;

	for (size_t i = 0; i < NSIGNAL_NAMES; i++)
		if (signal_names[i].number == sig->number)
			name = signal_names[i].name;
	n = name ? snprintf(out, size, "B:%s@%ld", name, sig->seconds) :
		   snprintf(out, size, "B:%d@%ld", sig->number, sig->seconds);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}
