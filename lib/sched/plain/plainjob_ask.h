/* SPDX-License-Identifier: MIT */
/*
 * One plain-host job's state, asked over its host's connection: the status command
 * of lib/sched/plain/plainjob.h for that one job, its answer parsed.
 */
#ifndef DISPATCH_PLAINJOB_ASK_H
#define DISPATCH_PLAINJOB_ASK_H

#include "base/error.h"
#include "base/strbuf.h"
#include "sched/plain/plainjob.h"

struct ssh_session;

/* Asks for job's state: *ps and *n as plainjob_parse_status gives them (n 0: no
 * answer; the caller frees with plainjob_status_free), the remote stderr into errout
 * and the exit status into *status. Returns 0, or -1 and err (the exchange failed). */
int plainjob_ask_one(struct ssh_session *ss, const struct plainjob_ref *job,
		     struct plainjob_status **ps, size_t *n, struct strbuf *errout, int *status,
		     struct dp_error *err);

#endif
