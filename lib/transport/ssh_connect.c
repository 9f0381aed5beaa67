/* SPDX-License-Identifier: MIT */
/*
 * The byte stream under an SSH session: a TCP connection (IPv4 or IPv6, bounded by
 * ConnectTimeout through a non-blocking connect), or the user's ProxyCommand with its
 * stdin and stdout on one end of a socketpair.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "transport/ssh_internal.h"
#include "base/strbuf.h"
#include "base/cloexec.h"

static void set_flags(int fd)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
#ifdef SO_NOSIGPIPE
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
}

/* 0 connected, -1 with errno (ETIMEDOUT when the deadline passed). */
static int connect_one(const struct addrinfo *ai, double deadline, int *out)
{
	int fd = cloexec_socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
	if (fd < 0)
		return -1;
	set_flags(fd);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		for (;;) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			double left = deadline - monotonic_seconds();
			if (left <= 0) {
				close(fd);
				errno = ETIMEDOUT;
				return -1;
			}
			int r = poll(&p, 1, (int)(left * 1000) + 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0)
				continue;
			int soerr = 0;
			socklen_t len = sizeof(soerr);
			if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
				soerr = errno;
			if (soerr) {
				close(fd);
				errno = soerr;
				return -1;
			}
			break;
		}
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	*out = fd;
	return 0;
}

static int connect_tcp(const struct ssh_host_config *cfg, int timeout_s, int *fd, bool *retry,
		       enum ssh_failure *why, struct dp_error *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	char port[16];

	snprintf(port, sizeof(port), "%d", cfg->port);
	int r = getaddrinfo(cfg->hostname, port, &hints, &res);
	if (r) {
		*retry = r == EAI_AGAIN;
		return dp_err(err, DPE_CONNECT, "cannot resolve '%s': %s", cfg->hostname,
			      gai_strerror(r));
	}
	double deadline = monotonic_seconds() + timeout_s;
	int e = ECONNREFUSED;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		if (connect_one(ai, deadline, fd) == 0) {
			freeaddrinfo(res);
			return 0;
		}
		e = errno;
		if (e == ETIMEDOUT)
			break;
	}
	freeaddrinfo(res);
	*retry = e == ECONNREFUSED || e == ECONNRESET || e == ETIMEDOUT || e == EHOSTUNREACH ||
		 e == ENETUNREACH || e == ECONNABORTED;
	*why = e == ETIMEDOUT ? SSH_FAILED_TIMEOUT : SSH_FAILED_CONNECT;
	if (e == ETIMEDOUT)
		return dp_err(err, DPE_CONNECT, "cannot connect to '%s' (%s port %d): timed out after %d s",
			      cfg->alias, cfg->hostname, cfg->port, timeout_s);
	return dp_err(err, DPE_CONNECT, "cannot connect to '%s' (%s port %d): %s", cfg->alias,
		      cfg->hostname, cfg->port, strerror(e));
}

