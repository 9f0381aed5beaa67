/* SPDX-License-Identifier: MIT */
/* Query and cancel, for every backend: jobs.h. */
#include "jobs/jobs.h"

#include <stdlib.h>
#include <string.h>

#include "base/fanout.h"
#include "base/marker.h"
#include "base/strbuf.h"
#include "base/util.h"
#include "inventory/inventory.h"
#include "jobs/job_metrics.h"
#include "jobs/job_usage.h"
#include "jobs/joblog.h"
#include "jobs/run_attempts.h"
#include "remote/remote.h"
#include "transport/ssh.h"

static void note(struct jobs_result *res, enum jobs_note_kind kind, char *text)
{
	res->notes = xrealloc(res->notes, (res->nnotes + 1) * sizeof(*res->notes));
	res->notes[res->nnotes++] = (struct jobs_note){ .kind = kind, .text = text };
}

static int session(struct jobs_host *h, struct dp_error *err)
{
	if (h->ss)
		return 0;
	return ssh_session_open(h->sc, inventory_ssh_destination(h->inv, h->host), &h->ss, err);
}

/* The jobs of targets that backend s takes (can: the backend's can_query or
 * can_cancel passed, in ok[]). */
static size_t jobs_of(const struct jobs_target *t, size_t n, const bool *ok,
		      const struct sched_ops *s, struct sched_job **out)
{
	size_t m = 0;
	*out = xcalloc(n + 1, sizeof(**out));
	for (size_t i = 0; i < n; i++)
		if (t[i].sched == s && ok[i])
			(*out)[m++] = t[i].job;
	return m;
}

/* ---- query ---- */

static void add_row(struct jobs_result *res, size_t target, struct job_state *st, char *nf)
{
	res->rows = xrealloc(res->rows, (res->n + 1) * sizeof(*res->rows));
	res->rows[res->n++] = (struct jobs_row){ .target = target, .st = *st, .not_found = nf };
}

/* The rows[0..n) of backend s that pick says; *out allocated. */
static size_t rows_of(struct job_state *const *rows, size_t n, const struct sched_ops *s,
		      bool (*pick)(const struct job_state *), struct job_state ***out)
{
	size_t m = 0;
	*out = xcalloc(n + 1, sizeof(**out));
	for (size_t i = 0; i < n; i++)
		if (rows[i]->sched == s && pick(rows[i]))
			(*out)[m++] = rows[i];
	return m;
}

static bool is_pending(const struct job_state *js)
{
	return streq(js->state, "PENDING");
}

/* ---- the detail: one exchange for all it asks, a second for the log tails ---- */

/* A backend's share of the detail: its failed and pending rows, and the failed rows
 * whose tails are asked (task: the job each answers, with the row's id: an array's
 * task has files of its own). */
struct detail_part {
	const struct sched_ops *s;
	struct job_state **ended, **pending, **tailed;
	size_t nended, npending, ntailed;
	struct sched_job *tasks;
	bool end, pend, paths;  /* the part was asked */
};

static void part_mark(struct remote_script *rs, const char *what, const struct sched_ops *s)
{
	_cleanup_free_ char *name = xasprintf("%s-%s", what, s ? s->name : "all");
	marker_print(&rs->text, MARK_PART, name);
}

static void part_reply(const struct remote_reply *rr, const char *what,
		       const struct sched_ops *s, struct remote_reply *part)
{
	_cleanup_free_ char *name = xasprintf("%s-%s", what, s ? s->name : "all");
	remote_reply_part(rr, MARK_PART, name, part);
}

static void detail_script(struct detail_part *p, struct job_state *const *rows,
			  const struct sched_job *const *jobs, size_t n, unsigned want,
			  struct remote_script *rs)
{
	const struct sched_ops *s = p->s;
	if (want & JOBS_WANT_END) {
		p->nended = rows_of(rows, n, s, job_state_failed, &p->ended);
		part_mark(rs, "end", s);
		p->end = s->end_script && s->end_script(rs, p->ended, p->nended);
	}
	if (want & JOBS_WANT_PENDING) {
		p->npending = rows_of(rows, n, s, is_pending, &p->pending);
		part_mark(rs, "pending", s);
		p->pend = s->pending_script && s->pending_script(rs, p->pending, p->npending);
	}
	if (want & JOBS_WANT_TAIL) {
		p->tailed = xcalloc(n + 1, sizeof(*p->tailed));
		p->tasks = xcalloc(n + 1, sizeof(*p->tasks));
		for (size_t i = 0; i < n; i++) {
			if (rows[i]->sched != s || !job_state_failed(rows[i]))
				continue;
			p->tasks[p->ntailed] = *jobs[i];
			p->tasks[p->ntailed].id = rows[i]->id;
			p->tailed[p->ntailed++] = rows[i];
		}
		part_mark(rs, "paths", s);
		p->paths = p->ntailed && s->paths_script &&
			   s->paths_script(rs, p->tasks, p->ntailed);
	}
}

