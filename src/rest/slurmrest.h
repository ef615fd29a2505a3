/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libslurmrest: a client for Slurm's REST daemon (slurmrestd).
 *
 * One handle talks to one slurmrestd over a unix socket ("unix:/path",
 * local authentication) or TCP ("http://host:port", "https://host:port",
 * JWT authentication). It picks the newest OpenAPI version both sides speak
 * on first use, or checks that the server serves the one pinned in the
 * options, and hides the differences between versions: callers see one data
 * model.
 *
 * Versions spoken, with the Slurm releases that serve them (from each
 * release's data_parser plugins; the ones marked * are tested against the
 * real slurmrestd):
 *   Slurm 22.05*  v0.0.38
 *   Slurm 24.05   v0.0.39, v0.0.40, v0.0.41
 *   Slurm 24.11*  v0.0.40, v0.0.41, v0.0.42
 *   Slurm 25.05   v0.0.40 to v0.0.43
 *   Slurm 25.11   v0.0.41 to v0.0.44
 *   Slurm 26.05*  v0.0.42 to v0.0.45 (26.11 drops v0.0.42)
 * Every call works with each of them; where a version lacks something, the
 * call says what it returns instead.
 *
 * Threads: a handle is used by one thread at a time; create one handle per
 * thread. The library keeps no other state; libcurl's global set-up is done
 * once, thread-safely, by slurmrest_new().
 *
 * Retries: a call that only reads (GET) is sent again, up to twice, when
 * the connection breaks before a whole answer came or slurmrestd answers
 * 429, 502, 503 or 504 (after 200 ms, then about twice as long, or the
 * server's Retry-After). slurmrest_submit() and the node update are sent
 * once: a job is never submitted twice.
 *
 * Errors: every call returns 0 or a negative slurmrest_code and fills the
 * caller's slurmrest_error (which may be NULL). Messages never contain the
 * token.
 *
 * Memory: results are plain structs owned by the caller and released with
 * their _free function.
 */
#ifndef SLURMREST_H
#define SLURMREST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct slurmrest slurmrest_t;

typedef enum {
	SLURMREST_OK = 0,
	SLURMREST_E_USAGE = -1,		/* bad argument, URL or option */
	SLURMREST_E_NOMEM = -2,
	SLURMREST_E_TOKEN = -3,		/* token missing, unreadable or too open */
	SLURMREST_E_CONNECT = -4,	/* cannot reach slurmrestd */
	SLURMREST_E_TIMEOUT = -5,	/* no complete answer within the limit */
	SLURMREST_E_TOO_LARGE = -6,	/* answer larger than max_response */
	SLURMREST_E_AUTH = -7,		/* 401/403: token or user refused */
	SLURMREST_E_HTTP = -8,		/* another HTTP failure status */
	SLURMREST_E_PARSE = -9,		/* not JSON, or not the expected shape */
	SLURMREST_E_SLURM = -10,	/* Slurm reported an error */
	SLURMREST_E_VERSION = -11,	/* no OpenAPI version in common */
	SLURMREST_E_TRANSPORT = -12,	/* any other transport failure (TLS, ...) */
} slurmrest_code;

#define SLURMREST_ERROR_MAX 512

typedef struct {
	slurmrest_code code;
	long http_status;		/* 0 when no answer */
	int slurm_errno;		/* Slurm's error number, 0 when none */
	char message[SLURMREST_ERROR_MAX];	/* what went wrong and what to do */
} slurmrest_error;

/* A short name for a code ("timeout", "slurm error", ...). */
const char *slurmrest_strcode(slurmrest_code code);

typedef struct {
	const char *url;		/* required: unix:/path, http://h:p, https://h:p */
	const char *user;		/* X-SLURM-USER-NAME for JWT */
	const char *token;		/* the JWT itself, or */
	const char *token_file;		/* a file holding it (mode 0600 or stricter),
					 * read again whenever it changes */
	int token_from_env;		/* else $SLURM_JWT ("SLURM_JWT=" prefix allowed) */
	int auth_bearer;		/* send the token as "Authorization: Bearer"
					 * (slurmrestd of Slurm 23.11 and later; the
					 * user then comes from the token) instead of
					 * X-SLURM-USER-NAME + X-SLURM-USER-TOKEN (every
					 * release). Never both: slurmrestd refuses a
					 * request that carries both forms. */
	const char *ca_file;		/* https: CA bundle; verification is always on */
	const char *api_version;	/* pin, e.g. "v0.0.38"; NULL: negotiate */
	long connect_timeout_ms;	/* default 2000 */
	long timeout_ms;		/* whole request; default 10000 */
	size_t max_response;		/* bytes; default 64 MiB */
	int allow_plain_http;		/* send the token over http:// to another
					 * host than this one (loopback); refused
					 * by default (SLURMREST_E_USAGE): it would
					 * cross the network in clear */
} slurmrest_options;

/*
 * Creates a handle; nothing is sent yet. The options are copied (the token
 * is read from its file or the environment now; a token file is checked
 * before every request and read again when it has changed, so a renewed
 * token needs no new handle). NULL on error.
 */
slurmrest_t *slurmrest_new(const slurmrest_options *opts, slurmrest_error *err);
void slurmrest_free(slurmrest_t *rest);

/* Checks that slurmctld answers through slurmrestd. */
int slurmrest_ping(slurmrest_t *rest, slurmrest_error *err);

/* After the first call: the API version in use ("v0.0.45") and Slurm's
 * release ("26.05.3"); NULL before. Owned by the handle. A version pinned
 * in the options is returned at once; the first call checks that the
 * server serves it (SLURMREST_E_VERSION, naming what it serves, if not). */
const char *slurmrest_api_version(const slurmrest_t *rest);
const char *slurmrest_slurm_version(const slurmrest_t *rest);

/*
 * What slurmrestd warned about in its answer to the last call,
 * as "description (at source)": e.g. a job field this version ignores
 * ("Ignoring unknown field ..."). NULL-terminated, empty when none (always
 * with v0.0.38, which has no warnings). Owned by the handle; valid until
 * the next call.
 */
const char *const *slurmrest_warnings(const slurmrest_t *rest);

typedef struct {
	char *name;
	char *address;
	char **features;		/* configured, NULL-terminated */
	char **active_features;		/* NULL-terminated */
	char **state;			/* lowercase, base state first ("idle", "drain") */
	char **partitions;		/* NULL-terminated */
	char *reason;			/* why drained or down; "" when none */
	int64_t reason_time;		/* when the reason was set (UNIX time); 0: none */
	int64_t boot_time;		/* when the node booted (UNIX time); 0: unknown */
	int64_t slurmd_start_time;	/* when its slurmd started (UNIX time); 0: unknown */
} slurmrest_node;

typedef struct {
	slurmrest_node *nodes;
	size_t count;
	int not_modified;		/* nothing changed since the given time */
	int64_t update_time;		/* pass to the next call */
} slurmrest_nodes;

/*
 * The cluster's nodes. With since > 0 (the update_time of an earlier
 * answer), an unchanged cluster answers with not_modified set and no
 * nodes: a cheap conditional refresh (HTTP 304, every version).
 * update_time is slurmctld's last change from v0.0.39 on; v0.0.38 does not
 * say, so it is the time of the request less a second.
 */
int slurmrest_get_nodes(slurmrest_t *rest, int64_t since, slurmrest_nodes **out,
			slurmrest_error *err);
void slurmrest_nodes_free(slurmrest_nodes *nodes);

typedef struct {
	char *name;
	char *nodes;			/* hostlist expression, "n[1-4]" */
} slurmrest_partition;

typedef struct {
	slurmrest_partition *partitions;
	size_t count;
	int not_modified;
	int64_t update_time;
} slurmrest_partitions;

int slurmrest_get_partitions(slurmrest_t *rest, int64_t since, slurmrest_partitions **out,
			     slurmrest_error *err);
void slurmrest_partitions_free(slurmrest_partitions *partitions);

/*
 * A batch job. fields holds sbatch's long options with '_' in v0.0.38
 * spelling as a Jansson object, e.g. {"name": "train", "partition": "gpu",
 * "nodes": 2, "current_working_directory": "/fsx/u"}; it is passed as a
 * json_t * (declared void * so this header does not need jansson.h) and
 * borrowed. environment is "NAME=VALUE" strings, NULL-terminated; it must
 * not be empty (slurmrestd requires one variable).
 *
 * From v0.0.40 on the fields are sent as that version spells them: "nodes"
 * as a string, "gpus_per_node": G as "tres_per_node": "gres/gpu:G",
 * "exclusive": "exclusive" (or "user", "mcs") as "shared": ["none"] (or
 * ["user"], ["mcs"]), "time_limit": M as {"set": true, "number": M},
 * "signal": "B:USR1@300" (sbatch's --signal; refused with
 * SLURMREST_E_USAGE when it is not of that form, or when it has B: or R:
 * on v0.0.38, whose Slurm refuses them) as kill_warning_flags,
 * kill_warning_signal and kill_warning_delay;
 * other fields go as given (a
 * field the version does not know is ignored with a warning, see
 * slurmrest_warnings; v0.0.38 refuses the job instead).
 */
typedef struct {
	const char *script;
	const void *fields;
	const char *const *environment;
} slurmrest_job_desc;

/* Submits; *job_id is set on success, *user_msg (may be NULL) gets what
 * job_submit plugins said, malloc'd ("" when nothing). */
int slurmrest_submit(slurmrest_t *rest, const slurmrest_job_desc *job, uint32_t *job_id,
		     char **user_msg, slurmrest_error *err);

typedef struct {
	uint32_t job_id;
	char *name;
	char *user_name;
	char *partition;
	char *state;			/* lowercase base state, "running" */
	char *nodes;			/* hostlist, "" while pending */
	char *features;			/* the constraint, "" when none */
	int exit_code;			/* the batch script's, when ended */
	char *admin_comment;		/* "" when none (only root and SlurmUser set it) */
} slurmrest_job;

/* Slurm's error number for a job it does not know ("Invalid job id"). */
#define SLURMREST_ERRNO_INVALID_JOB_ID 2017

/* One job. A job slurmctld no longer knows is SLURMREST_E_SLURM with
 * slurm_errno SLURMREST_ERRNO_INVALID_JOB_ID. */
int slurmrest_get_job(slurmrest_t *rest, uint32_t job_id, slurmrest_job **out,
		      slurmrest_error *err);

/*
 * One job from Slurm's accounting: slurmdbd's record, through slurmrestd's
 * /slurmdb/ tree (its openapi/slurmdbd plugin; openapi/dbv0.0.38 before
 * 24.05), for a job slurmctld no longer knows. features is the job's
 * constraint. A job slurmdbd does not know is SLURMREST_E_SLURM with
 * slurm_errno SLURMREST_ERRNO_INVALID_JOB_ID; a slurmrestd without the tree is SLURMREST_E_HTTP
 * (404).
 */
int slurmrest_get_db_job(slurmrest_t *rest, uint32_t job_id, slurmrest_job **out,
			 slurmrest_error *err);
void slurmrest_job_free(slurmrest_job *job);

/*
 * Sets a node's features, available and active alike (as scontrol update
 * NodeName=NODE Features=... ActiveFeatures=...), replacing the whole
 * list. Needs API v0.0.40 or later (Slurm 23.11 on; v0.0.38 has no node
 * update: SLURMREST_E_VERSION) and a user slurmctld lets update nodes
 * (root, SlurmUser, or AdminLevel=Admin; anyone else is SLURMREST_E_SLURM
 * with slurm_errno 2010, Invalid user id).
 */
int slurmrest_update_node_features(slurmrest_t *rest, const char *node,
				   const char *const *features, slurmrest_error *err);

/*
 * Drains a node with a reason (as scontrol update NodeName=NODE
 * State=DRAIN Reason=REASON): a node drained already keeps draining, with
 * this reason and its time. Needs API v0.0.40 or later (SLURMREST_E_VERSION
 * before) and a user slurmctld lets update nodes (else SLURMREST_E_SLURM,
 * slurm_errno 2010).
 */
int slurmrest_drain_node(slurmrest_t *rest, const char *node, const char *reason,
			 slurmrest_error *err);

#ifdef __cplusplus
}
#endif

#endif
