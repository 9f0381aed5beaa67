/* SPDX-License-Identifier: MIT */
/* A job's state and its formatters: job_state.h. */
#include "jobs/job_state.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "jobs/job_usage.h"
#include "sched/sched.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_why.h"

static void job_end_release(struct job_end *d)
{
	free(d->rss_node);
	free(d->rss_step);
	free(d->cancelled_by_name);
	free(d->failed_nodes);
	*d = (struct job_end){ 0 };
}

static void job_tail_release(struct job_tail *t)
{
	free(t->path);
	free(t->text);
	free(t->error);
	*t = (struct job_tail){ 0 };
}

void job_state_release(struct job_state *js)
{
	free(js->id);
	free(js->state);
	free(js->reason);
	free(js->elapsed_word);
	free(js->limit_word);
	free(js->nodes);
	free(js->gpus);
	free(js->cancelled_by);
	free(js->partition);
	free(js->name);
	free(js->user);
	free(js->pending_text);
	cJSON_Delete(js->pending);
	job_end_release(&js->end);
	job_tail_release(&js->tail);
	for (size_t i = 0; i < js->nattempts; i++) {
		free(js->attempts[i].state);
		free(js->attempts[i].node);
	}
	free(js->attempts);
	free(js->run_id);
	free(js->gave_up);
	free(js->stage_exit);
	for (size_t i = 0; i < js->nmetrics; i++) {
		free(js->metrics[i].name);
		free(js->metrics[i].value);
	}
	free(js->metrics);
	job_usage_free(js->usage);
	free(js->idle);
	*js = (struct job_state){ 0 };
}

void job_states_free(struct job_state *js, size_t n)
{
	for (size_t i = 0; i < n; i++)
		job_state_release(&js[i]);
	free(js);
}

enum job_phase job_phase_of(const char *state)
{
	if (!state || !*state)
		return JOB_PHASE_UNKNOWN;
	if (streq(state, "PENDING"))
		return JOB_PHASE_PENDING;
	if (slurm_state_active(state))
		return JOB_PHASE_ACTIVE;
	if (streq(state, "COMPLETED"))
		return JOB_PHASE_COMPLETED;
	return streq(state, "UNKNOWN") ? JOB_PHASE_UNKNOWN : JOB_PHASE_ENDED;
}

bool job_state_active(const struct job_state *js)
{
	return streq(js->state, "RUNNING") || slurm_state_active(js->state);
}

bool job_state_failed(const struct job_state *js)
{
	return !streq(js->state, "COMPLETED") && !slurm_state_active(js->state);
}

void job_state_time_of(const char *text, long *secs, char **word)
{
	long s = slurm_parse_duration(text);
	*word = NULL;
	if (streq(text, "UNLIMITED")) {
		*secs = JOB_TIME_UNLIMITED;
		return;
	}
	if (s >= 0) {
		_cleanup_free_ char *back = slurm_format_seconds(s);
		if (streq(back, text)) {
			*secs = s;
			return;
		}
	}
	*secs = JOB_TIME_UNKNOWN;
	*word = text[0] ? xstrdup(text) : NULL;
}

/* ---- text ---- */

char *job_state_name(const struct job_state *js, const char *host)
{
	return xasprintf("%s@%s", js->id, host);
}

char *job_exit_text(int exit_code, int signal)
{
	if (exit_code >= 0 && signal > 0 && exit_code == 0)
		return xasprintf("sig%d", signal);
	if (exit_code >= 0)
		return xasprintf("%d", exit_code);
	return xstrdup("-");
}

char *job_state_exit_text(const struct job_state *js)
{
	return job_exit_text(js->exit_code, js->signal);
}

static char *time_text(long secs, const char *word)
{
	if (secs == JOB_TIME_UNLIMITED)
		return xstrdup("UNLIMITED");
	if (secs >= 0)
		return slurm_format_seconds(secs);
	return xstrdup(word ? word : "");
}

