/* SPDX-License-Identifier: MIT */
/*
 * submit and submit-packed with --sweep on plain hosts (-H box1, or a hostlist:
 * -H box[1-2], -H box1,box2): the tasks spread over the hosts and --max-parallel split
 * into caps per host (lib/sweep_spread.h), each host's part one submission
 * (lib/submission.h: its tasks started in one exchange after one upload) over a
 * connection of its own, then the sweep and its runs printed (cmd/submit-output.c),
 * and with --wait attached to them all.
 * A host that fails does not stop the others: what was submitted is printed, and the
 * exit status says that not all was.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "inventory/sweep.h"
#include "ledger.h"
#include "submission.h"
#include "submit-output.h"
#include "submit.h"
#include "sweep_spread.h"

static void warn_ignored(const struct inv_host *h, const struct jobscript *js)
{
	if (!js->ignored)
		return;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; js->ignored[i]; i++)
		strbuf_addf(&sb, "%s--%s", i ? ", " : "", js->ignored[i]);
	warning_msg("'%s' is a plain host (no scheduler): ignoring %s", h->name, sb.buf);
}

/* Each host's submission prepared: the first makes the sweep's id. */
static int prepare(struct submit *s, const struct sweep_spread *sp, struct submit_sweep_part *parts,
		   size_t *nparts)
{
	struct dp_error err = { 0 };
	const struct submission *first = NULL;
	for (size_t h = 0; h < sp->nhosts; h++) {
		if (!sp->ntasks[h])
			continue;
		struct submit_sweep_part *p = &parts[(*nparts)++];
		p->job = s->job;
		p->job.host = s->hosts[h];
		p->job.sweep_tasks = sp->tasks[h];
		p->job.sweep_ntasks = sp->ntasks[h];
		p->job.sweep_cap = sp->cap[h];
		if (first)
			p->job.sweep_id = first->sweep_id;
		if (submission_prepare(&p->job, &p->sub, &err) < 0)
			return report_error(&err);
		if (!first) {
			first = &p->sub;
			warn_ignored(p->job.host, &p->sub.js);
		}
	}
	return 0;
}

/* --wait / --follow: attached to every run of the sweep until all ended (--follow:
 * the first's log), as for a sweep's job arrays on SLURM; the exit status says how
 * they ended. */
static int attach(struct dp_ctx *ctx, const struct submit *s, const struct submit_sweep_part *parts,
		  size_t nparts)
{
	_cleanup_strv_free_ char **jobs = NULL;
	for (size_t i = 0; i < nparts; i++)
		for (size_t k = 0; k < parts[i].sub.ntasks; k++)
			if (parts[i].sub.tasks[k].state == SUBMISSION_SUBMITTED)
				strv_push(&jobs, xasprintf("%s@%s", parts[i].sub.tasks[k].id,
							   parts[i].job.host->name));
	if (!jobs)
		return 0;
	struct dp_ctx actx = *ctx;
	if (ctx->json) { /* the one document is submit's */
		actx.json = false;
		actx.verbosity = -1;
	}
	return submit_attach(&actx, jobs, s->o->follow, !s->o->no_tail);
}

int submit_sweep(struct dp_ctx *ctx, struct submit *s)
{
	struct dp_error err = { 0 };
	if (s->o->emit && s->nhosts > 1)
		return usage_error(ctx, "--emit writes one host's scripts: give one host with -H");
	struct sweep sw = SWEEP_INIT;
	if (jobspec_sweep(&s->spec, &sw, &err) < 0) {
		sweep_release(&sw);
		return report_error(&err);
	}
	size_t ntasks = sw.ntasks;
	sweep_release(&sw);

	struct sweep_spread sp;
	sweep_spread(ntasks, s->nhosts, s->spec.max_parallel, &sp);
	struct submit_sweep_part *parts = xcalloc(s->nhosts, sizeof(*parts));
	size_t nparts = 0;
	int r = prepare(s, &sp, parts, &nparts);
	if (r == 0 && s->o->dry_run) {
		if (s->o->emit && jobscript_emit(&parts[0].sub.js, s->o->emit, &err) < 0)
			r = report_error(&err);
		else
			submit_print_sweep_dry_run(&s->spec, parts, nparts, s->o->emit, ctx->json);
	} else if (r == 0) {
		_cleanup_ledger_ struct ledger *l = NULL;
		if (ledger_open(NULL, &l, &err) < 0) {
			r = report_error(&err);
			goto out;
		}
		for (size_t i = 0; i < nparts; i++) {
			struct submit_sweep_part *p = &parts[i];
			struct dp_error e = { 0 };
			p->result = submit_run_on(ctx, &p->job, &p->sub, l, &e);
			if (p->result < 0 || ctx->verbosity >= 0)
				fputs(p->sub.remote_err.buf, stderr); /* the host's own words */
			if (p->result < 0) {
				error_msg("%s", e.msg);
				if (p->sub.state == SUBMISSION_UNKNOWN)
					error_msg("the rows of the tasks on '%s' that may or may not run are "
						  "marked unknown in the ledger ('dispatch jobs'): look with "
						  "'dispatch status' before you submit them again", p->job.host->name);
				r = DPE_FAIL;
			}
			for (size_t k = 0; k < p->sub.ntasks; k++)
				if (p->sub.tasks[k].recovered)
					warning_msg("found task %zu started: %s on '%s' (not started again)",
						    p->sub.tasks[k].index, p->sub.tasks[k].id, p->job.host->name);
		}
		submit_print_sweep(&s->spec, parts, nparts, ctx->json);
		if (r == 0 && s->o->wait)
			r = attach(ctx, s, parts, nparts);
	}
out:
	for (size_t i = 0; i < nparts; i++)
		submission_release(&parts[i].sub);
	free(parts);
	sweep_spread_release(&sp);
	return r;
}
