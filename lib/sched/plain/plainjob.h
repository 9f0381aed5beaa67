/* SPDX-License-Identifier: MIT */
/*
 * Jobs on plain hosts (no scheduler): the bootstrap runs detached from the SSH
 * session (setsid, stdin from /dev/null, HUP ignored), in a process group of its own,
 * with its output in a log file. Its stage dir keeps what status and cancel read:
 *
 *   STAGE/workdir      the directory the job starts in, then (the bootstrap writes it)
 *                      the one its command runs in: where dispatch shell opens
 *   STAGE/pid          "PGID START" once it started (the group leader is a small sh
 *                      that waits for the bootstrap; START in unix seconds)
 *   STAGE/exit_status  "STATUS END" once it ended (STATUS as a shell reports it:
 *                      128+N after signal N)
 *   STAGE/cancelled    written by cancel before it signals the group
 *   STAGE/pending      the reason, while the job waits in the host's queue
 *   STAGE/lease        "START GPUS" once the bootstrap started (GPUS: the indices of
 *                      the GPUs leased, comma-separated, or "-")
 *   STAGE/timeout      written by the launcher when the time limit ends the job (TIMEOUT)
 *   STAGE/attempts     "ATTEMPT WORD END HOST" for each attempt that was restarted
 *   STAGE/gave-up      the reason, when the last restart ended as the others
 *
 * GPU leases and the queue (no daemon: the launcher, the group leader, does it all):
 * a shared lock directory per host (LOCKDIR, mode 1777) holds a record per job,
 * LOCKDIR/job.TICKET.ID ("USER|STATE|NGPUS|GPUS|SINCE|REASON", STATE pending,
 * running or held: waiting for its --dependency, which competes with no one), locked (flock) by its launcher for as long as it lives, and a file per
 * GPU, LOCKDIR/gpu.UUID, locked by the launcher that leases it. Tickets are taken
 * under LOCKDIR/.lock, in order: a job starts when no earlier live job it competes
 * with (for GPUs, or for a max_jobs slot) is still pending. A record whose lock can
 * be taken is stale (its launcher died, SIGKILL included): the kernel released its
 * locks.
 *
 * The users of a box are not trusted by each other: they may read each other's queue,
 * but none can make another's job write to a file of theirs, stall another's commands
 * for good, or put text of theirs unescaped on another's terminal. So LOCKDIR (and
 * every directory above it) must belong to root or to the user, and be sticky where
 * others can write it (then no one else can rename or remove a user's files there);
 * a record is created once (O_EXCL, mode 0600 until its launcher locks it) and then
 * written only through the descriptor it was created with; a record that names
 * another user than its file's owner counts for nothing (queue shows it IGNORED);
 * every flock of a lock that another user could hold waits at most LOCKWAIT seconds
 * (PLAINJOB_LOCK_WAIT) and then says who holds it (/proc/locks); the records of
 * other users are read by a child under timeout, so a FIFO in their place blocks
 * nothing; cmd/ prints their text through printable().
 *
 * The job's id is the stage dir's name, which is unique per submission.
 */
#ifndef DISPATCH_PLAINJOB_H
#define DISPATCH_PLAINJOB_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

#define PLAINJOB_LOCK_DIR "/tmp/dispatch-gpus"
/* Seconds a launcher or a listing waits for a lock that another user could hold. */
#define PLAINJOB_LOCK_WAIT 5
/* Before a time limit: the stop signal, this many seconds before it. */
#define PLAINJOB_GRACE 120
#define PLAINJOB_STOP_SIGNAL "USR1"

