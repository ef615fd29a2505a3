/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A partition's CheckpointSignal= (efa.conf): the signal a batch script
 * gets some seconds before its time limit, so that it can save a
 * checkpoint, given to Slurm as sbatch's --signal=B:SIG@SECONDS.
 */
#ifndef EFA_SIGNAL_H
#define EFA_SIGNAL_H

#include <stddef.h>

#include "common/base/error.h"

/* Slurm keeps the warning time in 16 bits (proc_args.c, get_signal_opts). */
#define EFA_SIGNAL_SECONDS_MAX 65535L
/* What Slurm takes when no "@SECONDS" follows the signal. */
#define EFA_SIGNAL_SECONDS_DEFAULT 60L

struct efa_signal {
	int number;		/* 0: none */
	long seconds;		/* before the time limit */
};

/*
 * Parses "SIG[@SECONDS]" as sbatch's --signal reads its signal and time:
 * a name Slurm knows (USR1, SIGUSR1, any case) or a number. Signals no
 * process can catch (KILL, STOP) are refused: a script could not save
 * on them.
 */
int efa_signal_parse(const char *text, struct efa_signal *out, struct efa_error *err);

/* "B:USR1@300": sbatch's --signal for the batch shell. -1 when it does
 * not fit in size bytes. */
int efa_signal_batch_option(const struct efa_signal *sig, char *out, size_t size);

#endif
