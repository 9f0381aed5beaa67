/* SPDX-License-Identifier: MIT */
/*
 * The queue of one host (`dispatch queue`), through its backend: one connection and
 * one command (a SLURM host: slurm_queue.h's squeue --json or text, with a fresh
 * end-of-record mark; a plain host: plainjob.h's listing of its GPU lock directory),
 * the answer parsed and filtered, then, for a SLURM host's pending jobs, why they wait
 * with the numbers (slurm_pending.h: one more command over the same connection for
 * all of them). The jobs come as struct job_state rows (lib/jobs/job_state.h), with
 * the queue's fields (partition, name, user, node_count) and a pending job's detail.
 * Nothing is printed: what failed is in the answer.
 */
#ifndef DISPATCH_QUEUE_H
#define DISPATCH_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "inventory/inventory.h"
#include "jobs/job_state.h"
#include "transport/ssh.h"

/* Which jobs to list (queue's options). */
struct queue_filter {
	const char *user;       /* only these users' (comma-separated); NULL: everyone */
	bool me;                /* the login's own user */
	const char *partitions; /* only these partitions' (comma-separated); NULL: all */
	const char *states;     /* only jobs in these states (comma-separated, long or short
				   names, "all"); NULL: the jobs still queued or running */
};

struct queue_host {
	const char *host;               /* borrowed */
	char *version;                  /* the scheduler's ("22.05.8"); NULL when not said */
	char *format;                   /* "json" or "text": what the host answered with */
	struct job_state *rows;         /* its jobs (pending ones with pending_text and
					   pending where asked) */
	size_t n;
	bool ok;                        /* its queue came */
	bool ran;                       /* the command ran: a failure is its answer's */
	char *error;                    /* why not ok */
	struct strbuf errout;           /* the command's stderr: the host's own words */
	char *pending_error;            /* why there is no detail on why pending jobs wait
					   (NULL: none) */
	char *warning;                  /* what else to tell (a release newer than any
					   dispatch knows); NULL: nothing */
};

/* Asks host (an inventory name) for its queue over a connection of its own; format:
 * the answer's format to ask for ("json", "text"; NULL: by the scheduler's release).
 * 0 (a->ok), or -1 and err: the connection or the command failed (!a->ran:
 * DPE_CONNECT, ...), or its answer holds no queue or squeue failed (a->ran: DPE_FAIL,
 * err->msg the cause). */
int queue_ask(const struct ssh_ctx *sc, const struct inventory *inv, const char *host,
	      const struct queue_filter *f, const char *format, struct queue_host *a,
	      struct dp_error *err);
void queue_host_release(struct queue_host *a);

/* Whether word names a job state -t takes (squeue's names, long or short). */
bool queue_state_known(const char *word);

#endif
