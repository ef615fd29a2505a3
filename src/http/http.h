/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one HTTP layer of slurm-efa. Every client that talks to a server
 * (slurmrestd, the EC2 instance metadata service) goes through it, so that
 * URLs, unix sockets, TLS verification, time limits, answer size limits,
 * token files and the wording of transport errors are the same everywhere.
 *
 * GET requests, which change nothing on the server, are tried again when
 * the connection breaks before a whole answer came or the server says it
 * is busy (HTTP 429, 502, 503, 504): slurmrestd drops connections under
 * load, and EC2 and Kubernetes throttle. Other methods are sent once, so a
 * job is never submitted twice, unless the client says its POSTs are
 * reads (EC2's Query protocol).
 *
 * A client is one libcurl easy handle (kept for connection reuse) and is
 * not shared between threads; separate clients are independent. No global
 * state beyond libcurl's own start-up, done once per process.
 */
#ifndef EFA_HTTP_H
#define EFA_HTTP_H

#include <stddef.h>

#include "common/base/error.h"

/* The code of a struct efa_error from this layer, which writes an error
 * only when it fails. */
enum http_code {
	HTTP_OK = 0,
	HTTP_E_USAGE,		/* bad URL or options */
	HTTP_E_NOMEM,
	HTTP_E_TOKEN,		/* token file unreadable, empty, not private or not one line */
	HTTP_E_CONNECT,		/* no connection (refused, unresolvable) */
	HTTP_E_TLS,		/* certificate or CA file */
	HTTP_E_TIMEOUT,
	HTTP_E_TOO_LARGE,	/* answer over max_response */
	HTTP_E_TRANSPORT,	/* anything else libcurl reports */
};

struct http_options {
	const char *service;	/* "slurmrestd": the server in messages */
	const char *url;	/* scheme://host[:port], or unix:/path with allow_unix */
	int allow_unix;
	const char *url_key;	/* "RestURL=": named when the URL is wrong */
	const char *ca_key;	/* "RestCAFile=": named when TLS fails */
	const char *ca_file;	/* PEM; NULL for the system's */
	long connect_ms;	/* > 0 */
	long timeout_ms;	/* > 0, the whole request */
	size_t max_response;	/* bytes, > 0 */
	int no_proxy;		/* link-local services: never through a proxy */
	/*
	 * A GET is tried up to `retries` more times, the first after
	 * retry_ms (> 0 when retries > 0), each next one after twice as long,
	 * less up to half as jitter so that clients throttled together do
	 * not come back together; a Retry-After the server sends is waited
	 * instead, up to HTTP_RETRY_AFTER_MAX_MS.
	 */
	int retries;
	long retry_ms;
	/* POSTs change nothing on this server: retried as GETs are. */
	int posts_are_reads;
	/*
	 * The credential: token (used as given) or token_file (re-read
	 * whenever the file changes, so a renewed token needs no restart),
	 * sent after token_header ("Authorization: Bearer ", the default).
	 * token_private refuses a file others (not its group) can read;
	 * token_prefix ("SLURM_JWT=", as scontrol token prints it) is
	 * dropped where a token starts with it.
	 */
	const char *token;
	const char *token_file;
	int token_private;
	const char *token_prefix;
	const char *token_header;
	/*
	 * A token, or a request signed with aws_sigv4, is never sent over
	 * plain http:// to a host other than this one (localhost, 127.0.0.0/8,
	 * ::1) unless allow_plain_http says so; plain_http_key names how to
	 * allow it, for the message.
	 */
	int allow_plain_http;
	const char *plain_http_key;
	/*
	 * AWS Signature Version 4 ("aws:amz:REGION:SERVICE"), by libcurl,
	 * with the credentials of http_set_aws_credentials(); the session
	 * token goes in X-Amz-Security-Token, which is signed too.
	 */
	const char *aws_sigv4;
};

#define HTTP_RETRY_AFTER_MAX_MS 30000L

struct http_client;

struct http_answer {
	long status;		/* HTTP status */
	char *data;		/* NUL-terminated, NULL when empty; free() it */
	size_t len;
};

/* A client, or NULL with err filled (its code an enum http_code; its
 * message names the server and says what to do). */
struct http_client *http_new(const struct http_options *o, struct efa_error *err);
void http_free(struct http_client *c);

/* The URL as given, less any user-info (scheme://user:password@host):
 * what messages and stored records show. */
const char *http_url(const struct http_client *c);

/* url without the user-info it may carry; malloc'd, NULL on ENOMEM. */
char *http_url_public(const char *url);
int http_is_unix(const struct http_client *c);
int http_has_token(const struct http_client *c);

/*
 * One request to path (absolute, with any query) with the extra headers
 * (NULL-terminated; may be NULL) and the credential. A body is sent as
 * given (the caller's headers say its type). Returns 0 with *answer set
 * for any HTTP status (the last one, when a GET was retried), or -1 with
 * err filled when no answer came.
 */
int http_request(struct http_client *c, const char *method, const char *path,
		 const char *const *headers, const char *body, struct http_answer *answer,
		 struct efa_error *err);

/*
 * The credentials aws_sigv4 requests are signed with, copied (temporary
 * ones change: call again before a request with the new ones).
 * session_token may be NULL. 0, or -1 with err filled.
 */
int http_set_aws_credentials(struct http_client *c, const char *key_id, const char *secret,
			     const char *session_token, struct efa_error *err);

/* Zeroes and frees a string that held a secret. */
void http_wipe_free(char *secret);

#endif