/* What the launcher leases before the bootstrap runs. */
struct plainjob_lease {
	long gpus;              /* GPUs of the job's own: 0 none */
	bool gpu_share;         /* take GPUs that other processes use */
	const char *lock_dir;   /* absolute; NULL: PLAINJOB_LOCK_DIR */
	long max_jobs;          /* dispatch jobs running at once on the host; 0: no cap */
	const char *allowed;    /* the GPUs (indices or UUIDs, comma-separated) leases are
				   taken from; NULL: all */
	int lock_wait;          /* seconds; 0: PLAINJOB_LOCK_WAIT */
	long busy_mib;          /* a GPU another process uses this much of is not leased
				   (without gpu_share); 0: NVIDIA_SMI_BUSY_MIB */
	const char *dependency; /* sbatch's --dependency on jobs of the host (their ids: stage
				   dirs next to this job's), checked by jobspec_valid_dependency;
				   NULL: none. Held PENDING (Dependency) until it holds. */
	long time_limit;        /* seconds; 0: none. The stop signal at the limit minus the
				   grace (at most half the limit), TERM at the limit (TIMEOUT),
				   KILL 30 s later. */
	long grace;             /* seconds; 0: PLAINJOB_GRACE */
	const char *stop_signal; /* a name without SIG ("USR1"); NULL: PLAINJOB_STOP_SIGNAL */
	long max_restarts;      /* the command runs again after a time limit or a non-zero
				   exit (as restart_on_* say) this many times at most, queued
				   again at the back; then FAILED, "gave up after N restarts".
				   LOST (the launcher gone): started again by a status
				   command that asks for it (plainjob_ref.restart). */
	bool restart_on_timeout, restart_on_error, restart_on_lost;
	const char *sweep;      /* a task of a sweep: the sweep's stage name (its tasks'
				   ids are SWEEP-K); NULL: not a sweep's */
	long sweep_max;         /* the sweep's tasks (ours, SWEEP-K) running at once on the
				   host, at most; 0: no cap. Held PENDING ("waiting for a
				   sweep slot: ...") while that many run, or run and wait
				   with an earlier ticket (they start first). */
};

/* The command that starts stage_dir/bootstrap.sh in workdir (all paths absolute),
 * appends its output to log_path, and prints "dispatch-pid PGID" once the pid file is
 * there (within about 10 s). DISPATCH_JOB_ID is job_id in the job. The launcher
 * queues for lease (NULL: no GPUs, no cap) before the bootstrap runs, and exports
 * CUDA_VISIBLE_DEVICES (UUIDs) and DISPATCH_GPUS (indices) with the GPUs leased
 * (CUDA_VISIBLE_DEVICES empty for a job without GPUs on a host with GPUs). */
void plainjob_launch_command(struct strbuf *sb, const char *stage_dir, const char *workdir,
			     const char *log_path, const char *job_id,
			     const struct plainjob_lease *lease);
/* The group id from the launch command's output; -1 when it is not there. */
long plainjob_parse_pid(const char *out);

/*
 * A sweep's tasks on one host, started in one command (dispatch-submit(1) SWEEPS):
 * sweep_stage_dir holds what the tasks share (bootstrap.sh, container.sh, notify_url,
 * run_info, uploaded once) and gets launcher.sh once; each task gets a stage dir of
 * its own next to it, named after its id (SWEEP-K: the sweep's stage name and the
 * task's index), with links to those files, its own launch.sh, workdir and run_info
 * (the run's id with -K), and then everything a plain job's stage dir holds. Each
 * task is a plain job (its id, log, lease, attempts). lease is every task's, with
 * lease->sweep and sweep_max set by the caller.
 */
struct plainjob_task {
	const char *id;         /* SWEEP-K: its stage dir's name, DISPATCH_JOB_ID */
	const char *log_path;   /* absolute */
};
/* The command sb, with its standard input in (the program: launcher.sh and each
 * task's launch.sh are too much for one SSH packet), which it saves as
 * sweep_stage_dir/start.sh and runs. Starts the tasks and prints a line per task once each started, queued or gave up
 * (10 s for them all), in order: "dispatch-task ID started PGID", "ID failed PGID"
 * (its launcher gave up at once, the reason on stderr) or "ID none" (it did not
 * start). Exits 1 with the reason on stderr, starting none, when the launch cannot
 * be prepared (no bootstrap.sh in the sweep's stage dir, no setsid or bash). */
