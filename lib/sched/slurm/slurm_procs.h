/* SPDX-License-Identifier: MIT */
/*
 * `dispatch top --procs` on a SLURM job: the job's processes on each node and the
 * GPUs they hold, reported every interval by the same overlap step that runs
 * nvidia-smi (gpu_top_slurm_command with procs): no step, no connection of its own.
 *
 * Each interval the node script prints, in gpu_top's line protocol
 * ("dispatch-top NODE KIND ARGS", srun -l's "N: " before it):
 *
 *   procs-begin
 *   proc PID PPID PGID UID %CPU RSS_KIB COMMAND USER    (lib/sched/plain/plain_top.h)
 *   app PID, UUID, MIB      nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory
 *   procs-end HOW           "listpids" or "ps": how the processes were found
 *
 * The processes are those `scontrol listpids JOB NODE` names (slurmstepd's own list
 * for each step: it works with every proctrack plugin, and asks only the node's
 * slurmstepds, never the controller), the top step's own left out (SLURM_STEP_ID).
 * Where scontrol cannot answer, the descendants of the job's other slurmstepd
 * processes in ps (titled "slurmstepd: [JOB.STEP]"). A node's list is shown once
 * its procs-end came: a sample never shows half a list.
 */
#ifndef DISPATCH_SLURM_PROCS_H
#define DISPATCH_SLURM_PROCS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "gpu/gpu_top.h"
#include "sched/plain/plain_top.h"

/* The node script's part (sh): defines the listing and starts it in the
 * background, every interval seconds; uses p (gpu_top's printer) and n. */
void slurm_procs_script(struct strbuf *sb, int interval);

struct slurm_procs {
	size_t n;               /* one per node of the gpu_top */
	struct plain_top *cur;  /* the last complete list of each node */
	struct plain_top *next; /* the list being read */
	bool *ready, *open;     /* cur holds a list; next is being read */
	char **how;             /* "listpids", "ps": as the node said */
};

void slurm_procs_init(struct slurm_procs *sp, const struct gpu_top *t);
void slurm_procs_release(struct slurm_procs *sp);
/* A line of the session's output; other lines are ignored. */
void slurm_procs_feed(struct slurm_procs *sp, const struct gpu_top *t, const char *line);
/* Node i's processes (plain_top_proc, plain_top_gpu_procs and the sums work on
 * it), or NULL before its first complete list. */
const struct plain_top *slurm_procs_node(const struct slurm_procs *sp, size_t i);

#endif
