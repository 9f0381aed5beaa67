/* SPDX-License-Identifier: MIT */
/*
 * OpenSSH's multiplexing protocol, client side (see mux.h). Written from PROTOCOL.mux
 * and checked against OpenSSH 9.2's master byte for byte (tests/unit/test-mux.c holds
 * what ssh itself sent and what the master answered). Where the document and the
 * master differ, the master wins:
 *
 *  - MUX_C_NEW_STDIO_FWD carries the port as a uint32, not as a string;
 *  - no MUX_S_OK follows the file descriptors of a new session: MUX_S_SESSION_OPENED
 *    comes once the remote channel is open (or MUX_S_FAILURE when it is not);
 *  - the master relays a remote "exit-status" as MUX_S_EXIT_MESSAGE but drops
 *    "exit-signal": a command killed by a signal ends with the control connection
 *    closing and no exit message, exactly as when the master itself dies. The two
 *    are told apart by asking the master (a new connection) whether it is alive.
 *
 * Booleans in messages are uint32 (the master reads them with sshbuf_get_u32), and
 * each file descriptor goes in a sendmsg of its own carrying one byte, which is how
 * the master's mm_receive_fd reads them.
 */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* struct ucred for SO_PEERCRED */
#endif
#include "transport/mux.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "base/fdpoll.h"
#include "base/shquote.h"
#include "base/cloexec.h"

#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0 /* macOS: SO_NOSIGPIPE is set on the socket instead */
#endif

/* ---- messages ---------------------------------------------------------------- */

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

struct cursor {
	const uint8_t *p;
	size_t left;
};

static bool take_u32(struct cursor *c, uint32_t *v)
{
	if (c->left < 4)
		return false;
	*v = get_u32(c->p);
	c->p += 4;
	c->left -= 4;
	return true;
}

static bool take_string(struct cursor *c, const uint8_t **s, uint32_t *n)
{
	if (!take_u32(c, n) || *n > c->left)
		return false;
	*s = c->p;
	c->p += *n;
	c->left -= *n;
	return true;
}

ssize_t mux_parse(const void *buf, size_t len, struct mux_msg *msg, struct dp_error *err)
{
	const uint8_t *b = buf;
	*msg = (struct mux_msg){ 0 };
	if (len < 4)
		return 0;
	uint32_t n = get_u32(b);
	if (n < 4 || n > MUX_MAX_MESSAGE)
		return dp_err(err, DPE_CONNECT, "bad mux message length %u", (unsigned)n);
	if (len - 4 < n)
		return 0;
	struct cursor c = { b + 4, n };
	take_u32(&c, &msg->type);
	bool ok = true;
	const uint8_t *s;
	uint32_t slen;
	switch (msg->type) {
	case MUX_MSG_HELLO:
		ok = take_u32(&c, &msg->a);
		while (ok && c.left) /* extensions: name, value */
			ok = take_string(&c, &s, &slen) && take_string(&c, &s, &slen);
		break;
	case MUX_S_OK:
	case MUX_S_PROXY:
	case MUX_S_TTY_ALLOC_FAIL:
		ok = take_u32(&c, &msg->a);
		break;
	case MUX_S_PERMISSION_DENIED:
	case MUX_S_FAILURE:
		ok = take_u32(&c, &msg->a) && take_string(&c, &s, &slen);
		if (ok) {
			size_t k = slen < sizeof(msg->reason) - 1 ? slen : sizeof(msg->reason) - 1;
			for (size_t i = 0; i < k; i++)
				msg->reason[i] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
			msg->reason[k] = '\0';
		}
		break;
	case MUX_S_ALIVE:
	case MUX_S_SESSION_OPENED:
	case MUX_S_REMOTE_PORT:
	case MUX_S_EXIT_MESSAGE:
		ok = take_u32(&c, &msg->a) && take_u32(&c, &msg->b);
		break;
	default:
		break;
	}
	if (!ok)
		return dp_err(err, DPE_CONNECT, "malformed mux message of type 0x%08x",
			      (unsigned)msg->type);
	return (ssize_t)(4 + (size_t)n);
}

static void put_u32(struct strbuf *sb, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v };
	strbuf_add(sb, b, 4);
}

static void put_string(struct strbuf *sb, const char *s)
{
	size_t n = strlen(s);
	put_u32(sb, (uint32_t)n);
	strbuf_add(sb, s, n);
}

/* Messages are built with a length placeholder, filled in by end_msg. */
static size_t begin_msg(struct strbuf *sb, uint32_t type)
{
	size_t at = sb->len;
	put_u32(sb, 0);
	put_u32(sb, type);
	return at;
}

static void end_msg(struct strbuf *sb, size_t at)
{
	uint32_t n = (uint32_t)(sb->len - at - 4);
	uint8_t *p = (uint8_t *)sb->buf + at;
	p[0] = (uint8_t)(n >> 24);
	p[1] = (uint8_t)(n >> 16);
	p[2] = (uint8_t)(n >> 8);
	p[3] = (uint8_t)n;
}

