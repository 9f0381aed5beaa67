/* SPDX-License-Identifier: MIT */
/*
 * The forwarding loop. Each client is a struct conn with two bounded buffers (client
 * to server, server to client) and the end-of-stream state of both directions.
 * Channels are opened one at a time (libssh2 keeps a single direct-tcpip open in
 * progress per session), in arrival order.
 *
 * libssh2's one rule for non-blocking sessions shapes the loop: once a packet was
 * half sent (EAGAIN with the session blocked outbound), the same call must be
 * repeated before any other packet is sent, or libssh2 refuses it
 * (LIBSSH2_ERROR_BAD_USE). So when that happens the loop remembers whose call it was
 * ("stuck") and, until it goes through, serves only that client, taking BAD_USE from
 * its other calls as "not now".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libssh2.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "transport/forward.h"
#include "transport/ssh_internal.h"
#include "base/strbuf.h"
#include "base/cloexec.h"

#define BUF 32768
#define DEFAULT_MAX_CONNS 256
#define STUCK_OPEN ((struct conn *)-1)

struct conn {
	unsigned id;
	int fd;
	int client_port;
	LIBSSH2_CHANNEL *ch;            /* NULL until opened */
	char up[BUF], down[BUF];        /* client -> server, server -> client */
	size_t up_len, up_off, down_len, down_off;
	bool client_eof, eof_sent;      /* the client closed its side; the server was told */
	bool remote_eof, client_shut;   /* the server closed its side; the client was told */
	bool done;                      /* to be closed */
	bool closing;                   /* channel close in progress */
};

struct loop {
	struct ssh_session *s;
	LIBSSH2_SESSION *ls;
	const struct forward *f;
	struct conn **conns;
	size_t n, max;
	unsigned next_id;
	struct conn *stuck;             /* whose libssh2 call must be repeated first */
	bool progress;                  /* something moved: look again before sleeping */
	bool lost;
	struct dp_error *err;
};

static void logf_(struct loop *l, const char *fmt, ...) _printf_(2, 3);
static void logf_(struct loop *l, const char *fmt, ...)
{
	if (!l->f->log)
		return;
	va_list ap;
	va_start(ap, fmt);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	l->f->log(l->f->log_data, sb.buf);
}

int forward_listen(int port, int *fd, int *bound, struct dp_error *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	socklen_t len = sizeof(a);
	int one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	*fd = cloexec_socket(AF_INET, SOCK_STREAM, 0);
	if (*fd < 0)
		return dp_err(err, DPE_FAIL, "cannot create a socket: %s", strerror(errno));
	setsockopt(*fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(*fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;
		close(*fd);
		*fd = -1;
		if (e == EADDRINUSE)
			return dp_err(err, DPE_FAIL, "local port %d is already in use (127.0.0.1); "
				      "choose another with LOCAL_PORT:REMOTE_PORT", port);
		return dp_err(err, DPE_FAIL, "cannot listen on 127.0.0.1 port %d: %s", port, strerror(e));
	}
	if (listen(*fd, 128) < 0 || getsockname(*fd, (struct sockaddr *)&a, &len) < 0) {
		int e = errno;
		close(*fd);
		*fd = -1;
		return dp_err(err, DPE_FAIL, "cannot listen on 127.0.0.1 port %d: %s", port, strerror(e));
	}
	fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) | O_NONBLOCK);
	*bound = ntohs(a.sin_port);
	return 0;
}

/* Errors that concern one channel; anything else means the session is gone. */
static bool channel_error(int rc)
{
	switch (rc) {
	case LIBSSH2_ERROR_CHANNEL_OUTOFORDER:
	case LIBSSH2_ERROR_CHANNEL_FAILURE:
	case LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED:
	case LIBSSH2_ERROR_CHANNEL_UNKNOWN:
	case LIBSSH2_ERROR_CHANNEL_WINDOW_EXCEEDED:
	case LIBSSH2_ERROR_CHANNEL_PACKET_EXCEEDED:
	case LIBSSH2_ERROR_CHANNEL_CLOSED:
	case LIBSSH2_ERROR_CHANNEL_EOF_SENT:
		return true;
	default:
		return false;
	}
}

