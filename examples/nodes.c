/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A libslurmrest example: list nodes with their state and features.
 *
 *   cc nodes.c $(pkg-config --cflags --libs slurmrest) -o nodes
 *   ./nodes unix:/run/slurmrestd/slurmrestd.sock
 *   SLURM_JWT=$(scontrol token) ./nodes http://127.0.0.1:6820 $USER
 *   SLURM_JWT=$(scontrol token) ./nodes http://127.0.0.1:6820 --bearer
 *
 * --bearer sends the token as "Authorization: Bearer" (slurmrestd of Slurm
 * 23.11 and later), the way an HTTP proxy in front of slurmrestd expects
 * it; the user is then the token's own.
 */
#include <slurmrest.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int bearer = argc > 2 && !strcmp(argv[2], "--bearer");
	slurmrest_options opts = { .url = argc > 1 ? argv[1] : NULL,
				   .user = argc > 2 && !bearer ? argv[2] : NULL,
				   .token_from_env = argc > 2,
				   .auth_bearer = bearer };
	slurmrest_nodes *nodes = NULL;
	slurmrest_error err;
	slurmrest_t *rest;
	int rc = 1;

	rest = slurmrest_new(&opts, &err);
	if (!rest) {
		fprintf(stderr, "%s\n", err.message);
		return 2;
	}
	if (slurmrest_ping(rest, &err) || slurmrest_get_nodes(rest, 0, &nodes, &err)) {
		fprintf(stderr, "%s: %s\n", slurmrest_strcode(err.code), err.message);
		goto out;
	}
	printf("Slurm %s, API %s\n", slurmrest_slurm_version(rest), slurmrest_api_version(rest));
	for (size_t i = 0; i < nodes->count; i++) {
		printf("%s %s", nodes->nodes[i].name, nodes->nodes[i].state[0]);
		for (char **f = nodes->nodes[i].features; *f; f++)
			printf("%s%s", f == nodes->nodes[i].features ? " " : ",", *f);
		printf("\n");
	}
	rc = 0;
out:
	slurmrest_nodes_free(nodes);
	slurmrest_free(rest);
	return rc;
}
