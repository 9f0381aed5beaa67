/* SPDX-License-Identifier: MIT */
/*
 * dispatch jobs: the job ledger's history, newest first, with each job's state asked
 * live: one connection and one command per host (squeue then sacct; plain jobs from
 * their stage dirs), only for jobs whose end the ledger does not know yet. An end
 * seen is stored back, so a finished job is never asked about again.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <strings.h>
#include <time.h>

#include "dispatch.h"
#include "base/strbuf.h"
#include "base/when.h"
#include "inventory/inventory.h"
#include "ledger.h"
#include "jobs/jobs.h"
#include "jobs/run_attempts.h"
#include "jobs/sweeps.h"
#include "transport/ssh.h"

static struct ledger_filter f;
static const char *opt_sweep;
static char **opt_states;
static int limit_opt;
static bool no_refresh, opt_usage;
static const char *opt_by;

static int since_cb(const struct dp_ctx *ctx, const struct dp_option *o, const char *arg)
{
	struct dp_error err = { 0 };
	(void)o;
	if (when_parse(arg, (int64_t)time(NULL), &f.since, &err) < 0)
		return usage_error(ctx, "--since: %s", err.msg);
	return 0;
}

static int states_cb(const struct dp_ctx *ctx, const struct dp_option *o, const char *arg)
{
	(void)o;
	for (const char *p = arg; *p;) {
		size_t len = strcspn(p, ",");
		if (len)
			strv_push(&opt_states, xstrndup(p, len));
		p += len + (p[len] == ',');
	}
	if (!opt_states)
		return usage_error(ctx, "--state wants states such as RUNNING,PENDING, not '%s'", arg);
	return 0;
}

static const struct dp_option jobs_options[] = {
	OPT_STRING('H', "host", &f.host, "HOST", "only the jobs submitted to this host", "host"),
	OPT_STRING(0, "name", &f.name_glob, "GLOB", "only the jobs whose name matches this glob", NULL),
	OPT_CALLBACK(0, "since", NULL, "WHEN", "only the jobs submitted since WHEN: an age (30m, 12h, 2d, 1w) or a date (YYYY-MM-DD [HH:MM])", NULL, since_cb),
	OPT_CALLBACK(0, "state", NULL, "STATES", "only the jobs in these states (comma-separated: RUNNING,PENDING,...)", NULL, states_cb),
	OPT_STRING(0, "sweep", &opt_sweep, "SWEEP", "only the jobs of this sweep (its id, or the start of it)", NULL),
	OPT_INT('n', "limit", &limit_opt, "N", "at most N jobs (the newest)", 1, 1000000),
	OPT_BOOL(0, "no-refresh", &no_refresh, "ask no host: show the state the ledger last knew"),
	OPT_BOOL(0, "usage", &opt_usage, "GPU-hours allocated and used, from the jobs' samples (--since: default 7d)"),
	OPT_STRING(0, "by", &opt_by, "host|user|day", "with --usage: one row per host (default), per user (the account a job ran as) or per day", NULL),
	OPT_END,
};

struct entry {
	struct ledger_job *rec;
	const char *state;      /* what is shown: live, else the ledger's; points into state_buf
				   or rec */
	char *state_buf;
	bool live;              /* the state was asked just now */
	char *attempt;          /* a run's, asked just now: "attempt 2/5"; NULL */
	cJSON *run;             /* a run's keys (job_state_json_run), asked just now; NULL */
};

static const struct sched_ops *sched_of(const struct dp_ctx *ctx, const struct ledger_job *j)
{
	return sched_for(ctx->inv ? inventory_host(ctx->inv, j->host) : NULL, j->pid);
}

static void set_live(struct entry *e, const char *state)
{
	free(e->state_buf);
	e->state_buf = xstrdup(state);
	e->state = e->state_buf;
	e->live = true;
}

