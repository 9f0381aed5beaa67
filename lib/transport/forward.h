/* SPDX-License-Identifier: MIT */
/*
 * Local port forwarding (ssh -L): connections to a local listening socket are each
 * carried over a direct-tcpip channel of one SSH session to a host:port as seen from
 * the server. One thread, one poll loop, a non-blocking session; memory bounded by
 * max_conns (further clients wait in the listen backlog).
 */
#ifndef DISPATCH_FORWARD_H
#define DISPATCH_FORWARD_H

#include <signal.h>
#include <stddef.h>

#include "base/error.h"

struct ssh_session;

/* A listening TCP socket on 127.0.0.1:port (0: any free port), non-blocking; *bound
 * gets the port. A port in use is DPE_FAIL with a message that says so. */
int forward_listen(int port, int *fd, int *bound, struct dp_error *err);

struct forward {
	int listen_fd;
	const char *remote_host;        /* as the server resolves it, e.g. "localhost" */
	int remote_port;
	size_t max_conns;               /* clients served at once; 0: 256 */
	void (*log)(void *data, const char *msg);      /* each client and each failure */
	void *log_data;
	volatile sig_atomic_t *stop;    /* set (by a signal handler) to end cleanly */
	int wake_fd;                    /* -1, or readable once stop is set (self-pipe) */
};

/* Serve until *f->stop is set (returns 0) or the SSH connection is lost (-1,
 * DPE_CONNECT). A channel the server cannot open (nothing listens there) closes that
 * client only, and is logged. */
int forward_run(struct ssh_session *s, const struct forward *f, struct dp_error *err);

#endif
