/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The empty plugin (bench/spank_empty.c) with a job prolog and a job
 * epilog that do nothing: the floor of a plugin with a health gate. Once
 * any plugin in plugstack.conf exports slurm_spank_job_prolog or
 * slurm_spank_job_epilog, slurmd starts a "slurmstepd spank prolog" and
 * "spank epilog" of its own for every job on every node (Slurm's
 * prep_script_slurmd.c, spank_has_prolog and spank_has_epilog), whatever
 * the job asked for. bench/run sets spank_efa.so without --efa against
 * this floor as well as against the empty plugin's, so the row says which
 * part of the difference is Slurm's for having a gate at all.
 */
#include <slurm/spank.h>

SPANK_PLUGIN(gate_empty, 1);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	return 0;
}

int slurm_spank_job_prolog(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	return 0;
}

int slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	return 0;
}