void mux_put_hello(struct strbuf *sb)
{
	size_t at = begin_msg(sb, MUX_MSG_HELLO);
	put_u32(sb, MUX_PROTOCOL_VERSION);
	end_msg(sb, at);
}

void mux_put_alive_check(struct strbuf *sb, uint32_t request_id)
{
	size_t at = begin_msg(sb, MUX_C_ALIVE_CHECK);
	put_u32(sb, request_id);
	end_msg(sb, at);
}

void mux_put_new_session(struct strbuf *sb, uint32_t request_id, const struct mux_exec *x)
{
	size_t at = begin_msg(sb, MUX_C_NEW_SESSION);
	put_u32(sb, request_id);
	put_string(sb, "");             /* reserved */
	put_u32(sb, x->pty);
	put_u32(sb, 0);                 /* X11 forwarding */
	put_u32(sb, 0);                 /* agent forwarding */
	put_u32(sb, x->subsystem);
	put_u32(sb, 0xffffffffu);       /* no escape character */
	put_string(sb, x->term ? x->term : x->pty ? "xterm" : "");
	put_string(sb, x->command);
	for (size_t i = 0; x->env && x->env[i]; i++)
		put_string(sb, x->env[i]);
	end_msg(sb, at);
}

void mux_put_stdio_fwd(struct strbuf *sb, uint32_t request_id, const char *host, uint32_t port)
{
	size_t at = begin_msg(sb, MUX_C_NEW_STDIO_FWD);
	put_u32(sb, request_id);
	put_string(sb, "");             /* reserved */
	put_string(sb, host);
	put_u32(sb, port);              /* PROTOCOL.mux says string; the master reads a u32 */
	end_msg(sb, at);
}

void mux_login_script(struct strbuf *sb, const char *command, bool user_shell)
{
	/* sh runs the login shell in a subshell and exits with its status. sh's own
	 * stderr points at /dev/null meanwhile: dash reports a child killed by a signal
	 * ("Terminated") there, which a direct session, where sh exec's the shell, never
	 * prints; the subshell gives the command the real stderr back before exec. */
	strbuf_adds(sb, "exec 3>&2 2>/dev/null\n(\nexec 2>&3 3>&-\n");
	sh_login_script(sb, command, user_shell);
	strbuf_adds(sb, ")\nexit $?\n");
}

void mux_login_command(struct strbuf *sb, const char *command, bool user_shell)
{
	_cleanup_strbuf_ struct strbuf script = STRBUF_INIT;
	mux_login_script(&script, command, user_shell);
	sh_any_command(sb, script.buf);
}

/* ---- one connection to the master ----------------------------------------------- */

struct conn {
	int fd;
	const char *path;
	int timeout_ms;
	uint32_t next_id;
	uint8_t *in;            /* bytes read, not yet parsed */
	size_t in_len, in_cap;
	bool eof;
};

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->in);
	c->fd = -1;
	c->in = NULL;
	c->in_len = c->in_cap = 0;
}

static int fail(enum mux_failure *why, enum mux_failure w, struct dp_error *err, int kind,
		const char *fmt, ...) _printf_(5, 6);
