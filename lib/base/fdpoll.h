/* SPDX-License-Identifier: MIT */
/* Waiting on descriptors that may be a terminal. macOS's poll() does not work on
 * character devices: for a terminal it reports POLLNVAL at once, so a relay that
 * polls stdin spins or stalls there (OpenSSH's portable layer defines BROKEN_POLL on
 * macOS and waits with select() for everything). fd_poll() is poll(), except on
 * macOS when the set holds a character device (a terminal, /dev/null): then the
 * select() form below waits instead, which works there. */
#ifndef DISPATCH_FDPOLL_H
#define DISPATCH_FDPOLL_H

#include <poll.h>

int fd_poll(struct pollfd *fds, nfds_t n, int ms);

/* poll() made of select(), on every system (the unit test runs it on Linux): POLLIN
 * and POLLOUT only, as select() knows no more (a hangup or an error shows as
 * readable, as read() then says); a descriptor of -1 is skipped; one at or above
 * FD_SETSIZE fails with EINVAL. ms < 0 waits without a limit. */
int fd_poll_select(struct pollfd *fds, nfds_t n, int ms);

#endif
