/* SPDX-License-Identifier: MIT */
/* lib/base/cloexec.c: every descriptor it makes is close-on-exec. */
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "base/cloexec.h"
#include "unit.h"

static int cloexec(int fd)
{
	int flags = fcntl(fd, F_GETFD);
	return flags >= 0 && (flags & FD_CLOEXEC);
}

int main(void)
{
	int fd = cloexec_socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0 && cloexec(fd));
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 1) == 0 &&
	      getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	int c = cloexec_socket(AF_INET, SOCK_STREAM, 0);
	CHECK(c >= 0 && connect(c, (struct sockaddr *)&a, sizeof(a)) == 0);
	int acc = cloexec_accept(fd, NULL, NULL);
	CHECK(acc >= 0 && cloexec(acc));
	close(acc);
	close(c);
	close(fd);

	int sv[2];
	CHECK(cloexec_socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 && cloexec(sv[0]) && cloexec(sv[1]));
	close(sv[0]);
	close(sv[1]);
	int p[2];
	CHECK(cloexec_pipe(p) == 0 && cloexec(p[0]) && cloexec(p[1]));
	close(p[0]);
	close(p[1]);

	char tmpl[64];
	snprintf(tmpl, sizeof(tmpl), "%s/cloexec.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	int t = cloexec_mkstemp(tmpl);
	CHECK(t >= 0 && cloexec(t));
	CHECK(write(t, "x\n", 2) == 2);
	close(t);
	FILE *f = cloexec_fopen_read(tmpl);
	CHECK(f && cloexec(fileno(f)) && fgetc(f) == 'x');
	if (f)
		fclose(f);
	unlink(tmpl);
	CHECK(cloexec_fopen_read("/nonexistent/x") == NULL);
	return unit_done();
}