static const char *last_error(struct loop *l)
{
	char *msg = NULL;
	libssh2_session_last_error(l->ls, &msg, NULL, 0);
	return msg && *msg ? msg : "unknown error";
}

/* After a libssh2 call on behalf of c returned rc < 0: 1 to try again later, 0 when
 * c is finished (channel error), -1 when the session is lost. */
static int after_error(struct loop *l, struct conn *c, long rc, const char *what)
{
	if (rc == LIBSSH2_ERROR_EAGAIN) {
		if (libssh2_session_block_directions(l->ls) & LIBSSH2_SESSION_BLOCK_OUTBOUND)
			l->stuck = c;
		return 1;
	}
	if (rc == LIBSSH2_ERROR_BAD_USE && l->stuck)
		return 1;
	if (channel_error((int)rc)) {
		logf_(l, "connection %u: %s: %s", c->id, what, last_error(l));
		c->done = true;
		return 0;
	}
	if (!l->lost)
		dp_err(l->err, DPE_CONNECT, "connection to '%s' lost: %s", ssh_session_name(l->s),
		       last_error(l));
	l->lost = true;
	return -1;
}

static void accept_clients(struct loop *l)
{
	while (l->n < l->max) {
		struct sockaddr_in a;
		socklen_t len = sizeof(a);
		int fd = cloexec_accept(l->f->listen_fd, (struct sockaddr *)&a, &len);
		if (fd < 0)
			return;         /* EAGAIN, or a client that went away already */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		struct conn *c = xcalloc(1, sizeof(*c));
		c->id = ++l->next_id;
		c->fd = fd;
		c->client_port = ntohs(a.sin_port);
		l->conns[l->n++] = c;
		l->progress = true;
		logf_(l, "connection %u from 127.0.0.1 port %d", c->id, c->client_port);
	}
}

/* The first client still without a channel gets one (or is turned away). */
static int open_next(struct loop *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct conn *c = l->conns[i];
		if (c->ch || c->done)
			continue;
		c->ch = libssh2_channel_direct_tcpip_ex(l->ls, l->f->remote_host, l->f->remote_port,
							"127.0.0.1", c->client_port);
		if (c->ch) {
			if (l->stuck == STUCK_OPEN)
				l->stuck = NULL;
			l->progress = true;
			logf_(l, "connection %u: channel to %s port %d open", c->id, l->f->remote_host,
			      l->f->remote_port);
			return 0;
		}
		int rc = libssh2_session_last_errno(l->ls);
		if (rc == LIBSSH2_ERROR_EAGAIN) {
			if (libssh2_session_block_directions(l->ls) & LIBSSH2_SESSION_BLOCK_OUTBOUND)
				l->stuck = STUCK_OPEN;
			return 0;
		}
		if (l->stuck == STUCK_OPEN)
			l->stuck = NULL;
		if (channel_error(rc)) {
			logf_(l, "connection %u: cannot open a channel to %s port %d on '%s': %s", c->id,
			      l->f->remote_host, l->f->remote_port, ssh_session_name(l->s), last_error(l));
			c->done = true;
			return 0;
		}
		return after_error(l, c, rc, "open");
	}
	return 0;
}

static bool io_again(void)
{
	return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
}