void plainjob_launch_tasks_command(struct strbuf *sb, struct strbuf *in,
				   const char *sweep_stage_dir, const char *workdir,
				   const struct plainjob_task *tasks, size_t n,
				   const struct plainjob_lease *lease);
/* Prints "dispatch-task ID started PGID" for each task that recorded its process id,
 * for a look after a lost connection. */
void plainjob_task_pids_command(struct strbuf *sb, const char *sweep_stage_dir,
				const struct plainjob_task *tasks, size_t n);
/* submit --retry on a plain host: the jobs ids[i] (stage dirs stages[i]) that ended run
 * again in their stage dirs, each with the next attempt (retry.sh); a MARK_TASK line
 * each as the sweep's start prints them ("none": nothing to retry there). */
void plainjob_retry_command(struct strbuf *sb, const char *const *ids,
			    const char *const *stages, size_t n);
/* The group id task id printed (either command), or -1 when it printed none (it may
 * have started: look again). *failed: it certainly does not run: its launcher gave up
 * at once (its group id returned), or it did not start (0 returned). */
long plainjob_parse_task_pid(const char *out, const char *id, bool *failed);
/* Prints the process id a started job recorded (as the launch command does), for a
 * look after a lost connection; plainjob_parse_pid reads it (-1: not started). */
void plainjob_pid_command(struct strbuf *sb, const char *stage_dir);

struct plainjob_ref {
	const char *id;
	const char *stage_dir;
	long pgid;
	bool restart;           /* status: a run found LOST starts again when its restart
				   policy allows (status.sh's dispatch_restart; wait does) */
};

/* One command for several jobs of one host: prints the host's clock and a line per
 * job (in order). */
void plainjob_status_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n);

struct plainjob_status {
	char *id;
	const char *state;      /* "PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED",
				   "TIMEOUT", "LOST"
				   (no process and no exit status: killed hard, or the host
				   rebooted) */
	int exit_code;          /* -1 while running or unknown */
	int exit_signal;        /* N when the status was 128+N, else 0; -1 unknown */
	long elapsed;           /* seconds since the bootstrap started; -1 unknown */
	char *gpus;             /* the GPUs leased (indices, comma-separated), "" none */
	char *reason;           /* why it is PENDING, else "" */
};

/* Parse the status command's output; lines that are not answers are skipped.
 * Returns the number of answers in *out (caller frees with plainjob_status_free). */
size_t plainjob_parse_status(const char *out, struct plainjob_status **res);
void plainjob_status_free(struct plainjob_status *res, size_t n);

/* Marks each job cancelled and sends TERM to its process group (the bootstrap passes
 * it on to the command's group). Prints "dispatch-cancel ID OUTCOME" per job, OUTCOME
 * "signalled", "ended" (it had ended already) or "gone". */
void plainjob_cancel_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n);
/* The outcome the cancel command printed for job id ("signalled", "ended", "gone"),
 * or NULL when it printed none. */
const char *plainjob_parse_cancel(const char *out, const char *id);

struct slurm_queue;
struct slurm_queue_filter;
struct dp_error;

/* Lists every user's live dispatch jobs on the host (its lock directory, NULL: the
 * default), under the directory's lock (shared), within a bounded time: a lock held
 * longer, or a listing that does not end, fails with the reason on stderr. */
void plainjob_queue_command(struct strbuf *sb, const char *lock_dir);
/* The listing as a queue (slurm_queue.h: partition "", nodes "" and gpus the indices
 * leased), filtered by f (user, --me, states). A record that names another user
 * than its owner is a job of its owner in state "IGNORED" (shown unless f's states
 * leave it out), with the reason. -1 (DPE_FAIL) when the listing did not
 * reach its end. */
int plainjob_parse_queue(const char *out, const struct slurm_queue_filter *f,
			 struct slurm_queue *q, struct dp_error *err);

#endif
