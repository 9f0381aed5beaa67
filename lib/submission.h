/* SPDX-License-Identifier: MIT */
/*
 * One submission, from a job spec, its code and a host to a job on that host and its
 * row in the ledger. Used by submit and submit-packed; the next callers are submit
 * --wait and notebooks. The steps, over one connection:
 *
 *   submission_prepare   a token and a stage name; the scripts (lib/jobs/jobscript.h),
 *                        with the code inside bootstrap.sh up to SUBMISSION_EMBED_MAX
 *                        or else read from {share}/code/SHA256.tar.gz (decided here,
 *                        once). A dry run stops here.
 *   submission_run       1. a shell command checks what a container job needs there
 *                           (container/container_run.h), makes the share, stage, work and
 *                           log dirs (umask 077) and prints their absolute paths;
 *                        2. SFTP writes the scripts into the stage dir with mode 0700,
 *                           and the code into {share}/code/ when it is not there yet
 *                           (under a temporary name, renamed: no job sees half of it);
 *                        3. the ledger records the intent with the token;
 *                        4. SLURM: sbatch --parsable --comment=TOKEN; a plain host: the
 *                           bootstrap starts detached (lib/sched/plain/plainjob.h).
 *
 * When the connection breaks during step 4, or the shell dies before it reports
 * sbatch's answer, submission_run connects once more (hooks->reconnect) and looks the
 * token up (the stage dir's record of sbatch's answer, then squeue and sacct; on a
 * plain host the stage dir's pid file) rather than submit again: a job is never
 * submitted twice. When that is not conclusive the ledger row stays "unknown".
 *
 * lib/ prints nothing: progress goes to hooks->note, and what the host's tools wrote
 * to stderr (sbatch's warnings, or why it refused) is kept in remote_err.
 */
#ifndef DISPATCH_SUBMISSION_H
#define DISPATCH_SUBMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "inventory/sweep.h"
#include "jobs/jobscript.h"

struct inv_host;
struct jobspec;
struct ledger;
struct ssh_session;

/* Code up to this size goes inside bootstrap.sh; larger code (with a content hash) is
 * uploaded once to {share}/code/SHA256.tar.gz and every job extracts it from there. */
#define SUBMISSION_EMBED_MAX (1024 * 1024)

/* What is submitted. */
struct submission_job {
	const struct jobspec *spec;
	const struct inv_host *host;
	const char *gres_type;          /* the chip's GRES type on this host, or NULL */
	const char *partition;          /* the solver's choice, or NULL */
	const unsigned char *code;      /* a gzip tarball extracted on every node, or NULL */
	size_t code_len;
	const char *code_sha256;        /* its content hash: large code is uploaded once */
	const char *code_subdir;        /* where the command runs inside the code; NULL: top */
	const char *commit;             /* recorded in the ledger; NULL: none */
	bool dirty;
	bool dry_run;                   /* name the stage after the pid, not the token */
	const char *run_id;             /* a run's id when it is resubmitted; NULL: a new one
					   (for a spec that is a run, jobspec_is_run) */
	const size_t *sweep_indexes;    /* a sweep: the tasks to submit (ascending, each
					   once, below its size); NULL: all of them */
	size_t sweep_nindexes;
	/* A sweep on plain hosts: this host's part of it (lib/sweep_spread.h says which
	 * tasks, and the cap). The first host's submission makes the sweep's id, the
	 * others are given it; each host has a stage name of its own (hosts may share
	 * the file system the stage dirs are on). */
	const char *sweep_id;           /* NULL: a new one */
	const size_t *sweep_tasks;      /* the tasks' indexes this host runs; NULL: all */
	size_t sweep_ntasks;
	long sweep_cap;                 /* at most this many of them run at once here; 0: no cap */
};

enum submission_state {
	SUBMISSION_PREPARED,    /* nothing was submitted (a step before sbatch failed) */
	SUBMISSION_SUBMITTED,   /* the job is there: job_id (and pid on a plain host) */
	SUBMISSION_REFUSED,     /* sbatch or the start refused it: certainly nothing runs */
	SUBMISSION_UNKNOWN,     /* it may or may not run: the ledger row says "unknown" */
	SUBMISSION_PARTIAL,     /* a sweep's first arrays were submitted, not the others
				   (arrays: each one's state) */
};

/* One SLURM job array of a sweep: the whole sweep, or, when its tasks do not fit
 * under the cluster's MaxArraySize, one of several (submission_run, SWEEPS in
 * dispatch-submit(1)). Each is its own sbatch of the one sbatch.sh and its own
 * ledger row. */
