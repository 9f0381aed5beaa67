/* SPDX-License-Identifier: MIT */
/*
 * How SLURM jobs that ended without COMPLETED ended, beyond their state row: each
 * step's MaxRSS against its memory limit per node (sacct), and the user names of
 * the uids that cancelled jobs (the cluster's passwd through getent), and the state
 * of the nodes of jobs that ended NODE_FAIL (sinfo: which one is down, and why), in
 * one command for the jobs of a host.
 *
 * The limit SLURM enforces is per node: the step's AllocTRES "mem=" over its
 * "node=" count (an srun step over two nodes with --mem=150M shows mem=300M,node=2).
 * Where a row has no AllocTRES mem, the job's ReqMem: "4000Mn" per node and
 * "4000Mc" per CPU (SLURM before 21.08), or a plain "300M" for the whole job (21.08
 * and later), divided over the job's nodes. MaxRSS is the largest task's.
 */
#ifndef DISPATCH_SLURM_END_H
#define DISPATCH_SLURM_END_H

#include <stddef.h>

#include "base/strbuf.h"

/* The marker, sacct's steps of ids ([0-9_] ids), its exit status, the marker for the
 * users, then `getent passwd UID` for each of uids (digits only; others are left
 * out); then, when nodes (hostlists) are given, the marker for the nodes and one
 * `sinfo -N` of their states and reasons. uids and nodes may be NULL. */
void slurm_end_command(struct strbuf *sb, char *const *ids, char *const *uids,
		       char *const *nodes);

struct slurm_end_row {
	char *job, *step;       /* "123", "batch" ("" for the job's own row) */
	char *state;            /* the word: "CANCELLED by 0" gives "CANCELLED" */
	int exit_code, signal;  /* ExitCode "N:S"; -1 when not given */
	long long max_rss;      /* bytes; -1 when sacct gave none */
	long long mem_limit;    /* bytes per node; -1 when not known */
	char *rss_node;         /* MaxRSSNode; "" when none */
	char *nodes;            /* NodeList */
};

struct slurm_end_node {
	char *name, *state, *reason; /* sinfo's %N, %T ("down*", "idle"), %E ("none") */
};

struct slurm_end {
	struct slurm_end_row *rows;
	size_t n;
	struct slurm_end_node *nodes; /* each node once */
	size_t nnodes;
	char **uids, **names;   /* the passwd answers, side by side (strv) */
	int sacct_exit;         /* sacct's exit status; -1 when it did not report */
};

/* The command's answer; lines that are not rows are skipped. */
void slurm_end_parse(const char *out, struct slurm_end *e);
void slurm_end_release(struct slurm_end *e);

/* The step of job (an id as asked: "123", "123_4") that used the most of its memory
 * limit (MaxRSS over the limit per node); NULL when no step has both numbers. */
const struct slurm_end_row *slurm_end_memory(const struct slurm_end *e, const char *job);
/* The user name of uid, NULL when the cluster's passwd did not say. */
const char *slurm_end_user(const struct slurm_end *e, const char *uid);
/* The nodes of hostlist that sinfo says are down, drained, failing or not
 * responding, with why: "node2 down (Not responding)", several joined by ", ";
 * NULL when none is (it came back) or sinfo did not say. Caller frees. */
char *slurm_end_failed_nodes(const struct slurm_end *e, const char *hostlist);

/* The memory limit per node, in bytes, from an AllocTRES ("cpu=2,mem=300M,node=2")
 * and, when it has no mem, a ReqMem ("4000Mn", "4000Mc", "300M"); -1 when neither
 * says. */
long long slurm_mem_per_node(const char *alloc_tres, const char *req_mem);

/* bytes in the larger binary unit that keeps a digit before the point: "309.6 MiB",
 * "1.9 GiB", "512 B". Caller frees. */
char *slurm_human_bytes(long long bytes);

#endif
