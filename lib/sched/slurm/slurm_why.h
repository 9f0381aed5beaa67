/* SPDX-License-Identifier: MIT */
/*
 * Why a SLURM job waits or why it ended without COMPLETED, in words a user acts on:
 * a table of squeue's pending reasons (an unknown one is given as SLURM writes it),
 * and the end states with sacct's exit code and signal.
 */
#ifndef DISPATCH_SLURM_WHY_H
#define DISPATCH_SLURM_WHY_H

#include <stdbool.h>

/* The explanation of a pending reason ("Resources", "QOSMaxGpuPerUserLimit"), or
 * NULL for one the table does not know. */
const char *slurm_pending_words(const char *reason);

/* What slurm_why reads of a job (NULL and -1 where not known). */
struct slurm_why_job {
	const char *state, *reason;
	int exit_code, signal;          /* sacct's "N:S" */
	const char *nodes;              /* NODE_FAIL: which */
	const char *elapsed, *time_limit; /* TIMEOUT: the one against the other */
	const char *cancelled_by;       /* CANCELLED: sacct's "by UID" */
	/* How it ended, from lib/sched/slurm/slurm_end.h (0 and NULL where not known): */
	long long max_rss, mem_limit;   /* bytes: the step that used the most of its
					   limit per node, and that limit */
	const char *rss_node, *rss_step; /* where: "node1", "batch" or "0" */
	const char *cancelled_by_name;  /* CANCELLED: the user name of cancelled_by */
	const char *failed_nodes;       /* NODE_FAIL: "node2 down (Not responding)" */
};

/* One sentence for a job's state: why it is pending (reason), or why it ended.
 * NULL for RUNNING, COMPLETED and other states with nothing to explain. Caller
 * frees. */
char *slurm_why(const struct slurm_why_job *j);

/* Whether an ended job ran out of memory: OUT_OF_MEMORY, or FAILED with a step
 * whose MaxRSS went past its limit (SLURM's OverMemoryKill, without cgroups, ends
 * the job FAILED with signal 9: "Exceeded job memory limit"). */
bool slurm_why_oom(const struct slurm_why_job *j);

/* A signal's name without "SIG" ("KILL"), NULL for one the table lacks. */
const char *slurm_signal_name(int sig);

/* One sentence for a plain-host job's end (state as lib/sched/plain/plainjob.h gives it):
 * the exit code, the signal, cancelled, or gone without a status. NULL for RUNNING,
 * PENDING and COMPLETED. Caller frees. */
char *slurm_why_plain(const char *state, int exit_code, int signal);

#endif
