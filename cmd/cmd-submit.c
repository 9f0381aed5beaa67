/* SPDX-License-Identifier: MIT */
/*
 * dispatch submit and submit-packed: a job from options and/or a job file, to a host
 * named with -H or chosen by the solver. Generation is lib/jobs/jobscript.c; this file
 * reads the options, picks the host and generates the scripts; cmd/submit-remote.c
 * submits them over one SSH connection.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <time.h>

#include "inventory/chips.h"
#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobs/jobscript.h"
#include "jobs/sweep_arrays.h"
#include "inventory/jobspec.h"
#include "inventory/jobspec_options.h"
#include "ledger.h"
#include "notebook.h"
#include "sched/plain/plainjob.h"
#include "base/shquote.h"
#include "sched/slurm/hostlist.h"
#include "sched/slurm/slurm.h"
#include "code/snapshot.h"
#include "solver.h"
#include "submission.h"
#include "submit-output.h"
#include "submit.h"
#include "transport/ssh.h"
#include "base/strbuf.h"

struct submit_options submit_opt = { .nb = { .timeout = NOTEBOOK_TIMEOUT, .listen_fd = -1 } };

int submit_job_option(const struct dp_ctx *ctx, const struct dp_option *o, const char *arg)
{
	struct dp_error err = { 0 };
	if (jobspec_set(o->value, o->long_name, arg, NULL, &err) < 0)
		return report_error(&err);
	return 0;
}

#define SUBMIT_OPTIONS \
	HOST_OPTIONS \
	OPT_STRING('f', "file", &submit_opt.file, "FILE", "read job options from a job YAML file (the command line wins)", "file"), \
	OPT_BOOL(0, "dry-run", &submit_opt.dry_run, "print the scripts instead of submitting"), \
	OPT_STRING(0, "emit", &submit_opt.emit, "DIR", "with --dry-run: write DIR/sbatch.sh (or container.sh) and DIR/bootstrap.sh (mode 0700)", "dir"), \
	OPT_BOOL(0, "wait", &submit_opt.wait, "stay attached until the job ends, exit as 'dispatch wait' (Ctrl-C detaches; twice cancels)"), \
	OPT_BOOL(0, "follow", &submit_opt.follow, "as --wait, printing the job's output as it comes"), \
	OPT_BOOL(0, "no-tail", &submit_opt.no_tail, "with --wait: do not print the last lines of the failed job's stderr"), \
	JOB_OPTIONS

static const struct dp_option submit_options[] = {
	SUBMIT_OPTIONS
	OPT_STRING(0, "payload", &submit_opt.payload, "FILE", "pack a gzip tarball into the bootstrap, extracted on every node", "file"),
	OPT_STRING(0, "retry", &submit_opt.retry, "SWEEP", "submit again the tasks of SWEEP that ended without COMPLETED (its own command, parameters and code)", NULL),
	OPT_END,
};

static const struct dp_option packed_options[] = {
	SUBMIT_OPTIONS
	REPO_OPTIONS
	OPT_END,
};

#define SUBMIT_RULES \
	HOST_RULES \
	{ DP_REQUIRES, "--emit", "--dry-run", "--emit writes the scripts of a dry run: add --dry-run" }, \
	{ DP_EXCLUDES, "--follow", "--dry-run", "%s waits for a submitted job: not with --dry-run" }, \
	{ DP_EXCLUDES, "--wait", "--dry-run", "%s waits for a submitted job: not with --dry-run" }, \
	{ DP_EXCLUDES, "--follow", "--json", "--follow prints the job's output: use --wait with --json" },

static const struct dp_rule submit_rules[] = {
	SUBMIT_RULES
	{ 0 },
};

static const struct dp_rule packed_rules[] = {
	SUBMIT_RULES
	REF_RULES
	{ 0 },
};

static int collect(struct dp_ctx *ctx, const struct dp_args *args, struct submit *s)
{
	struct submit_options *o = s->o;
	struct dp_error err = { 0 };
	int r = 0;

	o->wait |= o->follow;
	if (args->npos > 0)
		jobspec_set_command_argv(&o->cli, args->pos, (size_t)args->npos);
	if (s->notebook)
		r = notebook_spec(&o->cli, &o->nb);
	if (r == 0 && o->file && jobspec_load_file(&s->spec, o->file, &err) < 0) {
		if (err.kind == DPE_NOTFOUND)
			err.kind = DPE_INPUT;
		r = report_error(&err);
	}
	if (r == 0 && jobspec_complete(&s->spec, &o->cli, &err) < 0)
		r = report_error(&err);
	if (r == 0)
		r = options_rules(ctx, args);
	if (r)
		return r;
	if (o->host && strpbrk(o->host, ",[") && !jobspec_is_sweep(&s->spec))
		return usage_error(ctx, "%s takes one host, not the list '%s' (a list is for a "
				   "sweep on plain hosts)", ctx->cmd->name, o->host);
	if (s->notebook && (s->spec.nodes > 1 || s->spec.array || jobspec_is_sweep(&s->spec)))
		return usage_error(ctx, "a notebook is one server on one node: not with --%s",
				   s->spec.array ? "array" : s->spec.sweep ? "sweep"
				   : s->spec.sweep_file ? "sweep-file" : "nodes");
	return 0;
}

static int check_chip(const char *chip)
{
	if (!chip || chip_find(chip))
		return 0;
	const char *names[64];
	size_t n = 0;
	for (size_t i = 0; i < chip_catalogue_len && n < ARRAY_SIZE(names); i++)
		names[n++] = chip_catalogue[i].name;
	const char *guess = suggest_word(chip, names, n);
	if (guess)
		error_msg("unknown chip '%s' (did you mean '%s'?)", chip, guess);
	else
		error_msg("unknown chip '%s'; 'dispatch solve -h' and dispatch-solve(1) list the "
			  "catalogue", chip);
	return DPE_INPUT;
}

static int read_payload(struct submit *s)
{
	if (!s->o->payload)
		return 0;
	char *buf = read_file(s->o->payload, &s->payload_len);
	if (!buf) {
		error_msg("cannot read payload '%s': %s", s->o->payload, strerror(errno));
		return DPE_INPUT;
	}
	s->payload = (unsigned char *)buf;
	return 0;
}

/* ---- submit-packed: the code goes with the job ---- */

