/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A SPANK plugin that does nothing: the floor of being a plugin at all
 * (plugstack.conf read, the object opened in srun and in every slurmstepd,
 * its symbols looked up), against which bench/run sets spank_efa.so
 * loaded in a step that asks for nothing. Slurm refuses a plugin that
 * exports no callback, so it has the one every plugin has.
 */
#include <slurm/spank.h>

SPANK_PLUGIN(empty, 1);

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	return 0;
}