struct submission_array {
	size_t first;                   /* the sweep index of its task 0 (sbatch.sh's $1) */
	size_t ntasks;
	char *tasks;                    /* the sweep indexes it runs, array spec text: "4-7" */
	char *spec;                     /* sbatch's --array: task ids (index - first), %N */
	char *record;                   /* its sbatch's outcome files in the stage dir:
					   "sbatch" (the first), "sbatch-K" */
	char *dependency;               /* --dependency on sbatch's command line; NULL: none
					   (the script's own #SBATCH line holds) */
	char *token;                    /* its ledger row's; the first array's is the
					   submission's token */
	enum submission_state state;
	char *job_id;                   /* once submitted (or found by its token) */
	char *log;                      /* %j, %A and %x filled in */
	bool recovered;
};

/* A sweep's task on a plain host: a plain job of its own, a ledger row of its own. */
struct submission_task {
	size_t index;                   /* K: DISPATCH_SWEEP_INDEX */
	char *id;                       /* its job id: the sweep's stage name and -K */
	char *token;                    /* its ledger row's */
	char *run_id;                   /* a run: the sweep's run id and -K; else NULL */
	char *log;                      /* after submission_run */
	long pid;
	enum submission_state state;
	bool recovered;
};

struct submission {
	char *token;                    /* the ledger's token, in sbatch's --comment */
	char *stage;                    /* the stage dir's name */
	unsigned long nonce;            /* its last part (16 bits): another when it is taken */
	char *bootstrap_path;           /* as the scripts name it: {share}/{stage}/bootstrap.sh */
	bool code_uploaded;             /* the code goes to {share}/code/, not in the script */
	struct jobscript js;
	/* After submission_run: the dirs as the host's shell resolved them. */
	char *share_dir, *stage_dir, *work_dir, *log_dir;
	char *script;                   /* the script submitted: sbatch.sh or bootstrap.sh */
	char *log;                      /* the job's output file, %j and %x filled in */
	enum submission_state state;
	char *job_id;
	long pid;                       /* plain host: the job's process group; else 0 */
	bool recovered;                 /* found by its token after the connection broke */
	struct strbuf remote_err;       /* the host's tools' stderr, to show the user */
	char *run_id;                   /* a run: DISPATCH_RUN_ID, in the ledger; else NULL */
	struct sweep sweep;             /* a sweep: its tasks (the spec's --sweep); else none */
	char *sweep_id;                 /* its id, in the ledger; NULL: not a sweep */
	long max_array_size;            /* SLURM sweep: the cluster's MaxArraySize, asked with
					   the dirs; 0 before, -1 when it did not say */
	struct submission_array *arrays;        /* a SLURM sweep, after submission_run:
						   its arrays (job_id, log, token and
						   recovered above are the first's) */
	size_t narrays;
	const struct submission_array *array;   /* the array whose sbatch runs now */
	char *record;                   /* the arrays' outcome files' name: NULL "sbatch" (a
					   retry's: "retry-TOKEN") */
	/* A sweep on a plain host: its tasks here, each a plain job started in the one
	 * exchange after the one upload (token and stage above: the sweep's, whose stage
	 * dir holds the shared files). ntasks 0: not such a sweep. */
	struct submission_task *tasks;
	size_t ntasks;
};

/* The token, the stage name and the scripts. Errors: DPE_INPUT (a job option the
 * scripts cannot carry). Release with submission_release, whatever it returned. */
int submission_prepare(const struct submission_job *job, struct submission *sub,
		       struct dp_error *err);
void submission_release(struct submission *sub);

enum submission_note { SUBMISSION_INFO, SUBMISSION_WARNING, SUBMISSION_ERROR };
struct submission_hooks {
	/* A new connection to the same host, for the look-up after a lost one. */
	int (*reconnect)(void *data, struct ssh_session **out, struct dp_error *err);
	/* Progress (INFO: for -v), warnings and errors that do not stop the submission. */
	void (*note)(void *data, enum submission_note level, const char *msg);
	/* The code's upload, when it is uploaded: bytes acknowledged out of total, at its
	 * start (0), as it goes and at its end (done == total). May be NULL. */
	void (*upload_progress)(void *data, uint64_t done, uint64_t total);
	void *data;
};

