/* SPDX-License-Identifier: MIT */
/*
 * `dispatch top`: a running job's GPUs (and, with procs, its processes), sampled
 * every interval over one connection until a count of samples, the job's end or
 * the connection's. The backend runs the sampling script and feeds its lines to
 * the samples (lib/gpu/gpu_top.h): a SLURM job's overlap steps, one long exchange
 * (lib/sched/slurm/slurm_top.h); a plain host's refresh script, once per interval
 * (lib/sched/plain/plain_top.h). At each tick the caller's show() gets the session
 * and prints a sample; the accessors below read it without knowing the backend.
 */
#ifndef DISPATCH_JOBS_TOP_H
#define DISPATCH_JOBS_TOP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "sched/sched.h"
#include "sched/sched_top.h"

/* Samples job (its backend: sched) over ss, calling s->show at each tick, until
 * s->count samples (s->stopped) or the job's end (s->end_note says so, 0 returned).
 * Returns 0, or -1 and err (the caller's own mistake when s->usage).
 * top_session_release frees what it kept. */
int top_run(struct ssh_session *ss, const struct sched_ops *sched, const struct sched_job *job,
	    struct top_session *s, struct dp_error *err);
void top_session_release(struct top_session *s);

/* A node's flag in a sample ("stale", "no-gpus-visible", ...), or NULL; nrows: the
 * rows gpu_top_node_rows gave for it. */
const char *top_node_flag(const struct gpu_node *n, size_t nrows, double now, double interval);

/* Node i's processes, when reported (a plain host's job always; a SLURM job's with
 * procs once its node listed them), else NULL. */
const struct plain_top *top_node_procs(const struct top_session *s, size_t i);
/* Whether the session reports processes at all. */
bool top_has_procs(const struct top_session *s);
/* How node i's processes were found ("listpids", "ps"), or NULL when not said. */
const char *top_node_procs_how(const struct top_session *s, size_t i);
/* The job's processes on the GPU uuid (*out allocated), and the process of pid. */
size_t top_gpu_procs(const struct plain_top *p, const char *uuid, const struct top_app ***out);
const struct top_proc *top_proc_of(const struct plain_top *p, long pid);
/* Whether the job's process pid holds one of the GPUs shown (rows). */
bool top_on_shown_gpu(const struct plain_top *p, long pid, const struct gpu_row **rows, size_t nr);

#endif
