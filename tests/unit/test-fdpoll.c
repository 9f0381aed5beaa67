/* SPDX-License-Identifier: MIT */
/* fd_poll_select, the select() form that fd_poll uses on macOS for a terminal, run
 * here on Linux against a real pty, pipes and /dev/null, next to poll() itself. */
#if defined(__linux__) && !defined(_XOPEN_SOURCE)
#define _XOPEN_SOURCE 700 /* posix_openpt, grantpt, unlockpt, ptsname: XSI in glibc */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/fdpoll.h"
#include "base/util.h"
#include "unit.h"

int main(void)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY);
	CHECK(master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0);
	int tty = open(ptsname(master), O_RDWR | O_NOCTTY);
	CHECK(tty >= 0 && isatty(tty));

	/* a terminal with nothing typed: not readable, writable */
	struct pollfd p[3] = { { .fd = tty, .events = POLLIN }, { .fd = -1, .events = POLLIN },
			       { .fd = tty, .events = POLLOUT } };
	CHECK_INT(fd_poll_select(p, 3, 0), 1);
	CHECK_INT(p[0].revents, 0);
	CHECK_INT(p[1].revents, 0);
	CHECK_INT(p[2].revents, POLLOUT);

	/* a line typed: readable, as poll() says too */
	CHECK_INT(write(master, "ls\n", 3), 3);
	struct pollfd q = { .fd = tty, .events = POLLIN };
	CHECK_INT(fd_poll_select(&q, 1, 5000), 1);
	CHECK_INT(q.revents, POLLIN);
	struct pollfd r = { .fd = tty, .events = POLLIN };
	CHECK_INT(poll(&r, 1, 5000), 1);
	CHECK(r.revents & POLLIN);
	/* and fd_poll, which is poll() on Linux */
	r.revents = 0;
	CHECK_INT(fd_poll(&r, 1, 5000), 1);
	CHECK(r.revents & POLLIN);
	char buf[8];
	CHECK_INT(read(tty, buf, sizeof(buf)), 3);

	/* a pipe: the time limit holds when nothing comes, -1 waits for what comes */
	int pp[2];
	CHECK(pipe(pp) == 0);
	struct pollfd e = { .fd = pp[0], .events = POLLIN };
	double t0 = monotonic_seconds();
	CHECK_INT(fd_poll_select(&e, 1, 100), 0);
	CHECK(monotonic_seconds() - t0 >= 0.09);
	CHECK_INT(e.revents, 0);
	CHECK_INT(write(pp[1], "x", 1), 1);
	CHECK_INT(fd_poll_select(&e, 1, -1), 1);
	CHECK_INT(e.revents, POLLIN);
	/* the writer gone: readable (read() then says end of file) */
	CHECK_INT(read(pp[0], buf, 1), 1);
	close(pp[1]);
	CHECK_INT(fd_poll_select(&e, 1, 1000), 1);
	CHECK_INT(e.revents, POLLIN);
	CHECK_INT(read(pp[0], buf, 1), 0);
	close(pp[0]);

	/* /dev/null, the other character device a relay may be given: readable at once */
	int null = open("/dev/null", O_RDONLY);
	struct pollfd z = { .fd = null, .events = POLLIN };
	CHECK_INT(fd_poll_select(&z, 1, 1000), 1);
	CHECK_INT(z.revents, POLLIN);
	close(null);

	/* beyond FD_SETSIZE select() cannot look: EINVAL, never memory past the set */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur <= FD_SETSIZE + 1 &&
	    rl.rlim_max > FD_SETSIZE + 1) {
		rl.rlim_cur = FD_SETSIZE + 2;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (dup2(tty, FD_SETSIZE) == FD_SETSIZE) {
		struct pollfd big = { .fd = FD_SETSIZE, .events = POLLIN };
		errno = 0;
		CHECK_INT(fd_poll_select(&big, 1, 0), -1);
		CHECK_INT(errno, EINVAL);
		close(FD_SETSIZE);
	} else {
		printf("ok %d # skip no descriptor %d here\n", ++unit_n, FD_SETSIZE);
	}
	close(tty);
	close(master);
	return unit_done();
}
