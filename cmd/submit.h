/* SPDX-License-Identifier: MIT */
/*
 * What submit, submit-packed (cmd/cmd-submit.c) and notebook (cmd/cmd-notebook.c)
 * share: the variables their options set, the option table entries and rules, and
 * the one submission they all run.
 */
#ifndef DISPATCH_SUBMIT_H
#define DISPATCH_SUBMIT_H

#include <stdbool.h>

#include "code/snapshot.h"
#include "dispatch.h"
#include "inventory/inventory.h"
#include "inventory/jobspec.h"
#include "inventory/jobspec_options.h"
#include "solver.h"
#include "submission.h"

/* What the command line says. */
struct submit_options {
	const char *host, *file, *emit, *payload, *repo, *ref, *retry;
	bool solve, check, no_check, dry_run, wait, follow, no_tail, dirty;
	char **clusters, **exclude_clusters;    /* --solve's --cluster, --exclude-cluster */
	struct jobspec cli;             /* the job options, as given */
	struct notebook_opts nb;        /* notebook: --port, --timeout, --detach, --cancel-on-exit */
};
extern struct submit_options submit_opt;

/* cmd/submit-remote.c: a submission's hooks for the command line: reconnecting to
 * dest, notes as messages (-v: the info), the upload's progress on a terminal. */
struct submit_hook_data {
	struct dp_ctx *ctx;
	const char *dest;
	double start, last_draw;
};
struct submission_hooks submit_hooks(struct submit_hook_data *d);

/* cmd/submit-retry.c: submit --retry SWEEP (args: no COMMAND; o: only --max-parallel). */
int submit_retry(struct dp_ctx *ctx, const struct dp_args *args, const struct submit_options *o,
		 const char *sweep);

/* A job option (--time, --env, ...): into submit_opt.cli, in command-line order. */
int submit_job_option(const struct dp_ctx *ctx, const struct dp_option *o, const char *arg);

#define X(SHORT, NAME, ARGNAME, HELP, COMPLETE, KIND, FIELD, ...) \
	OPT_CALLBACK(SHORT, NAME, &submit_opt.cli, ARGNAME, HELP, COMPLETE, submit_job_option),
#define JOB_OPTIONS JOBSPEC_OPTIONS(X)

#define HOST_OPTIONS \
	OPT_STRING('H', "host", &submit_opt.host, "HOST", "the inventory host (or ssh alias of a SLURM login) to submit to", "host"), \
	OPT_BOOL(0, "solve", &submit_opt.solve, "let the solver pick the host from the inventory"), \
	OPT_BOOL(0, "check", &submit_opt.check, "with --solve: pick among hosts with the GPUs free now (the default)"), \
	OPT_BOOL(0, "no-check", &submit_opt.no_check, "with --solve: from the inventory alone, asking no host"), \
	OPT_CALLBACK(0, "cluster", &submit_opt.clusters, "CLUSTER", "with --solve: only hosts of CLUSTER (repeatable, or comma-separated)", NULL, option_add_words), \
	OPT_CALLBACK(0, "exclude-cluster", &submit_opt.exclude_clusters, "CLUSTER", "with --solve: never hosts of CLUSTER (repeatable, or comma-separated)", NULL, option_add_words),
#define REPO_OPTIONS \
	OPT_STRING(0, "repo", &submit_opt.repo, "DIR", "the repository, or a directory in it where the command runs (default .)", "dir"), \
	OPT_STRING(0, "ref", &submit_opt.ref, "REF", "the files of commit, tag or branch REF, as git archive (default HEAD)", NULL), \
	OPT_BOOL(0, "dirty", &submit_opt.dirty, "the work tree as it is now: edits and untracked files, not ignored ones"),

#define HOST_RULES \
	{ DP_EXCLUDES, "-H", "--solve", "-H and --solve exclude each other: name the host, or let the " \
	  "solver pick one" }, \
	{ DP_REQUIRES, "--check --no-check --cluster --exclude-cluster", "--solve", "%s goes with --solve" }, \
	{ DP_EXCLUDES, "--check", "--no-check", "--check and --no-check exclude each other" }, \
	{ DP_NEEDS_ONE, "-H --solve", NULL, "submit needs a host: give -H HOST, or --solve to pick one " \
	  "from the inventory" },
#define REF_RULES \
	{ DP_EXCLUDES, "--ref", "--dirty", "--ref and --dirty exclude each other: a commit's files, or the " \
	  "work tree as it is" },

/* One submission, from the options to the submitted job. */
struct submit {
	struct submit_options *o;
	void *live;                     /* --check's answers; solved points into them */
	bool packed;                    /* submit-packed: --repo, --ref, --dirty */
	bool notebook;                  /* notebook: a packed job, the command ours */
	struct snapshot_info snap;
	struct jobspec spec;
	struct inv_host adhoc;          /* -H for a host the inventory does not name */
	const struct inv_host *host;
	const char *gres_type, *partition;
	struct solve_result solved;
	unsigned char *payload;
	size_t payload_len;
	struct submission_job job;      /* what goes to lib/submission.h */
	/* A sweep on plain hosts (-H box1, -H box[1-2]): its hosts, host the first;
	 * nhosts 0: not such a sweep. */
	const struct inv_host **hosts;
	size_t nhosts;
};

/* cmd/submit-host.c: s->host (and a plain sweep's s->hosts) from -H or --solve; 0 or
 * the exit status (reported). */
int submit_pick_host(struct dp_ctx *ctx, struct submit *s);

/* cmd/submit-remote.c: submits the generated job sub over SSH, then prints it (or
 * opens the notebook's tunnel, or attaches); the exit status. */
int submit_remote(struct dp_ctx *ctx, struct submit *s, struct submission *sub);
/* The prepared sub of job, submitted to its host over a connection of its own with
 * submit's hooks (-v notes, warnings, the reconnect after a lost connection); as
 * submission_run. */
int submit_run_on(struct dp_ctx *ctx, const struct submission_job *job, struct submission *sub,
		  struct ledger *l, struct dp_error *err);

/* cmd/submit-sweep.c: a sweep on plain hosts (s->nhosts), from the prepared options to
 * the runs printed (or the dry run's table and scripts); the exit status. */
int submit_sweep(struct dp_ctx *ctx, struct submit *s);

enum submit_kind { SUBMIT_PLAIN, SUBMIT_PACKED, SUBMIT_NOTEBOOK };
/* Submits the job the options and operands describe; the exit status. */
int submit_main(struct dp_ctx *ctx, const struct dp_args *args, enum submit_kind kind);

#endif
