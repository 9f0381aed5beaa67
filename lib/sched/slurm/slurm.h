/* SPDX-License-Identifier: MIT */
/*
 * SLURM's command-line tools as dispatch uses them: the remote shell text for sbatch,
 * status (squeue, then sacct, in one command), scancel and the token lookup after a
 * lost connection, and the parsers of what they print.
 *
 * Formats: `squeue -o` and `sacct --parsable2 -o` have stayed put for many releases,
 * while their --json schemas change with every one; dispatch asks for '|'-separated
 * fields with the only free-text field (the reason) last, so no value can shift
 * the columns. Every user string in a command goes through sh_quote.
 */
#ifndef DISPATCH_SLURM_H
#define DISPATCH_SLURM_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* sbatch --parsable's answer in stdout: the last line that is ID or ID;CLUSTER (site
 * banners and profile noise may print other lines). Returns 0 with *job_id (and
 * *cluster, NULL when none; cluster may be NULL to ignore it), or -1 when no line
 * fits. Caller frees. */
int slurm_parse_sbatch(const char *out, char **job_id, char **cluster);

/* What one sbatch of a submission is asked (slurm_submit_command): the job, or one
 * job array of a sweep (dispatch-submit(1) SWEEPS; several when the sweep is larger
 * than the cluster's MaxArraySize, all of them running the one uploaded sbatch.sh). */
struct slurm_sbatch {
	const char *workdir;    /* the job's working directory unless it sets --chdir */
	const char *stage_dir;  /* where sbatch.sh is */
	const char *token;      /* the job's comment, for the look-up */
	const char *record;     /* the outcome files' name in stage_dir (RECORD.out, .err,
				   .status); NULL: "sbatch" */
	const char *array;      /* --array (task ids, %N); NULL: none on the command line */
	const char *dependency; /* --dependency, which replaces the script's; NULL: none */
	const char *arg;        /* the script's one argument ($1); NULL: none */
};

/* sbatch for the wrapper stage_dir/sbatch.sh, from workdir, with the token as the
 * job's comment. sbatch's stdout, stderr and exit status go to files in the stage dir
 * first (RECORD.out, RECORD.err, RECORD.status), then to the command's own stdout,
 * stderr and exit status: when the connection breaks while sbatch runs, the files
 * still tell what happened (slurm_lookup_command). Last, a line "dispatch-sbatch-exit
 * N" (read by slurm_parse_exit): without it, the shell ended before it knew sbatch's
 * answer (killed, say), and an exit status other than 0 does not mean that sbatch
 * refused the job. Both paths are absolute. */
void slurm_submit_command(struct strbuf *sb, const struct slurm_sbatch *s);
/* The options of s that the script's #SBATCH lines do not hold (" --array=0-3%2
 * --dependency=afterany:42"), each quoted: for the command and the dry run. */
void slurm_sbatch_options(struct strbuf *sb, const struct slurm_sbatch *s);

/* A line that asks the cluster's MaxArraySize (scontrol show config), for a script
 * that asks other things too: "dispatch-max-array MaxArraySize = N", the value empty
 * when scontrol did not answer. */
void slurm_max_array_command(struct strbuf *sb);
/* MaxArraySize from scontrol show config's output (whole, or the line above): array
 * task ids must be below it. -1 when the text has no such line. */
long slurm_parse_max_array_size(const char *out);

/* One job (or array task, or the pending rest of an array) as squeue or sacct saw it. */
struct slurm_job {
	char *id;               /* "123", "123_4", "123_[5-9]" */
	char *state;            /* the state word: "RUNNING", "CANCELLED" ("CANCELLED by 0"
				   loses " by 0"), "FAILED", ... */
	char *reason;           /* squeue: why pending ("None" while running); sacct: "None"
				   or a reason */
	char *elapsed;          /* slurm_format_duration's: "1:02", "1-02:03:04" */
	char *time_limit;       /* slurm_format_duration's: "UNLIMITED", "1:00:00", "Partition_Limit" */
	char *nodes;            /* hostlist, "" or "None assigned" before it runs */
	int exit_code;          /* sacct's ExitCode "N:S": N; -1 when not known (squeue) */
	int exit_signal;        /* S; -1 when not known */
	char *cancelled_by;     /* sacct's "CANCELLED by UID": the UID; NULL otherwise */
	bool from_sacct;
};

