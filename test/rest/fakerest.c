/*
 * A misbehaving "slurmrestd" on 127.0.0.1 for the fault tests:
 *   fakerest MODE SECONDS
 * prints the port it listens on, then for SECONDS answers every connection
 * as MODE says: "hang" (read the request, never answer), "garbage" (HTTP 200,
 * not JSON), "huge" (HTTP 200 with an endless JSON body), "status500".
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void answer(int fd, const char *mode)
{
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
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	int s, one = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: fakerest hang|garbage|huge|status500 SECONDS\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	alarm((unsigned)atoi(argv[2]));
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&addr, sizeof(addr)) || listen(s, 16) ||
	    getsockname(s, (struct sockaddr *)&addr, &len)) {
		perror("fakerest");
		return 1;
	}
	printf("%d\n", ntohs(addr.sin_port));
	fflush(stdout);
	for (;;) {
		int fd = accept(s, NULL, NULL);

		if (fd < 0)
			continue;
		answer(fd, argv[1]);
		close(fd);
	}
}
