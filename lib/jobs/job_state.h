/* SPDX-License-Identifier: MIT */
/*
 * The one model of a job and what happened to it, filled by every backend
 * (lib/sched/sched.h) and read by status, wait, jobs, queue and cancel. A struct
 * job_state is one row of an answer: a job, or one array task, or the pending rest of
 * an array. Its fields are data; what a command shows of a field comes from the one
 * formatter per field below (text and JSON), so that every command writes a state,
 * an exit code, a time alike.
 *
 * The state is both a phase (the enum, for decisions: active, ended, failed) and the
 * word the scheduler gave ("COMPLETING", "NODE_FAIL", "CANCELLED"), which is what
 * users see.
 */
#ifndef DISPATCH_JOB_STATE_H
#define DISPATCH_JOB_STATE_H

#include <stdbool.h>
#include <stddef.h>

struct cJSON;
struct sched_ops;

enum job_phase {
	JOB_PHASE_UNKNOWN,      /* no answer, or a word no backend knows */
	JOB_PHASE_PENDING,      /* waiting to start */
	JOB_PHASE_ACTIVE,       /* running, or in a scheduler's in-between state */
	JOB_PHASE_COMPLETED,    /* ended, exit code 0 */
	JOB_PHASE_ENDED,        /* ended any other way: failed, cancelled, timed out, ... */
};

/* How a job that ended without COMPLETED ended, beyond its state row (SLURM:
 * lib/sched/slurm/slurm_end.h): the step that used the most of its memory limit, the
 * name of the user who cancelled it, which of its nodes is down. */
struct job_end {
	long long max_rss, mem_limit;   /* bytes; 0 when not known */
	char *rss_node, *rss_step, *cancelled_by_name, *failed_nodes;
};

/* The last lines of a job's log, for a job that ended without COMPLETED. */
struct job_tail {
	bool fetched;           /* asked for (else nothing is printed, and JSON has nulls) */
	char *path;             /* the file, NULL when not known */
	char *text;             /* its last lines, NULL when they could not be read */
	char *error;            /* why not */
};

/* One ended attempt of a run (dispatch-submit(1) RUNS) that was restarted after it:
 * lib/jobs/run_attempts.h reads them. */
struct job_attempt {
	long attempt;           /* 0, 1, ... (DISPATCH_ATTEMPT) */
	char *state;            /* how it ended: TIMEOUT, PREEMPTED, REQUEUED, FAILED, ... */
	long ended;             /* seconds since the epoch; -1 unknown */
	char *node;             /* where its batch script ran; NULL unknown */
};

/* A metric a job printed (lib/jobs/job_metrics.h): its last value. */
struct job_metric {
	char *name, *value;
};

/* Times in seconds; JOB_TIME_UNKNOWN when not known, JOB_TIME_UNLIMITED for no limit.
 * A time the scheduler gave as a word ("Partition_Limit", "INVALID") is kept in the
 * *_word field (then the seconds are JOB_TIME_UNKNOWN). */
#define JOB_TIME_UNKNOWN (-1L)
#define JOB_TIME_UNLIMITED (-2L)
#define JOB_STAGE_STARTED (-1)
#define JOB_STAGE_NOT_RUN (-2)

struct job_usage;

