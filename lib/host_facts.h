/* SPDX-License-Identifier: MIT */
/*
 * What a host has and has free now, asked in ONE remote command (one SSH exec):
 * a SLURM host's partitions and nodes (lib/sched/slurm/slurm_nodes.h), a plain host's GPUs and
 * their compute processes (lib/gpu/nvidia_smi.h). Used by hosts show, hosts discover and
 * solve --check.
 *
 * The command prints sections, each opened by a line "@dispatch NAME", holding the
 * tool's stdout and stderr, and closed by "@dispatch status N" (its exit status).
 * HOST_FACTS_AUTO asks `command -v sbatch` first: a SLURM host is one where sbatch is
 * and `scontrol show partition` works (SLURM's client installed without a cluster is
 * common: such a host counts as plain, slurm_error says why); any other host gets
 * the nvidia-smi sections when nvidia-smi is there, else none (a host without a GPU
 * tool: not an error).
 */
#ifndef DISPATCH_HOST_FACTS_H
#define DISPATCH_HOST_FACTS_H

#include "base/error.h"
#include "gpu/node_health.h"
#include "gpu/nvidia_smi.h"
#include "sched/slurm/slurm_nodes.h"
#include "base/strbuf.h"

enum host_facts_ask {
	HOST_FACTS_AUTO,        /* SLURM if sbatch is there, else nvidia-smi if there */
	HOST_FACTS_SLURM,       /* only the scontrol sections */
	HOST_FACTS_GPUS,        /* only the nvidia-smi sections */
};

struct host_facts {
	bool slurm;             /* sbatch is on the host and scontrol answered */
	char *slurm_error;      /* AUTO: sbatch is there but scontrol failed (why), or NULL */
	bool gpu_tool;          /* nvidia-smi is on the host (and answered) */
	struct slurm_facts sl;
	struct nvidia_gpus gpus;
	/* A plain host's dispatch jobs (its GPU lock directory, lib/sched/plain/plainjob.h):
	 * their leased GPUs are busy (and leased) in gpus; -1 when not known. */
	long jobs_running, jobs_pending;
	char *jobs_error;       /* why they are not known (the listing's last line), or NULL */
};

struct ssh_session;

/* The remote command for ask (a /bin/sh script, run in the login environment). With
 * the GPU sections, the dispatch jobs of the GPU lock directory lock_dir (NULL: the
 * default) too. */
void host_facts_command(struct strbuf *sb, enum host_facts_ask ask);
void host_facts_command_at(struct strbuf *sb, enum host_facts_ask ask, const char *lock_dir);

/* Parses the command's stdout (and uses its stderr for messages) into f. -1 with
 * DPE_FAIL when a tool failed (scontrol cannot reach the controller, nvidia-smi finds
 * no driver: the message has the tool's stderr), DPE_INPUT when the output is not
 * what the command prints (cut short, or the login shell printed into it), or when
 * HOST_FACTS_SLURM was asked and the host has no sbatch. */
int host_facts_parse(const char *out, const char *errout, enum host_facts_ask ask,
		     struct host_facts *f, struct dp_error *err);
void host_facts_release(struct host_facts *f);

/* "TOOL failed (exit status N): <last line of its output>" (malloc'd). */
char *host_facts_tool_error(const char *what, int status, const char *text, const char *errout);

/* Runs the command on an open session (at most timeout seconds; 0: none) and parses
 * its output. Errors as host_facts_parse, and ssh_exec's (DPE_CONNECT, DPE_TIMEOUT). */
int host_facts_fetch(struct ssh_session *s, enum host_facts_ask ask, double timeout,
		     struct host_facts *f, struct dp_error *err);
int host_facts_fetch_at(struct ssh_session *s, enum host_facts_ask ask, const char *lock_dir,
			double timeout, struct host_facts *f, struct dp_error *err);

/* The node of sl named name, or NULL. */
const struct slurm_node *host_facts_node(const struct slurm_facts *sl, const char *name);
/* `hosts show --health --json`'s "health": a plain host's GPU report, or each SLURM
 * node's state with the GPUs facts f counted on it. */
struct cJSON *host_health_json(const struct host_facts *f, const struct host_health *h);

#endif
