/* SPDX-License-Identifier: MIT */
/*
 * `dispatch shell JOB`: what runs on the job's host to give the user a shell (or a
 * command) inside a running job.
 *
 * SLURM: `srun --jobid=ID --overlap -N1 -n1 -w NODE [--pty] "$SHELL" -l` on the login
 * node, so the step runs on the job's node, shares the job's resources (--overlap:
 * it never waits behind the job's own steps) and sees its environment
 * (SLURM_JOB_ID, CUDA_VISIBLE_DEVICES, ...). $SHELL is expanded on the login node:
 * the user's login shell on the cluster, as `ssh HOST` gives, not the local one.
 * Plain hosts: the shell starts in the job's work dir, where its command runs
 * (STAGE/workdir, written by the launcher and then the bootstrap:
 * lib/sched/plain/plainjob.h), with the job's DISPATCH_JOB_ID. With argv, argv runs instead of the shell, each
 * word quoted (lib/base/shquote.h): the remote side sees exactly these words, as
 * srun and ssh's exec give them.
 */
#ifndef DISPATCH_JOBSHELL_H
#define DISPATCH_JOBSHELL_H

#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"

struct gpu_top_job;
struct ssh_session;

struct gpu_top_job;

/* The node of j (a RUNNING job as gpu_top_parse_job read it) that want names: NULL
 * for the first, a 1-based position ("2": the second node) or a node name of the
 * job. NULL when the job has no such node. */
const char *jobshell_pick_node(const struct gpu_top_job *j, const char *want);

/* The login-node command for a shell (argv NULL or empty) or argv on node of job id;
 * pty: with a terminal (srun --pty). */
void jobshell_slurm_command(struct strbuf *sb, const char *id, const char *node, bool pty,
			    char *const *argv);

/* The command for a plain host's job id, whose stage dir is stage_dir; the shell
 * (or argv) gets DISPATCH_JOB_ID, as the job has it. */
void jobshell_plain_command(struct strbuf *sb, const char *id, const char *stage_dir,
			    char *const *argv);

/* What `dispatch shell` asks. */
struct jobshell_request {
	const char *id;         /* the job's id */
	const char *arg;        /* the job as the user named it (messages) */
	const char *host;
	const char *stage_dir;  /* a plain host's job: its stage dir (NULL: not in the ledger) */
	long pgid;              /* a plain host's job: its process group */
	const char *node;       /* --node, or NULL */
	bool pty;
	char *const *argv;      /* the command, or NULL for a login shell */
};

/* Asks the job's state over ss (plain: a plain host's job, else SLURM) and, when it
 * runs, builds the command for its shell into cmd: 0, or -1 and err; *usage when
 * the error is the caller's (--node), remote_err gets what the host said on stderr
 * when it gave no state (the caller passes it on). */
int jobshell_prepare(struct ssh_session *ss, bool plain, const struct jobshell_request *rq,
		     struct strbuf *cmd, struct strbuf *remote_err, bool *usage, struct dp_error *err);

#endif
