/*
 * A misbehaving "slurmrestd" on 127.0.0.1 for the fault tests:
 *   fakerest MODE SECONDS
 * prints the port it listens on, then for SECONDS answers every connection
 * as MODE says: "hang" (read the request, never answer), "garbage" (HTTP 200,
 * not JSON), "huge" (HTTP 200 with an endless JSON body), "status500".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

static void answer(int fd, void *ctx)
{
	const char *mode = ctx;
	static const char garbage[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				      "Content-Length: 21\r\nConnection: close\r\n\r\n<html>not json</html>";
	static const char status500[] = "HTTP/1.1 500 INTERNAL ERROR\r\nContent-Length: 0\r\n"
					"Connection: close\r\n\r\n";
	static const char huge_head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
					"Connection: close\r\n\r\n{\"nodes\": [\"";
	char buf[4096], chunk[65536];

	if (read(fd, buf, sizeof(buf)) <= 0)
		return;
	if (!strcmp(mode, "hang")) {
		pause();	/* the alarm ends the process */
	} else if (!strcmp(mode, "garbage")) {
		(void)!write(fd, garbage, sizeof(garbage) - 1);
	} else if (!strcmp(mode, "status500")) {
		(void)!write(fd, status500, sizeof(status500) - 1);
	} else if (!strcmp(mode, "huge")) {
		memset(chunk, 'x', sizeof(chunk));
		(void)!write(fd, huge_head, sizeof(huge_head) - 1);
		while (write(fd, chunk, sizeof(chunk)) > 0)
			;
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fakerest hang|garbage|huge|status500 SECONDS\n");
		return 2;
	}
	return serve_loopback("fakerest", (unsigned)atoi(argv[2]), answer, argv[1]);
}
