/* SPDX-License-Identifier: MIT */
/*
 * hosts show on a SLURM host: the GPUs dispatch's own running jobs hold there that
 * stayed idle (under 5% in their last 30 minutes of samples: lib/jobs/job_usage.h),
 * per node, from the ledger's jobs on the host that have not ended, asked in one
 * exchange (jobs_usage_query) over hosts show's own connection. Other users' jobs
 * record nothing dispatch can read.
 *
 *	Idle GPUs of dispatch's running jobs (under 5% in their last 30 minutes):
 *	NODE   JOB       GPU           LAST 30 MIN  LIFE
 *	node1  4242@hpc  GPU-2b5a3e1c  1%           3%
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>

#include "dispatch.h"
#include "jobs/job_usage.h"
#include "jobs/jobs.h"
#include "ledger.h"

static void add(struct table *t, cJSON *arr, const char *job, const char *node,
		const struct job_usage_gpu *g)
{
	if (arr) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "node", node);
		cJSON_AddStringToObject(o, "job", job);
		cJSON_AddStringToObject(o, "uuid", g->uuid);
		cJSON_AddNumberToObject(o, "recent_util", g->recent);
		if (isnan(g->mean))
			cJSON_AddNullToObject(o, "mean_util");
		else
			cJSON_AddNumberToObject(o, "mean_util", g->mean);
		cJSON_AddItemToArray(arr, o);
		return;
	}
	table_add(t, node);
	table_add(t, job);
	table_addf(t, "%.12s", g->uuid);
	table_addf(t, "%.0f%%", g->recent);
	if (isnan(g->mean))
		table_add(t, "-");
	else
		table_addf(t, "%.0f%%", g->mean);
}

int hosts_idle_gpus(const struct dp_ctx *ctx, const char *host, cJSON *doc)
{
	struct dp_error err = { 0 };
	_cleanup_ledger_ struct ledger *l = NULL;
	struct ledger_filter f = { .host = host };
	struct ledger_job *all = NULL;
	size_t nall = 0;
	if (ledger_open(NULL, &l, &err) < 0 || ledger_list(l, &f, &all, &nall, &err) < 0)
		return report_error(&err);
	/* the jobs that may still run (shallow copies: all keeps what they point to) */
	struct ledger_job *live = xcalloc(nall + 1, sizeof(*live));
	size_t n = 0;
	for (size_t i = 0; i < nall; i++)
		if (all[i].job_id && !ledger_state_final(all[i].state))
			live[n++] = all[i];
	_cleanup_(jobs_result_release) struct jobs_result res = { 0 };
	_cleanup_free_ size_t *at = xcalloc(n + 1, sizeof(*at));
	int r = n ? jobs_usage_query(ctx, ctx->session, host, live, n, &res, at) : 0;
	cJSON *arr = doc ? cJSON_AddArrayToObject(doc, "idle_gpus") : NULL;
	struct table t = { .ncols = 5, .trim = true };
	table_row(&t, "NODE", "JOB", "GPU", "LAST 30 MIN", "LIFE", NULL);
	size_t running = 0, idle = 0;
	for (size_t i = 0; !r && i < res.n; i++) {
		const struct job_state *st = &res.rows[i].st;
		if (res.rows[i].not_found || st->phase != JOB_PHASE_ACTIVE)
			continue;
		running++;
		_cleanup_free_ char *job = job_state_name(st, host);
		for (size_t k = 0; st->usage && k < st->usage->nnodes; k++) {
			const struct job_usage_node *nd = &st->usage->nodes[k];
			for (size_t g = 0; g < nd->ngpus; g++)
				if (!isnan(nd->gpus[g].recent) && nd->gpus[g].recent < JOB_USAGE_IDLE_PCT) {
					add(&t, arr, job, nd->node, &nd->gpus[g]);
					idle++;
				}
		}
	}
	if (!doc && !r) {
		if (idle) {
			printf("\nIdle GPUs of dispatch's running jobs (under %.0f%% in their last 30 "
			       "minutes of samples):\n", JOB_USAGE_IDLE_PCT);
			table_print(&t);
		} else {
			printf("\nNo idle GPU among dispatch's %zu running job%s here.\n", running,
			       running == 1 ? "" : "s");
		}
	}
	if (doc || !idle) {
		for (size_t i = 0; i < t.n; i++)
			free(t.cells[i]);
		free(t.cells);
	}
	free(live);
	ledger_jobs_free(all, nall);
	return r;
}