/* Steps 1 to 4 over ss, recorded in l. Returns 0 when the job was submitted (or found
 * by its token: sub->recovered). On -1, sub->state says how far it got: PREPARED (err:
 * DPE_CONNECT, DPE_FAIL; the ledger has no row), REFUSED (the row is removed) or
 * UNKNOWN (the row is marked "unknown": do not submit again before looking).
 *
 * A sweep on SLURM is one job array per submission_array: step 1 also asks the
 * cluster's MaxArraySize (scontrol show config), and step 4 runs once per array, in
 * order, each recorded before its sbatch and settled after it as a job is. When
 * --max-parallel N is given and there are several arrays, each after the first
 * waits for the one before it to end (--dependency=afterany:PREV), so that never
 * more than N of the sweep's tasks run. An array that fails (refused, unknown, or a
 * lost connection, even when the look-up finds that array) stops the rest: PARTIAL
 * when arrays before it were submitted (they stay, recorded; err names the tasks
 * not submitted), else as for one job.
 *
 * A sweep's tasks on a plain host (sub->ntasks): step 3 records a row per task (its
 * job id already: the task's stage name), step 4 starts them all in one command
 * (plainjob_launch_tasks_command), and a task whose answer was lost is looked for
 * (its pid file) over a new connection. Each task's state is its own; 0 when every
 * task was submitted, else -1 with sub->state the worst of theirs (UNKNOWN, then
 * REFUSED) and err saying which. */
int submission_run(struct submission *sub, const struct submission_job *job,
		   struct ssh_session *ss, struct ledger *l, const struct submission_hooks *hooks,
		   struct dp_error *err);

/* submit --retry: some of a sweep's tasks (indexes[0..n), ascending) submitted again
 * on SLURM from the stage dir of rec (a row of the sweep on host: its sbatch.sh, its
 * bootstrap and code, so the same command, parameters and code), as job arrays as
 * submission_run makes them (split under the cluster's MaxArraySize, chained under
 * max_parallel: 0 none; then after the arrays still running), each a new row of the
 * sweep in l. One exchange first asks the work dir and MaxArraySize and checks that
 * sbatch.sh is still there (DPE_NOTFOUND when not) and takes the offset argument
 * (DPE_INPUT when an older dispatch wrote it). Returns and fills sub as
 * submission_run. */
struct submission_retry {
	const struct inv_host *host;
	const struct ledger_job *rec;
	const size_t *indexes;
	size_t n;
	long max_parallel;
	const char *after;      /* with max_parallel: the retry's first array starts after
				   these (--dependency: "afterany:4242:4250", the sweep's
				   arrays still running); NULL: at once */
};
int submission_retry(struct submission *sub, const struct submission_retry *rq,
		     struct ssh_session *ss, struct ledger *l, const struct submission_hooks *hooks,
		     struct dp_error *err);

/* submit --retry on a plain host: the jobs ids[i] (their stage dirs stages[i]) that
 * ended run again in their stage dirs, each as the same job with its next attempt
 * (plainjob_retry_command), in one exchange over ss, the program on stdin. pids[i]:
 * the job's new process group (> 1), 0 when it did not start again, -1 when the
 * reply says nothing of it (it may still start). The host's stderr into remote_err.
 * 0, or -1 with err when the exchange failed. */
int submission_retry_plain(struct ssh_session *ss, const char *const *ids,
			   const char *const *stages, size_t n, long *pids,
			   struct strbuf *remote_err, struct dp_error *err);

/* A dry run's view of a sweep's sbatch commands: the arrays submission_run would
 * submit were the cluster's MaxArraySize max (SLURM's default, 1001, when unknown), a
 * line each ("sbatch --array='0-3%2' STAGE/sbatch.sh 0"; a later array's dependency
 * on the one before as afterany:<array K>). */
void submission_sweep_commands(const struct submission_job *job, const struct submission *sub,
			       size_t max, struct strbuf *out);

/* What the submit command's own answer says (exposed for tests). SLURM
 * (slurm_submit_command's output): SUBMITTED with *job_id; REFUSED when sbatch's
 * reported exit status (*sbatch_status) is not 0; UNKNOWN when the shell ended before
 * it reported one (*sbatch_status -1), or sbatch said 0 and no job id: sbatch may
 * have submitted the job, so it is looked up by its token (submission_settle_slurm),
 * never submitted again. A plain host (plainjob_launch_command, its exit status):
 * REFUSED when the start failed, SUBMITTED with *pid, UNKNOWN when it printed none. */
enum submission_state submission_sbatch_answer(const char *out, char **job_id, int *sbatch_status);
enum submission_state submission_start_answer(int status, const char *out, long *pid);

/* The decision after a lost connection, from the look-up command's output (exposed
 * for tests). SLURM (slurm_lookup_command's output): SUBMITTED with *job_id, REFUSED
 * with sbatch's recorded stderr in remote_err, or UNKNOWN. A plain host
 * (plainjob_pid_command's output): SUBMITTED with *pid, or UNKNOWN. */
enum submission_state submission_settle_slurm(const char *lookup_out, const char *token,
					      char **job_id, int *sbatch_status,
					      struct strbuf *remote_err);
enum submission_state submission_settle_plain(const char *pid_out, long *pid);

#endif
