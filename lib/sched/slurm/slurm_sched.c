/* SPDX-License-Identifier: MIT */
/*
 * The SLURM backend's table of operations (lib/sched/sched.h): squeue then sacct for
 * where jobs stand, scancel, why pending jobs wait (slurm_pending), how failed jobs
 * ended (slurm_end) and where a job writes its output (scontrol, sacct).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/marker.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "jobs/job_state.h"
#include "jobs/job_step.h"
#include "remote/remote.h"
#include "sched/sched.h"
#include "sched/slurm/slurm_top.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_end.h"
#include "sched/slurm/slurm_pending.h"
#include "sched/slurm/slurm_queue.h"
#include "sched/slurm/slurm_steps.h"
#include "sched/slurm/slurm_report.h"
#include "sched/slurm/slurm_why.h"

struct sched_answer {
	struct slurm_job *jobs;
	size_t n;
};

static bool can_query(const struct sched_job *j)
{
	(void)j;
	return true;
}

/* The ids of jobs[0..n), each once. */
static char **ids_of(const struct sched_job *jobs, size_t n)
{
	char **ids = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strv_contains(ids, jobs[i].id))
			strv_add(&ids, jobs[i].id);
	return ids;
}

static void query_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	_cleanup_strv_free_ char **ids = ids_of(jobs, n);
	if (!ids)
		return;
	remote_section(rs, REMOTE_SQUEUE);
	slurm_status_command(remote_section(rs, REMOTE_SACCT), ids);
}

static void alloc_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	_cleanup_strv_free_ char **ids = ids_of(jobs, n);
	if (ids)
		slurm_alloc_command(remote_section(rs, REMOTE_USAGE), ids);
}