/* The entries of host that may still change, as targets; *at[k]: the entry. */
static size_t targets_of(const struct dp_ctx *ctx, const char *host, struct entry *ents, size_t n,
			 struct jobs_target *t, size_t *at, char ***dirs)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ledger_job *j = ents[i].rec;
		if (!streq(j->host, host) || !j->job_id || ledger_state_final(j->state))
			continue;
		char *dir;
		ledger_target_of(ctx, j, &t[m], &dir);
		if (dir)
			strv_push(dirs, dir);
		at[m++] = i;
	}
	return m;
}

/* What one host said about its jobs that may still change (the entries at[k] of its
 * targets t[k]); returns 0 or an exit status (reported: the entries keep the
 * ledger's state). */
static int take_answer(struct ledger *l, struct jobs_query_item *it, const size_t *at,
		       struct entry *ents)
{
	struct dp_error err = { 0 };
	const char *host = it->host.host;
	struct jobs_result *res = &it->res;
	if (it->r < 0 && res->failure == JOBS_NO_CONNECTION) {
		int r = report_error(&res->err);
		warning_msg("'%s': showing the states the ledger last knew", host);
		return r;
	}
	if (it->r < 0) {
		fputs(res->remote_err, stderr);
		error_msg("cannot ask '%s' for the jobs' state (exit status %d); showing the states "
			  "the ledger last knew", host, res->failure == JOBS_EXIT_STATUS ? res->exit_status
			  : res->tool_exit);
		return DPE_FAIL;
	}
	_cleanup_free_ const struct job_state **rows = xcalloc(res->n + 1, sizeof(*rows));
	for (size_t k = 0; k < it->n; k++) {
		struct entry *e = &ents[at[k]];
		size_t nrows = 0;
		for (size_t i = 0; i < res->n; i++)
			if (res->rows[i].target == k && !res->rows[i].not_found)
				rows[nrows++] = &res->rows[i].st;
		const char *state = jobs_summary_state(rows, nrows);
		set_live(e, state ? state : "UNKNOWN");
		if (nrows && rows[0]->run_id) {
			e->attempt = job_state_attempt_text(rows[0]);
			e->run = cJSON_CreateObject();
			job_state_json_run(e->run, rows[0]);
		}
		/* An end is stored back: that job is never asked about again. */
		if (ledger_state_final(e->state) && ledger_set_end_state(l, e->rec->row, e->state, &err) < 0)
			warning_msg("%s", err.msg);
	}
	return 0;
}

/* Asks every host (all at once) about its jobs that may still change; returns 0 or
 * the worst exit status (connect over failed). */
static int refresh_hosts(const struct dp_ctx *ctx, struct ledger *l, char **hosts,
			 struct entry *ents, size_t n)
{
	size_t nhosts = strv_len(hosts), nask = 0;
	if (!nhosts)
		return 0;
	struct jobs_query_item *items = xcalloc(nhosts, sizeof(*items));
	struct jobs_target *t = xcalloc(n + 1, sizeof(*t));
	size_t *at = xcalloc(n + 1, sizeof(*at));
	_cleanup_strv_free_ char **dirs = NULL;
	/* each host's targets side by side in t (their entries in at); hosts whose
	 * backends cannot ask about any of them are left out */
	size_t m = 0;
	for (size_t h = 0; h < nhosts; h++) {
		size_t k = targets_of(ctx, hosts[h], ents, n, t + m, at + m, &dirs);
		bool ask = false;
		for (size_t i = m; i < m + k; i++)
			ask = ask || t[i].sched->can_query(&t[i].job);
		if (!ask)
			continue;
		items[nask++] = (struct jobs_query_item){ .host = jobs_host_of(ctx, hosts[h]),
							  .targets = t + m, .n = k };
		m += k;
	}
	jobs_query_hosts(items, nask, 0, 0);
	int status = 0;
	for (size_t h = 0; h < nask; h++) {
		int r = take_answer(l, &items[h], at + (items[h].targets - t), ents);
		if (r == DPE_CONNECT || (status != DPE_CONNECT && r > status))
			status = r;
		ssh_session_free(items[h].host.ss);
		jobs_result_release(&items[h].res);
	}
	free(items);
	free(t);
	free(at);
	return status;
}

