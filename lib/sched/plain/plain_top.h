/* SPDX-License-Identifier: MIT */
/*
 * `dispatch top` on a plain host: one remote script per refresh, over the session's
 * connection, printing in gpu_top's line protocol ("dispatch-top HOST KIND ARGS"):
 *
 *   me UID                  the user the script runs as
 *   lease GPUS              the GPUs the launcher leased for the job (indices, "-": none)
 *   ended                   the job has its exit_status: it ended
 *   ps PID PPID PGID UID %CPU RSS_KIB COMMAND    every process of the host (ps -e)
 *   proc PID PPID PGID UID %CPU RSS_KIB COMMAND USER    the same with the user's name
 *                          last (ps pads every column but the last; SLURM nodes)
 *   app PID, UUID, MIB      nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory
 *   fields ... / row ...    nvidia-smi --query-gpu, as on a SLURM node (gpu_top.h)
 *   no-nvidia-smi, failed MSG
 *
 * then the tick line. The job's processes are its process group (recorded at launch:
 * STAGE/pid) and every descendant of them, whatever group they moved to; its GPUs
 * are the ones it was leased plus any that one of its processes holds; a GPU of the
 * job that a process of another user also holds is shared.
 */
#ifndef DISPATCH_PLAIN_TOP_H
#define DISPATCH_PLAIN_TOP_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "gpu/gpu_top.h"

/* One refresh's script for the job of stage_dir (process group pgid), its lines
 * labelled node (the host's name, as gpu_top_init was given it). */
void plain_top_command(struct strbuf *sb, const char *node, const char *stage_dir, long pgid);

struct top_proc {
	long pid, ppid, pgid, uid;
	double cpu;             /* %CPU as ps gives it */
	long rss_kib;
	char *command;
	char *user;             /* "proc" lines (SLURM nodes); NULL from "ps" lines */
};

struct top_app {
	long pid;
	char *uuid;
	double mem_mib;         /* NAN: [N/A] */
};

struct plain_top {
	long pgid;
	bool job_only;          /* every process line is the job's (a SLURM node's list,
				   lib/sched/slurm/slurm_procs.h): no group to follow */
	long me;                /* -1 until said */
	char *lease;            /* "0,1", "" none, NULL not said */
	bool ended;
	struct top_proc *ps;    /* this refresh's processes, all of them */
	size_t nps;
	struct top_app *apps;
	size_t napps;
	/* after plain_top_settle: */
	struct top_proc **job;  /* the job's processes (pointers into ps) */
	size_t njob;
	double cpu;             /* their %CPU, summed */
	long rss_kib;
};

void plain_top_init(struct plain_top *p, long pgid);
void plain_top_release(struct plain_top *p);
/* A line of the script's output: the plain kinds are kept here; gpu_top_feed takes
 * the others (call both). Returns true for the tick. */
bool plain_top_feed(struct plain_top *p, const char *line);
/* The same, from what follows the node's name ("ps ...", "app ..."). */
void plain_top_feed_kind(struct plain_top *p, const char *kind);
/* The job's processes (its group and their descendants, or every line when listed),
 * their CPU and RSS summed. */
void plain_top_settle_procs(struct plain_top *p);
/* At the tick: the job's processes, its GPUs (rows of t marked in_step, shared), and
 * node 0's allocated count set to them; then ready for the next refresh (ps and apps
 * are kept until then, for plain_top_gpu_procs). */
void plain_top_settle(struct plain_top *p, struct gpu_top *t);
/* The job's processes on the GPU uuid: pointers into apps; *out allocated. */
size_t plain_top_gpu_procs(const struct plain_top *p, const char *uuid, const struct top_app ***out);
/* The job's process of pid, or NULL. */
const struct top_proc *plain_top_proc(const struct plain_top *p, long pid);
/* Forget the last refresh's processes and apps (before the next script runs). */
void plain_top_reset(struct plain_top *p);

struct ssh_session;
struct sched_job;
struct top_session;
/* sched_plain's top: the job's state, then its refresh script once per interval over
 * ss until s's count or the job's end (lib/sched/sched_top.h). */
int plain_top_run(struct ssh_session *ss, const struct sched_job *job, struct top_session *s,
		  struct dp_error *err);

#endif
