/* SPDX-License-Identifier: MIT */
/*
 * jobs --usage: GPU-hours per host, user or day over the ledger's jobs (--since,
 * default the last 7 days): allocated (SLURM's AllocTRES GPUs for the job's elapsed
 * time, a plain job's leased GPUs for its elapsed time; each sampled GPU for the
 * time its node was sampled where neither is known) and used (each sampled GPU's time
 * weighted by its mean utilisation, from the samples every job records: submit
 * --sample, lib/jobs/job_usage.h), asked with one exchange per host (jobs_query with
 * JOBS_WANT_USAGE), a sweep's array each task's. USED% is over the GPU-hours of the
 * jobs with samples (pending, --sample 0 and an older dispatch's jobs have none). The
 * user is the account a job ran as on its host.
 *
 *	HOST  JOBS  SAMPLED  GPU-HOURS  USED  USED%
 *	hpc   12    10       24.50      11.20 46%
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobs/job_usage.h"
#include "jobs/jobs.h"
#include "ledger.h"
#include "transport/ssh.h"

struct group {
	char *key;
	size_t jobs, sampled;
	double hours;           /* GPU-hours allocated */
	double used;            /* GPU-hours used: the samples' utilisation-weighted */
	double sampled_hours;   /* GPU-hours allocated to the jobs with samples */
};

struct tally {
	struct group *g;
	size_t n;
	struct group total;
};

static struct group *group_of(struct tally *t, const char *key)
{
	for (size_t i = 0; i < t->n; i++)
		if (streq(t->g[i].key, key))
			return &t->g[i];
	t->g = xrealloc(t->g, (t->n + 1) * sizeof(*t->g));
	t->g[t->n] = (struct group){ .key = xstrdup(key) };
	return &t->g[t->n++];
}

/* The group of a job (its rows: an array's tasks): its host, the day it was
 * submitted, or the user it ran as on the host. */
