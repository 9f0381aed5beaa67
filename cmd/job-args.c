/* SPDX-License-Identifier: MIT */
/*
 * JOB operands for status, cancel (and wait, logs): resolved through the job ledger
 * (lib/jobref.h) and grouped by host, so that each host gets one connection and one
 * command however many of its jobs were named.
 */
#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "ledger.h"

int job_args_resolve(struct dp_ctx *ctx, char *const *args, size_t nargs, const char *host_opt,
		     struct job_set *set)
{
	struct dp_error err = { 0 };
	memset(set, 0, sizeof(*set));
	/* A job with @HOST needs no ledger; without one, a missing ledger is empty. */
	if (ledger_open(NULL, &set->ledger, &err) < 0)
		return report_error(&err);
	set->refs = xcalloc(nargs ? nargs : 1, sizeof(*set->refs));
	for (size_t i = 0; i < nargs; i++) {
		if (jobref_resolve(set->ledger, args[i], host_opt, &set->refs[i], &err) < 0) {
			set->n = i + 1;
			return report_error(&err);
		}
		set->n = i + 1;
		const char *h = set->refs[i].host;
		if (!strv_contains(set->hosts, h))
			strv_add(&set->hosts, h);
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


char *job_stage_dir(const struct jobref *r)
{
	const char *script = r->in_ledger ? r->rec.script_path : NULL;
	const char *slash = script ? strrchr(script, '/') : NULL;
	return slash ? xstrndup(script, (size_t)(slash - script)) : NULL;
}

void job_set_release(struct job_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		jobref_release(&set->refs[i]);
	free(set->refs);
	strv_free(set->hosts);
	ledger_close(set->ledger);
	memset(set, 0, sizeof(*set));
}