void slurm_job_release(struct slurm_job *j);
void slurm_jobs_free(struct slurm_job *jobs, size_t n);

/* True for the states of a job that is still in the queue or running (PENDING,
 * RUNNING, CONFIGURING, COMPLETING, SUSPENDED, REQUEUED, RESIZING, SIGNALING,
 * STAGE_OUT, STOPPED, RESV_DEL_HOLD, REQUEUE_FED, REQUEUE_HOLD, SPECIAL_EXIT). */
bool slurm_state_active(const char *state);

/* Splits a '|'-separated line (squeue -o, sacct -P) into exactly n fields, the last
 * one taking the rest (it may hold '|'). False when there are fewer. The fields point
 * into line, which is changed. */
bool slurm_split_fields(char *line, char **f, size_t n);

/* sacct's allocation of ids (JobID, ElapsedRaw, AllocTRES, User), a MARK_USAGE_ALLOC
 * line each: GPU-hours allocated (jobs --usage). */
void slurm_alloc_command(struct strbuf *sb, char *const *ids);
/* The GPUs in an AllocTRES ("...,gres/gpu=2" or typed "gres/gpu:a100=2"); 0 none. */
long slurm_tres_gpus(const char *tres);

/* The ids joined by ',', as one shell word (sh_quote): squeue's and sacct's -j. */
void slurm_id_list(struct strbuf *sb, char *const *ids);

/* The status query for job ids (array tasks "123_4" allowed; each id [0-9_]): one
 * shell command for the login shell: squeue, as slurm_squeue_command, then sacct as
 * slurm_sacct_command for the ids squeue did not answer for, only where there are
 * any (a job squeue lists as itself, active or COMPLETED, needs no accounting
 * query: slurmdbd's answer is the slow part; an array's id always goes to sacct).
 * squeue's stderr goes to the command's stderr, for slurm_squeue_failed. */
void slurm_status_command(struct strbuf *sb, char *const *ids);

/* The two halves of the status query, for callers that ask sacct only about the jobs
 * that left the queue (wait): squeue for the ids, its stderr left as it is, then a
 * line "dispatch-squeue-exit N" with its exit status; and the marker line, sacct for
 * the ids, then "dispatch-sacct-exit N". slurm_parse_status reads either output and
 * both concatenated. */
void slurm_squeue_command(struct strbuf *sb, char *const *ids);
void slurm_sacct_command(struct strbuf *sb, char *const *ids);
/* wait's squeue half, cheaper: `squeue --only-job-state` (SLURM 23.11.5 and later; one
 * REQUEST_JOB_STATE RPC, not the full job records) first, its sorted answer digested
 * (cksum) into a line "dispatch-squeue-states DIGEST"; when DIGEST is known (the
 * previous poll's, NULL on the first), no job changed state: "dispatch-squeue-same"
 * and the squeue exit line 0, nothing else. Otherwise (a state changed, or an older
 * squeue without the option) slurm_squeue_command runs as before. A pending job's
 * reason changing alone is not seen until its state changes. */
void slurm_squeue_poll_command(struct strbuf *sb, char *const *ids, const char *known);
bool slurm_poll_same(const char *out);
/* The DIGEST of the answer (caller frees); NULL when the squeue had no such option. */
char *slurm_poll_states(const char *out);
/* The exit status the "dispatch-squeue-exit" / "dispatch-sacct-exit" line (what: "squeue"
 * or "sacct") reports; -1 when the line is missing (the command did not get that far). */
int slurm_parse_exit(const char *out, const char *what);
/* sacct's ExitCode field "CODE:SIGNAL" into *code and *sig (each 0..255; both -1 when
 * it is not that). */
void slurm_parse_exit_code(const char *s, int *code, int *sig);
/* True when squeue's stderr says that it could not ask the controller at all (as
 * opposed to "Invalid job id specified": every id has left the controller's memory,
 * an answer). */
bool slurm_squeue_failed(int exit_status, const char *err);

/* Seconds as SLURM writes elapsed times: "M:SS", "H:MM:SS", "D-HH:MM:SS"; "" for < 0. */
char *slurm_format_seconds(long s);
/* A duration as squeue or sacct writes it ("0:01", "00:00:01", "1:02:03", "1-02:03:04")
 * in seconds; -1 when text is not one ("UNLIMITED", "Partition_Limit", ""). */
