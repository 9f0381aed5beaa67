/* SPDX-License-Identifier: MIT */
/*
 * submit --retry SWEEP: the sweep's tasks that ended without COMPLETED (FAILED,
 * CANCELLED, TIMEOUT, ...), asked of their hosts in one exchange each, submitted
 * again from the sweep's own stage dir (lib/submission.h, submission_retry): the same
 * command, parameters and code, as new job arrays of the same sweep. Tasks still
 * queued or running, and those no answer named, are left alone.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/sweeps.h"
#include "submission.h"
#include "submit.h"
#include "transport/ssh.h"

/* Whether the options beside --retry are only those it takes (--max-parallel). */
static bool only_retry_options(const struct submit_options *o)
{
	struct jobspec rest = o->cli, none = { 0 };
	rest.max_parallel = 0;
	return !o->host && !o->file && !o->solve && !o->dry_run && !o->wait && !o->payload &&
	       memcmp(&rest, &none, sizeof(rest)) == 0;
}

/* The tasks to submit again: ended, not COMPLETED, as the newest job that runs them
 * answered (a task whose newest job gave no answer is left alone: it may run). */
static size_t failed_tasks(const struct sweep_view *v, size_t **out)
{
	size_t n = 0;
	*out = xcalloc(v->size + 1, sizeof(**out));
	for (size_t k = 0; k < v->size; k++) {
		const struct sweep_task *t = &v->tasks[k];
		const struct ledger_job *newest = sweeps_row_of(v->js->rows, v->js->nrows, k);
		if (!t->st || job_phase_of(t->st->state) != JOB_PHASE_ENDED)
			continue;
		if (!newest || !t->rec || t->rec->row != newest->row) {
			warning_msg("sweep %s: task %zu is left alone: its newest job (%s@%s) gave no "
				    "answer", v->js->id, k, newest && newest->job_id ? newest->job_id : "-",
				    newest ? newest->host : "-");
			continue;
		}
		(*out)[n++] = k;
	}
	return n;
}

/* "afterany:ID:ID": the sweep's jobs with a task still queued or running; NULL: none. */
static char *still_running(const struct sweep_view *v)
{
	_cleanup_strv_free_ char **ids = NULL;
	for (size_t k = 0; k < v->size; k++) {
		const struct sweep_task *t = &v->tasks[k];
		if (t->st && job_state_active(t->st) && t->rec && t->rec->job_id &&
		    !strv_contains(ids, t->rec->job_id))
			strv_add(&ids, t->rec->job_id);
	}
	if (!ids)
		return NULL;
	struct strbuf sb = STRBUF_INIT;
	strbuf_adds(&sb, "afterany");
	for (size_t i = 0; ids[i]; i++)
		strbuf_addf(&sb, ":%s", ids[i]);
	return strbuf_detach(&sb);
}

static char *indexes_text(const size_t *idx, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%s%zu", i ? "," : "", idx[i]);
	return strbuf_detach(&sb);
}

static void print_retry(const struct dp_ctx *ctx, const struct submission *sub, const char *host,
			const size_t *idx, size_t n)
{
	_cleanup_free_ char *which = indexes_text(idx, n);
	if (!ctx->json) {
		printf("sweep %s: %zu task%s again (%s) on %s as ", sub->sweep_id, n, n == 1 ? "" : "s",
		       which, host);
		for (size_t k = 0; k < sub->narrays; k++)
			if (sub->arrays[k].job_id)
				printf("%s%s@%s", k ? ", " : "", sub->arrays[k].job_id, host);
		printf("\n");
		return;
	}
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "sweep", sub->sweep_id);
	cJSON_AddStringToObject(doc, "host", host);
	cJSON *tasks = cJSON_AddArrayToObject(doc, "tasks");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(tasks, cJSON_CreateNumber((double)idx[i]));
	cJSON *arrays = cJSON_AddArrayToObject(doc, "arrays");
	for (size_t k = 0; k < sub->narrays; k++) {
		const struct submission_array *a = &sub->arrays[k];
		if (!a->job_id)
			continue;
		cJSON *o = cJSON_CreateObject();
		_cleanup_free_ char *job = xasprintf("%s@%s", a->job_id, host);
		cJSON_AddStringToObject(o, "job", job);
		cJSON_AddNumberToObject(o, "first", (double)a->first);
		cJSON_AddStringToObject(o, "tasks", a->tasks);
		json_add_str_or_null(o, "log", a->log);
		cJSON_AddItemToArray(arrays, o);
	}
	json_print(doc);
}