/* sacct's line for id (slurm_alloc_command): its GPUs, for how long, and whose. */
static void alloc_take(const struct remote_reply *rr, const char *id, struct job_state *js)
{
	for (size_t i = 0; i < rr->n; i++) {
		char *f[4];
		long secs;
		if (!streq(rr->marks[i].key, MARK_USAGE_ALLOC))
			continue;
		_cleanup_free_ char *line = xstrdup(rr->marks[i].value);
		if (!slurm_split_fields(line, f, 4) || !streq(f[0], id) ||
		    !parse_long(f[1], 0, 100L * 366 * 86400, &secs))
			continue;
		js->alloc_gpus = slurm_tres_gpus(f[2]);
		js->alloc_seconds = secs;
		if (!js->user && *f[3] && strspn(f[3], "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == strlen(f[3]))
			js->user = xstrdup(f[3]);
	}
}

/* squeue fails outright when every id has left the controller's memory (sacct
 * answers for those); any other failure (slurmctld down or too busy) means no answer:
 * a job that just ended may not be in sacct yet, so it is not "not found". */
static bool query_failed(const struct remote_script *rs, const struct remote_reply *rr,
			 const char **tool, int *tool_exit)
{
	int sq = remote_section_exit(rs, rr, REMOTE_SQUEUE);
	if (!slurm_squeue_failed(sq, rr->err.buf))
		return false;
	*tool = remote_sections[REMOTE_SQUEUE].name;
	*tool_exit = sq;
	return true;
}

static struct sched_answer *parse(const struct remote_reply *rr)
{
	struct sched_answer *a = xcalloc(1, sizeof(*a));
	slurm_parse_status(rr->out.buf, &a->jobs, &a->n);
	return a;
}

static void answer_free(struct sched_answer *a)
{
	if (!a)
		return;
	slurm_jobs_free(a->jobs, a->n);
	free(a);
}

static size_t query_rows(const struct sched_answer *a, const struct sched_job *j,
			 const char *host, struct job_state **rows, size_t *n,
			 struct dp_error *err)
{
	const struct slurm_job **sel;
	size_t nsel;
	slurm_select(a ? a->jobs : NULL, a ? a->n : 0, j->id, &sel, &nsel);
	*rows = xrealloc(*rows, (*n + nsel + 1) * sizeof(**rows));
	for (size_t k = 0; k < nsel; k++) {
		const struct slurm_job *s = sel[k];
		struct job_state js = {
			.id = xstrdup(s->id),
			.sched = &sched_slurm,
			.phase = job_phase_of(s->state),
			.state = xstrdup(s->state),
			.reason = xstrdup(s->reason),
			.exit_code = s->exit_code,
			.signal = s->exit_signal,
			.nodes = xstrdup(s->nodes),
			.cancelled_by = s->cancelled_by ? xstrdup(s->cancelled_by) : NULL,
			.from_accounting = s->from_sacct,
		};
		job_state_time_of(s->elapsed, &js.elapsed, &js.elapsed_word);
		job_state_time_of(s->time_limit, &js.limit, &js.limit_word);
		(*rows)[(*n)++] = js;
	}
	free(sel);
	if (!nsel)
		dp_err(err, DPE_NOTFOUND, "job '%s' not found on '%s': neither squeue nor sacct knows it",
		       j->id, host);
	return nsel;
}

static void not_found(const struct sched_job *j, const char *host, struct dp_error *err)
{
	dp_err(err, DPE_NOTFOUND, "job '%s' not found on '%s': neither squeue nor sacct knows it",
	       j->id, host);
}

static char *why(const struct job_state *js)
{
	_cleanup_free_ char *elapsed = job_state_elapsed_text(js);
	_cleanup_free_ char *limit = job_state_limit_text(js);
	struct slurm_why_job w = {
		.state = js->state, .reason = js->reason, .exit_code = js->exit_code,
		.signal = js->signal, .nodes = js->nodes, .elapsed = elapsed,
		.time_limit = limit, .cancelled_by = js->cancelled_by,
		.max_rss = js->end.max_rss, .mem_limit = js->end.mem_limit,
		.rss_node = js->end.rss_node, .rss_step = js->end.rss_step,
		.cancelled_by_name = js->end.cancelled_by_name,
		.failed_nodes = js->end.failed_nodes,
	};
	return slurm_why(&w);
}

/* ---- why pending jobs wait ---- */

static bool pending_script(struct remote_script *rs, struct job_state *const *rows, size_t n)
{
	_cleanup_strv_free_ char **asked = NULL;
	bool limits = false;
	for (size_t i = 0; i < n; i++) {
		/* the pending rest of an array ("41_[2-5%2]"): squeue -j takes its job id */
		_cleanup_free_ char *id = xstrndup(rows[i]->id, strcspn(rows[i]->id, "["));
		if (id[0] && id[strlen(id) - 1] == '_')
			id[strlen(id) - 1] = 0;
		if (!strv_contains(asked, id))
			strv_add(&asked, id);
		limits = limits || slurm_pending_wants_limits(rows[i]->reason);
	}
	if (!asked)
		return false;
	slurm_pending_command(remote_section(rs, REMOTE_PENDING), asked, limits);
	return true;
}

cJSON *slurm_pending_json(const char *reason, const struct slurm_pending *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "reason", reason);
	const char *words = slurm_pending_words(reason);
	if (words)
		cJSON_AddStringToObject(o, "words", words);
	else
		cJSON_AddNullToObject(o, "words");
	if (p && p->text)
		cJSON_AddStringToObject(o, "text", p->text);
	else
		cJSON_AddNullToObject(o, "text");
	if (p)
		cJSON_AddItemToObject(o, "detail", cJSON_Duplicate(p->detail, true));
	else
		cJSON_AddNullToObject(o, "detail");
	return o;
}

static void pending_take(const struct remote_reply *rr, struct job_state *const *rows, size_t n)
{
	struct slurm_pending *p = NULL;
	size_t np = rr ? slurm_pending_parse(rr->out.buf, &p) : 0;
	for (size_t i = 0; i < n; i++) {
		const struct slurm_pending *f = slurm_pending_find(p, np, rows[i]->id);
		rows[i]->pending = slurm_pending_json(rows[i]->reason, f);
		rows[i]->pending_text = f && f->text ? xstrdup(f->text) : NULL;
	}
	slurm_pending_free(p, np);
}

/* ---- how failed jobs ended ---- */

static bool end_script(struct remote_script *rs, struct job_state *const *rows, size_t n)
{
	_cleanup_strv_free_ char **ids = NULL, **uids = NULL, **nodes = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct job_state *r = rows[i];
		if (!strv_contains(ids, r->id))
			strv_add(&ids, r->id);
		if (r->cancelled_by && !strv_contains(uids, r->cancelled_by))
			strv_add(&uids, r->cancelled_by);
		if (streq(r->state, "NODE_FAIL") && r->nodes && *r->nodes &&
		    !streq(r->nodes, "None assigned") && !strv_contains(nodes, r->nodes))
			strv_add(&nodes, r->nodes);
	}
	if (!ids)
		return false;
	slurm_end_command(remote_section(rs, REMOTE_END), ids, uids, nodes);
	return true;
}

