/* SPDX-License-Identifier: MIT */
/*
 * A sweep's tasks as one table (status SWEEP, wait SWEEP): each task with its
 * parameters, state, exit, elapsed time and metrics, from the answers about the
 * sweep's jobs (lib/jobs/sweeps.h says which task each answer row is), sorted on
 * request, then a line that counts the states.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "inventory/sweep.h"
#include "jobref.h"
#include "jobs/job_metrics.h"
#include "jobs/jobs.h"
#include "jobs/job_usage.h"
#include "jobs/run_attempts.h"
#include "jobs/sweeps.h"
#include "base/strbuf.h"
#include "base/termesc.h"

/* The text table shows at most this many metrics (--json: all). */
#define VIEW_METRICS 8

int sweep_view_build(const struct job_sweep *js, const struct jobs_result *res,
		     const struct jobref *const *refs, struct sweep_view *v, struct dp_error *err)
{
	memset(v, 0, sizeof(*v));
	v->js = js;
	v->sw = (struct sweep)SWEEP_INIT;
	const struct ledger_job *first = &js->rows[0];
	if (sweep_from_json(&v->sw, first->sweep_params, err) < 0)
		return -1;
	v->size = v->sw.ntasks;
	v->tasks = xcalloc(v->size + 1, sizeof(*v->tasks));
	v->order = xcalloc(v->size + 1, sizeof(*v->order));
	for (size_t k = 0; k < v->size; k++)
		v->order[k] = k;
	for (size_t i = 0; i < res->n; i++) {
		const struct jobref *r = refs[i];
		if (res->rows[i].not_found || !r->in_ledger || !r->rec.sweep_id ||
		    !streq(r->rec.sweep_id, js->id))
			continue;
		sweeps_take(&r->rec, &res->rows[i].st, v->tasks, v->size);
	}
	for (size_t k = 0; k < v->size; k++) {
		const struct job_state *st = v->tasks[k].st;
		for (size_t m = 0; st && m < st->nmetrics; m++)
			if (!strv_contains(v->metrics, st->metrics[m].name))
				strv_add(&v->metrics, st->metrics[m].name);
	}
	return 0;
}

void sweep_view_release(struct sweep_view *v)
{
	sweep_release(&v->sw);
	sweep_tasks_free(v->tasks, v->size);
	free(v->order);
	strv_free(v->metrics);
	memset(v, 0, sizeof(*v));
}

/* ---- --sort ---- */

static const char *key_of(const struct sweep_view *v, size_t k, const char *key)
{
	for (size_t p = 0; p < v->sw.nparams; p++)
		if (streq(v->sw.params[p].name, key))
			return sweep_value(&v->sw, k, p);
	return v->tasks[k].st ? job_state_metric(v->tasks[k].st, key) : NULL;
}

static bool number(const char *s, double *d)
{
	char *end;
	*d = strtod(s, &end);
	return end != s && *end == '\0' && !isnan(*d);
}

/* Tasks without the key go last either way; numbers compare as numbers. */
static int compare(const char *a, const char *b, bool desc)
{
	double x, y;
	if (!a || !b)
		return !a - !b;
	int c = number(a, &x) && number(b, &y) ? (x > y) - (x < y) : strcmp(a, b);
	return desc ? -c : c;
}

int sweep_view_sort(struct sweep_view *v, const char *sort, struct dp_error *err)
{
	bool desc = sort[0] == '-';
	const char *key = sort + desc;
	bool known = strv_contains(v->metrics, key);
	for (size_t p = 0; p < v->sw.nparams && !known; p++)
		known = streq(v->sw.params[p].name, key);
	if (!known) {
		_cleanup_strbuf_ struct strbuf have = STRBUF_INIT;
		for (size_t p = 0; p < v->sw.nparams; p++)
			strbuf_addf(&have, "%s%s", have.len ? ", " : "", v->sw.params[p].name);
		for (size_t m = 0; v->metrics && v->metrics[m]; m++)
			strbuf_addf(&have, ", %s", v->metrics[m]);
		return dp_err(err, DPE_INPUT, "--sort %s: sweep %s has no parameter or metric "
			      "'%s' (it has: %s; '-NAME' sorts descending)", sort, v->js->id, key,
			      have.buf);
	}
	/* insertion sort: stable, and a sweep's table is read by a person */
	for (size_t i = 1; i < v->size; i++) {
		size_t t = v->order[i], j = i;
		for (; j > 0 && compare(key_of(v, v->order[j - 1], key), key_of(v, t, key), desc) > 0; j--)
			v->order[j] = v->order[j - 1];
		v->order[j] = t;
	}
	return 0;
}

