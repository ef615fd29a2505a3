/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in for the EC2 instance metadata service (IMDSv2) on 127.0.0.1:
 *   fakeimds MODE SECONDS ZONE INSTANCE_TYPE
 * prints the port it listens on (ephemeral), then for SECONDS answers:
 *   PUT /latest/api/token (with X-aws-ec2-metadata-token-ttl-seconds)
 *       -> a session token;
 *   GET /latest/meta-data/placement/availability-zone and .../instance-type
 *       -> ZONE and INSTANCE_TYPE, only with X-aws-ec2-metadata-token: <it>
 *       (401 without it, as IMDSv2 does; 404 for other paths);
 *   GET .../placement/region -> ZONE without its last letter;
 *   GET .../iam/security-credentials/ -> the role ROLE, and
 *       .../iam/security-credentials/ROLE -> its temporary credentials
 *       (ROLE_KEY, ROLE_SECRET, ROLE_TOKEN below, expiring in 6 hours).
 * MODE "ok" answers as above, "hang" reads requests and never answers,
 * "v1only" refuses token requests (403), "notype" has no instance-type.
 * Each request is logged to stderr as "METHOD PATH token=yes|no".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"

#define TOKEN "AQAEAFake-imds-session-token=="
#define ROLE "slurm-efa-sync"
#define ROLE_KEY "ASIAFAKEROLEKEY00001"
#define ROLE_SECRET "fake/role+secret/key"
#define ROLE_TOKEN "fake-role-session-token=="

static void reply(int fd, const char *status, const char *body)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "HTTP/1.1 %s\r\nContent-Type: text/plain\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
			 status, strlen(body), body);

	(void)!write(fd, buf, (size_t)n);
}

/* The value of header name in the request head, or NULL. */
static const char *header(const char *head, const char *name, char *value, size_t size)
{
	size_t len = strlen(name);

	for (const char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
		const char *v = line + 2;

		if (strncasecmp(v, name, len) || v[len] != ':')
			continue;
		v += len + 1;
		while (*v == ' ')
			v++;
		snprintf(value, size, "%.*s", (int)strcspn(v, "\r\n"), v);
		return value;
	}
	return NULL;
}

static void answer(int fd, void *ctx)
{
	char **argv = ctx;
	const char *mode = argv[1], *zone = argv[3], *type = argv[4];
	char head[4096], method[16], path[256], value[256];
	size_t len = 0;
	ssize_t n;
	int authed;

	while (len < sizeof(head) - 1 && (n = read(fd, head + len, sizeof(head) - 1 - len)) > 0) {
		len += (size_t)n;
		head[len] = '\0';
		if (strstr(head, "\r\n\r\n"))
			break;
	}
	head[len] = '\0';
	if (sscanf(head, "%15s %255s", method, path) != 2)
		return;
	authed = header(head, "X-aws-ec2-metadata-token", value, sizeof(value)) &&
		 !strcmp(value, TOKEN);
	fprintf(stderr, "%s %s token=%s\n", method, path, authed ? "yes" : "no");
	if (!strcmp(mode, "hang")) {
		pause();	/* the alarm ends the process */
	} else if (!strcmp(method, "PUT") && !strcmp(path, "/latest/api/token")) {
		if (!strcmp(mode, "v1only"))
			reply(fd, "403 Forbidden", "");
		else if (!header(head, "X-aws-ec2-metadata-token-ttl-seconds", value, sizeof(value)))
			reply(fd, "400 Bad Request", "");
		else
			reply(fd, "200 OK", TOKEN);
	} else if (strcmp(method, "GET")) {
		reply(fd, "405 Method Not Allowed", "");
	} else if (!authed) {
		reply(fd, "401 Unauthorized", "");
	} else if (!strcmp(path, "/latest/meta-data/placement/availability-zone")) {
		reply(fd, "200 OK", zone);
	} else if (!strcmp(path, "/latest/meta-data/instance-type") && strcmp(mode, "notype")) {
		reply(fd, "200 OK", type);
	} else if (!strcmp(path, "/latest/meta-data/placement/region") && *zone) {
		snprintf(value, sizeof(value), "%.*s", (int)strlen(zone) - 1, zone);
		reply(fd, "200 OK", value);
	} else if (!strcmp(path, "/latest/meta-data/iam/security-credentials/")) {
		reply(fd, "200 OK", ROLE);
	} else if (!strcmp(path, "/latest/meta-data/iam/security-credentials/" ROLE)) {
		char doc[512], expires[32];
		time_t t = time(NULL) + 6 * 3600;

		strftime(expires, sizeof(expires), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
		snprintf(doc, sizeof(doc), "{\"Code\": \"Success\", \"Type\": \"AWS-HMAC\", \"AccessKeyId\": \"%s\", \"SecretAccessKey\": \"%s\", \"Token\": \"%s\", \"Expiration\": \"%s\"}",
			 ROLE_KEY, ROLE_SECRET, ROLE_TOKEN, expires);
		reply(fd, "200 OK", doc);
	} else {
		reply(fd, "404 Not Found", "");
	}
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: fakeimds ok|hang|v1only|notype SECONDS ZONE INSTANCE_TYPE\n");
		return 2;
	}
	return serve_loopback("fakeimds", (unsigned)atoi(argv[2]), answer, argv);
}
