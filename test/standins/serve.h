/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the stand-in servers (fakerest, fakeimds) share: listen on
 * 127.0.0.1 on an ephemeral port, print the port on stdout, answer each
 * connection with answer(fd, ctx), and end after `seconds` (SIGALRM).
 */
#ifndef TEST_REST_SERVE_H
#define TEST_REST_SERVE_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static inline int serve_loopback(const char *name, unsigned seconds,
				 void (*answer)(int fd, void *ctx), void *ctx)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	int s, one = 1;

	signal(SIGPIPE, SIG_IGN);
	alarm(seconds);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, 0);
	if (s < 0 || setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s, (struct sockaddr *)&addr, sizeof(addr)) || listen(s, 16) ||
	    getsockname(s, (struct sockaddr *)&addr, &len)) {
		perror(name);
		return 1;
	}
	printf("%d\n", ntohs(addr.sin_port));
	fflush(stdout);
	for (;;) {
		int fd = accept(s, NULL, NULL);

		if (fd < 0)
			continue;
		answer(fd, ctx);
		close(fd);
	}
}

#endif