static int make_snapshot(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	_cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
	struct snapshot_opts so = {
		.repo = s->o->repo,
		.mode = s->o->dirty ? SNAPSHOT_DIRTY : SNAPSHOT_REF,
		.ref = s->o->ref,
		.want_sha256 = true,
		.write = snapshot_write_strbuf,
		.write_arg = &buf,
	};
	if (snapshot_create(&so, &s->snap, &err) < 0)
		return report_error(&err);
	if (so.mode == SNAPSHOT_DIRTY && ctx->verbosity >= 0) {
		char line[128];
		snapshot_summary(&s->snap, line, sizeof(line));
		note_msg("snapshot of the work tree: %s", line);
	}
	info_msg(ctx, "snapshot: %llu files, %llu bytes gzipped, commit %s, sha256 %s",
		 (unsigned long long)s->snap.files, (unsigned long long)s->snap.bytes,
		 s->snap.commit[0] ? s->snap.commit : "(none)", s->snap.sha256);
	s->payload_len = buf.len;
	s->payload = (unsigned char *)strbuf_detach(&buf);
	s->job.code_sha256 = s->snap.sha256;
	s->job.code_subdir = s->snap.subdir;
	s->job.commit = s->snap.commit[0] ? s->snap.commit : NULL;
	s->job.dirty = so.mode == SNAPSHOT_DIRTY;
	return 0;
}

static int generate(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	jobspec_default_name(&s->spec, s->packed ? s->snap.name : NULL);
	s->job.spec = &s->spec;
	s->job.host = s->host;
	s->job.gres_type = s->gres_type;
	s->job.partition = s->partition;
	s->job.code = s->payload;
	s->job.code_len = s->payload_len;
	s->job.dry_run = s->o->dry_run;
	if (s->nhosts)
		return submit_sweep(ctx, s);
	_cleanup_(submission_release) struct submission sub = { 0 };
	if (submission_prepare(&s->job, &sub, &err) < 0)
		return report_error(&err);
	const struct jobscript *js = &sub.js;
	if (js->ignored) {
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; js->ignored[i]; i++)
			strbuf_addf(&sb, "%s--%s", i ? ", " : "", js->ignored[i]);
		warning_msg("'%s' is a plain host (no scheduler): ignoring %s", s->host->name, sb.buf);
		strbuf_release(&sb);
	}
	if (!s->o->dry_run)
		return submit_remote(ctx, s, &sub);
	info_msg(ctx, "host '%s' (%s); the bootstrap would go to %s", s->host->name,
		 inv_host_type_name(s->host->type), js->sbatch ? sub.bootstrap_path : "(run directly)");
	if (s->o->emit && jobscript_emit(js, s->o->emit, &err) < 0)
		return report_error(&err);
	_cleanup_strbuf_ struct strbuf sweep_sbatch = STRBUF_INIT;
	if (sub.sweep_id && js->sbatch)
		submission_sweep_commands(&s->job, &sub, SWEEP_ARRAY_DEFAULT_MAX, &sweep_sbatch);
	submit_print_dry_run(s->host, &s->spec, sub.sweep.ntasks ? &sub.sweep : NULL, js,
			     sub.bootstrap_path, s->o->emit, sweep_sbatch.len ? sweep_sbatch.buf : NULL,
			     ctx->json);
	return 0;
}