/* What the detail exchange answered (rr NULL: it failed, err says why). */
static void detail_take(struct detail_part *p, const struct remote_reply *rr,
			const struct dp_error *err, struct jobs_result *res)
{
	const struct sched_ops *s = p->s;
	struct remote_reply part;
	if (p->end) {
		char *text = NULL;
		if (!rr) {
			text = xasprintf("cannot ask how the jobs ended: %s", err->msg);
		} else {
			part_reply(rr, "end", s, &part);
			s->end_take(&part, p->ended, p->nended, &text);
			remote_reply_release(&part);
		}
		if (text)
			note(res, JOBS_NOTE_INFO, text);
	}
	if (p->pend) {
		if (!rr) {
			note(res, JOBS_NOTE_WARNING,
			     xasprintf("no detail on why the pending jobs wait: %s", err->msg));
			s->pending_take(NULL, p->pending, p->npending);
		} else {
			part_reply(rr, "pending", s, &part);
			s->pending_take(&part, p->pending, p->npending);
			remote_reply_release(&part);
		}
	}
	/* the paths' part, read once for all the rows (NULL: nothing was asked) */
	bool paths = p->paths && rr;
	if (paths)
		part_reply(rr, "paths", s, &part);
	for (size_t i = 0; i < p->ntailed; i++) {
		struct job_tail *t = &p->tailed[i]->tail;
		struct dp_error perr = { 0 };
		*t = (struct job_tail){ .fetched = true };
		if (p->paths && !rr)
			t->error = xstrdup(err->msg);
		else if (s->path_take(paths ? &part : NULL, &p->tasks[i], i, JOB_LOG_ERR_OR_OUT,
				      &t->path, &perr) < 0)
			t->error = xstrdup(perr.msg);
	}
	if (paths)
		remote_reply_release(&part);
}

/* The tails of the rows whose paths are known, in one exchange. */
static void fetch_tails(struct jobs_host *h, struct detail_part *parts, size_t nparts)
{
	_cleanup_free_ char **paths = NULL;
	_cleanup_free_ struct job_tail **tails = NULL;
	size_t n = 0;
	for (size_t b = 0; b < nparts; b++)
		for (size_t i = 0; i < parts[b].ntailed; i++) {
			struct job_tail *t = &parts[b].tailed[i]->tail;
			if (!t->path)
				continue;
			paths = xrealloc(paths, (n + 1) * sizeof(*paths));
			tails = xrealloc(tails, (n + 1) * sizeof(*tails));
			paths[n] = t->path;
			tails[n++] = t;
		}
	if (!n)
		return;
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	struct dp_error err = { 0 };
	joblog_tails_command(remote_section(&rs, REMOTE_TAIL), paths, n, JOBLOG_TAIL_LINES);
	bool ok = remote_run(h->ss, &rs, &rr, &err) == 0;
	for (size_t i = 0; i < n; i++) {
		if (!ok)
			tails[i]->error = xstrdup(err.msg);
		else
			joblog_tails_take(&rr, i, &tails[i]->text, &tails[i]->error);
	}
	remote_reply_release(&rr);
	remote_script_release(&rs);
}

