/* SPDX-License-Identifier: MIT */
/*
 * Marker lines: how a remote shell tells dispatch what happened. This header is the one
 * table of marker keys (lib/remote/remote.c lists them all for the reply parser; a new
 * key is a line here and one there). The shell text
 * dispatch sends prints lines "dispatch-KEY VALUE" (or "dispatch-KEY" alone, a
 * section mark) among the tools' own output, and dispatch reads them back. Every key
 * is named here, written into shell text by the marker_* emitters (or, inside a
 * larger shell literal, by the MARK_* strings), and read by marker_value and friends,
 * over the one line iterator below.
 *
 *	marker_print(&sb, MARK_PID, "\"$!\"");   // printf 'dispatch-pid %s\n' "$!"
 *	long pid = marker_find_long(out, MARK_PID, 2, 0x7fffffff);
 */
#ifndef DISPATCH_MARKER_H
#define DISPATCH_MARKER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

#define MARKER(key) "dispatch-" key

/* Directories a submission made, as the host's shell resolved them. */
#define MARK_SHARE MARKER("share")
#define MARK_STAGE MARKER("stage")
/* notebook sync applied its patch (lib/notebook_sync.sh): "dispatch-synced FILES". */
#define MARK_SYNCED MARKER("synced")
/* The stage dir a submission would make exists already (another took the name). */
#define MARK_STAGE_TAKEN MARKER("stage-taken")
/* cp -r's tar upload put the tree in place (lib/transport/tar_upload.sh): "1" into the
 * destination directory, "0" as the destination. */
#define MARK_CP_INTO MARKER("cp-into")
#define MARK_WORK MARKER("work")
#define MARK_LOG MARKER("log")
/* The login's user name and the host's clock (seconds since the epoch). */
#define MARK_USER MARKER("user")
#define MARK_NOW MARKER("now")
/* A sweep's submission: the cluster's MaxArraySize line of scontrol show config. */
#define MARK_MAX_ARRAY MARKER("max-array")
/* Exit statuses of the tools, each right after the tool ran. */
#define MARK_SBATCH_EXIT MARKER("sbatch-exit")
#define MARK_SQUEUE_EXIT MARKER("squeue-exit")
#define MARK_SACCT_EXIT MARKER("sacct-exit")
#define MARK_STEPS_EXIT MARKER("steps-exit")
#define MARK_SCANCEL_EXIT MARKER("scancel-exit")
/* wait's poll: the digest of squeue --only-job-state's answer, and the mark that it
 * is the digest dispatch already had (nothing changed: no full squeue ran). */
#define MARK_SQUEUE_STATES MARKER("squeue-states")
#define MARK_SQUEUE_SAME MARKER("squeue-same")
/* Sections of a status or token lookup's answer. */
#define MARK_STATUS MARKER("status")
#define MARK_OUT MARKER("out")
#define MARK_ERR MARKER("err")
#define MARK_SQUEUE MARKER("squeue")
#define MARK_SACCT MARKER("sacct")
#define MARK_STEPS MARKER("steps")
#define MARK_END MARKER("end")
/* dispatch queue: squeue's version and the form of its answer. */
#define MARK_VERSION MARKER("version")
#define MARK_FORMAT MARKER("format")
/* dispatch logs: a finished job's paths and name from accounting (sacct 24.05+). */
#define MARK_ACCT_OUT MARKER("acct-out")
#define MARK_ACCT_ERR MARKER("acct-err")
#define MARK_ACCT_NAME MARKER("acct-name")
/* A container job's check before it is submitted: what is missing on the host. */
#define MARK_PREFLIGHT MARKER("preflight")
/* Plain-host jobs: the started process, a job's state, a cancel's outcome. */
#define MARK_PID MARKER("pid")
/* A sweep's task: "ID started PGID", "ID failed PGID" (its launcher gave up at once),
 * "ID none" (it did not start). */
#define MARK_TASK MARKER("task")
/* A sweep's start on a plain host: printed before its first task is made (none
 * before it: certainly none started). */
#define MARK_TASKS_BEGIN MARKER("tasks-begin")
#define MARK_JOB MARKER("job")
#define MARK_QJOB MARKER("qjob")
#define MARK_CANCEL MARKER("cancel")
/* A command through an OpenSSH master: the pid (and process group) of its session's
 * shell, on stderr first, so that a timeout can stop it (lib/transport/ssh_mux.c). */
#define MARK_SESSION_PID MARKER("session-pid")
/* Host facts: "@dispatch NAME" opens a tool's section, "@dispatch status N" closes it
 * (a form no tool prints at the start of a line), "@dispatch end" ends the answer. */
#define MARK_SECTION "@dispatch"
/* dispatch top: a node's line ("dispatch-top NODE KIND REST") and the login node's
 * tick, once an interval. */
#define MARK_TOP MARKER("top")
#define MARK_TOP_TICK MARKER("top-tick")
/* hosts show --health (lib/gpu/node_health.h) */
#define MARK_SINFO_EXIT MARKER("sinfo-exit")
#define MARK_HEALTH MARKER("health")
/* How failed SLURM jobs ended (lib/sched/slurm/slurm_end.h): sacct's steps, then the
 * cancellers' passwd lines, then the failed nodes' states. */
