/* SPDX-License-Identifier: MIT */
/*
 * What `dispatch wait` makes of each poll's answers, one job at a time: the state
 * machine behind it, without the polling. A SLURM job's rows (squeue's for active
 * jobs, sacct's for the others, joined as slurm_select does) or a plain job's status
 * move it on: an array job is running while any task runs and has ended when none is
 * active (its worst end shown); PREEMPTED is taken as an end only when the next poll
 * still says so (a requeue comes back PENDING); a job seen once and then named by
 * neither squeue nor sacct, or squeue and sacct disagreeing, waits JOBWAIT_LAG_POLLS
 * polls before squeue's last word (or UNKNOWN) is taken; so does an end that only
 * squeue gives while sacct answers (accounting lags: the exit code, the canceller
 * come with sacct's row); a job no answer ever named is not found.
 */
#ifndef DISPATCH_JOBWAIT_H
#define DISPATCH_JOBWAIT_H

#include <stdbool.h>
#include <stddef.h>

#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm.h"

/* Polls in a row in which squeue and sacct disagree (accounting lags) or a job seen
 * before is known to neither, before squeue's last word (or UNKNOWN) is taken. */
#define JOBWAIT_LAG_POLLS 5

struct jobwait {
	const char *id, *host;  /* borrowed */
	bool plain;
	bool until_running;     /* done once it runs (--until running) */
	bool done;              /* settled, or (until_running) seen running */
	bool settled;           /* reached an end */
	bool not_found;
	bool seen;              /* some answer named it */
	bool seen_running;
	int lag, preempted;
	bool sacct_answered;    /* set by the caller for each poll: sacct ran and answered
				   (false without accounting: squeue's end is all there is) */
	bool awaiting_sacct;    /* ended in squeue, waiting for sacct's row of the end */
	int sacct_lag;          /* polls it has waited for it */
	char *state, *reason, *elapsed, *nodes; /* NULL until an answer said */
	char *time_limit, *cancelled_by;        /* for slurm_why; NULL until said */
	char *first_node;       /* where it was first seen running */
	int exit_code, signal;  /* -1 unknown */
	size_t ntasks;          /* rows that answered (array tasks) */
};

void jobwait_init(struct jobwait *j, const char *id, const char *host, bool plain,
		  bool until_running);
void jobwait_release(struct jobwait *j);

/* What an answer did to a job. */
enum jobwait_event {
	JOBWAIT_SAME,           /* nothing new to say */
	JOBWAIT_CHANGED,        /* a new state (j->state), with *detail */
	JOBWAIT_NOT_FOUND,      /* no answer ever named it: settled as NOT_FOUND */
};

/* One poll's rows (slurm_parse_status of both halves) for a SLURM job. *detail, for
 * JOBWAIT_CHANGED, is where it runs or why it waits ("" for none), borrowed from
 * rows. */
enum jobwait_event jobwait_slurm(struct jobwait *j, const struct slurm_job *rows, size_t n,
				 const char **detail);
/* One poll's answers for a plain-host job (*detail is always ""). */
enum jobwait_event jobwait_plain(struct jobwait *j, const struct plainjob_status *p, size_t n,
				 const char **detail);
/* Settled as NOT_FOUND without asking (a plain job dispatch did not submit). */
void jobwait_not_found(struct jobwait *j);

/* Whether the job did what was waited for: COMPLETED, or (until_running) runs. */
bool jobwait_ok(const struct jobwait *j);

/* What a wait for the n jobs ends with, an enum dp_error_kind (the exit status):
 * DPE_TIMEOUT when it gave up first (timed_out), else DPE_NOTFOUND when a job was not
 * found, else DPE_FAIL when a job is done and not OK (jobwait_ok), else 0. */
int jobwait_result(const struct jobwait *const *jobs, size_t n, bool timed_out);

/* The ids of ids (a strv) that no row shows active: sacct's to answer. A strv, or
 * NULL when squeue has them all. */
char **jobwait_gone(char *const *ids, const struct slurm_job *rows, size_t n);

#endif