int submit_main(struct dp_ctx *ctx, const struct dp_args *args, enum submit_kind kind)
{
	struct submit s = { .o = &submit_opt, .packed = kind != SUBMIT_PLAIN,
			    .notebook = kind == SUBMIT_NOTEBOOK };
	int r = collect(ctx, args, &s);
	if (r == 0)
		r = check_chip(s.spec.chip);
	if (r == 0)
		r = submit_pick_host(ctx, &s);
	if (r == 0 && s.notebook)
		r = notebook_listen(&s.o->nb);
	if (r == 0)
		r = s.packed ? make_snapshot(ctx, &s) : read_payload(&s);
	if (r == 0)
		r = generate(ctx, &s);
	solve_result_release(&s.solved);
	solve_checked_free(s.live);
	free(s.hosts);
	jobspec_release(&s.spec);
	jobspec_release(&s.o->cli);
	free(s.payload);
	notebook_opts_release(&s.o->nb);
	return r;
}

static int cmd_submit(struct dp_ctx *ctx, const struct dp_args *args)
{
	if (submit_opt.retry)
		return submit_retry(ctx, args, &submit_opt, submit_opt.retry);
	return submit_main(ctx, args, SUBMIT_PLAIN);
}

static int cmd_submit_packed(struct dp_ctx *ctx, const struct dp_args *args)
{
	return submit_main(ctx, args, SUBMIT_PACKED);
}

const struct dispatch_cmd dispatch_cmd_submit = {
	.name = "submit",
	.summary = "submit a job to a SLURM cluster or a plain host",
	.usage = "[-H HOST | --solve [--check]] [JOB OPTIONS] [-f JOB.yaml] [--dry-run [--emit DIR]] [--wait | --follow] [--no-tail] -- COMMAND...\n"
		 "[-H HOST | --solve [--check]] [JOB OPTIONS] [--dry-run [--emit DIR]] [--wait | --follow] --sbatch-script FILE\n"
		 "[--max-parallel N] --retry SWEEP",
	.description =
		"Builds the job's scripts: an sbatch wrapper with the #SBATCH directives that\n"
		"runs bootstrap.sh once per node with srun, and the bootstrap itself (modules,\n"
		"environment, payload, uv sync, setup, then the command). Job options follow\n"
		"sbatch; a job YAML file uses the same names. Prints the job as ID@HOST.\n"
		"--retry SWEEP submits again the tasks of a sweep that ended without COMPLETED,\n"
		"from the sweep's own stage dir: the same command, parameters and code.",
	.opts = submit_options,
	.rules = submit_rules,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_POSIX_ORDER | CMD_NEEDS_SSH | CMD_LATE_RULES,
	.fn = cmd_submit,
};

const struct dispatch_cmd dispatch_cmd_submit_packed = {
	.name = "submit-packed",
	.summary = "submit a job with a snapshot of a git repository as its code",
	.usage = "[-H HOST | --solve [--check]] [JOB OPTIONS] [-f JOB.yaml] [--repo DIR] [--ref REF | --dirty] "
		 "[--dry-run [--emit DIR]] [--wait | --follow] [--no-tail] -- COMMAND...",
	.description =
		"As submit, with the code: a snapshot of the repository (the files of --ref as\n"
		"git archive writes them, or with --dirty the work tree with its edits and\n"
		"untracked files) is extracted on every node, and the command runs in it (in\n"
		"--repo's subdirectory when --repo is below the top). Prints the job as ID@HOST.",
	.opts = packed_options,
	.rules = packed_rules,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_POSIX_ORDER | CMD_NEEDS_SSH | CMD_LATE_RULES,
	.fn = cmd_submit_packed,
};
