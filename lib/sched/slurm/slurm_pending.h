/* SPDX-License-Identifier: MIT */
/*
 * Why a pending SLURM job waits, with the numbers: one remote script for all the
 * pending jobs of a `status` or `queue` call, then one detail per job.
 *
 * The script prints sections, each after a "dispatch-pending-KIND" line:
 *   jobs        squeue --start -o '%i|%P|%D|%C|%m|%b|%l|%q|%a|%n|%S|%r|%E': the request,
 *               the expected start ("N/A" when SLURM has none), the dependency last
 *   deps        squeue -o '%i|%T|%r' for the jobs named in those dependencies
 *   nodes       scontrol -o show node: CPUTot/CPUAlloc, RealMemory/AllocMem,
 *               CfgTRES/AllocTRES (gres/gpu), State, Partitions (Reason, last, unread)
 *   partitions  scontrol -o show partition: MaxTime, MaxNodes, State
 *   health      sinfo -N '%N|%T|%H|%u|%E' (lib/gpu/node_health.h): drain reasons whole
 *   qos, assoc  sacctmgr -nP show qos / show assoc (the login's user), only when asked:
 *               the limits QOS* and Assoc* reasons name
 * A field that is missing or an output that does not parse gives less detail, never
 * a wrong number.
 */
#ifndef DISPATCH_SLURM_PENDING_H
#define DISPATCH_SLURM_PENDING_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "transport/ssh.h"

#include "base/strbuf.h"

/* The script for the pending jobs ids (squeue's ids); limits: also sacctmgr's QOS and
 * association limits (worth it only for a QOS* or Assoc* reason). */
void slurm_pending_command(struct strbuf *sb, char *const *ids, bool limits);
/* Whether a reason is one whose detail needs the limits. */
bool slurm_pending_wants_limits(const char *reason);

struct slurm_pending {
	char *id, *reason;
	char *text;             /* the detail in one line, with its numbers; NULL: none */
	cJSON *detail;          /* the same as an object ("request", "free", "depends_on",
				   "nodes", "limit", ...); never NULL */
};

/* One entry per job of the jobs section, in its order. */
size_t slurm_pending_parse(const char *out, struct slurm_pending **jobs);
const struct slurm_pending *slurm_pending_find(const struct slurm_pending *jobs, size_t n,
					       const char *id);
void slurm_pending_free(struct slurm_pending *jobs, size_t n);
/* Why the pending jobs ids (squeue's, an array's pending rest "41_[2-5%2]" included)
 * wait, asked over ss in one command: *jobs and *n (NULL and 0 for none); -1 and err
 * when the command did not run. */
int slurm_pending_fetch(struct ssh_session *ss, char *const *ids, bool limits,
			struct slurm_pending **jobs, size_t *n, struct dp_error *err);
/* --json's "pending" of a job: {"reason", "words", "text", "detail"}; p may be NULL
 * (lib/sched/slurm/slurm_sched.c). */
cJSON *slurm_pending_json(const char *reason, const struct slurm_pending *p);

#endif