char *job_state_elapsed_text(const struct job_state *js)
{
	return time_text(js->elapsed, js->elapsed_word);
}

char *job_state_limit_text(const struct job_state *js)
{
	return time_text(js->limit, js->limit_word);
}

/* The fields slurm_why and the failure object read. */
static struct slurm_why_job why_job(const struct job_state *js, char **elapsed, char **limit)
{
	*elapsed = job_state_elapsed_text(js);
	*limit = job_state_limit_text(js);
	return (struct slurm_why_job){
		.state = js->state, .reason = js->reason, .exit_code = js->exit_code,
		.signal = js->signal, .nodes = js->nodes, .elapsed = *elapsed,
		.time_limit = *limit, .cancelled_by = js->cancelled_by,
		.max_rss = js->end.max_rss, .mem_limit = js->end.mem_limit,
		.rss_node = js->end.rss_node, .rss_step = js->end.rss_step,
		.cancelled_by_name = js->end.cancelled_by_name,
		.failed_nodes = js->end.failed_nodes,
	};
}

char *job_state_why(const struct job_state *js)
{
	/* a run its wrapper requeued: SLURM holds a requeued job until its BeginTime */
	if (js->nattempts && streq(js->state, "PENDING") && streq(js->reason, "BeginTime"))
		return xasprintf("restarted after attempt %zu ended %s: SLURM starts a requeued job "
				 "again once its BeginTime (about two minutes after the requeue) has come "
				 "(BeginTime)", js->nattempts, js->attempts[js->nattempts - 1].state);
	if (js->gave_up && job_state_failed(js))
		return xasprintf("the run %s", js->gave_up);
	if (js->idle && !job_state_active(js))
		return xstrdup(js->idle);
	_cleanup_free_ char *why = js->sched && js->sched->why ? js->sched->why(js) : NULL;
	/* the stage it failed in: the one that exited non-zero, or was cut short */
	for (size_t i = 0; job_state_failed(js) && i < js->nstages; i++) {
		int e = js->stage_exit[i];
		if (e == 0 || e == JOB_STAGE_NOT_RUN)
			continue;
		if (e > 0 && !why)
			return xasprintf("stage %zu/%zu exited with code %d", i + 1, js->nstages, e);
		return xasprintf("in stage %zu/%zu: %s", i + 1, js->nstages,
				 why ? why : "it did not end");
	}
	return why ? xstrdup(why) : NULL;
}

/* ---- JSON ---- */

static void add_str_or_null(cJSON *o, const char *key, const char *value)
{
	if (value)
		cJSON_AddStringToObject(o, key, value);
	else
		cJSON_AddNullToObject(o, key);
}

static void add_int_or_null(cJSON *o, const char *key, long value)
{
	if (value >= 0)
		cJSON_AddNumberToObject(o, key, (double)value);
	else
		cJSON_AddNullToObject(o, key);
}

static void add_bytes(cJSON *o, const char *key, long long v)
{
	if (v > 0)
		cJSON_AddNumberToObject(o, key, (double)v);
	else
		cJSON_AddNullToObject(o, key);
}

void job_state_json_state(cJSON *o, const struct job_state *js)
{
	cJSON_AddStringToObject(o, "state", js->state);
	cJSON_AddBoolToObject(o, "active", job_state_active(js));
}

void job_state_json_times(cJSON *o, const struct job_state *js)
{
	_cleanup_free_ char *elapsed = job_state_elapsed_text(js);
	_cleanup_free_ char *limit = job_state_limit_text(js);
	cJSON_AddStringToObject(o, "elapsed", elapsed);
	cJSON_AddStringToObject(o, "time_limit", limit);
}

void job_state_json_exit(cJSON *o, const struct job_state *js)
{
	add_int_or_null(o, "exit_code", js->exit_code);
	add_int_or_null(o, "signal", js->signal);
}

void job_state_json_why(cJSON *o, const struct job_state *js)
{
	_cleanup_free_ char *why = job_state_why(js);
	add_str_or_null(o, "why", why);
}

