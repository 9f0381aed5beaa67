/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/select.h>
#include <sys/stat.h>

#include "base/fdpoll.h"

int fd_poll_select(struct pollfd *fds, nfds_t n, int ms)
{
	fd_set rd, wr;
	int top = -1;

	FD_ZERO(&rd);
	FD_ZERO(&wr);
	for (nfds_t i = 0; i < n; i++) {
		int fd = fds[i].fd;
		fds[i].revents = 0;
		if (fd < 0)
			continue;
		if (fd >= FD_SETSIZE) {
			errno = EINVAL;
			return -1;
		}
		if (fds[i].events & POLLIN)
			FD_SET(fd, &rd);
		if (fds[i].events & POLLOUT)
			FD_SET(fd, &wr);
		if (fd > top)
			top = fd;
	}
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	int r = select(top + 1, &rd, &wr, NULL, ms < 0 ? NULL : &tv);
	if (r <= 0)
		return r;
	int ready = 0;
	for (nfds_t i = 0; i < n; i++) {
		int fd = fds[i].fd;
		if (fd < 0)
			continue;
		if ((fds[i].events & POLLIN) && FD_ISSET(fd, &rd))
			fds[i].revents |= POLLIN;
		if ((fds[i].events & POLLOUT) && FD_ISSET(fd, &wr))
			fds[i].revents |= POLLOUT;
		ready += fds[i].revents != 0;
	}
	return ready;
}

#ifdef __APPLE__
static bool has_char_device(const struct pollfd *fds, nfds_t n)
{
	struct stat st;
	for (nfds_t i = 0; i < n; i++)
		if (fds[i].fd >= 0 && fstat(fds[i].fd, &st) == 0 && S_ISCHR(st.st_mode))
			return true;
	return false;
}
#endif

int fd_poll(struct pollfd *fds, nfds_t n, int ms)
{
#ifdef __APPLE__
	if (has_char_device(fds, n))
		return fd_poll_select(fds, n, ms);
#endif
	return poll(fds, n, ms);
}
