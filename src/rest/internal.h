/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libslurmrest internals shared by the transport (client.c), the parsers
 * (parse.c) and the unit tests. Not installed.
 */
#ifndef SLURMREST_INTERNAL_H
#define SLURMREST_INTERNAL_H

#include <jansson.h>

#include "slurmrest.h"

/* OpenAPI versions by number (v0.0.38 -> 38), newest first. */
extern const int rest_api_versions[];
extern const size_t rest_api_nversions;
extern const char rest_api_spoken[];	/* "v0.0.38 to v0.0.45", for messages */

/* The most versions a server's description is read for. */
#define REST_SERVED_MAX 32

int rest_api_parse(const char *name);	/* "v0.0.41" -> 41, or -1 */

int rest_set_error(slurmrest_error *err, slurmrest_code code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Parses a body as a JSON object; errors say what was expected. */
json_t *rest_parse_body(const char *body, size_t len, const char *what, slurmrest_error *err);

/*
 * A listing's answer (GET nodes) parsed as rest_parse_body does, except
 * that the objects of the top-level array listing->name keep only the
 * members listing->fields names (NULL-terminated): the others are checked
 * for JSON's syntax and not built (sparse.c). With take, each object of
 * the array is handed to take(arg, object) as soon as it is read, and the
 * array in the tree stays empty: a listing of 100,000 nodes is never held
 * whole beside the answer. take owns what it gets and returns 0, or -1
 * when out of memory.
 */
struct rest_listing {
	const char *name;
	const char *const *fields;
	int (*take)(void *arg, json_t *item);
	void *arg;
};
json_t *rest_parse_listing(const char *body, size_t len, const char *what,
			   const struct rest_listing *listing, slurmrest_error *err);

/* The first entry of "errors", as SLURMREST_E_SLURM; 0 when none. */
int rest_parse_errors(json_t *root, slurmrest_error *err);

void rest_strv_free(char **v);

/* "warnings" as "description (at source)", NULL-terminated, malloc'd (empty
 * when none; v0.0.38 has none); NULL when out of memory. */
char **rest_parse_warnings(json_t *root);

/* The /slurm/ versions an OpenAPI description (GET /openapi/v3) has paths
 * for, newest first: how many were stored in versions (at most max). */
size_t rest_parse_served(json_t *root, int *versions, size_t max);

/* meta.Slurm.release ("22.05.8"), malloc'd, or NULL. */
char *rest_parse_release(json_t *root);

/* What GET nodes reads: "nodes" with the fields it uses. */
extern const struct rest_listing rest_nodes_listing;

/* The nodes of a nodes answer as its parse reaches them (rest_listing.take
 * with a struct rest_nodes_taker as arg, zeroed to start). */
struct rest_nodes_taker {
	slurmrest_nodes *nodes;	/* NULL until the first node */
	size_t cap;
};
int rest_take_node(void *arg, json_t *item);
/*
 * The nodes taken, with what the rest of the answer (root) says: they go
 * to *out (the taker is left empty), or are freed with an error when root
 * has no nodes list. Nodes still in root's list (an answer read whole:
 * a zeroed taker) are taken too, each released from the tree as it is.
 */
int rest_nodes_taken(struct rest_nodes_taker *t, json_t *root, slurmrest_nodes **out,
		     slurmrest_error *err);
void rest_nodes_taker_clear(struct rest_nodes_taker *t);
int rest_parse_partitions(json_t *root, int api, slurmrest_partitions **out,
			  slurmrest_error *err);
int rest_parse_submit(json_t *root, uint32_t *job_id, char **user_msg, slurmrest_error *err);
int rest_parse_job(json_t *root, int api, slurmrest_job **out, slurmrest_error *err);
int rest_parse_db_job(json_t *root, uint32_t job_id, slurmrest_job **out, slurmrest_error *err);

/* The request body for a submission in this API version's shape. */
json_t *rest_build_submit(const slurmrest_job_desc *job, int api, slurmrest_error *err);

#endif