static int spawn_proxy(const struct ssh_host_config *cfg, int *fd, pid_t *pid, struct dp_error *err)
{
	int sp[2];
	_cleanup_free_ char *expanded = ssh_host_config_proxy_command(cfg);
	_cleanup_free_ char *script = xasprintf("exec %s", expanded);

	/* Close-on-exec, so that what other threads start (their own ProxyCommands) does
	 * not hold this pair open; dup2 onto the child's 0 and 1 drops the flag there. */
	if (cloexec_socketpair(AF_UNIX, SOCK_STREAM, 0, sp) < 0)
		return dp_err(err, DPE_CONNECT, "cannot start ProxyCommand for '%s': %s",
			      cfg->alias, strerror(errno));
	pid_t child = fork();
	if (child < 0) {
		int e = errno;
		close(sp[0]);
		close(sp[1]);
		return dp_err(err, DPE_CONNECT, "cannot start ProxyCommand for '%s': %s",
			      cfg->alias, strerror(e));
	}
	if (child == 0) {
		/* Only async-signal-safe calls between fork and exec. */
		if (dup2(sp[1], 0) < 0 || dup2(sp[1], 1) < 0)
			_exit(127);
		if (sp[1] > 1)
			close(sp[1]);
		close(sp[0]);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(sp[1]);
	set_flags(sp[0]);
	*fd = sp[0];
	*pid = child;
	return 0;
}

int ssh_connect_fd(const struct ssh_host_config *cfg, int timeout_s, int *fd, pid_t *pid,
		   bool *retry, enum ssh_failure *why, struct dp_error *err)
{
	*fd = -1;
	*pid = 0;
	*retry = false;
	*why = SSH_FAILED_CONNECT;
	if (cfg->proxy_command)
		return spawn_proxy(cfg, fd, pid, err);
	return connect_tcp(cfg, timeout_s, fd, retry, why, err);
}

/* ---- the server's KEXINIT, read on a connection of its own ---- */

/* Wait until fd is ready for events, or the deadline passes (-1, errno ETIMEDOUT). */
static int wait_fd(int fd, short events, double deadline)
{
	for (;;) {
		double left = deadline - monotonic_seconds();
		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		struct pollfd p = { .fd = fd, .events = events };
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* Read exactly n bytes through io (0), or fail (-1). */
static int read_full(const struct ssh_probe_io *io, void *buf, size_t n, double deadline)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = io->read(io->data, (char *)buf + got, n - got, deadline);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

#define PROBE_MAX_PACKET 35000          /* RFC 4253 6.1 */

int ssh_kexinit_exchange(const struct ssh_probe_io *io, double deadline,
			 char *lists[SSH_KEXINIT_NLISTS], const char *what, struct dp_error *err)
{
	static const char banner[] = "SSH-2.0-dispatch_kexinit_probe\r\n";
	for (int i = 0; i < SSH_KEXINIT_NLISTS; i++)
		lists[i] = NULL;
	if (io->write(io->data, banner, sizeof(banner) - 1, deadline) < 0)
		return dp_err(err, DPE_CONNECT, "%s: cannot send a banner", what);
	/* The server's banner: lines before it are allowed (RFC 4253 4.2). */
	char line[256];
	for (int lines = 0;; lines++) {
		size_t n = 0;
		char c = 0;
		while (n < sizeof(line) - 1) {
			if (read_full(io, &c, 1, deadline) < 0)
				return dp_err(err, DPE_CONNECT, "%s: no server banner", what);
			if (c == '\n')
				break;
			line[n++] = c;
		}
		line[n] = '\0';
		if (c != '\n' || lines > 50)
			return dp_err(err, DPE_CONNECT, "%s: no server banner", what);
		if (startswith(line, "SSH-"))
			break;
	}
	unsigned char hdr[5];
	if (read_full(io, hdr, sizeof(hdr), deadline) < 0)
		return dp_err(err, DPE_CONNECT, "%s: no key exchange packet", what);
	size_t len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 | (size_t)hdr[2] << 8 | hdr[3];
	size_t pad = hdr[4];
	if (len < 1 + pad + 1 || len > PROBE_MAX_PACKET)
		return dp_err(err, DPE_CONNECT, "%s: a malformed key exchange packet", what);
	_cleanup_free_ unsigned char *body = xmalloc(len - 1);
	if (read_full(io, body, len - 1, deadline) < 0)
		return dp_err(err, DPE_CONNECT, "%s: a short key exchange packet", what);
	if (ssh_kexinit_parse(body, len - 1 - pad, lists) < 0)
		return dp_err(err, DPE_CONNECT, "%s: the first packet is not a key exchange init", what);
	return 0;
}

/* The probe's I/O on a non-blocking descriptor. */
static ssize_t fd_read(void *data, void *buf, size_t n, double deadline)
{
	int fd = *(int *)data;
	for (;;) {
		ssize_t r = read(fd, buf, n);
		if (r >= 0)
			return r;
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if (wait_fd(fd, POLLIN, deadline) < 0)
			return -1;
	}
}

static int fd_write(void *data, const void *buf, size_t n, double deadline)
{
	int fd = *(int *)data;
	size_t off = 0;
	while (off < n) {
		ssize_t r = write(fd, (const char *)buf + off, n - off);
		if (r > 0)
			off += (size_t)r;
		else if (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		else if (wait_fd(fd, POLLOUT, deadline) < 0)
			return -1;
	}
	return 0;
}

int ssh_kexinit_probe(const struct ssh_host_config *cfg, int timeout_s,
		      char *lists[SSH_KEXINIT_NLISTS], struct dp_error *err)
{
	int fd;
	pid_t pid;
	bool retry;
	enum ssh_failure why;
	for (int i = 0; i < SSH_KEXINIT_NLISTS; i++)
		lists[i] = NULL;
	if (ssh_connect_fd(cfg, timeout_s, &fd, &pid, &retry, &why, err) < 0)
		return -1;
	_cleanup_free_ char *what = xasprintf("reading the key exchange offer of '%s'", cfg->alias);
	struct ssh_probe_io io = { .read = fd_read, .write = fd_write, .data = &fd };
	int r = ssh_kexinit_exchange(&io, monotonic_seconds() + timeout_s, lists, what, err);
	close(fd);
	if (pid > 0) {
		kill(pid, SIGHUP);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	return r;
}