static int fail(enum mux_failure *why, enum mux_failure w, struct dp_error *err, int kind,
		const char *fmt, ...)
{
	if (why)
		*why = w;
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		err->kind = kind;
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int peer_uid(int fd, uid_t *uid)
{
#if defined(__linux__) && defined(SO_PEERCRED)
	struct ucred cr;
	socklen_t len = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -1;
	*uid = cr.uid;
	return 0;
#else
	gid_t gid;
	return getpeereid(fd, uid, &gid);
#endif
}

/* Milliseconds left before deadline (a monotonic_seconds() value; <= 0: none). */
static int ms_left(double deadline)
{
	if (deadline <= 0)
		return -1;
	double left = deadline - monotonic_seconds();
	return left <= 0 ? 0 : (int)(left * 1000) + 1;
}

static double deadline_in(int ms)
{
	return ms > 0 ? monotonic_seconds() + ms / 1000.0 : 0;
}

/* Wait for events on fd until deadline: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, double deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, ms_left(deadline));
		if (r < 0 && errno == EINTR)
			continue;
		return r < 0 ? -1 : r;
	}
}

/* Connect to path as mux.h's mux_open says: owner, then peer. */
static int conn_connect(struct conn *c, const char *path, int timeout_ms, enum mux_failure *why,
			struct dp_error *err)
{
	*c = (struct conn){ .fd = -1, .path = path, .timeout_ms = timeout_ms, .next_id = 1 };
	struct stat st;
	if (lstat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return fail(why, MUX_FAILED_NO_SOCKET, err, DPE_CONNECT,
				    "no master at '%s' (no such socket)", path);
		return fail(why, MUX_FAILED_OTHER, err, DPE_CONNECT, "cannot use master socket '%s': %s",
			    path, strerror(errno));
	}
	if (!S_ISSOCK(st.st_mode))
		return fail(why, MUX_FAILED_NOT_SOCKET, err, DPE_CONNECT,
			    "'%s' is not a socket: not an ssh master", path);
	uid_t me = geteuid();
	if (st.st_uid != me)
		return fail(why, MUX_FAILED_OWNER, err, DPE_CONNECT,
			    "master socket '%s' belongs to uid %lu, not to you (uid %lu): not used",
			    path, (unsigned long)st.st_uid, (unsigned long)me);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path))
		return fail(why, MUX_FAILED_OTHER, err, DPE_CONNECT,
			    "master socket path '%s' is too long (at most %zu bytes)", path,
			    sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);

	c->fd = cloexec_socket(AF_UNIX, SOCK_STREAM, 0);
	if (c->fd < 0)
		return fail(why, MUX_FAILED_OTHER, err, DPE_CONNECT, "cannot make a socket: %s",
			    strerror(errno));
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
#ifdef SO_NOSIGPIPE
	int one = 1;
	setsockopt(c->fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
	double deadline = deadline_in(timeout_ms);
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		if (e == EINPROGRESS || e == EAGAIN) {
			/* a master too busy to accept (full backlog) */
			int r = wait_fd(c->fd, POLLOUT, deadline);
			socklen_t len = sizeof(e);
			e = 0;
			if (r == 0)
				e = ETIMEDOUT;
			else if (r < 0 || getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
				e = errno;
		}
		if (e) {
			conn_close(c);
			if (e == ECONNREFUSED)
				return fail(why, MUX_FAILED_STALE, err, DPE_CONNECT,
					    "master socket '%s' is stale: nothing listens on it "
					    "(its master has exited)", path);
			if (e == ENOENT)
				return fail(why, MUX_FAILED_NO_SOCKET, err, DPE_CONNECT,
					    "no master at '%s' (no such socket)", path);
			if (e == ETIMEDOUT || e == EAGAIN)
				return fail(why, MUX_FAILED_TIMEOUT, err, DPE_CONNECT,
					    "master on '%s' does not accept connections", path);
			return fail(why, MUX_FAILED_OTHER, err, DPE_CONNECT,
				    "cannot connect to master socket '%s': %s", path, strerror(e));
		}
	}
	uid_t peer;
	if (peer_uid(c->fd, &peer) < 0) {
		int e = errno;
		conn_close(c);
		return fail(why, MUX_FAILED_OTHER, err, DPE_CONNECT,
			    "cannot tell who answers on master socket '%s': %s", path, strerror(e));
	}
	if (peer != me) {
		conn_close(c);
		return fail(why, MUX_FAILED_PEER, err, DPE_CONNECT,
			    "master on '%s' runs as uid %lu, not as you (uid %lu): not used", path,
			    (unsigned long)peer, (unsigned long)me);
	}
	return 0;
}

/* lost: what a connection that breaks meanwhile is (the request did not get through). */
static int conn_send(struct conn *c, const struct strbuf *sb, enum mux_failure lost,
		     enum mux_failure *why, struct dp_error *err)
{
	double deadline = deadline_in(c->timeout_ms);
	size_t off = 0;
	while (off < sb->len) {
		ssize_t n = send(c->fd, sb->buf + off, sb->len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int r = wait_fd(c->fd, POLLOUT, deadline);
			if (r > 0)
				continue;
			if (r == 0)
				return fail(why, MUX_FAILED_TIMEOUT, err, DPE_CONNECT,
					    "master on '%s' does not read its requests", c->path);
		}
		return fail(why, lost, err, DPE_CONNECT, "master on '%s' closed the connection: %s",
			    c->path, strerror(errno));
	}
	return 0;
}

/* One descriptor, one byte: how the master's mm_receive_fd reads them. The master acts
 * on a request only once it has all its descriptors: a failure here means the
 * request was not carried out (MUX_FAILED_OTHER). */
static int conn_send_fd(struct conn *c, int fd, enum mux_failure *why, struct dp_error *err)
{
	union {
		struct cmsghdr hdr;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	char byte = 0;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			      .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	double deadline = deadline_in(c->timeout_ms);
	for (;;) {
		ssize_t n = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
		if (n == 1)
			return 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		    wait_fd(c->fd, POLLOUT, deadline) > 0)
			continue;
		return fail(why, MUX_FAILED_OTHER, err, DPE_CONNECT,
			    "cannot pass a file descriptor to the master on '%s': %s", c->path,
			    n < 0 ? strerror(errno) : "short write");
	}
}

/* Read what is there (wait: until deadline for at least one byte, or EOF). 1 read
 * something or EOF (c->eof), 0 nothing (not waiting, or timed out), -1 error. */
