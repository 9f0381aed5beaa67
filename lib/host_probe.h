/* SPDX-License-Identifier: MIT */
/*
 * `dispatch hosts --check`: every host probed at once (a bounded fanout of
 * threads), each as a script would use it: connect, key exchange, host key, log in
 * (BatchMode, one attempt, no prompt), then run `true` and wait for its exit
 * status. Each host gets a status, its latency and the reason of a failure.
 */
#ifndef DISPATCH_HOST_PROBE_H
#define DISPATCH_HOST_PROBE_H

#include <stddef.h>

#include "transport/ssh.h"

enum probe_status {
	PROBE_OK,
	PROBE_UNREACHABLE,
	PROBE_AUTH,
	PROBE_HOSTKEY,
	PROBE_TIMEOUT,
	PROBE_ERROR,
};

/* "ok", "unreachable", "auth", "hostkey", "timeout", "error". */
const char *probe_status_name(enum probe_status s);

struct host_probe {
	const char *name;
	const char *ssh;                /* the inventory's ssh target, else the name */
	enum probe_status status;
	double connect_s, exec_s;       /* TCP through login; `true` round trip (ok only) */
	char *detail;                   /* user@host:port when ok, else what failed */
	const char *via;                /* "master" or "direct" once connected, else NULL */
};

/* Probes the n hosts of probes (name set), fanout at a time, each within timeout
 * seconds; sc as the user's, made to ask nothing and try once. */
void host_probe_all(const struct ssh_ctx *sc, int timeout, struct host_probe *probes, size_t n,
		    long fanout);
void host_probe_release(struct host_probe *probes, size_t n);

#endif
