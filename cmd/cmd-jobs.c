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
#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm.h"

static struct ledger_filter f;
static char **opt_states;
static int limit_opt;
static bool no_refresh;

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
	OPT_INT('n', "limit", &limit_opt, "N", "at most N jobs (the newest)", 1, 1000000),
	OPT_BOOL(0, "no-refresh", &no_refresh, "ask no host: show the state the ledger last knew"),
	OPT_END,
};

struct entry {
	struct ledger_job *rec;
	const char *state;      /* what is shown: live, else the ledger's; points into state_buf
				   or rec */
	char *state_buf;
	bool live;              /* the state was asked just now */
};

static bool is_plain(const struct dp_ctx *ctx, const struct ledger_job *j)
{
	const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, j->host) : NULL;
	if (h)
		return h->type == INV_HOST_PLAIN;
	return j->pid > 0;
}

static char *stage_dir_of(const struct ledger_job *j)
{
	const char *slash = j->script_path ? strrchr(j->script_path, '/') : NULL;
	return slash ? xstrndup(j->script_path, (size_t)(slash - j->script_path)) : NULL;
}

/* What a job is, from the rows that answer it: the state of an active row (RUNNING
 * first: an array runs while any task does), else the worst end (any but
 * COMPLETED). NULL when no row answers. */
static const char *slurm_summary(const struct slurm_job *jobs, size_t n, const char *id)
{
	const struct slurm_job **sel;
	size_t nsel;
	slurm_select(jobs, n, id, &sel, &nsel);
	const char *active = NULL, *end = NULL;
	for (size_t k = 0; k < nsel; k++) {
		const char *s = sel[k]->state;
		if (slurm_state_active(s)) {
			if (!active || streq(s, "RUNNING"))
				active = s;
		} else if (!end || streq(end, "COMPLETED")) {
			end = s;
		}
	}
	free(sel);
	return active ? active : end;
}

static void set_live(struct entry *e, const char *state)
{
	free(e->state_buf);
	e->state_buf = xstrdup(state);
	e->state = e->state_buf;
	e->live = true;
}

/* Asks one host about its jobs that may still change; returns 0 or an exit status
 * (reported: the entries keep the ledger's state). */