/* ---- output ---- */

static const char *state_of(const struct sweep_task *t)
{
	return t->st && t->st->state[0] ? t->st->state : "UNKNOWN";
}

/* "6 tasks: 4 COMPLETED, 1 FAILED, 1 RUNNING": ended states first, then the rest,
 * each in the order first seen. */
char *sweep_view_summary(const struct sweep_view *v)
{
	_cleanup_strv_free_ char **states = NULL;
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < v->size; k++) {
			const char *s = state_of(&v->tasks[k]);
			enum job_phase ph = job_phase_of(s);
			bool ended = ph == JOB_PHASE_COMPLETED || ph == JOB_PHASE_ENDED;
			if (ended == (pass == 0) && !strv_contains(states, s))
				strv_add(&states, s);
		}
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%zu task%s:", v->size, v->size == 1 ? "" : "s");
	for (size_t i = 0; states && states[i]; i++) {
		size_t n = 0;
		for (size_t k = 0; k < v->size; k++)
			n += streq(state_of(&v->tasks[k]), states[i]);
		strbuf_addf(&sb, "%s %zu %s", i ? "," : "", n, states[i]);
	}
	return strbuf_detach(&sb);
}

/* The first row's host of the sweep's jobs: "on hpc" / "on box1, box2". */
static char *hosts_text(const struct job_sweep *js)
{
	_cleanup_strv_free_ char **hosts = NULL;
	for (size_t i = 0; i < js->nrows; i++)
		if (!strv_contains(hosts, js->rows[i].host))
			strv_add(&hosts, js->rows[i].host);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; hosts && hosts[i]; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", hosts[i]);
	return strbuf_detach(&sb);
}

void sweep_view_text(const struct sweep_view *v)
{
	size_t nm = strv_len(v->metrics) < VIEW_METRICS ? strv_len(v->metrics) : VIEW_METRICS;
	struct table t = { .ncols = 1 + v->sw.nparams + 3 + nm + 1, .trim = true };
	_cleanup_free_ char *hosts = hosts_text(v->js);
	const char *name = v->js->rows[0].name;
	printf("sweep %s (%s): %zu tasks on %s\n", v->js->id, name ? name : "dispatch", v->size,
	       hosts);
	table_add(&t, "TASK");
	for (size_t p = 0; p < v->sw.nparams; p++)
		table_take(&t, printable(v->sw.params[p].name));
	table_row(&t, "STATE", "EXIT", "ELAPSED", NULL);
	for (size_t m = 0; m < nm; m++)
		table_take(&t, printable(v->metrics[m]));
	table_add(&t, "JOB");
	for (size_t i = 0; i < v->size; i++) {
		size_t k = v->order[i];
		const struct sweep_task *task = &v->tasks[k];
		table_addf(&t, "%zu", k);
		for (size_t p = 0; p < v->sw.nparams; p++)
			table_take(&t, printable(sweep_value(&v->sw, k, p)));
		if (task->st) {
			_cleanup_free_ char *elapsed = job_state_elapsed_text(task->st);
			table_take(&t, job_state_state_text(task->st));
			table_take(&t, job_state_exit_text(task->st));
			table_add(&t, elapsed[0] ? elapsed : "-");
		} else {
			table_row(&t, "UNKNOWN", "-", "-", NULL);
		}
		for (size_t m = 0; m < nm; m++) {
			const char *val = task->st ? job_state_metric(task->st, v->metrics[m]) : NULL;
			table_take(&t, printable(val && *val ? val : "-"));
		}
		if (task->rec)
			table_take(&t, xasprintf("%s@%s", task->job, task->rec->host));
		else
			table_add(&t, "-");
	}
	table_print(&t);
	if (strv_len(v->metrics) > nm)
		printf("(%zu more metrics: --json has them all)\n", strv_len(v->metrics) - nm);
	_cleanup_free_ char *summary = sweep_view_summary(v);
	printf("%s\n", summary);
}