/* Move what can move for one client; -1 when the session is lost. */
static int serve(struct loop *l, struct conn *c)
{
	long rc;
	if (!c->ch || c->done)
		return 0;

	/* client -> server */
	if (!c->up_len && !c->client_eof) {
		ssize_t n = read(c->fd, c->up, sizeof(c->up));
		if (n > 0) {
			c->up_len = (size_t)n;
			c->up_off = 0;
			l->progress = true;
		} else if (n == 0 || !io_again()) {
			c->client_eof = true;   /* a reset counts as the end of the data */
			l->progress = true;
		}
	}
	while (c->up_off < c->up_len) {
		rc = libssh2_channel_write(c->ch, c->up + c->up_off, c->up_len - c->up_off);
		if (rc < 0) {
			int r = after_error(l, c, rc, "write");
			if (r <= 0)
				return r;
			break;
		}
		if (l->stuck == c)
			l->stuck = NULL;
		c->up_off += (size_t)rc;
		l->progress = true;
	}
	if (c->up_off == c->up_len)
		c->up_len = c->up_off = 0;
	if (c->client_eof && !c->up_len && !c->eof_sent) {
		rc = libssh2_channel_send_eof(c->ch);
		if (rc == 0) {
			c->eof_sent = true;
			if (l->stuck == c)
				l->stuck = NULL;
		} else if (after_error(l, c, rc, "send eof") < 0) {
			return -1;
		}
	}

	/* server -> client */
	if (!c->down_len && !c->remote_eof) {
		rc = libssh2_channel_read(c->ch, c->down, sizeof(c->down));
		if (rc > 0) {
			c->down_len = (size_t)rc;
			c->down_off = 0;
			l->progress = true;
			if (l->stuck == c)
				l->stuck = NULL;
		} else if (rc == 0 || rc == LIBSSH2_ERROR_EAGAIN) {
			if (rc == LIBSSH2_ERROR_EAGAIN && after_error(l, c, rc, "read") < 0)
				return -1;
			if (libssh2_channel_eof(c->ch)) {
				c->remote_eof = true;
				l->progress = true;
			}
		} else if (after_error(l, c, rc, "read") < 0) {
			return -1;
		}
	}
	while (c->down_off < c->down_len) {
		ssize_t n = write(c->fd, c->down + c->down_off, c->down_len - c->down_off);
		if (n < 0) {
			if (!io_again()) {
				logf_(l, "connection %u: client went away: %s", c->id, strerror(errno));
				c->done = true;
				return 0;
			}
			break;
		}
		c->down_off += (size_t)n;
		l->progress = true;
	}
	if (c->down_off == c->down_len)
		c->down_len = c->down_off = 0;
	if (c->remote_eof && !c->down_len && !c->client_shut) {
		shutdown(c->fd, SHUT_WR);
		c->client_shut = true;
	}
	if (c->client_shut && c->eof_sent)
		c->done = true;
	return 0;
}

/* Close finished clients; a channel close may take a few rounds. */
static int reap(struct loop *l)
{
	size_t j = 0;
	for (size_t i = 0; i < l->n; i++) {
		struct conn *c = l->conns[i];
		if (c->done && c->fd >= 0) {
			close(c->fd);
			c->fd = -1;
			logf_(l, "connection %u closed", c->id);
		}
		if (c->done && c->ch && (!l->stuck || l->stuck == c)) {
			int rc = libssh2_channel_free(c->ch);
			if (rc == 0) {
				c->ch = NULL;
				if (l->stuck == c)
					l->stuck = NULL;
			} else if (after_error(l, c, rc, "close") < 0) {
				return -1;
			} else if (rc != LIBSSH2_ERROR_EAGAIN) {
				c->ch = NULL;   /* freed all the same */
			}
		}
		if (c->done && !c->ch) {
			free(c);
			l->progress = true;
			continue;
		}
		l->conns[j++] = c;
	}
	l->n = j;
	return 0;
}

/* Data (or an end) already taken off the socket for some channel, by a read on
 * behalf of another: poll would not wake up for it. */
static bool queued(struct loop *l)
{
	for (size_t i = 0; i < l->n; i++) {
		struct conn *c = l->conns[i];
		unsigned long avail = 0;
		if (!c->ch || c->done || c->down_len || c->remote_eof)
			continue;
		libssh2_channel_window_read_ex(c->ch, &avail, NULL);
		if (avail || libssh2_channel_eof(c->ch))
			return true;
	}
	return false;
}

/* Whether the server closed the connection while no channel was there to notice. */
static bool peer_closed(int fd)
{
	char b;
	ssize_t n = recv(fd, &b, 1, MSG_PEEK);
	return n == 0 || (n < 0 && !io_again());
}