void jobs_detail(struct jobs_host *h, struct job_state *const *rows,
		 const struct sched_job *const *jobs, size_t n, unsigned want,
		 struct jobs_result *res)
{
	if (!h->ss)
		return;
	struct detail_part parts[8] = { 0 };
	size_t nparts = 0;
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	struct dp_error err = { 0 };
	for (size_t b = 0; sched_all[b] && nparts < ARRAY_SIZE(parts); b++) {
		parts[nparts].s = sched_all[b];
		detail_script(&parts[nparts++], rows, jobs, n, want, &rs);
	}
	/* the runs' ended attempts (jobs_query reads them in its own exchange) */
	_cleanup_free_ struct sched_job *runs = xcalloc(n + 1, sizeof(*runs));
	size_t nruns = 0;
	if (want & JOBS_WANT_ATTEMPTS) {
		for (size_t i = 0; i < n; i++)
			if (jobs[i]->run_id)
				runs[nruns++] = *jobs[i];
		part_mark(&rs, "attempts", NULL);
		run_attempts_script(&rs, runs, nruns);
	}
	/* how they ended: whether the sampler ended them (--idle-timeout), the failed
	 * ones with a stage dir */
	_cleanup_free_ struct sched_job *staged = xcalloc(n + 1, sizeof(*staged));
	size_t nstaged = 0;
	for (size_t i = 0; (want & JOBS_WANT_END) && i < n; i++)
		if (jobs[i]->stage_dir && job_state_failed(rows[i]))
			staged[nstaged++] = *jobs[i];
	if (nstaged) {
		part_mark(&rs, "idle", NULL);
		job_idle_script(&rs, staged, nstaged);
		job_stages_script(&rs, staged, nstaged);
	}
	/* (the part marks alone are no question: remote_script_empty counts sections) */
	bool ok = false;
	if (!remote_script_empty(&rs))
		ok = remote_run(h->ss, &rs, &rr, &err) == 0;
	for (size_t b = 0; b < nparts; b++)
		detail_take(&parts[b], ok ? &rr : NULL, &err, res);
	if (nruns) {
		if (!ok) {
			note(res, JOBS_NOTE_WARNING, xasprintf("cannot read the runs' attempts: %s", err.msg));
		} else {
			struct remote_reply part;
			part_reply(&rr, "attempts", NULL, &part);
			for (size_t i = 0; i < n; i++)
				run_attempts_take(&part, jobs[i], rows[i]);
			remote_reply_release(&part);
		}
	}
	if (nstaged && ok) {
		struct remote_reply part;
		part_reply(&rr, "idle", NULL, &part);
		for (size_t i = 0; i < n; i++) {
			job_idle_take(&part, jobs[i], rows[i]);
			job_stages_take(&part, jobs[i], rows[i]);
		}
		remote_reply_release(&part);
	}
	remote_reply_release(&rr);
	remote_script_release(&rs);
	fetch_tails(h, parts, nparts);
	for (size_t b = 0; b < nparts; b++) {
		free(parts[b].ended);
		free(parts[b].pending);
		free(parts[b].tailed);
		free(parts[b].tasks);
	}
}

int jobs_log_path(struct ssh_session *ss, const struct sched_ops *s, const struct sched_job *j,
		  enum job_log which, char **path, struct dp_error *err)
{
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	int r;
	if (!s->paths_script || !s->paths_script(&rs, j, 1))
		r = s->path_take(NULL, j, 0, which, path, err);
	else if (remote_run(ss, &rs, &rr, err) < 0)
		r = -1;
	else
		r = s->path_take(&rr, j, 0, which, path, err);
	remote_reply_release(&rr);
	remote_script_release(&rs);
	return r;
}

static int no_answer(struct jobs_result *res, enum jobs_failure f, const struct remote_reply *rr)
{
	res->failure = f;
	if (rr)
		res->remote_err = xstrdup(rr->err.buf);
	return -1;
}

