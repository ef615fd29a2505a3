/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Submission latency through libslurm (slurm_submit_batch_job), without
 * sbatch's process start-up: held 2-node batch jobs carrying --efa as
 * sbatch carries it, so slurmctld and its job_submit.lua do all their work
 * and nothing runs.
 *
 *   submit COUNT PARTITION SECONDS [NAME]...
 *
 * Submits up to COUNT jobs, one after the other, starting none after
 * SECONDS; prints "ok MS NAME" or "fail MS NAME error text" for each. The
 * jobs take the NAMEs in turn ("bench" when none is given): a job_submit.lua
 * that tells variants apart by the job's name then measures them side by
 * side, job after job, in the same state of slurmctld.
 */
#include <errno.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	char *environment[] = { "PATH=/usr/bin:/bin", NULL };
	char *spank_env[] = { "_SLURM_SPANK_OPTION_efa_efa=(null)", NULL };
	char *default_name[] = { "bench" };
	char **names = default_name;
	double start, t0, seconds;
	int name_count = 1;
	long count;

	if (argc < 4) {
		fprintf(stderr, "usage: submit COUNT PARTITION SECONDS [NAME]...\n");
		return 2;
	}
	if (argc > 4) {
		names = argv + 4;
		name_count = argc - 4;
	}
	count = strtol(argv[1], NULL, 10);
	seconds = strtod(argv[3], NULL);
	slurm_init(NULL);
	start = now_ms();
	for (long i = 0; i < count && now_ms() - start < seconds * 1e3; i++) {
		submit_response_msg_t *resp = NULL;
		job_desc_msg_t job;
		int rc;

		slurm_init_job_desc_msg(&job);
		job.name = names[i % name_count];
		job.script = "#!/bin/sh\ntrue\n";
		job.partition = argv[2];
		job.min_nodes = 2;
		job.priority = 0;	/* held */
		job.user_id = getuid();
		job.group_id = getgid();
		job.work_dir = "/tmp";
		job.environment = environment;
		job.env_size = 1;
		job.spank_job_env = spank_env;
		job.spank_job_env_size = 1;
		t0 = now_ms();
		rc = slurm_submit_batch_job(&job, &resp);
		if (rc)
			printf("fail %.3f %s %s\n", now_ms() - t0, job.name, slurm_strerror(errno));
		else
			printf("ok %.3f %s\n", now_ms() - t0, job.name);
		fflush(stdout);
		slurm_free_submit_response_response_msg(resp);
	}
	slurm_fini();
	return 0;
}