/* Submits the tasks idx[0..n) again from rec's stage over a session of its own. */
static int resubmit(struct dp_ctx *ctx, struct ledger *l, const struct ledger_job *rec,
		    const size_t *idx, size_t n, long max_parallel, const char *after)
{
	struct dp_error err = { 0 };
	const struct inv_host *h = ctx->inv ? inventory_host(ctx->inv, rec->host) : NULL;
	if (!h) {
		error_msg("the sweep ran on '%s', which the inventory does not have (any more)",
			  rec->host);
		return DPE_INPUT;
	}
	if (h->type != INV_HOST_SLURM) {
		error_msg("--retry of a sweep on '%s', a plain host: not built yet", rec->host);
		return DPE_INPUT;
	}
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	struct submit_hook_data hd = { .ctx = ctx, .dest = inventory_ssh_destination(ctx->inv, h->name) };
	if (session_open(ctx, hd.dest, &ss, &err) < 0)
		return report_error(&err);
	struct submission_hooks hooks = submit_hooks(&hd);
	_cleanup_(submission_release) struct submission sub = { 0 };
	struct submission_retry rq = { .host = h, .rec = rec, .indexes = idx, .n = n,
				       .max_parallel = max_parallel, .after = after };
	int r = submission_retry(&sub, &rq, ss, l, &hooks, &err);
	fputs(sub.remote_err.buf, stderr);
	if (r < 0)
		return report_error(&err);
	print_retry(ctx, &sub, h->name, idx, n);
	return 0;
}

/* The tasks idx[0..n) of a sweep on plain hosts again, each in its own stage dir
 * with its next attempt (submission_retry_plain), one exchange per host; each one
 * started has its ledger row asked about again. */
static int retry_plain(struct dp_ctx *ctx, struct ledger *l, const struct sweep_view *v,
		       const size_t *idx, size_t n)
{
	int status = 0;
	_cleanup_strv_free_ char **hosts = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strv_contains(hosts, v->tasks[idx[i]].rec->host))
			strv_add(&hosts, v->tasks[idx[i]].rec->host);
	cJSON *doc = cJSON_CreateObject(), *runs = cJSON_CreateArray();
	cJSON_AddStringToObject(doc, "sweep", v->js->id);
	cJSON *tasks = cJSON_AddArrayToObject(doc, "tasks");
	cJSON_AddItemToObject(doc, "runs", runs);
	for (size_t h = 0; hosts && hosts[h]; h++) {
		_cleanup_free_ const char **ids = xcalloc(n + 1, sizeof(*ids));
		_cleanup_free_ const struct ledger_job **recs = xcalloc(n + 1, sizeof(*recs));
		_cleanup_strv_free_ char **stages = NULL;
		_cleanup_free_ size_t *which = xcalloc(n + 1, sizeof(*which));
		size_t m = 0;
		for (size_t i = 0; i < n; i++) {
			const struct ledger_job *rec = v->tasks[idx[i]].rec;
			const char *slash = rec->script_path ? strrchr(rec->script_path, '/') : NULL;
			if (!streq(rec->host, hosts[h]) || !slash)
				continue;
			ids[m] = rec->job_id;
			recs[m] = rec;
			which[m] = idx[i];
			strv_push(&stages, xstrndup(rec->script_path, (size_t)(slash - rec->script_path)));
			m++;
		}
		struct dp_error err = { 0 };
		_cleanup_ssh_session_ struct ssh_session *ss = NULL;
		_cleanup_strbuf_ struct strbuf errout = STRBUF_INIT;
		_cleanup_free_ long *pids = xcalloc(m + 1, sizeof(*pids));
		if (session_open(ctx, inventory_ssh_destination(ctx->inv, hosts[h]), &ss, &err) < 0 ||
		    submission_retry_plain(ss, ids, (const char *const *)stages, m, pids, &errout,
					   &err) < 0) {
			status = report_error(&err);
			continue;
		}
		print_remote_text(stderr, errout.buf);
		for (size_t i = 0; i < m; i++) {
			long pid = pids[i];
			_cleanup_free_ char *job = xasprintf("%s@%s", ids[i], hosts[h]);
			if (pid <= 1) {
				error_msg("sweep %s: task %zu (%s) did not start again%s", v->js->id,
					  which[i], job, pid < 0 ? ": no answer for it (dispatch status "
					  "shows whether it runs)" : "");
				status = DPE_FAIL;
				continue;
			}
			if (ledger_set_state(l, recs[i]->token, "submitted", &err) < 0)
				status = report_error(&err);
			cJSON_AddItemToArray(tasks, cJSON_CreateNumber((double)which[i]));
			cJSON_AddItemToArray(runs, cJSON_CreateString(job));
		}
	}
	int k = cJSON_GetArraySize(runs);
	if (ctx->json) {
		json_print(doc);
		return status;
	}
	if (k) { /* as the first submission: the sweep's line, then each run */
		printf("sweep %s: %d task%s again (", v->js->id, k, k == 1 ? "" : "s");
		for (int i = 0; i < k; i++)
			printf("%s%d", i ? "," : "", (int)cJSON_GetArrayItem(tasks, i)->valuedouble);
		printf(")\n");
		for (int i = 0; i < k; i++)
			printf("%s\n", cJSON_GetArrayItem(runs, i)->valuestring);
	}
	cJSON_Delete(doc);
	return status;
}

