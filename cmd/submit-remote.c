/* SPDX-License-Identifier: MIT */
/*
 * submit, submit-packed and notebook, once the job is generated: submitted over one
 * SSH connection (lib/submission.h does the steps):
 *
 *   1. a shell command makes the share, stage, work and log dirs (umask 077) and
 *      prints their absolute paths;
 *   2. SFTP writes the scripts into the stage dir, created with mode 0700 (and the
 *      packed code into {share}/code/ when it is large and not there yet);
 *   3. the job ledger records the intent with a fresh token;
 *   4. SLURM: sbatch --parsable --comment=TOKEN; a plain host: the bootstrap starts
 *      detached (lib/sched/plain/plainjob.h).
 *
 * When the connection breaks during step 4, dispatch connects once more and looks the
 * token up (the stage dir's record of sbatch's answer, then squeue and sacct) rather
 * than submit again: a job is never submitted twice. Then: the job's ID@HOST, the
 * notebook's tunnel, or with --wait / --follow, attached until it ends.
 */
#include <stdio.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "ledger.h"
#include "notebook.h"
#include "submission.h"
#include "submit-output.h"
#include "submit.h"
#include "transport/ssh.h"

/* ---- submitting ---- */


/* "uploading the code to box1:  42%  4.2 MiB  9.5 MiB/s", on a terminal only, redrawn
 * at most 10 times a second, as cp's line */
static void upload_progress(void *data, uint64_t done, uint64_t total)
{
	struct submit_hook_data *d = data;
	double t = monotonic_seconds();
	if (done == 0)
		d->start = t;
	bool end = done == total;
	if (!end && done && t - d->last_draw < 0.1)
		return;
	d->last_draw = t;
	char amount[32], rate[32];
	format_bytes(amount, sizeof(amount), (double)done);
	double secs = t - d->start;
	format_bytes(rate, sizeof(rate), secs > 0.01 ? (double)done / secs : 0);
	fprintf(stderr, "\ruploading the code to %s: %3d%% %12s %12s/s\033[K%s", d->dest,
		total ? (int)(done * 100 / total) : 100, amount, rate, end ? "\n" : "");
	fflush(stderr);
}

static int reconnect(void *data, struct ssh_session **out, struct dp_error *err)
{
	struct submit_hook_data *d = data;
	return session_open(d->ctx, d->dest, out, err);
}

static void note(void *data, enum submission_note level, const char *msg)
{
	struct submit_hook_data *d = data;
	if (level == SUBMISSION_INFO)
		info_msg(d->ctx, "%s", msg);
	else if (level == SUBMISSION_WARNING)
		warning_msg("%s", msg);
	else
		error_msg("%s", msg);
}

struct submission_hooks submit_hooks(struct submit_hook_data *d)
{
	struct submission_hooks h = { .reconnect = reconnect, .note = note, .data = d };
	if (d->ctx->verbosity >= 0 && stderr_is_tty())
		h.upload_progress = upload_progress;
	return h;
}

int submit_run_on(struct dp_ctx *ctx, const struct submission_job *job, struct submission *sub,
		  struct ledger *l, struct dp_error *err)
{
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	struct submit_hook_data hd = { .ctx = ctx,
				       .dest = inventory_ssh_destination(ctx->inv, job->host->name) };
	if (session_open(ctx, hd.dest, &ss, err) < 0)
		return -1;
	struct submission_hooks hooks = submit_hooks(&hd);
	return submission_run(sub, job, ss, l, &hooks, err);
}

int submit_remote(struct dp_ctx *ctx, struct submit *s, struct submission *sub)
{
	struct dp_error err = { 0 };
	_cleanup_ledger_ struct ledger *l = NULL;
	if (ledger_open(NULL, &l, &err) < 0)
		return report_error(&err);

	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	struct submit_hook_data hd = { .ctx = ctx,
				       .dest = inventory_ssh_destination(ctx->inv, s->host->name) };
	if (session_open(ctx, hd.dest, &ss, &err) < 0)
		return report_error(&err);
	struct submission_hooks hooks = submit_hooks(&hd);
	int r = submission_run(sub, &s->job, ss, l, &hooks, &err);
	const char *name = s->host->name;
	if (r < 0) {
		fputs(sub->remote_err.buf, stderr); /* the host's own words, as it wrote them */
		if (sub->state != SUBMISSION_UNKNOWN) /* PARTIAL: err says what runs */
			return report_error(&err);
		error_msg("%s", err.msg);
		error_msg("the state of the submission to '%s' is unknown: it may or may not have "
			  "been submitted. Do not submit again before you know: look for its token %s "
			  "with 'dispatch run -H %s -- %s'", name, sub->token, name,
			  s->host->type == INV_HOST_SLURM ? "squeue --me -t all -o \"%i %k\"" : "ls STAGE_DIR");
		return DPE_FAIL;
	}
	if (ctx->verbosity >= 0)
		fputs(sub->remote_err.buf, stderr); /* sbatch's warnings */
	for (size_t k = 0; k < sub->narrays; k++)
		if (sub->arrays[k].recovered)
			warning_msg("found the job by its token: %s on '%s' (not submitted again)",
				    sub->arrays[k].job_id, name);
	if (sub->recovered && !sub->narrays)
		warning_msg("found the job by its token: %s on '%s' (not submitted again)", sub->job_id,
			    name);
	if (s->notebook) {
		_cleanup_free_ char *job = xasprintf("%s@%s", sub->job_id, name);
		if (ctx->verbosity >= 0)
			note_msg("submitted job %s; waiting for its Jupyter server (log: %s)", job, sub->log);
		if (notebook_token_save(sub->token, s->o->nb.token, &err) < 0) {
			report_error(&err);
			error_msg("job %s runs without its token here: 'dispatch cancel %s'", job, job);
			return DPE_FAIL;
		}
		s->o->nb.work_dir = sub->work_dir;
		s->o->nb.fresh = true;
		return notebook_session(ctx, job, &s->o->nb);
	}
	if (!ctx->json && ctx->verbosity >= 0 && stderr_is_tty())
		note_msg("submitted job %s to %s; log: %s", sub->job_id, name, sub->log);
	submit_print_job(s->host, &s->job, sub, ctx->json);
	if (!s->o->wait)
		return 0;
	/* Attached: with --json the one document is submit's; the exit status says how
	 * the job ended. */
	/* a sweep in several job arrays: all of them waited for (--follow: the first's log) */
	_cleanup_strv_free_ char **jobs = NULL;
	for (size_t k = 0; k < sub->narrays; k++)
		strv_push(&jobs, xasprintf("%s@%s", sub->arrays[k].job_id, name));
	if (!jobs)
		strv_push(&jobs, xasprintf("%s@%s", sub->job_id, name));
	struct dp_ctx actx = *ctx;
	if (ctx->json) {
		actx.json = false;
		actx.verbosity = -1;
	}
	return submit_attach(&actx, jobs, s->o->follow, !s->o->no_tail);
}