int forward_run(struct ssh_session *s, const struct forward *f, struct dp_error *err)
{
	if (ssh_session_mux(s))
		return forward_run_mux(s, f, err);
	struct loop l = {
		.s = s,
		.ls = ssh_session_libssh2(s),
		.f = f,
		.max = f->max_conns ? f->max_conns : DEFAULT_MAX_CONNS,
		.err = err,
	};
	int fd = ssh_session_fd(s);
	bool idle_data = false;         /* unread SSH data while no channel exists */

	l.conns = xcalloc(l.max, sizeof(*l.conns));
	struct pollfd *pfds = xcalloc(l.max + 3, sizeof(*pfds));
	libssh2_session_set_blocking(l.ls, 0);

	while (!*f->stop && !l.lost) {
		l.progress = false;
		int pump = ssh_session_pump(s);
		if (pump < 0) {
			dp_err(err, DPE_CONNECT, "connection to '%s' lost: a ProxyJump hop failed",
			       ssh_session_name(s));
			l.lost = true;
			break;
		}
		if (!l.stuck || l.stuck == STUCK_OPEN) {
			if (open_next(&l) < 0)
				break;
		}
		for (size_t i = 0; i < l.n && !l.lost; i++)
			if (!l.stuck || l.stuck == l.conns[i])
				if (serve(&l, l.conns[i]) < 0)
					break;
		if (l.lost || reap(&l) < 0)
			break;
		if (l.n)
			idle_data = false;

		/* wait */
		size_t np = 0;
		pfds[np++] = (struct pollfd){ .fd = fd, .events = idle_data ? 0 : POLLIN };
		if (libssh2_session_block_directions(l.ls) & LIBSSH2_SESSION_BLOCK_OUTBOUND)
			pfds[0].events |= POLLOUT;
		pfds[np++] = (struct pollfd){ .fd = l.n < l.max && !l.stuck ? f->listen_fd : -1,
					      .events = POLLIN };
		for (size_t i = 0; i < l.n; i++) {
			struct conn *c = l.conns[i];
			short ev = 0;
			if (c->ch && !c->done && !c->up_len && !c->client_eof)
				ev |= POLLIN;
			if (c->down_len)
				ev |= POLLOUT;
			pfds[np++] = (struct pollfd){ .fd = ev ? c->fd : -1, .events = ev };
		}
		pfds[np++] = (struct pollfd){ .fd = f->wake_fd, .events = POLLIN };
		int ms = l.progress || pump > 0 || queued(&l) ? 0 : 1000;
		if (poll(pfds, (nfds_t)np, ms) < 0 && errno != EINTR) {
			dp_err(err, DPE_FAIL, "poll: %s", strerror(errno));
			l.lost = true;
			break;
		}
		if (pfds[0].revents & (POLLHUP | POLLERR)) {
			dp_err(err, DPE_CONNECT, "connection to '%s' lost", ssh_session_name(s));
			l.lost = true;
			break;
		}
		if (!l.n && (pfds[0].revents & POLLIN)) {
			if (peer_closed(fd)) {
				dp_err(err, DPE_CONNECT, "connection to '%s' lost: closed by the server",
				       ssh_session_name(s));
				l.lost = true;
				break;
			}
			idle_data = true;       /* libssh2 reads it when the next channel opens */
		}
		if (pfds[1].revents)
			accept_clients(&l);
	}

	/* Clean end (or a lost session): every client goes, every channel is freed. */
	libssh2_session_set_blocking(l.ls, 1);
	libssh2_session_set_timeout(l.ls, 2000);
	for (size_t i = 0; i < l.n; i++) {
		struct conn *c = l.conns[i];
		if (c->fd >= 0)
			close(c->fd);
		if (c->ch && !l.lost)
			libssh2_channel_free(c->ch);
		free(c);
	}
	free(l.conns);
	free(pfds);
	return l.lost ? -1 : 0;
}
