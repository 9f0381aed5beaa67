/* SPDX-License-Identifier: MIT */
/*
 * The queue of one host (`dispatch queue`), through its backend: one connection and
 * one command (a SLURM host: slurm_queue.h's squeue --json or text, with a fresh
 * end-of-record mark; a plain host: plainjob.h's listing of its GPU lock directory),
 * the answer parsed and filtered, then, for a SLURM host's pending jobs, why they wait
 * with the numbers (slurm_pending.h: one more command over the same connection for
 * all of them). Nothing is printed: what failed is in the answer.
 */
#ifndef DISPATCH_QUEUE_H
#define DISPATCH_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "inventory/inventory.h"
#include "sched/slurm/slurm_pending.h"
#include "sched/slurm/slurm_queue.h"
#include "transport/ssh.h"

struct queue_host {
	const char *host;               /* borrowed */
	struct slurm_queue q;
	bool ok;                        /* its queue came */
	bool ran;                       /* the command ran: a failure is its answer's */
	char *error;                    /* why not ok */
	struct strbuf errout;           /* the command's stderr: the host's own words */
	struct slurm_pending *pending;  /* why the pending jobs wait, with the numbers */
	size_t npending;
	char *pending_error;            /* why there is no such detail (NULL: none) */
};

/* Asks host (an inventory name) for its queue over a connection of its own. 0 (a->ok),
 * or -1 and err: the connection or the command failed (!a->ran: DPE_CONNECT, ...), or
 * its answer holds no queue or squeue failed (a->ran: DPE_FAIL, err->msg the cause). */
int queue_ask(const struct ssh_ctx *sc, const struct inventory *inv, const char *host,
	      const struct slurm_queue_filter *f, enum slurm_queue_format fmt,
	      struct queue_host *a, struct dp_error *err);
void queue_host_release(struct queue_host *a);

#endif