long slurm_parse_duration(const char *text);
/* An elapsed time or time limit in one form whichever tool answered: durations through
 * slurm_format_seconds, "UNLIMITED" for no limit (which SLURM gives as 365 days once
 * a job ended: "365-00:00:00"), other words ("Partition_Limit", "INVALID", "") as
 * given. Caller frees. */
char *slurm_format_duration(const char *text);

/* Parse the status query's output. Lines that do not have the fields asked for
 * (banners, profile noise) are skipped. Returns 0; *jobs lists squeue's rows, then
 * sacct's (from_sacct set), in output order. */
int slurm_parse_status(const char *out, struct slurm_job **jobs, size_t *n);

/* True when a job SLURM reported (id) belongs to what the user asked for (asked):
 * "123" takes "123", "123_4" and "123_[5-9]"; "123_4" takes only "123_4". */
bool slurm_id_matches(const char *asked, const char *id);

/* The rows that answer `asked`: squeue's for jobs still active, sacct's for the
 * others, and squeue's finished rows sacct does not know (accounting lags or is
 * off). Pointers into jobs; *out is allocated (free it), *nout may be 0. */
void slurm_select(const struct slurm_job *jobs, size_t n, const char *asked,
		  const struct slurm_job ***out, size_t *nout);

/* The output paths of a job for `logs`: `scontrol show job ID` (multi-line form, where
 * StdOut= and StdErr= sit on lines of their own, so paths with spaces survive; SLURM
 * has filled the patterns in) and `id -un` on the host; when scontrol no longer knows
 * the job, accounting's StdOut, StdErr (SLURM 24.05 and later; patterns filled in
 * where sacct has --expand-patterns) and JobName. */
void slurm_job_paths_command(struct strbuf *sb, const char *id);
struct slurm_paths {
	char *out, *err;        /* NULL when scontrol did not say (the job left its memory) */
	char *user;             /* the login's user name; NULL when not printed */
	int records;            /* jobs scontrol showed (an array: one per task; a pending
				   array not yet split counts as 2) */
	bool acct;              /* scontrol did not know the job, and sacct has StdOut/StdErr */
	char *acct_out, *acct_err; /* sacct's StdOut, StdErr: NULL when empty (StdErr is
				   empty when stderr goes to StdOut); may hold patterns */
	char *acct_name;        /* sacct's JobName (for %x) */
};
void slurm_parse_job_paths(const char *out, struct slurm_paths *p);
void slurm_paths_release(struct slurm_paths *p);

/* An sbatch --output/--error pattern with what is known filled in: %j (job id; for an
 * array task the task's own id is unknown here and the array's is used), %A (array
 * job), %a (task; left alone when task is NULL), %x (name), %u (user), %% ('%'); any
 * NULL value leaves its pattern as it is. Caller frees. */
char *slurm_expand_pattern(const char *pattern, const char *job_id, const char *task,
			   const char *name, const char *user);

/* scancel for the ids, then a line with its exit status (slurm_parse_exit(out,
 * "scancel")). */
void slurm_cancel_command(struct strbuf *sb, char *const *ids);

/* The command that looks a submission up by its token after a lost connection: the
 * outcome files of the submission's stage dir when they are there (RECORD.status,
 * .out, .err; record NULL: "sbatch", as in struct slurm_sbatch), then the jobs whose
 * comment (squeue %k, including jobs that just ended) or accounting record (sacct
 * Comment or SubmitLine) holds the token. */
void slurm_lookup_command(struct strbuf *sb, const char *stage_dir, const char *record,
			  const char *token);

struct slurm_lookup {
	int sbatch_status;      /* the exit status sbatch.status recorded; -1 when no file */
	struct strbuf out, err; /* sbatch.out and sbatch.err, when sbatch.status was there */
	char *job_id;           /* from the status files or the token search; NULL: none */
};
#define SLURM_LOOKUP_INIT { .sbatch_status = -1, .out = STRBUF_INIT, .err = STRBUF_INIT }
void slurm_parse_lookup(const char *out, const char *token, struct slurm_lookup *res);
void slurm_lookup_release(struct slurm_lookup *res);

#endif
