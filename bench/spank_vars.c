/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A SPANK plugin that sets given variables and does nothing else: the
 * floor of setting what spank_efa.so sets through Slurm's SPANK API, the
 * cheapest way it can be done. bench/run captures what spank_efa.so set
 * in a real --efa step (raw/plugin-vars.txt, "RANK NAME VALUE" lines,
 * RANK the task's global id) and names that file as this plugin's
 * argument. In user_init slurmstepd sets, once for the node's tasks, each
 * variable all of them get alike; in task_init each task sets the rest,
 * its own values. spank_efa.so splits its variables the same way, so
 * (b) against this plugin is what its own work costs a step, and this
 * plugin against none what the variables cost: slurmstepd's spank_setenv
 * clears a 256 KiB buffer for each (Slurm's setenvf, ENV_BUFSIZE), and
 * every task copies the longer environment.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/spank.h>

SPANK_PLUGIN(vars, 1);

#define VARS_MAX 4096
#define LINE_MAX_LEN 8192

struct var {
	uint32_t rank;
	char *name;
	char *value;
	int local;	/* one of this node's tasks' */
	int shared;	/* the same for every task on this node: set in user_init */
};

/* slurmstepd runs one step: the variables of that step. */
static struct var vars[VARS_MAX];
static size_t nvars;

static int load(const char *path)
{
	char line[LINE_MAX_LEN];
	FILE *f = fopen(path, "r");

	if (!f) {
		slurm_error("vars: cannot open %s", path);
		return -1;
	}
	while (nvars < VARS_MAX && fgets(line, sizeof(line), f)) {
		char *name, *value, *end;
		unsigned long rank = strtoul(line, &end, 10);

		line[strcspn(line, "\n")] = '\0';
		if (end == line || *end != ' ')
			continue;
		name = end + 1;
		value = strchr(name, ' ');
		if (!value)
			continue;
		*value++ = '\0';
		vars[nvars].rank = (uint32_t)rank;
		vars[nvars].name = strdup(name);
		vars[nvars].value = strdup(value);
		if (!vars[nvars].name || !vars[nvars].value) {
			fclose(f);
			return -1;
		}
		nvars++;
	}
	fclose(f);
	return 0;
}

#define TASKS_MAX 1024

/* Marks the variables of this node's tasks, and of those the ones every
 * task has with the same value. */
static void mark(const uint32_t *global, uint32_t ntasks)
{
	for (size_t i = 0; i < nvars; i++)
		for (uint32_t t = 0; t < ntasks; t++)
			if (vars[i].rank == global[t])
				vars[i].local = 1;
	for (size_t i = 0; i < nvars; i++) {
		uint32_t holders = 0;
		int alike = 1;

		if (vars[i].rank != global[0])
			continue;
		for (size_t j = 0; j < nvars; j++) {
			if (!vars[j].local || strcmp(vars[j].name, vars[i].name))
				continue;
			holders++;
			alike &= !strcmp(vars[j].value, vars[i].value);
		}
		if (!alike || holders != ntasks)
			continue;
		for (size_t j = 0; j < nvars; j++)
			if (vars[j].local && !strcmp(vars[j].name, vars[i].name))
				vars[j].shared = 1;
	}
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	uint32_t global[TASKS_MAX], ntasks;

	if (ac < 1 || load(av[0]) ||
	    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &ntasks) != ESPANK_SUCCESS ||
	    !ntasks || ntasks > TASKS_MAX)
		return 0;
	for (uint32_t t = 0; t < ntasks; t++)
		if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, t, &global[t]) != ESPANK_SUCCESS)
			return 0;
	mark(global, ntasks);
	/* Once each, from the node's first task's lines. */
	for (size_t i = 0; i < nvars; i++)
		if (vars[i].shared && vars[i].rank == global[0])
			spank_setenv(sp, vars[i].name, vars[i].value, 1);
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	uint32_t rank;

	(void)ac;
	(void)av;
	if (spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) != ESPANK_SUCCESS)
		return 0;
	for (size_t i = 0; i < nvars; i++)
		if (vars[i].rank == rank && !vars[i].shared)
			spank_setenv(sp, vars[i].name, vars[i].value, 1);
	return 0;
}