static int refresh_host(const struct dp_ctx *ctx, struct ledger *l, const char *host,
			struct entry *ents, size_t n)
{
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **ids = NULL, **dirs = NULL;
	_cleanup_free_ struct plainjob_ref *plain = NULL;
	size_t nplain = 0;
	for (size_t i = 0; i < n; i++) {
		struct ledger_job *j = ents[i].rec;
		if (!streq(j->host, host) || !j->job_id || ledger_state_final(j->state))
			continue;
		if (is_plain(ctx, j)) {
			char *dir = stage_dir_of(j);
			if (!dir)
				continue;
			strv_push(&dirs, dir);
			plain = xrealloc(plain, (nplain + 1) * sizeof(*plain));
			plain[nplain++] = (struct plainjob_ref){ .id = j->job_id, .stage_dir = dir,
								 .pgid = j->pid };
		} else if (!strv_contains(ids, j->job_id)) {
			strv_add(&ids, j->job_id);
		}
	}
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	if (ids)
		slurm_status_command(&cmd, ids);
	if (nplain)
		plainjob_status_command(&cmd, plain, nplain);
	if (!cmd.len)
		return 0;
	int status;
	if (host_exec_capture(ctx, host, cmd.buf, &out, &errout, &status, &err) < 0) {
		int r = report_error(&err);
		warning_msg("'%s': showing the states the ledger last knew", host);
		return r;
	}
	int sq = ids ? slurm_parse_exit(out.buf, "squeue") : 0;
	if (status != 0 || slurm_squeue_failed(sq, errout.buf)) {
		fputs(errout.buf, stderr);
		error_msg("cannot ask '%s' for the jobs' state (exit status %d); showing the states "
			  "the ledger last knew", host, status ? status : sq);
		return DPE_FAIL;
	}
	struct slurm_job *sjobs = NULL;
	struct plainjob_status *pjobs = NULL;
	size_t nsjobs = 0, npjobs = 0;
	slurm_parse_status(out.buf, &sjobs, &nsjobs);
	npjobs = plainjob_parse_status(out.buf, &pjobs);
	for (size_t i = 0; i < n; i++) {
		struct entry *e = &ents[i];
		struct ledger_job *j = e->rec;
		if (!streq(j->host, host) || !j->job_id || ledger_state_final(j->state))
			continue;
		const char *state = NULL;
		if (is_plain(ctx, j)) {
			for (size_t k = 0; k < npjobs && !state; k++)
				if (streq(pjobs[k].id, j->job_id))
					state = pjobs[k].state;
		} else {
			state = slurm_summary(sjobs, nsjobs, j->job_id);
		}
		set_live(e, state ? state : "UNKNOWN");
		/* An end is stored back: that job is never asked about again. */
		if (ledger_state_final(e->state) && ledger_set_end_state(l, j->row, e->state, &err) < 0)
			warning_msg("%s", err.msg);
	}
	slurm_jobs_free(sjobs, nsjobs);
	plainjob_status_free(pjobs, npjobs);
	return 0;
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

static char *iso_time(int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	char buf[32];
	if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		return xstrdup("");
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
		cJSON_AddStringToObject(o, "type", is_plain(ctx, j) ? "plain" : "slurm");
		json_add_str_or_null(o, "cluster", j->cluster);
		json_add_str_or_null(o, "name", j->name);
		cJSON_AddNumberToObject(o, "submitted_at", (double)j->submitted_at);
		_cleanup_free_ char *iso = iso_time(j->submitted_at);
		cJSON_AddStringToObject(o, "submitted", iso);
		json_add_str_or_null(o, "commit", j->commit);
		cJSON_AddBoolToObject(o, "dirty", j->dirty);
		cJSON_AddStringToObject(o, "state", ents[i]->state);
		cJSON_AddBoolToObject(o, "live", ents[i]->live);
		cJSON_AddBoolToObject(o, "ended", ledger_state_final(ents[i]->state));
		json_add_str_or_null(o, "log_path", j->log_path);
		json_add_container(o, j->container_runtime, j->container_image);
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
	if (ledger_open(NULL, &l, &err) < 0)
		return report_error(&err);
	struct ledger_job *recs = NULL;
	size_t n = 0;
	if (ledger_list(l, &f, &recs, &n, &err) < 0)
		return report_error(&err);
	struct entry *ents = xcalloc(n ? n : 1, sizeof(*ents));
	_cleanup_strv_free_ char **hosts = NULL;
	for (size_t i = 0; i < n; i++) {
		ents[i].rec = &recs[i];
		ents[i].state = recs[i].state;
		if (recs[i].job_id && !ledger_state_final(recs[i].state) &&
		    !strv_contains(hosts, recs[i].host))
			strv_add(&hosts, recs[i].host);
	}
	int status = 0;
	for (size_t h = 0; refresh && hosts && hosts[h]; h++) {
		int r = refresh_host(ctx, l, hosts[h], ents, n);
		if (r == DPE_CONNECT || (status != DPE_CONNECT && r > status))
			status = r;
	}
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
	for (size_t i = 0; i < n; i++)
		free(ents[i].state_buf);
	free(ents);
	ledger_jobs_free(recs, n);
	return status;
}

const struct dispatch_cmd dispatch_cmd_jobs = {
	.name = "jobs",
	.summary = "list the jobs dispatch submitted, newest first, with their state now",
	.usage = "[-H HOST] [--name GLOB] [--since WHEN] [--state STATES] [-n N] [--no-refresh]",
	.description =
		"The job ledger's history: job, host, name, submit time, commit and state. The\n"
		"state is asked live with one command per host, for the jobs whose end the ledger\n"
		"does not know yet; an end seen is stored, so those jobs are not asked again.",
	.opts = jobs_options,
	.min_args = 0,
	.max_args = 0,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_jobs,
};
