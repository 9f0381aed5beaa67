/* SPDX-License-Identifier: MIT */
/*
 * forward_run through the user's OpenSSH master: each accepted connection is handed
 * to the master as a stdio forward of its own (mux_stdio_forward_fd), so its bytes
 * never pass through this process; the loop only accepts, and reaps the forwards
 * whose control connection the master closed (the channel ended).
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>

#include "transport/forward.h"
#include "transport/ssh_internal.h"
#include "base/cloexec.h"

#define DEFAULT_MAX_CONNS 256

struct mconn {
	unsigned id;
	struct mux_forward *f;
};

#define logf_(f, ...) ssh_logf((f)->log, (f)->log_data, __VA_ARGS__)

/* One client: handed to the master. -1 when the master is gone. */
static int hand_over(struct ssh_session *s, const struct forward *f, int fd, unsigned id,
		     struct mconn *c, struct dp_error *err)
{
	enum mux_failure why;
	struct dp_error e = { 0 };
	if (mux_stdio_forward_fd(ssh_session_mux(s), f->remote_host, f->remote_port, fd, &c->f,
				 &why, &e) == 0) {
		c->id = id;
		logf_(f, "connection %u: handed to the master, to %s port %d", id, f->remote_host,
		      f->remote_port);
		return 0;
	}
	if (why == MUX_FAILED_REFUSED) {
		logf_(f, "connection %u: cannot open a channel to %s port %d on '%s': %s", id,
		      f->remote_host, f->remote_port, ssh_session_name(s), e.msg);
		return 0;
	}
	dp_err(err, DPE_CONNECT, "connection to '%s' lost: its master: %s", ssh_session_name(s),
	       e.msg);
	return -1;
}

int forward_run_mux(struct ssh_session *s, const struct forward *f, struct dp_error *err)
{
	size_t max = f->max_conns ? f->max_conns : DEFAULT_MAX_CONNS, n = 0;
	struct mconn *conns = xcalloc(max, sizeof(*conns));
	struct pollfd *pfds = xcalloc(max + 2, sizeof(*pfds));
	unsigned next_id = 0;
	bool lost = false;

	while (!*f->stop && !lost) {
		size_t np = 0;
		pfds[np++] = (struct pollfd){ .fd = n < max ? f->listen_fd : -1, .events = POLLIN };
		pfds[np++] = (struct pollfd){ .fd = f->wake_fd, .events = POLLIN };
		for (size_t i = 0; i < n; i++)
			pfds[np++] = (struct pollfd){ .fd = mux_forward_control_fd(conns[i].f),
						      .events = POLLIN };
		if (poll(pfds, (nfds_t)np, 1000) < 0 && errno != EINTR) {
			dp_err(err, DPE_FAIL, "poll: %s", strerror(errno));
			lost = true;
			break;
		}
		/* finished forwards */
		size_t j = 0;
		for (size_t i = 0; i < n; i++) {
			if (pfds[2 + i].revents && mux_forward_ended(conns[i].f)) {
				mux_forward_close(conns[i].f);
				logf_(f, "connection %u closed", conns[i].id);
				continue;
			}
			conns[j++] = conns[i];
		}
		n = j;
		if (!pfds[0].revents)
			continue;
		while (n < max && !lost) {
			struct sockaddr_in a;
			socklen_t len = sizeof(a);
			int fd = cloexec_accept(f->listen_fd, (struct sockaddr *)&a, &len);
			if (fd < 0)
				break;  /* EAGAIN, or a client that went away already */
			unsigned id = ++next_id;
			logf_(f, "connection %u from 127.0.0.1 port %d", id, ntohs(a.sin_port));
			struct mconn c = { 0 };
			if (hand_over(s, f, fd, id, &c, err) < 0)
				lost = true;
			else if (c.f)
				conns[n++] = c;
			close(fd);      /* the master has its own copy */
		}
	}
	for (size_t i = 0; i < n; i++)
		mux_forward_close(conns[i].f);
	free(conns);
	free(pfds);
	return lost ? -1 : 0;
}