struct job_state {
	char *id;                       /* the job or task as reported: "123", "123_4",
					   "123_[5-9]", a plain job's stage name */
	const struct sched_ops *sched;  /* the backend that answered */
	enum job_phase phase;
	char *state;                    /* the scheduler's word; "" when none */
	char *reason;                   /* why pending, or how it ended; "" when none */
	int exit_code, signal;          /* -1 when not known */
	long elapsed, limit;            /* seconds (JOB_TIME_*) */
	char *elapsed_word, *limit_word; /* NULL unless a word stood for the time */
	char *nodes;                    /* hostlist; "" before it runs */
	char *gpus;                     /* the GPUs leased (plain hosts: indices); NULL:
					   the scheduler's business */
	char *cancelled_by;             /* the canceller's uid; NULL */
	bool from_accounting;           /* the row is accounting's (sacct), not the queue's */
	/* a listing of a host's queue (lib/queue.h) gives these too; NULL elsewhere */
	char *partition, *name, *user;
	long node_count;                /* queue's: -1 when not known */
	/* filled when asked (jobs_query's flags): */
	char *pending_text;             /* a pending job: why, with the numbers; NULL none */
	struct cJSON *pending;          /* the same for JSON; NULL: not pending or not asked */
	struct job_end end;             /* how a failed job ended */
	struct job_tail tail;           /* its log's last lines */
	/* a run's (a job with --max-restarts): NULL and 0 for any other job */
	char *run_id;
	long max_restarts;
	struct job_attempt *attempts;   /* its ended attempts, oldest first */
	size_t nattempts;
	long attempt;                   /* the attempt now (1, 2, ...) where it is known
					   without the list of ends (queue: SLURM's restart
					   count + 1); 0: nattempts + 1 */
	char *gave_up;                  /* why it ran out of restarts; NULL */
	/* its metrics, in the order first printed (JOBS_WANT_METRICS) */
	struct job_metric *metrics;
	size_t nmetrics;
	/* what it did (JOBS_WANT_USAGE, lib/jobs/job_usage.h); NULL: no sample read */
	struct job_usage *usage;
	char *idle;                     /* why its sampler ended it (--idle-timeout); NULL */
	/* its stages (--stage; JOBS_WANT_STAGES, and JOBS_WANT_END for a failed job):
	 * nstages 0 when it has none or none was read; each the exit status of its
	 * last run, JOB_STAGE_STARTED (started, no end: running, or its attempt was
	 * interrupted) or JOB_STAGE_NOT_RUN */
	int *stage_exit;
	size_t nstages;
	/* what it was allocated (JOBS_WANT_USAGE): SLURM's AllocTRES GPUs for its
	 * ElapsedRaw, a plain job's leased GPUs for its elapsed time; both -1 when
	 * not known (user: the account it ran as, NULL when not known) */
	long alloc_gpus, alloc_seconds;
};

void job_state_release(struct job_state *js);
void job_states_free(struct job_state *js, size_t n);

/* The phase of a scheduler's state word (SLURM's words; a plain host's are the same). */
enum job_phase job_phase_of(const char *state);
/* Still queued or running (the phase is PENDING or ACTIVE). */
bool job_state_active(const struct job_state *js);
/* Ended, and not COMPLETED: the jobs whose end, pending detail and tail are asked. */
bool job_state_failed(const struct job_state *js);

/* A time as the scheduler wrote it ("1:02", "UNLIMITED") into *secs, or kept as
 * *word (JOB_TIME_UNKNOWN) when the seconds would not write it back alike. */
void job_state_time_of(const char *text, long *secs, char **word);

/* ---- one formatter per field: text (caller frees) ---- */

/* "ID@HOST" */
char *job_state_name(const struct job_state *js, const char *host);
/* The exit column: "0", "3", "sig9" (signal with code 0), "-" when not known. */
char *job_state_exit_text(const struct job_state *js);
char *job_exit_text(int exit_code, int signal);     /* the same of a code and signal */
/* Elapsed time and limit as SLURM writes them ("1:02", "1-02:03:04", "UNLIMITED", a
 * word as given); "" when not known. */
char *job_state_elapsed_text(const struct job_state *js);
char *job_state_limit_text(const struct job_state *js);
/* One sentence for why it waits or how it ended (the backend's, with end's detail);
 * NULL when there is nothing to explain. */
char *job_state_why(const struct job_state *js);

/* ---- and JSON: each adds its keys to o ---- */

void job_state_json_state(struct cJSON *o, const struct job_state *js);     /* "state", "active" */
void job_state_json_times(struct cJSON *o, const struct job_state *js);     /* "elapsed", "time_limit" */
void job_state_json_exit(struct cJSON *o, const struct job_state *js);      /* "exit_code", "signal" */
void job_state_json_why(struct cJSON *o, const struct job_state *js);       /* "why" */
/* "stages": [{"stage": I, "state": "done" | "failed" | "started" | "not run",
 * "exit": N | null}, ...], null when the job has none (or they were not read). */
void job_state_json_stages(struct cJSON *o, const struct job_state *js);
void job_state_json_failure(struct cJSON *o, const struct job_state *js);   /* "failure": null or {...} */
void job_state_json_pending(struct cJSON *o, const struct job_state *js);   /* "pending": null or {...} */
void job_state_json_tail(struct cJSON *o, const struct job_state *js);      /* "log_path", "log_tail", "log_tail_error" */

#endif