cJSON *sweep_view_json(const struct sweep_view *v)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "sweep", v->js->id);
	cJSON_AddStringToObject(o, "asked", v->js->arg);
	json_add_str_or_null(o, "name", v->js->rows[0].name);
	cJSON_AddNumberToObject(o, "size", (double)v->size);
	cJSON *names = cJSON_AddArrayToObject(o, "params");
	for (size_t p = 0; p < v->sw.nparams; p++)
		cJSON_AddItemToArray(names, cJSON_CreateString(v->sw.params[p].name));
	cJSON *jobs = cJSON_AddArrayToObject(o, "jobs");
	for (size_t i = 0; i < v->js->nrows; i++) {
		const struct ledger_job *r = &v->js->rows[i];
		if (!r->job_id)
			continue;
		_cleanup_free_ char *job = xasprintf("%s@%s", r->job_id, r->host);
		cJSON_AddItemToArray(jobs, cJSON_CreateString(job));
	}
	cJSON *tasks = cJSON_AddArrayToObject(o, "tasks");
	cJSON *counts = cJSON_CreateObject();
	for (size_t i = 0; i < v->size; i++) {
		size_t k = v->order[i];
		const struct sweep_task *task = &v->tasks[k];
		cJSON *t = cJSON_CreateObject();
		cJSON_AddNumberToObject(t, "index", (double)k);
		cJSON *p = cJSON_AddObjectToObject(t, "params");
		for (size_t q = 0; q < v->sw.nparams; q++)
			cJSON_AddStringToObject(p, v->sw.params[q].name, sweep_value(&v->sw, k, q));
		if (task->rec) {
			_cleanup_free_ char *job = xasprintf("%s@%s", task->job, task->rec->host);
			cJSON_AddStringToObject(t, "job", job);
			cJSON_AddStringToObject(t, "host", task->rec->host);
		} else {
			cJSON_AddNullToObject(t, "job");
			cJSON_AddNullToObject(t, "host");
		}
		if (task->st) {
			job_state_json_state(t, task->st);
			job_state_json_times(t, task->st);
			job_state_json_exit(t, task->st);
			job_state_json_run(t, task->st);
			if (task->st->usage) { /* (status --usage) */
				cJSON_AddItemToObject(t, "usage", job_usage_json(task->st->usage));
				cJSON_AddItemToObject(t, "allocated", job_alloc_json(task->st));
			}
		} else {
			cJSON_AddStringToObject(t, "state", "UNKNOWN");
			cJSON_AddNullToObject(t, "active");
		}
		cJSON *m = cJSON_AddObjectToObject(t, "metrics");
		for (size_t q = 0; task->st && q < task->st->nmetrics; q++)
			cJSON_AddStringToObject(m, task->st->metrics[q].name, task->st->metrics[q].value);
		cJSON_AddItemToArray(tasks, t);
		const char *s = state_of(task);
		cJSON *c = cJSON_GetObjectItemCaseSensitive(counts, s);
		if (c)
			cJSON_SetNumberValue(c, c->valuedouble + 1);
		else
			cJSON_AddNumberToObject(counts, s, 1);
	}
	cJSON_AddItemToObject(o, "states", counts);
	return o;
}

/* ---- status SWEEP, wait SWEEP ---- */

int sweep_status_print(const struct status_answer *a, const struct job_set *set,
		       const char *sort, bool *all_completed)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *arr = cJSON_AddArrayToObject(doc, "sweeps");
	int status = a->status;
	for (size_t i = 0; i < set->nsweeps; i++) {
		struct sweep_view v;
		struct dp_error err = { 0 };
		if (sweep_view_build(&set->sweeps[i], &a->res, a->refs, &v, &err) < 0 ||
		    (sort && sweep_view_sort(&v, sort, &err) < 0)) {
			sweep_view_release(&v);
			status = report_error(&err);
			break;
		}
		for (size_t k = 0; all_completed && k < v.size; k++)
			if (!v.tasks[k].st || !streq(v.tasks[k].st->state, "COMPLETED"))
				*all_completed = false;
		if (a->ctx->json)
			cJSON_AddItemToArray(arr, sweep_view_json(&v));
		else
			sweep_view_text(&v);
		sweep_view_release(&v);
	}
	if (a->ctx->json && status != DPE_INPUT)
		json_print(doc);
	else
		cJSON_Delete(doc);
	return status;
}
