/* SPDX-License-Identifier: MIT */
/*
 * `dispatch top` on a SLURM job: its GPUs, sampled by nvidia-smi on each of
 * its nodes through job steps started once per session.
 *
 * What runs: `scontrol -d show job J` first (state, reason, and the GPUs each node
 * was given: "Nodes=node1 ... GRES=gpu:a100:2(IDX:0-1)"), then one command on the
 * login node that starts `srun --jobid=J --overlap` over the job's nodes (one srun
 * per group of nodes given the same number of GPUs, that number asked for outright:
 * a step of an --exclusive job gets no GPUs otherwise) running a small script on
 * every node, and prints a tick line every interval while the steps run. The node
 * script says who it is and which GPUs the step got (SLURM_STEP_GPUS,
 * CUDA_VISIBLE_DEVICES), probes `nvidia-smi --help-query-gpu` once for the fields
 * that exist (clocks_event_reasons since driver 535, clocks_throttle_reasons
 * before: nvidia-smi fails a whole query on one unknown field), and then runs
 * `nvidia-smi --query-gpu=... --format=csv,noheader,nounits -l S`. Every line a
 * node prints carries the node's name: "dispatch-top NODE KIND REST".
 *
 * GPUs are keyed by UUID (else PCI bus id), never by index: a step with device
 * constraints sees its GPUs renumbered from 0, one without sees all of the node's
 * GPUs, and is filtered to SLURM_STEP_GPUS by minor number (the /dev/nvidiaN that
 * gres.conf names). "[N/A]", "[Not Supported]" and other bracketed answers are
 * null (NAN), never 0: MIG GPUs report no utilisation.
 */
#ifndef DISPATCH_SLURM_TOP_H
#define DISPATCH_SLURM_TOP_H

#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "gpu/gpu_top.h"

struct ssh_session;
struct sched_job;
struct top_session;

void gpu_top_job_command(struct strbuf *sb, const char *id);
/* Parses `scontrol -d show job` (the first record). Nodes named by NodeList but by
 * no "Nodes=" line hold no GPUs. Returns 0, or -1 when a hostlist does not expand. */
int gpu_top_parse_job(const char *out, struct gpu_top_job *j);
/* The login-node command: the sruns and the tick. interval in seconds (>= 1);
 * minutes > 0 bounds each step (srun -t). With health, each node first runs
 * gpu_health_command (lib/gpu/node_health.h) once, its lines sent as
 * "dispatch-top NODE health LINE" (kept in the node's health). With procs, each
 * node also lists the job's processes every interval, beside nvidia-smi, in the same
 * step (lib/sched/slurm/slurm_procs.h). */
void gpu_top_slurm_command(struct strbuf *sb, const char *id, const struct gpu_top_job *j,
			   int interval, long minutes, bool health, bool procs);

/* Asks host (over ss) for job id's state and nodes into *j: 0, or -1 and err (not
 * found: DPE_NOTFOUND). arg is the job as the user named it, for messages. */
int slurm_top_job_fetch(struct ssh_session *ss, const char *id, const char *arg, const char *host,
			struct gpu_top_job *j, struct dp_error *err);

/* sched_slurm's top: the job's state and nodes (only s->nodes of them), then one
 * overlap step per group of nodes for the whole session (lib/sched/sched_top.h). */
int slurm_top_run(struct ssh_session *ss, const struct sched_job *job, struct top_session *s,
		  struct dp_error *err);

#endif