static void end_take(const struct remote_reply *rr, struct job_state *const *rows, size_t n,
		     char **note)
{
	_cleanup_(slurm_end_release) struct slurm_end e;
	slurm_end_parse(rr->out.buf, &e);
	*note = NULL;
	if (e.sacct_exit != 0)
		*note = xasprintf("sacct for the failed jobs' steps: exit status %d%s%.*s", e.sacct_exit,
				  rr->err.len ? ": " : "", (int)strcspn(rr->err.buf, "\n"),
				  rr->err.buf);
	for (size_t i = 0; i < n; i++) {
		struct job_end *d = &rows[i]->end;
		const struct slurm_end_row *m = slurm_end_memory(&e, rows[i]->id);
		if (m) {
			d->max_rss = m->max_rss;
			d->mem_limit = m->mem_limit;
			d->rss_node = xstrdup(m->rss_node[0] ? m->rss_node : m->nodes);
			d->rss_step = xstrdup(m->step);
		}
		const char *name = slurm_end_user(&e, rows[i]->cancelled_by);
		d->cancelled_by_name = name ? xstrdup(name) : NULL;
		if (streq(rows[i]->state, "NODE_FAIL"))
			d->failed_nodes = slurm_end_failed_nodes(&e, rows[i]->nodes);
	}
}

/* ---- where a job writes its output ---- */

/* The "123" and "4" of "123_4" (task NULL without one). */
static void split_task(const char *id, char **base, char **task)
{
	const char *us = strchr(id, '_');
	*base = us ? xstrndup(id, (size_t)(us - id)) : xstrdup(id);
	*task = us ? xstrdup(us + 1) : NULL;
}

/* scontrol (else sacct) for each job, a MARK_PATHS_JOB part each */
static bool paths_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	if (!n)
		return false;
	struct strbuf *sb = remote_section(rs, REMOTE_PATHS);
	for (size_t i = 0; i < n; i++) {
		char idx[24];
		snprintf(idx, sizeof(idx), "%zu", i);
		marker_print(sb, MARK_PATHS_JOB, idx);
		slurm_job_paths_command(sb, jobs[i].id);
	}
	return true;
}

static int path_take(const struct remote_reply *rr, const struct sched_job *j, size_t i,
		     enum job_log which, char **path, struct dp_error *err)
{
	bool want_err = which != JOB_LOG_OUT;
	char idx[24];
	snprintf(idx, sizeof(idx), "%zu", i);
	_cleanup_free_ char *text = rr ? remote_part_text(rr, MARK_PATHS_JOB, idx) : NULL;
	if (!text)
		return dp_err(err, DPE_FAIL, "no answer about where job '%s' writes its output",
			      j->arg);
	_cleanup_(slurm_paths_release) struct slurm_paths p;
	slurm_parse_job_paths(text, &p);
	if (p.records > 1)
		return dp_err(err, DPE_INPUT, "job '%s' is an array: name one of its tasks (%s_N)",
			      j->arg, j->id);
	/* SLURM 26.05 leaves StdErr empty when stderr goes to the output (22.05 names
	 * the output file there): the output file, either way. */
	const char *known = want_err && p.records == 1 && !p.err ? p.out : want_err ? p.err : p.out;
	if (known) {
		*path = xstrdup(known);
		return 0;
	}
	_cleanup_free_ char *base = NULL, *task = NULL;
	split_task(j->id, &base, &task);
	if (p.acct_out) {
		/* Accounting's paths (a job SLURM's controller forgot; 24.05 and later):
		 * patterns left in them are filled in as sbatch would have. */
		*path = slurm_expand_pattern(want_err && p.acct_err ? p.acct_err : p.acct_out, base,
					     task, p.acct_name, p.user);
		return 0;
	}
	const char *pattern = !j->in_ledger ? NULL : want_err ? j->err_path : j->log_path;
	if (!pattern && j->in_ledger && which == JOB_LOG_ERR_OR_OUT)
		pattern = j->log_path;
	if (!pattern) {
		if (j->in_ledger && want_err)
			return dp_err(err, DPE_NOTFOUND, "job '%s' has no error file of its own: its "
				      "stderr goes to its output ('dispatch logs %s')", j->arg, j->arg);
		return dp_err(err, DPE_NOTFOUND, "cannot tell where job '%s' writes its output: SLURM "
			      "on '%s' no longer knows the job, its accounting has no paths (SLURM "
			      "before 24.05) and dispatch did not submit it", j->arg, j->host);
	}
	*path = slurm_expand_pattern(pattern, base, task, j->name, p.user);
	return 0;
}

