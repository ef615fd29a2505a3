/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP layer's rules for credentials, checked without sending a
 * request (http_new connects nowhere): no token over plain http:// to
 * another host unless allowed, token files of one line, URLs shown and
 * stored without their user-info.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http/http.h"
#include "tap.h"
#include "tmpdir.h"

static int try_new(const char *url, const char *token, const char *token_file, int allow,
		   struct efa_error *err)
{
	struct http_options o = {
		.service = "slurmrestd", .url = url, .connect_ms = 1000, .timeout_ms = 1000,
		.max_response = 1024, .token = token, .token_file = token_file,
		.allow_plain_http = allow, .plain_http_key = "AllowPlainHTTP=yes",
	};
	struct http_client *c = http_new(&o, err);

	http_free(c);
	return c ? 0 : -1;
}

static void test_plain_http(void)
{
	struct efa_error err;

	ok(try_new("http://10.0.0.7:6820", "jwt", NULL, 0, &err) == -1,
	   "a token to another host over http:// is refused");
	has_str(err.msg, "slurmrestd at http://10.0.0.7:6820 is plain http:// on another host",
		"  naming the server");
	has_str(err.msg, "Use https://, or allow it with AllowPlainHTTP=yes", "  and the fixes");
	is_int(err.code, HTTP_E_USAGE, "  a usage error");
	ok(try_new("http://10.0.0.7:6820", "jwt", NULL, 1, &err) == 0, "allowed explicitly, it is taken");
	ok(try_new("http://10.0.0.7:6820", NULL, NULL, 0, &err) == 0, "without a token, http:// is fine");
	ok(try_new("https://10.0.0.7:6820", "jwt", NULL, 0, &err) == 0, "https:// is fine");
	ok(try_new("http://127.0.0.1:6820", "jwt", NULL, 0, &err) == 0, "127.0.0.1 is this host");
	ok(try_new("http://127.3.4.5:6820", "jwt", NULL, 0, &err) == 0, "so is 127.3.4.5");
	ok(try_new("http://LOCALHOST:6820/", "jwt", NULL, 0, &err) == 0, "and localhost");
	ok(try_new("http://[::1]:6820", "jwt", NULL, 0, &err) == 0, "and [::1]");
	ok(try_new("http://127.0.0.1@evil.example:6820", "jwt", NULL, 0, &err) == -1,
	   "user-info that looks like a loopback address does not fool it");
	ok(try_new("http://localhost.evil.example:6820", "jwt", NULL, 0, &err) == -1,
	   "nor a name that starts like localhost");
	ok(try_new("http://1270.0.0.1:6820", "jwt", NULL, 0, &err) == -1, "nor 1270.0.0.1");
}

/* EC2's requests are signed (SigV4) and carry the session token. */
static int try_signed(const char *url, int allow, struct efa_error *err)
{
	struct http_options o = {
		.service = "EC2", .url = url, .connect_ms = 1000, .timeout_ms = 1000,
		.max_response = 1024, .aws_sigv4 = "aws:amz:us-west-2:ec2",
		.allow_plain_http = allow, .plain_http_key = "AllowPlainHTTP=yes in efa.conf",
	};
	struct http_client *c = http_new(&o, err);

	http_free(c);
	return c ? 0 : -1;
}

static void test_plain_http_signed(void)
{
	struct efa_error err;

	ok(try_signed("http://10.0.0.7:8080", 0, &err) == -1,
	   "signed requests to another host over http:// are refused");
	has_str(err.msg, "EC2 at http://10.0.0.7:8080 is plain http:// on another host: its signed requests and AWS session token would cross the network in clear",
		"  naming what would cross in clear");
	has_str(err.msg, "allow it with AllowPlainHTTP=yes in efa.conf", "  and the same escape");
	ok(try_signed("http://10.0.0.7:8080", 1, &err) == 0, "allowed explicitly, it is taken");
	ok(try_signed("https://10.0.0.7:8080", 0, &err) == 0, "https:// is fine");
	ok(try_signed("http://127.0.0.1:8080", 0, &err) == 0, "a stand-in on this host is fine");
}

static void test_token_lines(void)
{
	struct efa_error err;
	const char *two = tmp_at("two-lines"), *one = tmp_at("one-line");
	int fd;

	fd = open(two, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	tmp_setup(fd < 0 || write(fd, "SLURM_JWT=abc\nX-Injected: yes\n", 30) != 30, "a token file of two lines");
	close(fd);
	fd = open(one, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	tmp_setup(fd < 0 || write(fd, "SLURM_JWT=abc\n", 14) != 14, "a token file of one line");
	close(fd);
	ok(try_new("http://127.0.0.1:1", NULL, two, 0, &err) == -1, "a token file of two lines is refused");
	has_str(err.msg, "holds more than one line", "  saying so");
	is_int(err.code, HTTP_E_TOKEN, "  a token error");
	ok(try_new("http://127.0.0.1:1", NULL, one, 0, &err) == 0, "one line, its newline trimmed, is taken");
	ok(try_new("http://127.0.0.1:1", "abc\r\nX-Injected: yes", NULL, 0, &err) == -1,
	   "a token given with a line break in it is refused");
}

static void test_public_url(void)
{
	char *u;

	is_str((u = http_url_public("https://admin:s3cret@rest.example:6820")), "https://rest.example:6820",
	       "user and password are left out of a URL shown");
	free(u);
	is_str((u = http_url_public("http://tok@127.0.0.1:1/")), "http://127.0.0.1:1/", "  a user alone too");
	free(u);
	is_str((u = http_url_public("https://rest.example:6820/a@b")), "https://rest.example:6820/a@b",
	       "  an @ in the path is not user-info");
	free(u);
	is_str((u = http_url_public("unix:/run/slurmrestd.sock")), "unix:/run/slurmrestd.sock",
	       "  a unix socket is as given");
	free(u);
}

int main(void)
{
	if (tmp_open())
		return done_testing();
	test_plain_http();
	test_plain_http_signed();
	test_token_lines();
	test_public_url();
	tmp_close();
	return done_testing();
}
