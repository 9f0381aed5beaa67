/* SPDX-License-Identifier: MIT */
/* Query and cancel, for every backend: jobs.h. */
#include "jobs/jobs.h"

#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "base/util.h"
#include "inventory/inventory.h"
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

static void fetch_ends(struct jobs_host *h, struct job_state *const *all, size_t n,
		       struct jobs_result *res)
{
	for (size_t b = 0; sched_all[b]; b++) {
		const struct sched_ops *s = sched_all[b];
		_cleanup_free_ struct job_state **rows = NULL;
		size_t m = rows_of(all, n, s, job_state_failed, &rows);
		struct remote_script rs = REMOTE_SCRIPT_INIT;
		struct remote_reply rr = REMOTE_REPLY_INIT;
		struct dp_error err = { 0 };
		if (s->end_script && s->end_script(&rs, rows, m)) {
			char *text = NULL;
			if (remote_run(h->ss, &rs, &rr, &err) < 0)
				text = xasprintf("cannot ask how the jobs ended: %s", err.msg);
			else
				s->end_take(&rr, rows, m, &text);
			if (text)
				note(res, JOBS_NOTE_INFO, text);
		}
		remote_reply_release(&rr);
		remote_script_release(&rs);
	}
}

static void fetch_pending(struct jobs_host *h, struct job_state *const *all, size_t n,
			  struct jobs_result *res)
{
	for (size_t b = 0; sched_all[b]; b++) {
		const struct sched_ops *s = sched_all[b];
		_cleanup_free_ struct job_state **rows = NULL;
		size_t m = rows_of(all, n, s, is_pending, &rows);
		struct remote_script rs = REMOTE_SCRIPT_INIT;
		struct remote_reply rr = REMOTE_REPLY_INIT;
		struct dp_error err = { 0 };
		if (s->pending_script && s->pending_script(&rs, rows, m)) {
			bool ok = remote_run(h->ss, &rs, &rr, &err) == 0;
			if (!ok)
				note(res, JOBS_NOTE_WARNING,
				     xasprintf("no detail on why the pending jobs wait: %s", err.msg));
			s->pending_take(ok ? &rr : NULL, rows, m);
		}
		remote_reply_release(&rr);
		remote_script_release(&rs);
	}
}

void jobs_tail_fetch(struct ssh_session *ss, const struct sched_ops *s, const struct sched_job *j,
		     struct job_tail *t)
{
	struct dp_error err = { 0 };
	*t = (struct job_tail){ .fetched = true };
	if (s->log_path(ss, j, JOB_LOG_ERR_OR_OUT, &t->path, &err) < 0) {
		t->error = xstrdup(err.msg);
		t->path = NULL;
	}
	if (!t->path)
		return;
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	joblog_tail_command(remote_section(&rs, REMOTE_TAIL), t->path, JOBLOG_TAIL_LINES);
	if (remote_run(ss, &rs, &rr, &err) < 0)
		t->error = xstrdup(err.msg);
	else if (rr.status == JOBLOG_NO_FILE)
		t->error = xstrdup("the job wrote no such file");
	else if (rr.status != 0 || (!rr.out.len && rr.err.len))
		t->error = xasprintf("cannot read it (exit status %d)%s%.*s", rr.status,
				     rr.err.len ? ": " : "", (int)strcspn(rr.err.buf, "\n"), rr.err.buf);
	else
		t->text = strbuf_detach(&rr.out);
	remote_reply_release(&rr);
	remote_script_release(&rs);
}

static void fetch_tails(struct jobs_host *h, struct job_state *const *rows,
			const struct sched_job *const *jobs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!job_state_failed(rows[i]))
			continue;
		struct sched_job task = *jobs[i];  /* an array's task: its own files */
		task.id = rows[i]->id;
		jobs_tail_fetch(h->ss, rows[i]->sched, &task, &rows[i]->tail);
	}
}

static void fetch_attempts(struct jobs_host *h, struct job_state *const *rows,
			   const struct sched_job *const *jobs, size_t n, struct jobs_result *res)
{
	_cleanup_free_ struct sched_job *runs = xcalloc(n + 1, sizeof(*runs));
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (jobs[i]->run_id)
			runs[m++] = *jobs[i];
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	struct dp_error err = { 0 };
	run_attempts_script(&rs, runs, m);
	if (remote_script_empty(&rs))
		;
	else if (remote_run(h->ss, &rs, &rr, &err) < 0)
		note(res, JOBS_NOTE_WARNING, xasprintf("cannot read the runs' attempts: %s", err.msg));
	else
		for (size_t i = 0; i < n; i++)
			run_attempts_take(&rr, jobs[i], rows[i]);
	remote_reply_release(&rr);
	remote_script_release(&rs);
}

void jobs_detail(struct jobs_host *h, struct job_state *const *rows,
		 const struct sched_job *const *jobs, size_t n, unsigned want,
		 struct jobs_result *res)
{
	if (!h->ss)
		return;
	if (want & JOBS_WANT_END)
		fetch_ends(h, rows, n, res);
	if (want & JOBS_WANT_PENDING)
		fetch_pending(h, rows, n, res);
	if (want & JOBS_WANT_TAIL)
		fetch_tails(h, rows, jobs, n);
	if (want & JOBS_WANT_ATTEMPTS)
		fetch_attempts(h, rows, jobs, n, res);
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
			add_row(res, i, &rows[k], NULL);
		}
		if (!m) {
			struct job_state none = { 0 };
			add_row(res, i, &none, xstrdup(err.msg));
		}
		free(rows);
	}
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
		jobs_detail(h, rows, jobs, m, want & ~(unsigned)JOBS_WANT_ATTEMPTS, res);
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
