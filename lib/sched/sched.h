/* SPDX-License-Identifier: MIT */
/*
 * The scheduler backends behind one interface: a table of operations per kind of
 * host (as git's transports), filled in by each backend's folder:
 *
 *	lib/sched/slurm/   sched_slurm: squeue, sacct, scancel, ... on a login node
 *	lib/sched/plain/   sched_plain: detached jobs with flock GPU leases on a box
 *
 * Callers (lib/jobs/) pick the table once per job with sched_for and then only call
 * through it; no caller asks which backend it holds. Every operation works on the
 * jobs of one host at once and writes its part of the one remote exchange
 * (lib/remote/remote.h): a script section in, the parsed reply out, rows as struct
 * job_state (lib/jobs/job_state.h). An operation a backend has no use for is NULL
 * (a plain host has no accounting to ask how a job ended); callers skip it.
 *
 * Adding a backend: a folder lib/sched/NAME/ with a `const struct sched_ops
 * sched_NAME`, and its lines in sched_all and sched_for (sched.c).
 */
#ifndef DISPATCH_SCHED_H
#define DISPATCH_SCHED_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "sched/slurm/slurm_queue.h" /* the queue's rows, both backends' (plainjob fills them) */

struct remote_script;
struct remote_reply;
struct job_state;
struct job_step;
struct inv_host;
struct ssh_session;
struct top_session;
struct strbuf;
struct slurm_pending;

/* One job as a caller asks a backend about it. */
struct sched_job {
	const char *id;         /* as the user named it: "123", "123_4", a stage name */
	const char *arg;        /* the operand as given, for messages */
	const char *stage_dir;  /* where dispatch staged it (from the ledger); NULL: unknown */
	long pgid;              /* a plain job's process group (the ledger's); 0: unknown */
	bool in_ledger;         /* dispatch submitted it */
	const char *host;       /* the host it runs on */
	/* what the ledger recorded of its output (NULL: not known) */
	const char *log_path, *err_path, *name;
	/* a run's (the ledger's): NULL and 0 for any other job */
	const char *run_id;
	long max_restarts;
	long sweep_first;       /* a sweep's job array: the sweep index of its task 0 */
};

/* Which of a job's output files (sched_ops.log_path): its stderr, or its output
 * when they are one file (JOB_LOG_ERR_OR_OUT). */
enum job_log { JOB_LOG_OUT, JOB_LOG_ERR, JOB_LOG_ERR_OR_OUT };

/* A backend's parse of one reply (its own type). */
struct sched_answer;
struct host_facts;
struct host_report;

struct sched_ops {
	const char *name;       /* "slurm", "plain": --json's "type" */

	/* ---- query: where jobs stand ---- */
	/* Whether j can be asked at all (a plain job needs its stage dir); one that
	 * cannot is reported not found without asking. */
	bool (*can_query)(const struct sched_job *j);
	/* The script section(s) that ask for jobs[0..n) (each asked once). */
	void (*query_script)(struct remote_script *rs, const struct sched_job *jobs, size_t n);
	/* Optional: the section that asks what jobs[0..n) were allocated (JOBS_WANT_USAGE:
	 * MARK_USAGE_ALLOC lines, job_usage_take reads them); NULL: the row says it
	 * (a plain job's leased GPUs). */
	void (*alloc_script)(struct remote_script *rs, const struct sched_job *jobs, size_t n);
	void (*alloc_take)(const struct remote_reply *rr, const char *id, struct job_state *js);
	/* Whether a tool failed to answer (squeue could not reach its controller: no
	 * answer, not "not found"): then *tool names it and *tool_exit is its exit
	 * status (-1: its line is missing). */
	bool (*query_failed)(const struct remote_script *rs, const struct remote_reply *rr,
			     const char **tool, int *tool_exit);
	/* The reply parsed once, for query_rows; freed by answer_free. */
	struct sched_answer *(*parse)(const struct remote_reply *rr);
	void (*answer_free)(struct sched_answer *a);
	/* Appends the rows that answer j (an array: one per task or pending rest) to
	 * *rows, filled and with sched set; host is the host asked (a plain job's node).
	 * Returns how many; 0 with err (DPE_NOTFOUND) when none does. */
	size_t (*query_rows)(const struct sched_answer *a, const struct sched_job *j,
			     const char *host, struct job_state **rows, size_t *n,
			     struct dp_error *err);
	/* The reason a job that cannot be asked (can_query false) is not found. */
	void (*not_found)(const struct sched_job *j, const char *host, struct dp_error *err);