int jobs_query(struct jobs_host *h, const struct jobs_target *targets, size_t n, unsigned want,
	       struct jobs_result *res)
{
	_cleanup_free_ bool *ok = xcalloc(n + 1, sizeof(*ok));
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	struct sched_answer *answers[16] = { 0 };
	int r = 0;
	res->failure = JOBS_ANSWERED;
	for (size_t i = 0; i < n; i++)
		ok[i] = targets[i].sched->can_query(&targets[i].job);
	for (size_t b = 0; sched_all[b]; b++) {
		_cleanup_free_ struct sched_job *jobs = NULL;
		size_t m = jobs_of(targets, n, ok, sched_all[b], &jobs);
		if (m) {
			sched_all[b]->query_script(&rs, jobs, m);
			run_attempts_script(&rs, jobs, m);
			if (want & JOBS_WANT_METRICS)
				job_metrics_script(&rs, jobs, m);
			if (want & JOBS_WANT_STAGES)
				job_stages_script(&rs, jobs, m);
			if (want & JOBS_WANT_USAGE) {
				job_usage_script(&rs, jobs, m);
				if (sched_all[b]->alloc_script)
					sched_all[b]->alloc_script(&rs, jobs, m);
			}
		}
	}
	if (!remote_script_empty(&rs)) {
		if (session(h, &res->err) < 0 || remote_run(h->ss, &rs, &rr, &res->err) < 0) {
			r = no_answer(res, JOBS_NO_CONNECTION, NULL);
			goto out;
		}
		if (rr.status != 0) {
			res->exit_status = rr.status;
			r = no_answer(res, JOBS_EXIT_STATUS, &rr);
			goto out;
		}
		for (size_t b = 0; sched_all[b]; b++) {
			if (sched_all[b]->query_failed(&rs, &rr, &res->tool, &res->tool_exit)) {
				r = no_answer(res, JOBS_TOOL_FAILED, &rr);
				goto out;
			}
			answers[b] = sched_all[b]->parse(&rr);
		}
	}
	size_t first = res->n;
	struct job_metrics metrics = { 0 };
	if (want & JOBS_WANT_METRICS)
		job_metrics_index(&rr, &metrics);
	for (size_t i = 0; i < n; i++) {
		const struct jobs_target *t = &targets[i];
		struct dp_error err = { 0 };
		size_t b = 0;
		while (sched_all[b] && sched_all[b] != t->sched)
			b++;
		struct job_state *rows = NULL;
		size_t m = 0;
		if (!ok[i])
			t->sched->not_found(&t->job, h->host, &err);
		else
			t->sched->query_rows(answers[b], &t->job, h->host, &rows, &m, &err);
		for (size_t k = 0; k < m; k++) {
			run_attempts_take(&rr, &t->job, &rows[k]);
			if (want & JOBS_WANT_METRICS)
				job_metrics_take(&metrics, &t->job, &rows[k]);
			if (want & JOBS_WANT_USAGE)
				job_usage_take(&rr, &t->job, &rows[k]);
			if (want & JOBS_WANT_STAGES)
				job_stages_take(&rr, &t->job, &rows[k]);
			add_row(res, i, &rows[k], NULL);
		}
		if (!m) {
			struct job_state none = { 0 };
			add_row(res, i, &none, xstrdup(err.msg));
		}
		free(rows);
	}
	job_metrics_release(&metrics);
	{
		_cleanup_free_ struct job_state **rows = xcalloc(res->n - first + 1, sizeof(*rows));
		_cleanup_free_ const struct sched_job **jobs = xcalloc(res->n - first + 1, sizeof(*jobs));
		size_t m = 0;
		for (size_t i = first; i < res->n; i++) {
			if (res->rows[i].not_found)
				continue;
			rows[m] = &res->rows[i].st;
			jobs[m++] = &targets[res->rows[i].target].job;
		}
		jobs_detail(h, rows, jobs, m,
			    want & ~(unsigned)(JOBS_WANT_ATTEMPTS | JOBS_WANT_METRICS), res);
	}
out:
	for (size_t b = 0; sched_all[b]; b++)
		if (answers[b])
			sched_all[b]->answer_free(answers[b]);
	remote_reply_release(&rr);
	remote_script_release(&rs);
	return r;
}

void jobs_result_release(struct jobs_result *res)
{
	for (size_t i = 0; i < res->n; i++) {
		job_state_release(&res->rows[i].st);
		free(res->rows[i].not_found);
	}
	free(res->rows);
	for (size_t i = 0; i < res->nnotes; i++)
		free(res->notes[i].text);
	free(res->notes);
	free(res->remote_err);
	*res = (struct jobs_result){ 0 };
}

struct query_many {
	struct jobs_query_item *items;
	unsigned want;
};

static void query_nth(void *data, size_t i)
{
	struct query_many *q = data;
	struct jobs_query_item *it = &q->items[i];
	it->r = jobs_query(&it->host, it->targets, it->n, q->want, &it->res);
}

void jobs_query_hosts(struct jobs_query_item *items, size_t n, unsigned want, size_t width)
{
	struct query_many q = { .items = items, .want = want };
	if (n == 0)
		return;
	if (n == 1) { /* no thread for one host */
		query_nth(&q, 0);
		return;
	}
	fanout_run(n, width ? width : n, 0, query_nth, &q);
}

void jobs_result_take(struct jobs_result *dst, struct jobs_result *src)
{
	if (src->n) {
		dst->rows = xrealloc(dst->rows, (dst->n + src->n) * sizeof(*dst->rows));
		memcpy(dst->rows + dst->n, src->rows, src->n * sizeof(*src->rows));
		dst->n += src->n;
	}
	if (src->nnotes) {
		dst->notes = xrealloc(dst->notes, (dst->nnotes + src->nnotes) * sizeof(*dst->notes));
		memcpy(dst->notes + dst->nnotes, src->notes, src->nnotes * sizeof(*src->notes));
		dst->nnotes += src->nnotes;
	}
	free(src->rows);
	free(src->notes);
	src->rows = NULL;
	src->notes = NULL;
	src->n = src->nnotes = 0;
}

const char *jobs_summary_state(const struct job_state *const *rows, size_t n)
{
	const char *active = NULL, *end = NULL;
	for (size_t k = 0; k < n; k++) {
		const char *s = rows[k]->state;
		if (job_phase_of(s) == JOB_PHASE_PENDING || job_phase_of(s) == JOB_PHASE_ACTIVE) {
			if (!active || streq(s, "RUNNING"))
				active = s;
		} else if (!end || streq(end, "COMPLETED")) {
			end = s;
		}
	}
	return active ? active : end;
}

