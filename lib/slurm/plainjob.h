/* SPDX-License-Identifier: MIT */
/*
 * Jobs on plain hosts (no scheduler): the bootstrap runs detached from the SSH
 * session (setsid, stdin from /dev/null, HUP ignored), in a process group of its own,
 * with its output in a log file. Its stage dir keeps what status and cancel read:
 *
 *   STAGE/pid          "PGID START" once it started (the group leader is a small sh
 *                      that waits for the bootstrap; START in unix seconds)
 *   STAGE/exit_status  "STATUS END" once it ended (STATUS as a shell reports it:
 *                      128+N after signal N)
 *   STAGE/cancelled    written by cancel before it signals the group
 *
 * The job's id is the stage dir's name, which is unique per submission.
 */
#ifndef DISPATCH_PLAINJOB_H
#define DISPATCH_PLAINJOB_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* The command that starts stage_dir/bootstrap.sh in workdir (all paths absolute),
 * appends its output to log_path, and prints "dispatch-pid PGID" once the pid file is
 * there (within about 10 s). DISPATCH_JOB_ID is job_id in the job. */
void plainjob_launch_command(struct strbuf *sb, const char *stage_dir, const char *workdir,
			     const char *log_path, const char *job_id);
/* The group id from the launch command's output; -1 when it is not there. */
long plainjob_parse_pid(const char *out);
/* Prints the process id a started job recorded (as the launch command does), for a
 * look after a lost connection; plainjob_parse_pid reads it (-1: not started). */
void plainjob_pid_command(struct strbuf *sb, const char *stage_dir);

struct plainjob_ref {
	const char *id;
	const char *stage_dir;
	long pgid;
};

/* One command for several jobs of one host: prints the host's clock and a line per
 * job (in order). */
void plainjob_status_command(struct strbuf *sb, const struct plainjob_ref *jobs, size_t n);

struct plainjob_status {
	char *id;
	const char *state;      /* "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "UNKNOWN"
				   (no process and no exit status: killed hard, or the host
				   rebooted) */
	int exit_code;          /* -1 while running or unknown */
	int exit_signal;        /* N when the status was 128+N, else 0; -1 unknown */
	long elapsed;           /* seconds; -1 unknown */
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

#endif