static int conn_fill(struct conn *c, bool wait, double deadline)
{
	if (c->eof)
		return 1;
	for (;;) {
		if (c->in_cap - c->in_len < 4096) {
			c->in_cap = c->in_cap ? c->in_cap * 2 : 8192;
			c->in = xrealloc(c->in, c->in_cap);
		}
		ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
		if (n > 0) {
			c->in_len += (size_t)n;
			return 1;
		}
		if (n == 0) {
			c->eof = true;
			return 1;
		}
		if (errno == EINTR)
			continue;
		if (errno == ECONNRESET) {
			c->eof = true;
			return 1;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if (!wait)
			return 0;
		int r = wait_fd(c->fd, POLLIN, deadline);
		if (r <= 0)
			return r;
	}
}

/* The next whole message already read: 1 got one, 0 none yet, -1 malformed. */
static int conn_next(struct conn *c, struct mux_msg *msg, struct dp_error *err)
{
	ssize_t n = mux_parse(c->in, c->in_len, msg, err);
	if (n <= 0)
		return (int)n;
	memmove(c->in, c->in + n, c->in_len - (size_t)n);
	c->in_len -= (size_t)n;
	return 1;
}

/* Wait for the next message (bounded by the connection's timeout). */
static int conn_recv(struct conn *c, struct mux_msg *msg, enum mux_failure lost,
		     enum mux_failure *why, struct dp_error *err)
{
	double deadline = deadline_in(c->timeout_ms);
	for (;;) {
		struct dp_error perr;
		int r = conn_next(c, msg, &perr);
		if (r > 0)
			return 0;
		if (r < 0)
			return fail(why, MUX_FAILED_PROTOCOL, err, DPE_CONNECT,
				    "master on '%s' sent a %s", c->path, perr.msg);
		if (c->eof)
			return fail(why, lost, err, DPE_CONNECT,
				    "master on '%s' closed the connection", c->path);
		r = conn_fill(c, true, deadline);
		if (r == 0)
			return fail(why, MUX_FAILED_TIMEOUT, err, DPE_CONNECT,
				    "master on '%s' did not answer within %d ms", c->path,
				    c->timeout_ms);
		if (r < 0)
			return fail(why, lost, err, DPE_CONNECT,
				    "connection to the master on '%s' lost: %s", c->path,
				    strerror(errno));
	}
}

static int conn_hello(struct conn *c, enum mux_failure *why, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	mux_put_hello(&sb);
	struct mux_msg msg;
	if (conn_send(c, &sb, MUX_FAILED_PROTOCOL, why, err) < 0 ||
	    conn_recv(c, &msg, MUX_FAILED_PROTOCOL, why, err) < 0)
		return -1;
	if (msg.type != MUX_MSG_HELLO)
		return fail(why, MUX_FAILED_PROTOCOL, err, DPE_CONNECT,
			    "'%s' is not an ssh master: it answered with message 0x%08x, not hello",
			    c->path, (unsigned)msg.type);
	if (msg.a != MUX_PROTOCOL_VERSION)
		return fail(why, MUX_FAILED_PROTOCOL, err, DPE_CONNECT,
			    "master on '%s' speaks mux protocol version %u, not %u", c->path,
			    (unsigned)msg.a, MUX_PROTOCOL_VERSION);
	return 0;
}

/* A failure or denial in answer to request id, or an answer of another kind. */
static int unexpected(struct conn *c, const struct mux_msg *msg, uint32_t id, const char *what,
		      enum mux_failure *why, struct dp_error *err)
{
	if ((msg->type == MUX_S_FAILURE || msg->type == MUX_S_PERMISSION_DENIED) && msg->a == id)
		return fail(why, MUX_FAILED_REFUSED, err, DPE_CONNECT,
			    "master on '%s' refused %s: %s", c->path, what,
			    msg->reason[0] ? msg->reason : "no reason given");
	return fail(why, MUX_FAILED_PROTOCOL, err, DPE_CONNECT,
		    "master on '%s' answered %s with message 0x%08x (request %u)", c->path, what,
		    (unsigned)msg->type, (unsigned)msg->a);
}

static int conn_alive(struct conn *c, pid_t *pid, enum mux_failure *why, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	uint32_t id = c->next_id++;
	mux_put_alive_check(&sb, id);
	struct mux_msg msg;
	if (conn_send(c, &sb, MUX_FAILED_PROTOCOL, why, err) < 0 ||
	    conn_recv(c, &msg, MUX_FAILED_PROTOCOL, why, err) < 0)
		return -1;
	if (msg.type != MUX_S_ALIVE || msg.a != id)
		return unexpected(c, &msg, id, "an alive check", why, err);
	*pid = (pid_t)msg.b;
	return 0;
}

/* ---- the master -------------------------------------------------------------- */

struct mux {
	char *path;
	int timeout_ms;
	pid_t pid;
};

/* A checked connection that has said hello. */
static int mux_connect(const char *path, int timeout_ms, struct conn *c, enum mux_failure *why,
		       struct dp_error *err)
{
	if (conn_connect(c, path, timeout_ms, why, err) < 0)
		return -1;
	if (conn_hello(c, why, err) < 0) {
		conn_close(c);
		return -1;
	}
	return 0;
}

int mux_open(const char *path, int timeout_ms, struct mux **out, enum mux_failure *why,
	     struct dp_error *err)
{
	*out = NULL;
	if (why)
		*why = MUX_FAILED_NOT;
	struct conn c;
	pid_t pid;
	if (mux_connect(path, timeout_ms, &c, why, err) < 0)
		return -1;
	int r = conn_alive(&c, &pid, why, err);
	conn_close(&c);
	if (r < 0)
		return -1;
	struct mux *m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->timeout_ms = timeout_ms;
	m->pid = pid;
	*out = m;
	return 0;
}

void mux_close(struct mux *m)
{
	if (!m)
		return;
	free(m->path);
	free(m);
}

const char *mux_path(const struct mux *m)
{
	return m->path;
}

pid_t mux_master_pid(const struct mux *m)
{
	return m->pid;
}

static int alive_at(const char *path, int timeout_ms, struct dp_error *err)
{
	struct conn c;
	pid_t pid;
	if (mux_connect(path, timeout_ms, &c, NULL, err) < 0)
		return -1;
	int r = conn_alive(&c, &pid, NULL, err);
	conn_close(&c);
	return r;
}

int mux_alive(struct mux *m, struct dp_error *err)
{
	return alive_at(m->path, m->timeout_ms, err);
}

/* ---- sessions ---------------------------------------------------------------- */

enum session_state { S_RUNNING, S_EXITED, S_NO_STATUS, S_LOST };

struct mux_session {
	struct conn c;
	char *path;
	uint32_t id;            /* the master's session id */
	int in, out, errfd;     /* our ends of the pipes made, or -1 */
	enum session_state state;
	int status;
	bool tty_failed;
	char *lost;             /* why the session is S_LOST */
	double deadline;        /* of the mux_run given (pump) */
	bool broken;            /* pump failed: mux_exec_wait gives back why */
	struct dp_error why_broken;
};

static void set_nonblock(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void mux_session_free(struct mux_session *s)
{
	if (!s)
		return;
	conn_close(&s->c);
	close_fd(&s->in);
	close_fd(&s->out);
	close_fd(&s->errfd);
	free(s->path);
	free(s->lost);
	free(s);
}

int mux_exec_start(struct mux *m, const struct mux_exec *x, struct mux_session **out,
		   enum mux_failure *why, struct dp_error *err)
{
	*out = NULL;
	if (why)
		*why = MUX_FAILED_NOT;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT; /* before any goto */
	struct mux_session *s = xcalloc(1, sizeof(*s));
	s->in = s->out = s->errfd = -1;
	s->path = xstrdup(m->path);
	s->c.fd = -1;
	int theirs[3] = { x->in_fd, x->out_fd, x->err_fd };
	int made[3] = { -1, -1, -1 }; /* the master's ends of our pipes, closed once passed */
	int *ours[3] = { &s->in, &s->out, &s->errfd };
	int ret = -1;
	for (int i = 0; i < 3; i++) {
		if (theirs[i] >= 0)
			continue;
		int p[2];
		if (cloexec_pipe(p) < 0) {
			fail(why, MUX_FAILED_OTHER, err, DPE_CONNECT, "cannot make a pipe: %s",
			     strerror(errno));
			goto out;
		}
		/* stdin: the master reads p[0]; stdout, stderr: it writes p[1] */
		made[i] = i == 0 ? p[0] : p[1];
		*ours[i] = i == 0 ? p[1] : p[0];
		set_nonblock(*ours[i]);
		theirs[i] = made[i];
	}
	if (mux_connect(s->path, m->timeout_ms, &s->c, why, err) < 0)
		goto out;
	uint32_t id = s->c.next_id++;
	mux_put_new_session(&sb, id, x);
	if (conn_send(&s->c, &sb, MUX_FAILED_OTHER, why, err) < 0)
		goto out;
	for (int i = 0; i < 3; i++)
		if (conn_send_fd(&s->c, theirs[i], why, err) < 0)
			goto out;
	/* From here on the master may start the command. */
	for (int i = 0; i < 3; i++)
		close_fd(&made[i]);
	struct mux_msg msg;
	if (conn_recv(&s->c, &msg, MUX_FAILED_LOST, why, err) < 0)
		goto lost;
	if (msg.type != MUX_S_SESSION_OPENED || msg.a != id) {
		unexpected(&s->c, &msg, id, "a new session", why, err);
		goto lost;
	}
	s->id = msg.b;
	s->state = S_RUNNING;
	*out = s;
	s = NULL;
	ret = 0;
	goto out;
lost:
	/* Only a refusal says that nothing started. */
	if (why && *why != MUX_FAILED_REFUSED)
		*why = MUX_FAILED_LOST;
out:
	for (int i = 0; i < 3; i++)
		close_fd(&made[i]);
	mux_session_free(s);
	return ret;
}

int mux_session_stdin(const struct mux_session *s)
{
	return s->in;
}

int mux_session_stdout(const struct mux_session *s)
{
	return s->out;
}

int mux_session_stderr(const struct mux_session *s)
{
	return s->errfd;
}

void mux_session_close_stdin(struct mux_session *s)
{
	close_fd(&s->in);
}

int mux_session_fd(const struct mux_session *s)
{
	return s->c.fd;
}

bool mux_session_tty_failed(const struct mux_session *s)
{
	return s->tty_failed;
}

/* The control connection closed: the session ended without a status, or the master
 * is gone. Only the master can tell: ask it on a new connection. */
static void session_closed(struct mux_session *s)
{
	struct dp_error e;
	if (s->state != S_RUNNING)
		return;
	if (alive_at(s->path, s->c.timeout_ms > 0 ? s->c.timeout_ms : 5000, &e) == 0) {
		s->state = S_NO_STATUS;
		s->status = MUX_NO_STATUS;
		return;
	}
	s->state = S_LOST;
	s->lost = xasprintf("connection lost: the master on '%s' went away (%s)", s->path, e.msg);
}

static int session_result(struct mux_session *s, struct dp_error *err)
{
	if (s->state == S_LOST)
		return dp_err(err, DPE_CONNECT, "%s", s->lost);
	return s->state == S_RUNNING ? 0 : 1;
}

int mux_session_read(struct mux_session *s, struct dp_error *err)
{
	while (s->state == S_RUNNING) {
		struct mux_msg msg;
		struct dp_error perr;
		int r = conn_next(&s->c, &msg, &perr);
		if (r < 0) {
			s->state = S_LOST;
			s->lost = xasprintf("master on '%s' sent a %s", s->path, perr.msg);
			break;
		}
		if (r > 0) {
			if (msg.type == MUX_S_TTY_ALLOC_FAIL && msg.a == s->id) {
				s->tty_failed = true;
			} else if (msg.type == MUX_S_EXIT_MESSAGE && msg.a == s->id) {
				s->state = S_EXITED;
				s->status = msg.b <= 255 ? (int)msg.b : 255;
			} else {
				s->state = S_LOST;
				s->lost = xasprintf("master on '%s' sent message 0x%08x during a "
						    "session", s->path, (unsigned)msg.type);
			}
			continue;
		}
		if (s->c.eof) {
			session_closed(s);
			break;
		}
		r = conn_fill(&s->c, false, 0);
		if (r == 0)
			break;
		if (r < 0) {
			s->c.eof = true; /* a read error: as the master going away */
			session_closed(s);
		}
	}
	return session_result(s, err);
}

int mux_exec_finish(struct mux_session *s, int timeout_ms, int *status, struct dp_error *err)
{
	double deadline = deadline_in(timeout_ms);
	int r;
	while ((r = mux_session_read(s, err)) == 0) {
		int w = wait_fd(s->c.fd, POLLIN, deadline);
		if (w == 0) {
			dp_err(err, DPE_TIMEOUT, "session through the master on '%s' did not end "
			       "within %d ms", s->path, timeout_ms);
			r = -1;
			break;
		}
		if (w < 0) {
			dp_err(err, DPE_CONNECT, "cannot wait for the master on '%s': %s", s->path,
			       strerror(errno));
			r = -1;
			break;
		}
	}
	if (r > 0)
		*status = s->status;
	mux_session_free(s);
	return r > 0 ? 0 : -1;
}

/* ---- commands with output to callbacks ------------------------------------------ */

/* One round of a session's loop: wait (until the deadline) for output, a message
 * from the master, room in the stdin pipe for w[0..wlen) or, with src >= 0 and
 * nothing to write, data on src; hand output to r's callbacks, write what fits
 * (*wrote) and say whether src is readable (*src_ready). 1 when the session has
 * ended and its output pipes are at EOF, 0 otherwise, -1 with err. */
static int pump_round(struct mux_session *s, const struct mux_run *r, const char *w,
		      size_t wlen, size_t *wrote, int src, bool *src_ready, struct dp_error *err)
{
	if (wrote)
		*wrote = 0;
	if (src_ready)
		*src_ready = false;
	if (r->timeout > 0 && s->deadline <= 0)
		s->deadline = monotonic_seconds() + r->timeout;
	int ended = mux_session_read(s, err);
	if (ended < 0)
		return -1;
	if (ended > 0 && s->out < 0 && s->errfd < 0)
		return 1;
	struct pollfd p[4];
	int n = 0, i_out = -1, i_err = -1, i_in = -1, i_src = -1;
	if (ended == 0)
		p[n++] = (struct pollfd){ .fd = s->c.fd, .events = POLLIN };
	if (s->out >= 0) {
		i_out = n;
		p[n++] = (struct pollfd){ .fd = s->out, .events = POLLIN };
	}
	if (s->errfd >= 0) {
		i_err = n;
		p[n++] = (struct pollfd){ .fd = s->errfd, .events = POLLIN };
	}
	if (s->in >= 0 && wlen) {
		i_in = n;
		p[n++] = (struct pollfd){ .fd = s->in, .events = POLLOUT };
	} else if (src >= 0 && !wlen) {
		i_src = n;
		p[n++] = (struct pollfd){ .fd = src, .events = POLLIN };
	}
	if (r->cancel && *r->cancel)
		return dp_err(err, DPE_FAIL, "interrupted");
	int wait = ms_left(s->deadline);
	if (r->cancel && (wait < 0 || wait > 500))
		wait = 500;     /* to look at cancel again */
	int pr = fd_poll(p, (nfds_t)n, wait); /* src: stdin, a terminal maybe */
	if (pr < 0)
		return errno == EINTR ? 0 : dp_err(err, DPE_CONNECT, "poll: %s", strerror(errno));
	if (pr == 0 && s->deadline > 0 && ms_left(s->deadline) == 0)
		return dp_err(err, DPE_TIMEOUT, "command through the master on '%s' timed out "
			      "after %g s", s->path, r->timeout);
	if (pr == 0)
		return 0;
	int *fds[2] = { &s->out, &s->errfd };
	int idx[2] = { i_out, i_err };
	int (*cb[2])(void *, const char *, size_t) = { r->on_stdout, r->on_stderr };
	char buf[16384];
	for (int k = 0; k < 2; k++) {
		if (idx[k] < 0 || !p[idx[k]].revents)
			continue;
		ssize_t got = read(*fds[k], buf, sizeof(buf));
		if (got > 0) {
			if (cb[k] && cb[k](r->data, buf, (size_t)got) != 0)
				return dp_err(err, DPE_FAIL, "output handler stopped the command");
		} else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
			close_fd(fds[k]);
		}
	}
	if (i_src >= 0 && p[i_src].revents && src_ready)
		*src_ready = true;
	if (i_in >= 0 && p[i_in].revents) {
		ssize_t put = write(s->in, w, wlen);
		if (put > 0 && wrote)
			*wrote = (size_t)put;
		else if (put < 0 && errno != EAGAIN && errno != EINTR)
			close_fd(&s->in); /* the command stopped reading */
	}
	return 0;
}

static int pump(struct mux_session *s, const struct mux_run *r, const char *w, size_t wlen,
		size_t *wrote, int src, bool *src_ready, struct dp_error *err)
{
	if (s->broken) {
		if (err)
			*err = s->why_broken;
		return -1;
	}
	struct dp_error e = { 0 };
	int ret = pump_round(s, r, w, wlen, wrote, src, src_ready, &e);
	if (ret < 0) {
		s->broken = true;
		s->why_broken = e;
	}
	if (ret < 0 && err)
		*err = e;
	return ret;
}

/* All of buf to the command's stdin: 0, 1 when the command stopped reading first,
 * -1 with err. */
static int feed(struct mux_session *s, const struct mux_run *r, const char *p, size_t len,
		struct dp_error *err)
{
	while (len) {
		if (s->in < 0)
			return 1;
		size_t wrote;
		int e = pump(s, r, p, len, &wrote, -1, NULL, err);
		if (e < 0)
			return -1;
		if (e > 0) {
			close_fd(&s->in); /* ended, its output read: it reads no more */
			continue;
		}
		p += wrote;
		len -= wrote;
	}
	return 0;
}

int mux_exec_write(struct mux_session *s, const struct mux_run *r, const void *buf, size_t len,
		   struct dp_error *err)
{
	int e = feed(s, r, buf, len, err);
	if (e > 0)
		return dp_err(err, DPE_FAIL, "the command ended before reading all its input");
	return e;
}

int mux_exec_wait(struct mux_session *s, const struct mux_run *r, int *status,
		  struct dp_error *err)
{
	mux_session_close_stdin(s);
	int e;
	while ((e = pump(s, r, NULL, 0, NULL, -1, NULL, err)) == 0)
		;
	if (e > 0)
		return mux_exec_finish(s, 0, status, err);
	mux_session_free(s);
	return -1;
}

int mux_exec(struct mux *m, const struct mux_exec *x, const struct mux_run *r, int *status,
	     enum mux_failure *why, struct dp_error *err)
{
	struct mux_exec xp = *x;
	xp.in_fd = xp.out_fd = xp.err_fd = -1;
	struct mux_session *s;
	if (mux_exec_start(m, &xp, &s, why, err) < 0)
		return -1;
	int e = 0;
	if (r->in_fd < 0) {
		e = feed(s, r, r->in_buf, r->in_len, err);
	} else {
		char buf[16384];
		while (e == 0 && s->in >= 0) {
			bool ready;
			e = pump(s, r, NULL, 0, NULL, r->in_fd, &ready, err);
			if (e != 0 || !ready)
				continue;
			ssize_t got = read(r->in_fd, buf, sizeof(buf));
			if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
				break;
			if (got > 0)
				e = feed(s, r, buf, (size_t)got, err);
		}
	}
	/* e > 0: the command ended, or stopped reading: no error, its status tells */
	if (e < 0) {
		if (why && err->kind == DPE_CONNECT)
			*why = MUX_FAILED_LOST;
		mux_session_free(s);
		return -1;
	}
	if (mux_exec_wait(s, r, status, err) < 0) {
		if (why && err->kind == DPE_CONNECT)
			*why = MUX_FAILED_LOST;
		return -1;
	}
	return 0;
}

/* ---- stdio forwarding ---------------------------------------------------------- */

struct mux_forward {
	struct conn c;
	char *path;             /* c.path: the forward may outlive its struct mux */
	int fd;
};

/* A stdio forward whose both ends, for the master, are pass (our socketpair's other
 * end, or the caller's socket). */
static int stdio_forward(struct mux *m, const char *host, int port, int pass,
			 struct mux_forward *f, enum mux_failure *why, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	f->path = xstrdup(m->path);
	if (mux_connect(f->path, m->timeout_ms, &f->c, why, err) < 0)
		return -1;
	uint32_t id = f->c.next_id++;
	mux_put_stdio_fwd(&sb, id, host, (uint32_t)port);
	if (conn_send(&f->c, &sb, MUX_FAILED_OTHER, why, err) < 0 ||
	    conn_send_fd(&f->c, pass, why, err) < 0 || conn_send_fd(&f->c, pass, why, err) < 0)
		return -1;
	struct mux_msg msg;
	if (conn_recv(&f->c, &msg, MUX_FAILED_LOST, why, err) < 0)
		return -1;
	if (msg.type != MUX_S_SESSION_OPENED || msg.a != id) {
		_cleanup_free_ char *what = xasprintf("a stdio forward to %s:%d", host, port);
		return unexpected(&f->c, &msg, id, what, why, err);
	}
	return 0;
}

int mux_stdio_forward(struct mux *m, const char *host, int port, struct mux_forward **out,
		      enum mux_failure *why, struct dp_error *err)
{
	*out = NULL;
	if (why)
		*why = MUX_FAILED_NOT;
	if (port <= 0 || port > 65535)
		return fail(why, MUX_FAILED_OTHER, err, DPE_INPUT, "bad port %d", port);
	int sp[2];
	if (cloexec_socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
		return fail(why, MUX_FAILED_OTHER, err, DPE_CONNECT, "cannot make a socket pair: %s",
			    strerror(errno));
	struct mux_forward *f = xcalloc(1, sizeof(*f));
	f->c.fd = -1;
	f->fd = sp[0];
	int r = stdio_forward(m, host, port, sp[1], f, why, err);
	close(sp[1]);
	if (r < 0) {
		mux_forward_close(f);
		return -1;
	}
	*out = f;
	return 0;
}

int mux_stdio_forward_fd(struct mux *m, const char *host, int port, int fd,
			 struct mux_forward **out, enum mux_failure *why, struct dp_error *err)
{
	*out = NULL;
	if (why)
		*why = MUX_FAILED_NOT;
	if (port <= 0 || port > 65535)
		return fail(why, MUX_FAILED_OTHER, err, DPE_INPUT, "bad port %d", port);
	struct mux_forward *f = xcalloc(1, sizeof(*f));
	f->c.fd = -1;
	f->fd = -1;
	if (stdio_forward(m, host, port, fd, f, why, err) < 0) {
		mux_forward_close(f);
		return -1;
	}
	*out = f;
	return 0;
}

int mux_forward_control_fd(const struct mux_forward *f)
{
	return f->c.fd;
}

int mux_forward_ended(struct mux_forward *f)
{
	int r = conn_fill(&f->c, false, 0);
	if (r < 0)
		return 1; /* a broken control connection ends the forward too */
	f->c.in_len = 0; /* nothing more is expected from the master: dropped */
	return f->c.eof ? 1 : 0;
}

int mux_forward_fd(const struct mux_forward *f)
{
	return f->fd;
}

void mux_forward_close(struct mux_forward *f)
{
	if (!f)
		return;
	conn_close(&f->c);
	close_fd(&f->fd);
	free(f->path);
	free(f);
}
