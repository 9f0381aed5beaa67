/* SPDX-License-Identifier: MIT */
/*
 * The operations the commands need on jobs, for every backend (lib/sched/sched.h),
 * each one remote exchange per host whatever mix of jobs it holds:
 *
 *	jobs_query    where jobs stand (status, jobs; wait and queue build on it), and
 *	              when asked, why pending jobs wait, how failed jobs ended and
 *	              their log's last lines (jobs_detail, over the same session and
 *	              only when a job needs it: one more exchange for all of that,
 *	              whatever the number of jobs, and one for all the log tails)
 *	jobs_cancel   cancel them
 *	jobs_steps    each job's steps, from the accounting (status --steps)
 *
 * lib never prints: what a command would say on the way (a job not found, a tool's
 * own stderr, a warning) comes back as notes, in order, for the command to print.
 */
#ifndef DISPATCH_JOBS_H
#define DISPATCH_JOBS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "jobs/job_state.h"
#include "jobs/job_step.h"
#include "sched/sched.h"

struct ssh_session;
struct ssh_ctx;
struct inventory;

/* One job asked about: what the backend needs, and its backend (sched_for). */
struct jobs_target {
	struct sched_job job;
	const struct sched_ops *sched;
};

/* A host and how to reach it: ss is opened (ssh_session_open over sc, to the host's
 * inventory destination) when the first exchange needs it, and left open for the
 * caller to close. */
struct jobs_host {
	const char *host;
	struct ssh_session *ss;
	const struct ssh_ctx *sc;
	const struct inventory *inv;    /* NULL: the host is an ssh alias */
};

enum jobs_note_kind {
	JOBS_NOTE_ERROR,        /* an error (the caller's exit status reflects it) */
	JOBS_NOTE_WARNING,
	JOBS_NOTE_INFO,         /* for -v */
	JOBS_NOTE_REMOTE,       /* a host's own stderr, as it came */
};
struct jobs_note {
	enum jobs_note_kind kind;
	char *text;
};

/* A row of an answer, or a job no row answered (not_found set). */
struct jobs_row {
	size_t target;          /* index into the targets */
	struct job_state st;
	char *not_found;        /* why no row answered the job; NULL for a row */
};

/* Why a host gave no answer. */
enum jobs_failure {
	JOBS_ANSWERED,
	JOBS_NO_CONNECTION,     /* err: the session or the command failed */
	JOBS_EXIT_STATUS,       /* the script exited with exit_status (stderr in remote_err) */
	JOBS_TOOL_FAILED,       /* tool (squeue) could not answer: tool_exit (remote_err) */
};

struct jobs_result {
	struct jobs_row *rows;
	size_t n;
	struct jobs_note *notes;
	size_t nnotes;
	enum jobs_failure failure;
	struct dp_error err;
	int exit_status;
	const char *tool;
	int tool_exit;
	char *remote_err;
};

enum {
	JOBS_WANT_PENDING = 1,  /* pending rows: why they wait, with the numbers */
	JOBS_WANT_END = 2,      /* rows that ended without COMPLETED: how */
	JOBS_WANT_TAIL = 4,     /* and their log's last lines */
	JOBS_WANT_ATTEMPTS = 8, /* jobs_detail: the runs' ended attempts (jobs_query always
				   reads them, in its one exchange) */
	JOBS_WANT_METRICS = 16, /* jobs_query: the metrics of the jobs with a log path, in
				   its one exchange (lib/jobs/job_metrics.h) */
	JOBS_WANT_USAGE = 32,   /* jobs_query: what the jobs with a stage dir did, from
				   their samplers' files (lib/jobs/job_usage.h) */
	JOBS_WANT_STAGES = 64,  /* jobs_query: where the stages of the jobs with a stage
				   dir stand (--stage; a failed job's are read with
				   JOBS_WANT_END too, for why it failed) */
};

/* Asks host about targets[0..n) (all of that host), appending to res: rows in the
 * targets' order, each target's rows then its not-found entry. 0 when the host
 * answered, -1 when not (res->failure says why; no rows were added). */
int jobs_query(struct jobs_host *h, const struct jobs_target *targets, size_t n, unsigned want,
	       struct jobs_result *res);
void jobs_result_release(struct jobs_result *res);

/* jobs_query on several hosts at once: one thread per host (at most width at a time,
 * 0: all), so that a status of jobs on three clusters costs the slowest cluster's
 * exchange, not the sum. items[i] asks items[i].host about its targets into
 * items[i].res, r what jobs_query returned. A prompt (a passphrase, a second factor)
 * is asked one at a time, as lib/transport serializes them. */
struct jobs_query_item {
	struct jobs_host host;
	const struct jobs_target *targets;
	size_t n;
	struct jobs_result res;
	int r;
};
void jobs_query_hosts(struct jobs_query_item *items, size_t n, unsigned want, size_t width);

/* Moves src's rows and notes to the end of dst (src is left empty of them). */
void jobs_result_take(struct jobs_result *dst, struct jobs_result *src);

/* The detail want asks for, over h->ss (nothing when it is not open), of rows[0..n)
 * (jobs[i]: the job rows[i] answers, its task's files where it is an array's task):
 * how those that ended without COMPLETED ended, why the pending ones wait, and the
 * failed ones' log tails; what jobs_query does after its answer, and wait after its
 * polls: one exchange for all but the tails (each backend's part of the script
 * marked MARK_PART), one for all the tails. Notes go to res. */
void jobs_detail(struct jobs_host *h, struct job_state *const *rows,
		 const struct sched_job *const *jobs, size_t n, unsigned want,
		 struct jobs_result *res);

/* The state a job is in, from its rows (an array's tasks): an active row's (RUNNING
 * first: an array runs while any task does), else the worst end (any but
 * COMPLETED); NULL when there are none. */
const char *jobs_summary_state(const struct job_state *const *rows, size_t n);

/* Where j writes its output (which), asking over ss where its backend must: 0 with
 * *path, or -1 with err (logs; jobs_detail asks for all its jobs at once). */
int jobs_log_path(struct ssh_session *ss, const struct sched_ops *s, const struct sched_job *j,
		  enum job_log which, char **path, struct dp_error *err);

/* One job's steps (jobs_steps). */
struct jobs_steps {
	struct job_step *steps;
	size_t n;
};

/* The steps of targets[0..n) on host (each target's backend has steps_script) in one
 * exchange: steps[i] for targets[i] (n 0 when the accounting has none of it). 0, or
 * -1 when the host gave no answer (res->failure: JOBS_NO_CONNECTION with res->err, or
 * JOBS_TOOL_FAILED with res->tool, res->tool_exit, res->remote_err). */
int jobs_steps(struct jobs_host *h, const struct jobs_target *targets, size_t n,
	       struct jobs_steps *steps, struct jobs_result *res);

/* Cancels targets[0..n) on host in one exchange. outcome[i] gets "cancelled",
 * "signalled", "ended", "gone" or "failed" (left alone where already set); errors
 * come back as notes, in order. Returns 0 or the exit status (DPE_*) of the worst
 * failure. */
int jobs_cancel(struct jobs_host *h, const struct jobs_target *targets, size_t n,
		const char **outcome, struct jobs_result *res);

#endif
