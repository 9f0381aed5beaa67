/* SPDX-License-Identifier: MIT */
/*
 * `dispatch top`'s session as the backends see it (sched_ops.top, lib/sched/sched.h):
 * what was asked, the samples (lib/gpu/gpu_top.h) each backend's sampling script
 * feeds, and the exchange that feeds them line by line, calling show() at each tick.
 * The loop around it is the backend's: a SLURM job's overlap steps run once for the
 * session (lib/sched/slurm/slurm_top.h), a plain host's script once per interval
 * (lib/sched/plain/plain_top.h). Callers start it through lib/jobs/top.h.
 */
#ifndef DISPATCH_SCHED_TOP_H
#define DISPATCH_SCHED_TOP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "gpu/gpu_top.h"
#include "sched/plain/plain_top.h"
#include "sched/slurm/slurm_procs.h"

struct ssh_session;

struct top_session {
	/* asked */
	const char *nodes;      /* only these nodes (hostlist), or NULL */
	int interval;           /* seconds between samples */
	long count;             /* stop after count samples; 0 never */
	bool procs, health;
	void (*show)(struct top_session *s, void *data); /* at each tick */
	void *data;

	/* sampled */
	struct gpu_top top;
	long samples;           /* shown so far */
	bool one_host;          /* a plain host's job: one node, the host itself */
	bool stopped;           /* count reached */
	bool usage;             /* the error is the caller's: --node names no node of it */
	char *end_note;         /* how the sampling ended without an error, else NULL */

	/* inside */
	struct plain_top *plain;        /* a plain host's job: its processes */
	struct slurm_procs *nodeprocs;  /* a SLURM job with procs: each node's */
	struct strbuf partial, err;
};

/* Runs cmd over ss, its output lines fed to s (a tick shows a sample; s->stopped
 * once s->count are shown): 0, or -1 and err (not when stopped on purpose). */
int sched_top_exec(struct ssh_session *ss, struct top_session *s, const char *cmd,
		   struct dp_error *err);
/* The first line of what the sampling printed on stderr, or "" (for messages). */
const char *sched_top_stderr_line(struct top_session *s);
/* Sleeps sec seconds, whatever signal interrupts. */
void sched_top_sleep(double sec);

#endif