/* ---- cancel ---- */

static bool can_cancel(const struct sched_job *j, const char *host, struct dp_error *err)
{
	(void)j, (void)host, (void)err;
	return true;
}

static void cancel_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	_cleanup_strv_free_ char **ids = ids_of(jobs, n);
	if (ids)
		slurm_cancel_command(remote_section(rs, REMOTE_SCANCEL), ids);
}

static bool cancel_ok(const struct remote_script *rs, const struct remote_reply *rr,
		      const char *host, struct dp_error *err)
{
	if (remote_section_exit(rs, rr, REMOTE_SCANCEL) == 0)
		return true;
	dp_err(err, DPE_FAIL, "scancel on '%s' failed", host);
	return false;
}

static const char *cancel_outcome(const struct remote_reply *rr, const struct sched_job *j,
				  bool ok, const char *host, struct dp_error *err)
{
	(void)rr, (void)j, (void)host, (void)err;
	return ok ? "cancelled" : "failed";
}

/* ---- queue ---- */

static void queue_command(struct strbuf *sb, const struct inv_host *h,
			  const struct slurm_queue_filter *f, enum slurm_queue_format fmt,
			  const char *eor)
{
	slurm_queue_command(sb, f, fmt, eor);
}

/* Why the pending jobs wait, in one more command for all of them. */
static int queue_pending(struct ssh_session *ss, const struct slurm_queue *q,
			 struct slurm_pending **pending, size_t *n, struct dp_error *err)
{
	_cleanup_strv_free_ char **ids = NULL;
	bool limits = false;
	for (size_t i = 0; i < q->n; i++) {
		const struct slurm_qjob *j = &q->jobs[i];
		if (!streq(j->state, "PENDING") || strv_contains(ids, j->id))
			continue;
		strv_add(&ids, j->id);
		limits = limits || slurm_pending_wants_limits(j->reason);
	}
	return slurm_pending_fetch(ss, ids, limits, pending, n, err);
}

/* ---- steps ---- */

static void steps_script(struct remote_script *rs, const struct sched_job *jobs, size_t n)
{
	_cleanup_strv_free_ char **ids = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strv_contains(ids, jobs[i].id))
			strv_add(&ids, jobs[i].id);
	if (ids)
		slurm_steps_command(remote_section(rs, REMOTE_STEPS), ids);
}

static int steps_exit(const struct remote_script *rs, const struct remote_reply *rr,
		      const char **tool)
{
	(void)rs;
	*tool = "sacct";
	return remote_exit(rr, REMOTE_STEPS);
}

static size_t steps_take(const struct remote_reply *rr, const struct sched_job *j,
			 struct job_step **steps, size_t *n)
{
	struct job_step *all;
	size_t m = slurm_parse_steps(rr->out.buf, &all), found = 0, rest = 0;
	for (size_t k = 0; k < m; k++) {
		if (!slurm_id_matches(j->id, all[k].job)) {
			all[rest++] = all[k];
			continue;
		}
		*steps = xrealloc(*steps, (*n + 1) * sizeof(**steps));
		(*steps)[(*n)++] = all[k];
		found++;
	}
	job_steps_free(all, rest);
	return found;
}

const struct sched_ops sched_slurm = {
	.name = "slurm",
	.can_query = can_query,
	.query_script = query_script,
	.alloc_script = alloc_script,
	.alloc_take = alloc_take,
	.query_failed = query_failed,
	.parse = parse,
	.answer_free = answer_free,
	.query_rows = query_rows,
	.not_found = not_found,
	.why = why,
	.pending_script = pending_script,
	.pending_take = pending_take,
	.end_script = end_script,
	.end_take = end_take,
	.paths_script = paths_script,
	.path_take = path_take,
	.can_cancel = can_cancel,
	.cancel_script = cancel_script,
	.cancel_ok = cancel_ok,
	.cancel_outcome = cancel_outcome,
	.top = slurm_top_run,
	.queue_command = queue_command,
	.queue_parse = slurm_parse_queue,
	.queue_pending = queue_pending,
	.steps_script = steps_script,
	.steps_exit = steps_exit,
	.steps_take = steps_take,
	.host_report = slurm_host_report,
};