int submit_retry(struct dp_ctx *ctx, const struct dp_args *args, const struct submit_options *o,
		 const char *sweep)
{
	if (args->npos)
		return usage_error(ctx, "--retry runs the sweep's own command again: give no COMMAND");
	if (!only_retry_options(o))
		return usage_error(ctx, "--retry takes the sweep as it was submitted: only "
				   "--max-parallel may change (and --json, -v)");
	if (!sweeps_is_ref(sweep))
		return usage_error(ctx, "--retry wants a SWEEP (sweep-..., as submit printed it), "
				   "not '%s'", sweep);
	_cleanup_(job_set_release) struct job_set set = { 0 };
	char *const arg[] = { (char *)sweep, NULL };
	int r = job_args_resolve(ctx, arg, 1, NULL, &set);
	if (r)
		return r;
	_cleanup_(status_answer_release) struct status_answer a = { .ctx = ctx };
	status_query_hosts(ctx, &set, 0, &a);
	if (a.status)
		return a.status;
	struct sweep_view v;
	struct dp_error err = { 0 };
	if (sweep_view_build(&set.sweeps[0], &a.res, a.refs, &v, &err) < 0) {
		sweep_view_release(&v);
		return report_error(&err);
	}
	/* a submission of the sweep whose outcome is unknown may run: look first */
	const struct job_sweep *sw = &set.sweeps[0];
	for (size_t i = 0; i < sw->nrows; i++)
		if (!sw->rows[i].job_id || streq(sw->rows[i].state, "unknown")) {
			error_msg("sweep %s: a submission of it on '%s' has an unknown outcome (token "
				  "%s): it may run; look for it before a retry ('dispatch run -H %s -- "
				  "squeue --me -t all -o \"%%i %%k\"')", sw->id, sw->rows[i].host,
				  sw->rows[i].token, sw->rows[i].host);
			sweep_view_release(&v);
			return DPE_FAIL;
		}
	_cleanup_free_ size_t *idx = NULL;
	size_t n = failed_tasks(&v, &idx);
	_cleanup_free_ char *summary = sweep_view_summary(&v);
	_cleanup_free_ char *after = still_running(&v);
	if (!n) {
		sweep_view_release(&v);
		note_msg("sweep %s: no task to retry (%s)", set.sweeps[0].id, summary);
		return 0;
	}
	/* on plain hosts: each task again in its own stage dir */
	const struct ledger_job *first = v.tasks[idx[0]].rec;
	const struct inv_host *fh = ctx->inv ? inventory_host(ctx->inv, first->host) : NULL;
	if (fh && fh->type == INV_HOST_PLAIN) {
		r = retry_plain(ctx, set.ledger, &v, idx, n);
		sweep_view_release(&v);
		return r;
	}
	sweep_view_release(&v);
	/* on SLURM: every task again from the sweep's first row (its stage dir) */
	const struct ledger_job *rec = NULL;
	for (size_t i = 0; i < sw->nrows && !rec; i++)
		if (sw->rows[i].job_id && sw->rows[i].script_path)
			rec = &sw->rows[i];
	if (!rec) {
		error_msg("sweep %s: no job of it in the ledger to submit again", sw->id);
		return DPE_NOTFOUND;
	}
	long parallel = o->cli.max_parallel ? o->cli.max_parallel : rec->sweep_parallel;
	return resubmit(ctx, set.ledger, rec, idx, n, parallel, after);
}