static bool state_wanted(char *const *states, const char *state)
{
	if (!states)
		return true;
	for (size_t i = 0; states[i]; i++)
		if (strcasecmp(states[i], state) == 0)
			return true;
	return false;
}

/* ---- output ---- */

static char *time_text(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[32];
	if (!localtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm))
		return xstrdup("-");
	return xstrdup(buf);
}

static void print_text(const struct entry *const *ents, size_t n)
{
	struct table t = { .ncols = 6 };
	table_row(&t, "JOB", "HOST", "NAME", "SUBMITTED", "COMMIT", "STATE", NULL);
	for (size_t i = 0; i < n; i++) {
		const struct ledger_job *j = ents[i]->rec;
		table_add(&t, j->job_id ? j->job_id : "-");
		table_add(&t, j->host);
		table_add(&t, j->name && *j->name ? j->name : "-");
		table_take(&t, time_text(j->submitted_at));
		if (j->commit)
			table_addf(&t, "%.12s%s", j->commit, j->dirty ? "-dirty" : "");
		else
			table_add(&t, "-");
		if (ents[i]->attempt)
			table_addf(&t, "%s %s", ents[i]->state, ents[i]->attempt);
		else
			table_add(&t, ents[i]->state);
	}
	table_print(&t);
}

static void print_json(const struct dp_ctx *ctx, const struct entry *const *ents, size_t n)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "jobs");
	for (size_t i = 0; i < n; i++) {
		const struct ledger_job *j = ents[i]->rec;
		cJSON *o = cJSON_CreateObject();
		if (j->job_id) {
			_cleanup_free_ char *job = xasprintf("%s@%s", j->job_id, j->host);
			cJSON_AddStringToObject(o, "job", job);
		} else {
			cJSON_AddNullToObject(o, "job");
		}
		json_add_str_or_null(o, "id", j->job_id);
		cJSON_AddStringToObject(o, "host", j->host);
		cJSON_AddStringToObject(o, "type", sched_of(ctx, j)->name);
		json_add_str_or_null(o, "cluster", j->cluster);
		json_add_str_or_null(o, "name", j->name);
		cJSON_AddNumberToObject(o, "submitted_at", (double)j->submitted_at);
		char iso[32];
		when_iso(j->submitted_at, iso);
		cJSON_AddStringToObject(o, "submitted", iso);
		json_add_str_or_null(o, "commit", j->commit);
		cJSON_AddBoolToObject(o, "dirty", j->dirty);
		cJSON_AddStringToObject(o, "state", ents[i]->state);
		cJSON_AddBoolToObject(o, "live", ents[i]->live);
		cJSON_AddBoolToObject(o, "ended", ledger_state_final(ents[i]->state));
		json_add_str_or_null(o, "log_path", j->log_path);
		json_add_container(o, j->container_runtime, j->container_image);
		if (ents[i]->run) {
			for (cJSON *k = ents[i]->run->child; k; k = k->next)
				cJSON_AddItemToObject(o, k->string, cJSON_Duplicate(k, true));
		} else if (j->run_id) { /* not asked: what the ledger knows */
			cJSON_AddStringToObject(o, "run_id", j->run_id);
			cJSON_AddNullToObject(o, "attempt");
			cJSON_AddNumberToObject(o, "max_attempts", j->max_restarts + 1);
			cJSON_AddNullToObject(o, "attempts");
		}
		if (j->run_id) {
			_cleanup_free_ char *wandb = job_wandb_url(ctx, j);
			json_add_str_or_null(o, "wandb_url", wandb);
		}
		json_add_str_or_null(o, "sweep", j->sweep_id);
		if (j->sweep_id) /* the sweep's tasks this job runs */
			json_add_str_or_null(o, "sweep_tasks", j->sweep_tasks);
		cJSON_AddItemToArray(arr, o);
	}
	json_print(doc);
}