	/* ---- the detail of what a query found (NULL: the backend has none) ---- */
	/* One sentence for why a row waits or how it ended; NULL: nothing to say. */
	char *(*why)(const struct job_state *js);
	/* Why the pending rows[0..n) wait, with the numbers: the script (false: nothing
	 * to ask), then each row's pending_text and pending from the reply (rr NULL:
	 * the exchange failed; the rows get what is known without it). */
	bool (*pending_script)(struct remote_script *rs, struct job_state *const *rows, size_t n);
	void (*pending_take)(const struct remote_reply *rr, struct job_state *const *rows,
			     size_t n);
	/* How the rows[0..n) that ended without COMPLETED ended (each row's end): the
	 * script (false: nothing to ask), then the reply; *note (caller frees) says
	 * what went wrong on the way, for -v. */
	bool (*end_script)(struct remote_script *rs, struct job_state *const *rows, size_t n);
	void (*end_take)(const struct remote_reply *rr, struct job_state *const *rows, size_t n,
			 char **note);
	/* Where jobs[0..n) write their output: the script part that asks, one for all
	 * (false, or NULL: the backend knows without asking), then the file (which) of
	 * jobs[i] from the reply (rr NULL when nothing was asked): 0 with *path, or -1
	 * with err. jobs_log_path (lib/jobs/jobs.h) does both for one job. */
	bool (*paths_script)(struct remote_script *rs, const struct sched_job *jobs, size_t n);
	int (*path_take)(const struct remote_reply *rr, const struct sched_job *j, size_t i,
			 enum job_log which, char **path, struct dp_error *err);

	/* ---- cancel ---- */
	/* Whether j can be cancelled at all (a plain job needs its process group); one
	 * that cannot fails with err, without asking. */
	bool (*can_cancel)(const struct sched_job *j, const char *host, struct dp_error *err);
	void (*cancel_script)(struct remote_script *rs, const struct sched_job *jobs, size_t n);
	/* After the exchange: false with err when the backend's cancel failed as a whole
	 * (scancel's exit status). */
	bool (*cancel_ok)(const struct remote_script *rs, const struct remote_reply *rr,
			  const char *host, struct dp_error *err);
	/* j's outcome: "cancelled", "signalled", "ended", "gone"; NULL with err when the
	 * reply has none. ok: cancel_ok's answer. */
	const char *(*cancel_outcome)(const struct remote_reply *rr, const struct sched_job *j,
				      bool ok, const char *host, struct dp_error *err);

	/* ---- top: a running job's GPUs (lib/sched/sched_top.h) ---- */
	/* Checks that j runs, finds its nodes (only s->nodes of them), then samples them
	 * over ss, feeding s, until s's count or j's end: 0, or -1 with err (s->usage
	 * when s->nodes names none of j's nodes). */
	int (*top)(struct ssh_session *ss, const struct sched_job *j, struct top_session *s,
		   struct dp_error *err);
	/* ---- queue: every job of a host (`dispatch queue`) ---- */
	/* The command that lists the jobs of host h (its inventory entry, NULL: not in
	 * it) as f asks (fmt and eor: SLURM's answer format and a fresh end-of-record
	 * mark, slurm_queue.h). */
	void (*queue_command)(struct strbuf *sb, const struct inv_host *h,
			      const struct slurm_queue_filter *f, enum slurm_queue_format fmt,
			      const char *eor);
	/* Its output parsed into q and filtered; -1 (DPE_FAIL) with err when it holds no
	 * listing. */
	int (*queue_parse)(const char *out, const struct slurm_queue_filter *f, const char *eor,
			   struct slurm_queue *q, struct dp_error *err);
	/* Why q's pending jobs wait, with the numbers, asked over ss (NULL: the backend's
	 * pending jobs say it all in their reason): 0, or -1 with err. */
	int (*queue_pending)(struct ssh_session *ss, const struct slurm_queue *q,
			     struct slurm_pending **pending, size_t *n, struct dp_error *err);

	/* ---- steps: each step's accounting (status --steps; NULL: the backend's jobs
	 * have no steps) ---- */
	/* The script section that asks for the steps of jobs[0..n) (each asked once). */
	void (*steps_script)(struct remote_script *rs, const struct sched_job *jobs, size_t n);
	/* After the exchange: the exit status of the tool that answered (0; -1: its line
	 * is missing), *tool naming it. */
	int (*steps_exit)(const struct remote_script *rs, const struct remote_reply *rr,
			  const char **tool);
	/* The steps in the reply that are j's (the job itself, then its steps, as the
	 * accounting lists them): appended to *steps (*n of them), how many. */
	size_t (*steps_take)(const struct remote_reply *rr, const struct sched_job *j,
			     struct job_step **steps, size_t *n);
	/* ---- hosts show: the scheduler's side of a host (lib/host_report.h) ---- */
	/* f's partitions, nodes and their GPUs, and the scheduler's version, into r
	 * (zeroed; NULL: the backend has none of them, as a plain host). */
	void (*host_report)(const struct host_facts *f, struct host_report *r);
};

extern const struct sched_ops sched_slurm;
extern const struct sched_ops sched_plain;
/* Every backend, NULL-terminated, in the order their sections go into a script. */
extern const struct sched_ops *const sched_all[];

/* The backend of a host: its inventory entry's type; a host the inventory no longer
 * has (h NULL) is a plain host when the ledger recorded the job's process group
 * (ledger_pgid > 0), else a SLURM host. */
const struct sched_ops *sched_for(const struct inv_host *h, long ledger_pgid);

#endif
