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
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include "transport/ssh_internal.h"
#include "base/strbuf.h"

static void set_flags(int fd)
{
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
#ifdef SO_NOSIGPIPE
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
}

/* 0 connected, -1 with errno (ETIMEDOUT when the deadline passed). */
static int connect_one(const struct addrinfo *ai, double deadline, int *out)
{
	int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
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
#ifdef SOCK_CLOEXEC
	int type = SOCK_STREAM | SOCK_CLOEXEC;
#else
	int type = SOCK_STREAM;
#endif
	if (socketpair(AF_UNIX, type, 0, sp) < 0)
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
	fcntl(sp[0], F_SETFD, FD_CLOEXEC); /* where SOCK_CLOEXEC is missing */
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