void job_state_json_stages(cJSON *o, const struct job_state *js)
{
	if (!js->nstages) {
		cJSON_AddNullToObject(o, "stages");
		return;
	}
	cJSON *arr = cJSON_AddArrayToObject(o, "stages");
	for (size_t i = 0; i < js->nstages; i++) {
		int e = js->stage_exit[i];
		cJSON *st = cJSON_CreateObject();
		cJSON_AddNumberToObject(st, "stage", (double)(i + 1));
		cJSON_AddStringToObject(st, "state", e == 0 ? "done" : e > 0 ? "failed"
					: e == JOB_STAGE_STARTED ? "started" : "not run");
		add_int_or_null(st, "exit", e);
		cJSON_AddItemToArray(arr, st);
	}
}

static void job_end_json(cJSON *o, const struct slurm_why_job *w, bool failed)
{
	if (!failed || !w->state) {
		cJSON_AddNullToObject(o, "failure");
		return;
	}
	cJSON *f = cJSON_AddObjectToObject(o, "failure");
	cJSON_AddStringToObject(f, "state", w->state);
	cJSON_AddBoolToObject(f, "out_of_memory", slurm_why_oom(w));
	add_int_or_null(f, "exit_code", w->exit_code);
	add_int_or_null(f, "signal", w->signal > 0 ? w->signal : -1);
	const char *sig = w->signal > 0 ? slurm_signal_name(w->signal) : NULL;
	_cleanup_free_ char *signame = sig ? xasprintf("SIG%s", sig) : NULL;
	add_str_or_null(f, "signal_name", signame);
	add_bytes(f, "max_rss_bytes", w->max_rss);
	add_bytes(f, "mem_limit_bytes", w->mem_limit);
	add_str_or_null(f, "max_rss_node", w->max_rss > 0 ? w->rss_node : NULL);
	add_str_or_null(f, "max_rss_step", w->max_rss > 0 ? w->rss_step : NULL);
	add_str_or_null(f, "nodes", w->nodes && *w->nodes ? w->nodes : NULL);
	add_str_or_null(f, "failed_nodes", w->failed_nodes);
	add_str_or_null(f, "elapsed", w->elapsed && *w->elapsed ? w->elapsed : NULL);
	add_str_or_null(f, "time_limit", w->time_limit && *w->time_limit ? w->time_limit : NULL);
	add_str_or_null(f, "cancelled_by_uid", w->cancelled_by);
	add_str_or_null(f, "cancelled_by", w->cancelled_by_name);
}

void job_state_json_failure(cJSON *o, const struct job_state *js)
{
	_cleanup_free_ char *elapsed = NULL, *limit = NULL;
	struct slurm_why_job w = why_job(js, &elapsed, &limit);
	job_end_json(o, &w, job_state_failed(js));
}

void job_state_json_pending(cJSON *o, const struct job_state *js)
{
	if (js->pending)
		cJSON_AddItemToObject(o, "pending", cJSON_Duplicate(js->pending, true));
	else
		cJSON_AddNullToObject(o, "pending");
}

static void job_tail_json(cJSON *o, const struct job_tail *t)
{
	add_str_or_null(o, "log_path", t->fetched ? t->path : NULL);
	if (!t->text) {
		cJSON_AddNullToObject(o, "log_tail");
	} else {
		cJSON *a = cJSON_AddArrayToObject(o, "log_tail");
		for (const char *p = t->text; *p;) {
			size_t len = strcspn(p, "\n");
			_cleanup_free_ char *line = xstrndup(p, len);
			cJSON_AddItemToArray(a, cJSON_CreateString(line));
			p += len + (p[len] == '\n');
		}
	}
	add_str_or_null(o, "log_tail_error", t->fetched ? t->error : NULL);
}

void job_state_json_tail(cJSON *o, const struct job_state *js)
{
	job_tail_json(o, &js->tail);
}
