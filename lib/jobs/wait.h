/* SPDX-License-Identifier: MIT */
/*
 * The poller behind `dispatch wait` (and submit --wait/--follow): polls until every
 * job has ended (or, until_running, runs), cheaply for the controller and without
 * giving up on a failed poll. What each answer means for a job is lib/jobs/jobwait.h;
 * this is the loop around it.
 *
 * Each poll asks each host once: one squeue for all of its jobs still waited on
 * (slurm_squeue_poll_command: only a digest of the states when none changed since the
 * last poll), then sacct, over the same connection, only for the jobs squeue no longer
 * has active; plain-host jobs from their pid and exit_status files
 * (lib/sched/plain/plainjob.h) in the same command. The interval starts at 2 s and
 * grows by half each poll up to the interval asked (wait_schedule). A poll that fails
 * (the connection, squeue's "slurm_load_jobs error", sacct) is retried at the next
 * one, over a fresh connection when the connection failed: only the timeout ends the
 * wait. Nothing is printed: what happens is told through struct wait_report.
 */
#ifndef DISPATCH_WAIT_H
#define DISPATCH_WAIT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "inventory/inventory.h"
#include "jobs/jobs.h"
#include "jobs/jobwait.h"
#include "transport/ssh.h"

#define WAIT_FIRST_INTERVAL 2.0 /* seconds before the second poll */
#define WAIT_BACKOFF 1.5        /* each pause is the last one times this, up to the interval */
#define WAIT_EXEC_TIMEOUT 120.0 /* the longest one poll's command may take */

/* ---- the schedule: when to poll, how long a command may take ---- */

struct wait_schedule {
	double start;           /* the clock when the wait began */
	double interval;        /* the longest pause */
	double timeout;         /* > 0: give up this long after start */
	double pause;           /* the next pause */
};

void wait_schedule_init(struct wait_schedule *s, double start, double interval, double timeout);
/* How long a poll's command may take at now: what is left of the timeout, between 1 s
 * and WAIT_EXEC_TIMEOUT. */
double wait_exec_timeout(const struct wait_schedule *s, double now);
/* Whether the timeout has run out at now (before a pause: 10 ms early, so that no
 * pause is slept only to time out after it). */
bool wait_timed_out(const struct wait_schedule *s, double now, bool before_pause);
/* The pause to sleep after a poll at now (never past the timeout), and the schedule
 * moved on to the next one. */
double wait_next_pause(struct wait_schedule *s, double now);

/* ---- jobs and hosts ---- */

struct wait_job {
	const char *id, *host;  /* borrowed */
	bool plain;
	const char *stage_dir;  /* plain jobs: borrowed */
	long pgid;              /* plain jobs: the ledger's process group */
	const struct sched_job *job; /* the job as its backend takes it, for wait_detail
					(its ledger's log paths); NULL: the fields above */
	struct jobwait w;       /* what the polls made of it */
};

struct wait_host {
	const char *host;       /* borrowed */
	struct ssh_session *ss; /* open between polls; NULL after a failed connection */
	long polls, squeue_calls, sacct_calls, failures, connects;
	long same_polls;        /* polls squeue's digest answered alone */
	char *states;           /* its last digest (slurm_squeue_poll_command) */
	bool outage;            /* its last poll failed */
};

/* What the poller tells as it goes (each may be NULL). */
struct wait_report {
	/* a job's new state (JOBWAIT_CHANGED, with where it runs or why it waits: "" for
	 * none), or that no answer ever named it (JOBWAIT_NOT_FOUND) */
	void (*job)(void *data, const struct wait_job *j, enum jobwait_event ev, const char *detail);
	/* the first failed poll of a host since it last answered, and why */
	void (*failed)(void *data, const char *host, const char *why);
	/* the host answers again after failed polls */
	void (*answers)(void *data, const char *host);
	void *data;
};

/* One command on a host, bounded in time: -1 and err when the connection failed
 * (dropped: the next poll connects again). The default opens h->ss when it is NULL
 * (counting h->connects) and runs the command over it. */
typedef int (*wait_exec_fn)(void *data, struct wait_host *h, const char *command, double timeout,
			    struct strbuf *out, struct strbuf *errout, int *status,
			    struct dp_error *err);

struct wait {
	/* given */
	struct wait_job *jobs;
	size_t n;
	struct wait_host *hosts; /* wait_init: one per host name */
	size_t nh;
	const struct ssh_ctx *sc;
	const struct inventory *inv; /* where ssh goes for a host (may be NULL) */
	double interval, timeout; /* the longest pause; > 0: give up after */
	struct wait_report report;
	/* for tests: the clock, the pause and the commands (NULL: monotonic_seconds, a
	 * sleep, ssh over sc) */
	double (*clock)(void);
	void (*sleep)(double seconds);
	wait_exec_fn exec;
	void *exec_data;
	/* what it came to */
	long polls;
	double waited;
	bool timed_out;
};

/* The hosts (a strv, borrowed: the order of the report) and n jobs (their id, host,
 * plain, stage_dir and pgid filled; jobwait_init done by the caller). */
void wait_init(struct wait *w, char *const *hosts, struct wait_job *jobs, size_t n);
/* Polls until every job is done or the timeout runs out; what wait ends with
 * (jobwait_result). */
int wait_run(struct wait *w);
/* One poll of one host (what wait_run does per host and round). */
void wait_poll_host(struct wait *w, struct wait_host *h, double timeout);
/* Host h's connection, opened again when a poll dropped it; NULL and err when it
 * cannot be. For what comes after the wait (how the jobs ended, their log tails). */
struct ssh_session *wait_session(struct wait *w, struct wait_host *h, struct dp_error *err);
/* The host of that name (NULL when none). */
struct wait_host *wait_host_of(struct wait *w, const char *host);
/* ---- after the wait: the jobs as struct job_state, and their detail ---- */

/* Whether j ended, and not as waited for: the jobs a "why" and the detail are for. */
bool wait_job_failed(const struct wait_job *j);
/* What the polls made of j as a job_state (js: the caller releases it): its times kept
 * as the scheduler wrote them (elapsed_word, limit_word), its state and reason NULL
 * while no answer said them. */
void wait_job_state(const struct wait_job *j, struct job_state *js);
/* st[i] (i < w->n) as wait_job_state, then for the jobs that ended not as waited for,
 * over each host's connection: how they ended, and (want & JOBS_WANT_TAIL) their log
 * tails (a job whose host cannot be reached gets why in its tail). Notes (for -v) go
 * to notes. */
void wait_detail(struct wait *w, struct job_state *st, unsigned want, struct jobs_result *notes);

/* The connections and hosts closed; the jobs stay the caller's. */
void wait_release(struct wait *w);

#endif
