/* SPDX-License-Identifier: MIT */
/*
 * The remote side of `dispatch logs`: print a job's output file, or follow it until
 * the job ends, all in one command on one connection. Following runs a watcher in
 * the same remote shell (squeue for a SLURM job, the exit_status file and the
 * process group for a plain-host job) and GNU `tail -f --pid` on the watcher, so
 * tail prints what is left and ends by itself when the job ends; with another tail,
 * the shell stops it a second after the watcher.
 */
#ifndef DISPATCH_JOBLOG_H
#define DISPATCH_JOBLOG_H

#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"

struct ssh_session;

/* The exit status of these commands when the file is not there (job pending, or it
 * ended without writing one). */
#define JOBLOG_NO_FILE 104

/* cat the file. */
void joblog_cat_command(struct strbuf *sb, const char *path);
/* Its last `lines` lines (why a job failed: wait, status), each cut at 1000 bytes. */
#define JOBLOG_TAIL_LINES 20
/* For paths[0..n), in one script (a NULL path is skipped): a MARK_TAIL_JOB part each
 * (marker.h). joblog_tails_take reads job i's: 0 with *text (its lines), or
 * -1 with *error (no such file, or tail's own error), as one tail says them. */
void joblog_tails_command(struct strbuf *sb, char *const *paths, size_t n, int lines);
struct remote_reply;
int joblog_tails_take(const struct remote_reply *rr, size_t i, char **text, char **error);
/* Follow path while SLURM job id is in the queue (pending, running, ...). */
void joblog_follow_slurm_command(struct strbuf *sb, const char *path, const char *id);
/* Follow path while the plain-host job of stage_dir (group pgid) runs. */
void joblog_follow_plain_command(struct strbuf *sb, const char *path, const char *stage_dir,
				 long pgid);

/* What `dispatch logs` asks: the file, and the job whose end stops -f. */
struct joblog_request {
	const char *path;
	bool follow;
	const char *id;         /* a SLURM job's id */
	const char *stage_dir;  /* a plain host's job: its stage dir (else NULL) */
	long pgid;              /* and its process group */
};

/* Prints (or follows) the file over ss, its bytes to on_stdout, the remote stderr
 * to on_stderr (each returns nonzero to stop). *status: the remote exit status
 * (JOBLOG_NO_FILE: no file). Returns 0, or -1 and err. */
int joblog_stream(struct ssh_session *ss, const struct joblog_request *rq,
		  int (*on_stdout)(void *data, const char *buf, size_t len),
		  int (*on_stderr)(void *data, const char *buf, size_t len), void *data, int *status,
		  struct dp_error *err);

#endif