static int cmd_jobs(struct dp_ctx *ctx, const struct dp_args *args)
{
	char **states = opt_states;
	bool refresh = !no_refresh;
	struct dp_error err = { 0 };
	f.limit = (size_t)limit_opt;
	/* The state filter needs the states first: then -n counts what it kept. */
	size_t limit = f.limit;
	if (states)
		f.limit = 0;

	_cleanup_ledger_ struct ledger *l = NULL;
	_cleanup_free_ char *sweep = NULL;
	if (ledger_open(NULL, &l, &err) < 0 || (opt_sweep && sweeps_resolve(l, opt_sweep, &sweep, &err) < 0))
		return report_error(&err);
	f.sweep_id = sweep;
	struct ledger_job *recs = NULL;
	size_t n = 0;
	const char *by = opt_by ? opt_by : "host";
	if (opt_by && !opt_usage)
		return usage_error(ctx, "--by %s groups --usage's GPU-hours: give --usage", opt_by);
	if (!streq(by, "host") && !streq(by, "day") && !streq(by, "user"))
		return usage_error(ctx, "--by takes host, user or day, not '%s'", by);
	if (opt_usage && !f.since)
		f.since = (int64_t)time(NULL) - 7 * 86400;
	if (ledger_list(l, &f, &recs, &n, &err) < 0)
		return report_error(&err);
	if (opt_usage) {
		int r = jobs_usage_print(ctx, recs, n, by);
		ledger_jobs_free(recs, n);
		return r;
	}
	struct entry *ents = xcalloc(n ? n : 1, sizeof(*ents));
	_cleanup_strv_free_ char **hosts = NULL;
	for (size_t i = 0; i < n; i++) {
		ents[i].rec = &recs[i];
		ents[i].state = recs[i].state;
		if (recs[i].job_id && !ledger_state_final(recs[i].state) &&
		    !strv_contains(hosts, recs[i].host))
			strv_add(&hosts, recs[i].host);
	}
	int status = refresh ? refresh_hosts(ctx, l, hosts, ents, n) : 0;
	const struct entry **shown = xcalloc(n ? n : 1, sizeof(*shown));
	size_t kept = 0;
	for (size_t i = 0; i < n && !(limit && kept >= limit); i++)
		if (state_wanted(states, ents[i].state))
			shown[kept++] = &ents[i];
	if (ctx->json)
		print_json(ctx, shown, kept);
	else if (kept)
		print_text(shown, kept);
	free(shown);
	for (size_t i = 0; i < n; i++) {
		free(ents[i].state_buf);
		free(ents[i].attempt);
		cJSON_Delete(ents[i].run);
	}
	free(ents);
	ledger_jobs_free(recs, n);
	return status;
}

const struct dispatch_cmd dispatch_cmd_jobs = {
	.name = "jobs",
	.summary = "list the jobs dispatch submitted, newest first, with their state now",
	.usage = "[-H HOST] [--name GLOB] [--since WHEN] [--state STATES] [--sweep SWEEP] [-n N] [--no-refresh]\n"
		 "[-H HOST] [--name GLOB] [--since WHEN] [--sweep SWEEP] --usage [--by host|user|day]",
	.description =
		"The job ledger's history: job, host, name, submit time, commit and state. The\n"
		"state is asked live with one command per host, for the jobs whose end the ledger\n"
		"does not know yet; an end seen is stored, so those jobs are not asked again.\n"
		"--usage sums GPU-hours instead, per host, user or day (--by): allocated (sacct's\n"
		"AllocTRES on SLURM, the lease on a plain host) and used (each GPU's time weighted\n"
		"by its utilisation, from the samples every job records).",
	.opts = jobs_options,
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_jobs,
};
