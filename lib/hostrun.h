/* SPDX-License-Identifier: MIT */
/*
 * `dispatch run`'s sessions under --timeout S: S bounds connecting too (a host that
 * does not answer uses up S, not ConnectTimeout times the attempts), and the
 * command gets what is left of it.
 */
#ifndef DISPATCH_HOSTRUN_H
#define DISPATCH_HOSTRUN_H

#include "base/error.h"
#include "transport/ssh.h"

/* Opens host's session with sc, bounded by timeout (0: none) through *bounded (kept
 * for hostrun_time_left): 0, or -1 and err (DPE_TIMEOUT when timeout ran out). */
int hostrun_open(const struct ssh_ctx *sc, struct ssh_ctx *bounded, const char *host,
		 double timeout, struct ssh_session **s, struct dp_error *err);
/* What the timeout leaves for the command once connected; 0 without one. */
double hostrun_time_left(const struct ssh_ctx *bounded);
/* The command ran out of what the timeout left it: err says so with the whole one. */
void hostrun_timed_out(struct dp_error *err, const char *host, double timeout);

#endif
