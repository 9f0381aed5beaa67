/* SPDX-License-Identifier: MIT */
/*
 * The job ledger: every submission dispatch makes, in SQLite (WAL mode) under the
 * state dir, safe for cron loops, CI and a shell running dispatch at the same moment.
 *
 * A submission is recorded in two steps so that no job is ever submitted twice:
 * ledger_begin() stores the intent with its unique token before sbatch runs;
 * ledger_submitted() adds the job id once sbatch answered. A row left in state
 * "submitting" means the answer was lost: look the token up on the cluster
 * instead of submitting again.
 */
#ifndef DISPATCH_LEDGER_H
#define DISPATCH_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct ledger;

struct ledger_job {
	int64_t row;
	char *job_id;           /* NULL while submitting */
	char *host;             /* inventory host name or ssh destination */
	char *cluster;
	char *name;
	char *token;            /* unique per submission */
	int64_t submitted_at;   /* unix seconds */
	char *commit;           /* snapshot commit, NULL when none */
	bool dirty;
	char *script_path, *log_path, *err_path;
	long pid;               /* plain hosts: the job's process group; 0 otherwise */
	char *container_runtime, *container_image;  /* a job in an image; NULL: none */
	char *state;            /* "submitting", "submitted", "unknown", or the end state
				   a later query saw ("COMPLETED", "FAILED", ...: see
				   ledger_set_end_state) */
	char *run_id;           /* a run (--max-restarts, ...): the same for every attempt
				   and resubmission; NULL: not a run */
	int max_restarts;       /* a run's --max-restarts; 0: none */
	bool wandb_run;         /* its WANDB_RUN_ID is the run id (jobscript_sets_wandb_run) */
	char *sweep_id;         /* a sweep (--sweep): its id, DISPATCH_SWEEP_ID; NULL: none */
	long sweep_size;        /* its tasks; 0: not a sweep */
	char *sweep_params;     /* its parameters and values, JSON (sweep_json; before sweep
				   files a JSON array of --sweep values: sweep_from_json reads both) */
	long sweep_first;       /* the sweep index of the array's task 0 (a sweep split
				   over several arrays, MaxArraySize); 0 otherwise */
	char *sweep_tasks;      /* the sweep indexes this row runs, as an array spec
				   ("0-9", "3,7"); NULL: all of them (0 to sweep_size-1) */
	long sweep_parallel;    /* its --max-parallel (a retry keeps it); 0: none */
};

/* The state dir: $DISPATCH_STATE_DIR, else $XDG_STATE_HOME/dispatch, else
 * ~/.local/state/dispatch. Caller frees. */
char *ledger_state_dir(void);

/* Opens (creating dir, mode 0700, and schema) dir/ledger.db; dir NULL: the state dir. */
int ledger_open(const char *dir, struct ledger **out, struct dp_error *err);
void ledger_close(struct ledger *l);
static inline void ledger_closep(struct ledger **l) { ledger_close(*l); }
#define _cleanup_ledger_ _cleanup_(ledger_closep)

/* A fresh token: 128 random bits as hex ("dsp-" + 32 hex digits). Caller frees. */
char *ledger_new_token(void);

int ledger_begin(struct ledger *l, const struct ledger_job *job, struct dp_error *err);
int ledger_submitted(struct ledger *l, const char *token, const char *job_id, long pid,
		     struct dp_error *err);
int ledger_set_state(struct ledger *l, const char *token, const char *state, struct dp_error *err);
/* The log path once the job id is known (sbatch's %j filled in). */
int ledger_set_log_path(struct ledger *l, const char *token, const char *path, struct dp_error *err);
/* Forget a submission that certainly did not happen (sbatch refused it). */
int ledger_forget(struct ledger *l, const char *token, struct dp_error *err);

/* Jobs with this job id (and host, when not NULL), newest first. */
int ledger_find(struct ledger *l, const char *job_id, const char *host, struct ledger_job **jobs,
		size_t *n, struct dp_error *err);
/* Every row of sweep sweep_id (its arrays, its plain hosts' runs, its retries),
 * oldest first. */
int ledger_find_sweep(struct ledger *l, const char *sweep_id, struct ledger_job **jobs, size_t *n,
		      struct dp_error *err);
/* The sweep ids that start with prefix (each once, oldest first) into *ids (strv). */
int ledger_sweep_ids(struct ledger *l, const char *prefix, char ***ids, struct dp_error *err);
int ledger_find_token(struct ledger *l, const char *token, struct ledger_job *job,
		      struct dp_error *err);
/* Which rows ledger_list returns; zero fields do not filter. */
struct ledger_filter {
	const char *host;       /* exactly this host */
	const char *name_glob;  /* fnmatch(3) pattern for the job name */
	int64_t since;          /* submitted at or after (unix seconds); 0: any time */
	size_t limit;           /* at most this many rows; 0: all */
	const char *sweep_id;   /* only this sweep's rows */
};

/* The ledger's history, newest first. */
int ledger_list(struct ledger *l, const struct ledger_filter *f, struct ledger_job **jobs,
		size_t *n, struct dp_error *err);

/* True when state is one of the states a job ends in that ledger_set_end_state
 * stores ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY",
 * "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "REVOKED"); such a row is never
 * asked about again. */
bool ledger_state_final(const char *state);
/* Stores the end state a query saw for the row (a state ledger_state_final takes;
 * DPE_INPUT otherwise). */
int ledger_set_end_state(struct ledger *l, int64_t row, const char *state, struct dp_error *err);

void ledger_job_release(struct ledger_job *j);
void ledger_jobs_free(struct ledger_job *jobs, size_t n);

#endif
