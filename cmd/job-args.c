/* SPDX-License-Identifier: MIT */
/*
 * JOB operands for status, cancel (and wait, logs): resolved through the job ledger
 * (lib/jobref.h) and grouped by host, so that each host gets one connection and one
 * command however many of its jobs were named. A SWEEP operand (lib/jobs/sweeps.h)
 * stands for every job the ledger holds of the sweep.
 */
#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/sweeps.h"
#include "ledger.h"

static void add_ref(struct job_set *set, const struct jobref *r)
{
	set->refs = xrealloc(set->refs, (set->n + 1) * sizeof(*set->refs));
	set->refs[set->n++] = *r;
	if (!strv_contains(set->hosts, r->host))
		strv_add(&set->hosts, r->host);
}

/* The jobs of sweep arg into set. */
static int add_sweep(struct job_set *set, const char *arg, const char *host_opt,
		     struct dp_error *err)
{
	set->sweeps = xrealloc(set->sweeps, (set->nsweeps + 1) * sizeof(*set->sweeps));
	struct job_sweep *sw = &set->sweeps[set->nsweeps++];
	*sw = (struct job_sweep){ .arg = arg };
	if (sweeps_resolve(set->ledger, arg, &sw->id, err) < 0 ||
	    ledger_find_sweep(set->ledger, sw->id, &sw->rows, &sw->nrows, err) < 0)
		return -1;
	size_t before = set->n;
	for (size_t i = 0; i < sw->nrows; i++) {
		const struct ledger_job *row = &sw->rows[i];
		if (!row->job_id || (host_opt && !streq(host_opt, row->host)))
			continue; /* (a submission whose answer was lost: no job to ask) */
		_cleanup_free_ char *job = xasprintf("%s@%s", row->job_id, row->host);
		bool seen = false;
		for (size_t k = 0; k < set->n && !seen; k++)
			seen = streq(set->refs[k].arg, job);
		struct jobref r;
		if (seen)
			continue;
		if (jobref_resolve(set->ledger, job, NULL, &r, err) < 0) {
			jobref_release(&r);
			return -1;
		}
		add_ref(set, &r);
	}
	if (set->n == before)
		return dp_err(err, DPE_NOTFOUND, "sweep '%s' has no job to ask%s", sw->id,
			      host_opt ? " on that host" : " yet");
	return 0;
}

int job_args_resolve(struct dp_ctx *ctx, char *const *args, size_t nargs, const char *host_opt,
		     struct job_set *set)
{
	struct dp_error err = { 0 };
	memset(set, 0, sizeof(*set));
	/* A job with @HOST needs no ledger; without one, a missing ledger is empty. */
	if (ledger_open(NULL, &set->ledger, &err) < 0)
		return report_error(&err);
	for (size_t i = 0; i < nargs; i++) {
		if (sweeps_is_ref(args[i])) {
			if (add_sweep(set, args[i], host_opt, &err) < 0)
				return report_error(&err);
			continue;
		}
		struct jobref r;
		if (jobref_resolve(set->ledger, args[i], host_opt, &r, &err) < 0) {
			jobref_release(&r);
			return report_error(&err);
		}
		add_ref(set, &r);
		set->njobs++;
	}
	(void)ctx;
	return 0;
}

bool job_is_plain(const struct dp_ctx *ctx, const struct jobref *r)
{
	const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, r->host) : NULL;
	if (h)
		return h->type == INV_HOST_PLAIN;
	/* Not in the inventory (any more): the ledger knows a plain job by its pid. */
	return r->in_ledger && r->rec.pid > 0;
}


char *ledger_stage_dir(const struct ledger_job *j)
{
	const char *slash = j->script_path ? strrchr(j->script_path, '/') : NULL;
	return slash ? xstrndup(j->script_path, (size_t)(slash - j->script_path)) : NULL;
}

char *job_stage_dir(const struct jobref *r)
{
	return r->in_ledger ? ledger_stage_dir(&r->rec) : NULL;
}

void job_set_release(struct job_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		jobref_release(&set->refs[i]);
	free(set->refs);
	strv_free(set->hosts);
	for (size_t i = 0; i < set->nsweeps; i++) {
		free(set->sweeps[i].id);
		ledger_jobs_free(set->sweeps[i].rows, set->sweeps[i].nrows);
	}
	free(set->sweeps);
	ledger_close(set->ledger);
	memset(set, 0, sizeof(*set));
}
