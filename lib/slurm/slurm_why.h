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

/* One sentence for a job's state: why it is pending (reason), or why it ended
 * (state, exit code and signal as sacct's "N:S", -1 unknown; nodes for NODE_FAIL).
 * NULL for RUNNING, COMPLETED and other states with nothing to explain. Caller
 * frees. */
char *slurm_why(const char *state, const char *reason, int exit_code, int signal,
		const char *nodes);

#endif
