/* SPDX-License-Identifier: MIT */
/*
 * A run's attempts (dispatch-submit(1) RUNS): the sbatch wrapper and the plain-host
 * launcher append a line to the job's stage dir's attempts file as each attempt ends
 * and the run restarts; jobs_query reads them in the same exchange as the job's
 * state, for the jobs the ledger knows as runs, and the formatters below show them:
 *
 *	RUNNING attempt 3/5
 *	run-0123456789abcdef: attempt 1 TIMEOUT 2026-12-01T21:03:12Z on node1; attempt 2 ...
 */
#ifndef DISPATCH_RUN_ATTEMPTS_H
#define DISPATCH_RUN_ATTEMPTS_H

#include <stddef.h>

#include "jobs/job_state.h"
#include "remote/remote.h"
#include "sched/sched.h"

struct cJSON;

/* The script section that reads the attempts of the runs among jobs[0..n) (those
 * with a run id and a stage dir); nothing when there are none. */
void run_attempts_script(struct remote_script *rs, const struct sched_job *jobs, size_t n);
/* j's run id, restarts and ended attempts from rr into js (nothing for a job that is
 * not a run). Lines that are not an attempt's are skipped. */
void run_attempts_take(const struct remote_reply *rr, const struct sched_job *j,
		       struct job_state *js);

/* "attempt 2/5" (the attempt now, or the last, of 1 + --max-restarts); NULL when js
 * is not a run. */
char *job_state_attempt_text(const struct job_state *js);
/* The state column: "RUNNING attempt 2/5" for a run, else the state. */
char *job_state_state_text(const struct job_state *js);
/* The ended attempts, "attempt 1 TIMEOUT 2026-12-01T21:03:12Z on node1; attempt 2
 * PREEMPTED ..."; NULL when there are none. */
char *job_state_attempts_text(const struct job_state *js);
/* A run's keys: "run_id", "attempt" (1, 2, ...), "max_attempts", "attempts" (each
 * ended one: "attempt", "state", "ended" (ISO 8601, UTC; null unknown), "node");
 * none for a job that is not a run. */
void job_state_json_run(struct cJSON *o, const struct job_state *js);

#endif
