/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A stand-in "slurmrestd" on 127.0.0.1 for the tests:
 *   fakerest MODE SECONDS [DIR]
 * prints the port it listens on, then for SECONDS answers every connection
 * as MODE says: "hang" (read the request, never answer), "garbage" (HTTP 200,
 * not JSON), "huge" (HTTP 200 with an endless JSON body), "status500", or
 * "serve" (GET /slurm/vX/NAME answered from DIR/vX/NAME.json, 404 for a
 * version or a name DIR does not have; "ping" answers without a file;
 * /openapi/v3 lists the versions DIR has, as slurmrestd's description
 * lists its paths). DIR is one release of test/fixtures/rest. "flaky" and
 * "busy" serve DIR too, but the first time a request line (method and
 * target) comes, "flaky" closes the connection without an answer, as a
 * loaded slurmrestd may, and "busy" answers 503 with "Retry-After: 1";
 * "drop" closes every connection so.
 * With FAKEREST_LOG set, every request line is appended to that file.
 *
 * Whatever the mode, a request is first authenticated as slurmrestd's
 * rest_auth/jwt does: both X-SLURM-USER-TOKEN and "Authorization: Bearer"
 * (ambiguous), a user name without a token, or no credentials at all are
 * refused with 401.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "serve.h"

struct mode {
	const char *name;
	const char *dir;
	const char *log;
	char seen[64][256];	/* request lines already refused once */
	size_t nseen;
};

static void reply(int fd, const char *status, const char *body, size_t len)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: application/json\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, len);

	(void)!write(fd, head, (size_t)n);
	if (len)
		(void)!write(fd, body, len);
}

/* Reads the request head; NUL-terminated, header names as sent. */
static int read_head(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			return -1;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n"))
			return 0;
	}
	return -1;
}

static int has_header(const char *head, const char *name)
{
	size_t len = strlen(name);
	const char *line = strstr(head, "\r\n");

	while (line && line[2] != '\r') {
		line += 2;
		if (!strncasecmp(line, name, len) && line[len] == ':')
			return 1;
		line = strstr(line, "\r\n");
	}
	return 0;
}

static int authenticated(const char *head)
{
	int token = has_header(head, "X-SLURM-USER-TOKEN");
	int bearer = has_header(head, "Authorization");
	int user = has_header(head, "X-SLURM-USER-NAME");

	if (token && bearer)
		return 0;	/* "mutually exclusive headers" */
	if (user && !token && !bearer)
		return 0;
	return token || bearer;
}

/* {"paths": {"/slurm/vX/ping": {}, ...}} for each vX directory. */
static void serve_description(int fd, const char *dir)
{
	char body[8192];
	size_t len = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	len += (size_t)snprintf(body, sizeof(body), "{\"openapi\": \"3.0.3\", \"paths\": {");
	while (d && (e = readdir(d)) && len < sizeof(body) - 128) {
		if (e->d_name[0] != 'v' || !strchr(e->d_name, '.'))
			continue;
		len += (size_t)snprintf(body + len, sizeof(body) - len, "%s\"/slurm/%s/ping/\": {}",
					body[len - 1] == '{' ? "" : ", ", e->d_name);
	}
	if (d)
		closedir(d);
	len += (size_t)snprintf(body + len, sizeof(body) - len, "}}");
	reply(fd, "200 OK", body, len);
}

static void serve_file(int fd, const char *dir, const char *head)
{
	static const char ping[] = "{\"pings\": [], \"errors\": [], \"warnings\": []}";
	char version[16], name[64], path[4096], body[1 << 20];
	ssize_t len;
	int f;

	if (!strncmp(head, "GET /openapi/v3 ", strlen("GET /openapi/v3 "))) {
		serve_description(fd, dir);
		return;
	}
	if (sscanf(head, "GET /slurm/%15[^/]/%63[^? ]", version, name) != 2 ||
	    strchr(version, '.') == NULL || strstr(name, "..")) {
		reply(fd, "404 Not Found", "", 0);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, version);
	if (access(path, F_OK)) {
		reply(fd, "404 Not Found", "", 0);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s/%s.json", dir, version, name);
	f = open(path, O_RDONLY);
	if (f < 0) {
		if (!strcmp(name, "ping"))
			reply(fd, "200 OK", ping, sizeof(ping) - 1);
		else
			reply(fd, "404 Not Found", "", 0);
		return;
	}
	len = read(f, body, sizeof(body));
	close(f);
	reply(fd, "200 OK", body, len > 0 ? (size_t)len : 0);
}

static void log_request(const struct mode *mode, const char *line)
{
	FILE *f;

	if (mode->log && (f = fopen(mode->log, "a"))) {
		fprintf(f, "%s\n", line);
		fclose(f);
	}
}

/* Whether this request line comes for the first time; remembers it. */
static int first_time(struct mode *mode, const char *line)
{
	for (size_t i = 0; i < mode->nseen; i++)
		if (!strcmp(mode->seen[i], line))
			return 0;
	if (mode->nseen < sizeof(mode->seen) / sizeof(mode->seen[0]))
		snprintf(mode->seen[mode->nseen++], sizeof(mode->seen[0]), "%s", line);
	return 1;
}

static void answer(int fd, void *ctx)
{
	struct mode *mode = ctx;
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n"
				   "Content-Length: 0\r\nConnection: close\r\n\r\n";
	char line[256];
	static const char huge_head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
					"Connection: close\r\n\r\n{\"nodes\": [\"";
	static const char refused[] = "{\"errors\": [{\"description\": \"authentication failed\"}]}";
	char head[16384], chunk[65536];

	if (read_head(fd, head, sizeof(head)))
		return;
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(head, "\r\n"), head);
	log_request(mode, line);
	if (!authenticated(head)) {
		reply(fd, "401 UNAUTHORIZED", refused, sizeof(refused) - 1);
		return;
	}
	if (!strcmp(mode->name, "hang")) {
		pause();	/* the alarm ends the process */
	} else if (!strcmp(mode->name, "garbage")) {
		reply(fd, "200 OK", "<html>not json</html>", 21);
	} else if (!strcmp(mode->name, "status500")) {
		reply(fd, "500 INTERNAL ERROR", "", 0);
	} else if (!strcmp(mode->name, "huge")) {
		memset(chunk, 'x', sizeof(chunk));
		(void)!write(fd, huge_head, sizeof(huge_head) - 1);
		while (write(fd, chunk, sizeof(chunk)) > 0)
			;
	} else if (!strcmp(mode->name, "drop")) {
		return;
	} else if (!strcmp(mode->name, "flaky") && first_time(mode, line)) {
		return;	/* closed with no answer */
	} else if (!strcmp(mode->name, "busy") && first_time(mode, line)) {
		(void)!write(fd, busy, sizeof(busy) - 1);
	} else if (mode->dir) {
		serve_file(fd, mode->dir, head);
	}
}

int main(int argc, char **argv)
{
	static struct mode mode;
	int serves = argc > 1 && (!strcmp(argv[1], "serve") || !strcmp(argv[1], "flaky") ||
				  !strcmp(argv[1], "busy"));

	if (argc < 3 || argc > 4 || serves != (argc == 4)) {
		fprintf(stderr, "usage: fakerest hang|garbage|huge|status500|drop SECONDS\n"
				"       fakerest serve|flaky|busy SECONDS DIR\n");
		return 2;
	}
	mode.name = argv[1];
	mode.dir = argc == 4 ? argv[3] : NULL;
	mode.log = getenv("FAKEREST_LOG");
	return serve_loopback("fakerest", (unsigned)atoi(argv[2]), answer, &mode);
}