static char *key_of(const struct ledger_job *j, const struct job_state *const *rows, size_t n,
		    const char *by)
{
	if (streq(by, "day")) {
		time_t tt = (time_t)j->submitted_at;
		struct tm tm;
		char buf[16];
		if (localtime_r(&tt, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%d", &tm))
			return xstrdup(buf);
		return xstrdup("-");
	}
	if (streq(by, "user")) {
		for (size_t r = 0; r < n; r++)
			if (rows[r]->user)
				return xstrdup(rows[r]->user);
		return xstrdup("-");
	}
	return xstrdup(j->host);
}

/* One job's rows (an array's tasks each) into g and the total: GPU-hours allocated
 * as the scheduler or lease says (the samples' where neither is known), used as the
 * samples say. */
static void count(struct tally *t, struct group *g, const struct job_state *const *rows, size_t n)
{
	bool sampled = false;
	double hours = 0, used = 0, sampled_hours = 0;
	for (size_t r = 0; r < n; r++) {
		const struct job_usage *u = rows[r]->usage;
		double seen = 0, alloc;
		for (size_t k = 0; u && k < u->nnodes; k++) {
			const struct job_usage_node *nd = &u->nodes[k];
			double span = (double)(nd->end - nd->start) / 3600.0;
			sampled = true;
			for (size_t i = 0; i < nd->ngpus; i++) {
				seen += span;
				if (!isnan(nd->gpus[i].mean))
					used += span * nd->gpus[i].mean / 100.0;
			}
		}
		if (rows[r]->alloc_gpus >= 0 && rows[r]->alloc_seconds >= 0)
			alloc = (double)rows[r]->alloc_gpus * (double)rows[r]->alloc_seconds / 3600.0;
		else
			alloc = seen;
		hours += alloc;
		if (u)
			sampled_hours += alloc;
	}
	struct group *both[] = { g, &t->total };
	for (size_t i = 0; i < 2; i++) {
		both[i]->jobs++;
		both[i]->sampled += sampled;
		both[i]->hours += hours;
		both[i]->used += used;
		both[i]->sampled_hours += sampled_hours;
	}
}

int jobs_usage_query(const struct dp_ctx *ctx, struct ssh_session *ss, const char *host,
		     const struct ledger_job *recs, size_t n, struct jobs_result *res, size_t *at)
{
	_cleanup_free_ struct jobs_target *tg = xcalloc(n + 1, sizeof(*tg));
	_cleanup_strv_free_ char **dirs = NULL;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (!streq(recs[i].host, host) || !recs[i].job_id)
			continue;
		char *dir;
		ledger_target_of(ctx, &recs[i], &tg[m], &dir);
		if (dir)
			strv_push(&dirs, dir);
		at[m++] = i;
	}
	if (!m)
		return 0;
	_cleanup_ssh_session_ struct ssh_session *own = NULL;
	struct jobs_host h = jobs_host_of(ctx, host);
	h.ss = ss;
	int r = jobs_query(&h, tg, m, JOBS_WANT_USAGE, res);
	if (!ss)
		own = h.ss; /* (the one jobs_query opened) */
	if (r < 0) {
		if (res->failure == JOBS_NO_CONNECTION)
			return report_error(&res->err);
		fputs(res->remote_err, stderr);
		error_msg("cannot ask '%s' about its jobs' samples", host);
		return DPE_FAIL;
	}
	return 0;
}

/* Asks one host about its jobs among recs; their figures into t. */
static int ask_host(const struct dp_ctx *ctx, const char *host, struct ledger_job *recs, size_t n,
		    const char *by, struct tally *t)
{
	_cleanup_(jobs_result_release) struct jobs_result res = { 0 };
	_cleanup_free_ size_t *at = xcalloc(n + 1, sizeof(*at));
	int r = jobs_usage_query(ctx, NULL, host, recs, n, &res, at);
	if (r)
		return r;
	_cleanup_free_ const struct job_state **rows = xcalloc(res.n + 1, sizeof(*rows));
	for (size_t k = 0; res.n && k <= res.rows[res.n - 1].target; k++) {
		size_t nrows = 0;
		for (size_t i = 0; i < res.n; i++)
			if (res.rows[i].target == k && !res.rows[i].not_found)
				rows[nrows++] = &res.rows[i].st;
		_cleanup_free_ char *key = key_of(&recs[at[k]], rows, nrows, by);
		count(t, group_of(t, key), rows, nrows);
	}
	return 0;
}

static cJSON *group_json(const struct group *g, const char *by)
{
	cJSON *o = cJSON_CreateObject();
	if (g->key)
		cJSON_AddStringToObject(o, by, g->key);
	cJSON_AddNumberToObject(o, "jobs", (double)g->jobs);
	cJSON_AddNumberToObject(o, "sampled", (double)g->sampled);
	cJSON_AddNumberToObject(o, "gpu_hours", (double)(long long)(g->hours * 1000 + 0.5) / 1000);
	cJSON_AddNumberToObject(o, "used_gpu_hours", (double)(long long)(g->used * 1000 + 0.5) / 1000);
	cJSON_AddNumberToObject(o, "sampled_gpu_hours",
				(double)(long long)(g->sampled_hours * 1000 + 0.5) / 1000);
	return o;
}

static void row(struct table *tb, const struct group *g, const char *key)
{
	table_add(tb, key);
	table_addf(tb, "%zu", g->jobs);
	table_addf(tb, "%zu", g->sampled);
	table_addf(tb, "%.2f", g->hours);
	table_addf(tb, "%.2f", g->used);
	if (g->sampled_hours > 0)
		table_addf(tb, "%.0f%%", 100.0 * g->used / g->sampled_hours);
	else
		table_add(tb, "-");
}

int jobs_usage_print(const struct dp_ctx *ctx, struct ledger_job *recs, size_t n, const char *by)
{
	int status = 0;
	struct tally t = { 0 };
	_cleanup_strv_free_ char **hosts = NULL;
	for (size_t i = 0; i < n; i++)
		if (recs[i].job_id && !strv_contains(hosts, recs[i].host))
			strv_add(&hosts, recs[i].host);
	for (size_t h = 0; hosts && hosts[h]; h++) {
		int r = ask_host(ctx, hosts[h], recs, n, by, &t);
		if (r == DPE_CONNECT || (status != DPE_CONNECT && r > status))
			status = r;
	}
	if (ctx->json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "by", by);
		cJSON *arr = cJSON_AddArrayToObject(doc, "groups");
		for (size_t i = 0; i < t.n; i++)
			cJSON_AddItemToArray(arr, group_json(&t.g[i], by));
		cJSON_AddItemToObject(doc, "total", group_json(&t.total, by));
		json_print(doc);
	} else {
		struct table tb = { .ncols = 6 };
		table_row(&tb, streq(by, "day") ? "DAY" : streq(by, "user") ? "USER" : "HOST", "JOBS", "SAMPLED", "GPU-HOURS",
			  "USED", "USED%", NULL);
		for (size_t i = 0; i < t.n; i++)
			row(&tb, &t.g[i], t.g[i].key);
		row(&tb, &t.total, "total");
		table_print(&tb);
	}
	for (size_t i = 0; i < t.n; i++)
		free(t.g[i].key);
	free(t.g);
	return status;
}
