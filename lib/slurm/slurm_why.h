/* SPDX-License-Identifier: MIT */
/*
 * Why a SLURM job waits or why it ended without COMPLETED, in words a user acts on:
 * a table of squeue's pending reasons (an unknown one is given as SLURM writes it),
 * and the end states with sacct's exit code and signal.
 */
#ifndef DISPATCH_SLURM_WHY_H
#define DISPATCH_SLURM_WHY_H

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
};

/* One sentence for a job's state: why it is pending (reason), or why it ended.
 * NULL for RUNNING, COMPLETED and other states with nothing to explain. Caller
 * frees. */
char *slurm_why(const struct slurm_why_job *j);

#endif
