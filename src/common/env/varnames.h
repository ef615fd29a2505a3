/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which variables slurm-efa may set at all: the rules both a profile (when
 * it is read) and the environment (when it is applied) obey.
 */
#ifndef EFA_VARNAMES_H
#define EFA_VARNAMES_H

#include <stdbool.h>

/* Variables no profile may set and no site may force. */
bool efa_env_denied(const char *name);

/* Variables no profile may set: the loader's (LD_*; slurm-efa manages
 * LD_LIBRARY_PATH itself) and slurm-efa's own (SLURM_EFA_*). */
bool efa_env_reserved(const char *name);

#endif
