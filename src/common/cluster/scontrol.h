/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Telling slurmctld something from a node (a health check draining its
 * node, a batch step turning off its job's requeue): scontrol, run with
 * a deadline, so that a controller that is away never hangs slurmd or
 * slurmstepd.
 *
 * The scontrol is the one of the Slurm slurm-efa was built against
 * (configure's --with-slurm-bindir, PREFIX/bin of --with-slurm), found
 * whatever PATH the caller has: slurmd runs HealthCheckProgram with no
 * PATH at all (run_script_health_check, slurmd.c), where execvp would
 * search /bin:/usr/bin and find no scontrol, or another release's (a
 * distribution's Slurm beside ParallelCluster's /opt/slurm, two Slurms
 * during an upgrade). That scontrol finds its configuration as every
 * Slurm command does: SLURM_CONF when set, its build's default slurm.conf,
 * slurmd's configless cache /run/slurm/conf (read_config.c,
 * _establish_config_source).
 */
#ifndef EFA_SCONTROL_H
#define EFA_SCONTROL_H

#include <stddef.h>

/* scontrol answers at once or the controller is away. */
#define EFA_SCONTROL_TIMEOUT_MS 30000

/* Overrides the build's bindir (a site that moved Slurm; the tests' stand-ins). */
#define EFA_SLURM_BINDIR_ENV "SLURM_EFA_SLURM_BINDIR"

/*
 * The path a Slurm command (name, no '/') runs from: in $SLURM_EFA_SLURM_BINDIR
 * when set, else in the build's bindir when it is there, else name alone,
 * for PATH (a build whose Slurm has moved). Returns buf.
 */
const char *efa_slurm_command(const char *name, char *buf, size_t size);

/*
 * Runs argv (argv[0] "scontrol", found by efa_slurm_command) for at most
 * timeout_ms. Returns 0 with what it printed in out, or -1 with out
 * saying why: it could not start, did not answer in time, or exited
 * non-zero (its own message, when it printed one).
 */
int efa_scontrol(char *const *argv, long timeout_ms, char *out, size_t size);

#endif
