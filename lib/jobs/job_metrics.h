/* SPDX-License-Identifier: MIT */
/*
 * A job's metrics (dispatch-status(1) SWEEPS): a job that prints lines
 *
 *	DISPATCH_METRIC loss=0.231
 *	DISPATCH_METRIC acc=0.91
 *
 * has the last value of each name read on its host (job_metrics.sh: one grep and one
 * awk per job, never the log over the wire) in the exchange that asks where it
 * stands (jobs_query with JOBS_WANT_METRICS), for the jobs whose log path the ledger
 * knows; an array's tasks each from their own log.
 */
#ifndef DISPATCH_JOB_METRICS_H
#define DISPATCH_JOB_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "jobs/job_state.h"
#include "remote/remote.h"
#include "sched/sched.h"

/* At most this many metrics per job (the first names it printed). */
#define JOB_METRICS_MAX 32

/* The script section that reads the metrics of jobs[0..n) with a log path (an
 * array's: its tasks' logs, the path's %a each task's id); nothing without one. */
void job_metrics_script(struct remote_script *rs, const struct sched_job *jobs, size_t n);
/* A reply's metric lines, sorted by job and task for job_metrics_take (a query of a
 * sweep of 2,000 tasks has 2,000 rows and as many lines as their metrics). */
struct job_metrics_entry {
	const char *key;        /* "ID|TASK" (not terminated: keylen) */
	size_t keylen, order;   /* order: the line's place in the reply */
	const char *metric;     /* "NAME=VALUE" */
};
struct job_metrics {
	struct job_metrics_entry *e;
	size_t n;
};
/* The index of rr's metric lines (pointing into rr: keep it while m is used). */
void job_metrics_index(const struct remote_reply *rr, struct job_metrics *m);
void job_metrics_release(struct job_metrics *m);

/* The metrics of js, the row of j (itself, or one of its array's tasks), from m:
 * names of letters, digits and "_.:/-" (others skipped), values as printed, in the
 * order printed. */
void job_metrics_take(const struct job_metrics *m, const struct sched_job *j,
		      struct job_state *js);

/* The value of metric name of js; NULL when it printed none. */
const char *job_state_metric(const struct job_state *js, const char *name);

#endif