/* ---- steps ---- */

int jobs_steps(struct jobs_host *h, const struct jobs_target *targets, size_t n,
	       struct jobs_steps *steps, struct jobs_result *res)
{
	_cleanup_free_ bool *ok = xcalloc(n + 1, sizeof(*ok));
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	int r = 0;
	res->failure = JOBS_ANSWERED;
	for (size_t i = 0; i < n; i++)
		ok[i] = targets[i].sched->steps_script != NULL;
	for (size_t b = 0; sched_all[b]; b++) {
		_cleanup_free_ struct sched_job *jobs = NULL;
		size_t m = jobs_of(targets, n, ok, sched_all[b], &jobs);
		if (m)
			sched_all[b]->steps_script(&rs, jobs, m);
	}
	if (remote_script_empty(&rs))
		goto out;
	if (session(h, &res->err) < 0 || remote_run(h->ss, &rs, &rr, &res->err) < 0) {
		r = no_answer(res, JOBS_NO_CONNECTION, NULL);
		goto out;
	}
	for (size_t b = 0; sched_all[b]; b++) {
		_cleanup_free_ struct sched_job *jobs = NULL;
		if (!jobs_of(targets, n, ok, sched_all[b], &jobs))
			continue;
		int x = sched_all[b]->steps_exit(&rs, &rr, &res->tool);
		if (rr.status != 0 || x != 0) {
			res->tool_exit = x >= 0 ? x : rr.status;
			r = no_answer(res, JOBS_TOOL_FAILED, &rr);
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (ok[i])
			targets[i].sched->steps_take(&rr, &targets[i].job, &steps[i].steps,
						     &steps[i].n);
out:
	remote_reply_release(&rr);
	remote_script_release(&rs);
	return r;
}

/* ---- cancel ---- */

int jobs_cancel(struct jobs_host *h, const struct jobs_target *targets, size_t n,
		const char **outcome, struct jobs_result *res)
{
	_cleanup_free_ bool *ok = xcalloc(n + 1, sizeof(*ok));
	bool sched_ok[16] = { 0 };
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	int r = 0;
	res->failure = JOBS_ANSWERED;
	for (size_t i = 0; i < n; i++) {
		struct dp_error err = { 0 };
		ok[i] = targets[i].sched->can_cancel(&targets[i].job, h->host, &err);
		if (!ok[i]) {
			note(res, JOBS_NOTE_ERROR, xstrdup(err.msg));
			outcome[i] = "failed";
			r = err.kind;
		}
	}
	for (size_t b = 0; sched_all[b]; b++) {
		_cleanup_free_ struct sched_job *jobs = NULL;
		size_t m = jobs_of(targets, n, ok, sched_all[b], &jobs);
		if (m)
			sched_all[b]->cancel_script(&rs, jobs, m);
	}
	if (remote_script_empty(&rs))
		goto out;
	if (session(h, &res->err) < 0 || remote_run(h->ss, &rs, &rr, &res->err) < 0) {
		for (size_t i = 0; i < n; i++)
			if (!outcome[i])
				outcome[i] = "failed";
		res->failure = JOBS_NO_CONNECTION;
		r = res->err.kind;
		goto out;
	}
	note(res, JOBS_NOTE_REMOTE, xstrdup(rr.err.buf)); /* scancel's own words */
	for (size_t b = 0; sched_all[b]; b++) {
		_cleanup_free_ struct sched_job *jobs = NULL;
		struct dp_error err = { 0 };
		sched_ok[b] = true;
		if (!jobs_of(targets, n, ok, sched_all[b], &jobs))
			continue;
		sched_ok[b] = sched_all[b]->cancel_ok(&rs, &rr, h->host, &err);
		if (!sched_ok[b]) {
			note(res, JOBS_NOTE_ERROR, xstrdup(err.msg));
			r = err.kind;
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct dp_error err = { 0 };
		size_t b = 0;
		if (outcome[i])
			continue;
		while (sched_all[b] && sched_all[b] != targets[i].sched)
			b++;
		outcome[i] = targets[i].sched->cancel_outcome(&rr, &targets[i].job, sched_ok[b],
							      h->host, &err);
		if (!outcome[i]) {
			outcome[i] = "failed";
			note(res, JOBS_NOTE_ERROR, xstrdup(err.msg));
			r = err.kind;
		}
	}
out:
	remote_reply_release(&rr);
	remote_script_release(&rs);
	return r;
}