#define MARK_FAIL_STEPS MARKER("fail-steps")
#define MARK_FAIL_STEPS_EXIT MARKER("fail-steps-exit")
#define MARK_FAIL_USERS MARKER("fail-users")
#define MARK_FAIL_NODES MARKER("fail-nodes")
/* A notebook server as its job starts it (lib/notebook.c): "dispatch-notebook HOST ADDR
 * PORT" once it listens, its exit status when it failed to start, the poll's state. */
#define MARK_NOTEBOOK MARKER("notebook")
#define MARK_NOTEBOOK_EXIT MARKER("notebook-exit")
#define MARK_NOTEBOOK_STATE MARKER("notebook-state")
/* Why pending SLURM jobs wait (lib/sched/slurm/slurm_pending.h): the sections of its
 * script's answer. */
#define MARK_PENDING_JOBS MARKER("pending-jobs")
#define MARK_PENDING_DEPS MARKER("pending-deps")
#define MARK_PENDING_NODES MARKER("pending-nodes")
#define MARK_PENDING_PARTS MARKER("pending-partitions")
#define MARK_PENDING_HEALTH MARKER("pending-health")
#define MARK_PENDING_QOS MARKER("pending-qos")
#define MARK_PENDING_ASSOC MARKER("pending-assoc")
/* A run's ended attempt (lib/jobs/run_attempts.h): "dispatch-attempt
 * JOB|ATTEMPT|STATE|EPOCH|NODE", a line of its stage dir's attempts file. */
#define MARK_ATTEMPT MARKER("attempt")
/* A run out of restarts: "dispatch-gave-up JOB|WHY" (its stage dir's gave-up line). */
#define MARK_GAVE_UP MARKER("gave-up")
/* A job's metric (lib/jobs/job_metrics.h): "dispatch-metric JOB|TASK|NAME=VALUE", the
 * last DISPATCH_METRIC line of its log (TASK: an array task's id, "-" for a job). */
#define MARK_METRIC MARKER("metric")
/* What a job did on a node (lib/jobs/job_usage.h): "dispatch-usage JOB|NODE|START|END|
 * SAMPLES|CPU|RSS", then a "dispatch-usage-gpu JOB|NODE|UUID|..." line per GPU. */
#define MARK_USAGE MARKER("usage")
#define MARK_USAGE_GPU MARKER("usage-gpu")
/* What a SLURM job was allocated (sacct): "dispatch-usage-alloc JOB|ELAPSED_SECONDS|
 * ALLOC_TRES|USER". */
#define MARK_USAGE_ALLOC MARKER("usage-alloc")
/* Where a job's stages stand (--stage; lib/jobs/job_stages.h): "dispatch-stages
 * JOB|N,I:S,...". */
#define MARK_STAGES MARKER("stages")
/* A job its sampler ended (--idle-timeout): "dispatch-idle JOB|WHY". */
#define MARK_IDLE MARKER("idle")
/* Several jobs asked in one exchange, a part each (lib/jobs/jobs.c's detail): "dispatch-
 * paths-job I" before job I's output paths (the backend's), "dispatch-tail-job I"
 * before the last lines of job I's log, each line led by '|' (no log line reads as a
 * mark), then "dispatch-tail-err LINE" (tail's first error line, when it printed
 * one) and "dispatch-tail-exit STATUS". */
#define MARK_PATHS_JOB MARKER("paths-job")
/* "dispatch-part NAME": where a script that asks several things of one host at once
 * (jobs.c's detail: end, pending, paths, attempts) starts the part NAME. */
#define MARK_PART MARKER("part")
#define MARK_TAIL_JOB MARKER("tail-job")
#define MARK_TAIL_ERR MARKER("tail-err")
#define MARK_TAIL_EXIT MARKER("tail-exit")

/* Shell text: "echo MARK" (a section mark), "printf 'MARK %s\n' WORD" (WORD is shell
 * text: a quoted expansion such as "\"$PWD\"" or "\"$(id -un)\""), and "echo \"MARK
 * $VAR\"" for an exit status held in a shell variable ("?" for the last command's). */
void marker_echo(struct strbuf *sb, const char *mark);
void marker_print(struct strbuf *sb, const char *mark, const char *word);
void marker_status(struct strbuf *sb, const char *mark, const char *var);

/* The lines of a text, one at a time, without their newline (a trailing \r dropped):
 *
 *	struct line_iter it = LINE_ITER_INIT(out);
 *	for (char *line; (line = line_next(&it));)
 *		...                     // it.start: where the line begins in out
 *	line_iter_release(&it);
 *
 * The line may be changed by the caller and lives until the next call. */
struct line_iter {
	const char *next;       /* the rest of the text; NULL at the end */
	const char *start;      /* the current line in the text */
	char *line;
};
#define LINE_ITER_INIT(text) { .next = (text), .start = NULL, .line = NULL }
char *line_next(struct line_iter *it);
void line_iter_release(struct line_iter *it);
/* Calls fn for each line, as line_next gives them. */
void each_line(const char *text, void (*fn)(void *data, char *line), void *data);

/* The value of a marker line: for "MARK VALUE" a pointer to VALUE, for "MARK" alone
 * "", for any other line NULL. */
const char *marker_value(const char *line, const char *mark);
/* The value of the last line of text with mark (a copy), or NULL. */
char *marker_find(const char *text, const char *mark);
/* The last line with mark as a number from min to max; -1 when there is none or it is
 * not such a number. */
long marker_find_long(const char *text, const char *mark, long min, long max);

#endif
