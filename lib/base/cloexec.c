/* SPDX-License-Identifier: MIT */
/* glibc declares accept4, pipe2 and mkostemp only with _GNU_SOURCE. */
#define _GNU_SOURCE 1

#include "base/cloexec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* Where the system has no atomic way (macOS: no SOCK_CLOEXEC, accept4 or pipe2), the
 * flag right after creation: a thread that forks in between can still leak fd. */
static inline int set_cloexec(int fd)
{
	if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int cloexec_socket(int domain, int type, int protocol)
{
#ifdef SOCK_CLOEXEC
	return socket(domain, type | SOCK_CLOEXEC, protocol);
#else
	return set_cloexec(socket(domain, type, protocol));
#endif
}

int cloexec_socketpair(int domain, int type, int protocol, int sv[2])
{
#ifdef SOCK_CLOEXEC
	return socketpair(domain, type | SOCK_CLOEXEC, protocol, sv);
#else
	if (socketpair(domain, type, protocol, sv) < 0)
		return -1;
	if (set_cloexec(sv[0]) < 0) {
		close(sv[1]);
		return -1;
	}
	if (set_cloexec(sv[1]) < 0) {
		close(sv[0]);
		return -1;
	}
	return 0;
#endif
}

int cloexec_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
#if defined(HAVE_ACCEPT4) && defined(SOCK_CLOEXEC)
	return accept4(fd, addr, len, SOCK_CLOEXEC);
#else
	return set_cloexec(accept(fd, addr, len));
#endif
}

int cloexec_pipe(int fds[2])
{
#ifdef HAVE_PIPE2
	return pipe2(fds, O_CLOEXEC);
#else
	if (pipe(fds) < 0)
		return -1;
	if (set_cloexec(fds[0]) < 0) {
		close(fds[1]);
		return -1;
	}
	if (set_cloexec(fds[1]) < 0) {
		close(fds[0]);
		return -1;
	}
	return 0;
#endif
}

int cloexec_mkstemp(char *template_)
{
#ifdef HAVE_MKOSTEMP
	return mkostemp(template_, O_CLOEXEC);
#else
	return set_cloexec(mkstemp(template_));
#endif
}

FILE *cloexec_fopen_read(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}
