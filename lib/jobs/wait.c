/* SPDX-License-Identifier: MIT */
/* The poller behind `dispatch wait`: lib/jobs/wait.h. */
#include <string.h>
#include <time.h>

#include "jobs/wait.h"
#include "base/util.h"
#include "sched/sched.h"
#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm.h"

static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

/* ---- the schedule ---- */

void wait_schedule_init(struct wait_schedule *s, double start, double interval, double timeout)
{
	*s = (struct wait_schedule){ .start = start, .interval = interval, .timeout = timeout,
				     .pause = dmin(WAIT_FIRST_INTERVAL, interval) };
}

double wait_exec_timeout(const struct wait_schedule *s, double now)
{
	double left = s->timeout > 0 ? s->timeout - (now - s->start) : WAIT_EXEC_TIMEOUT;
	return dmax(1.0, dmin(WAIT_EXEC_TIMEOUT, left));
}

bool wait_timed_out(const struct wait_schedule *s, double now, bool before_pause)
{
	return s->timeout > 0 && now - s->start + (before_pause ? 0.01 : 0) >= s->timeout;
}

double wait_next_pause(struct wait_schedule *s, double now)
{
	double p = s->timeout > 0 ? dmin(s->pause, s->timeout - (now - s->start)) : s->pause;
	s->pause = dmin(s->pause * WAIT_BACKOFF, s->interval);
	return p;
}

static void sleep_seconds(double s)
{
	if (s <= 0)
		return;
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) < 0)
		;
}

/* ---- one command on a host, bounded in time ---- */

struct sinks {
	struct strbuf *out, *err;
};

static int to_out(void *data, const char *buf, size_t len)
{
	strbuf_add(((struct sinks *)data)->out, buf, len);
	return 0;
}

static int to_err(void *data, const char *buf, size_t len)
{
	strbuf_add(((struct sinks *)data)->err, buf, len);
	return 0;
}

struct ssh_session *wait_session(struct wait *w, struct wait_host *h, struct dp_error *err)
{
	if (h->ss)
		return h->ss;
	if (ssh_session_open(w->sc, inventory_ssh_destination(w->inv, h->host), &h->ss, err) < 0)
		return NULL;
	h->connects++;
	return h->ss;
}

/* The command on the host's session, its output gathered; a hung connection (a
 * stopped server, a dropped route) ends at timeout. */
static int ssh_run(void *data, struct wait_host *h, const char *command, double timeout,
		   struct strbuf *out, struct strbuf *errout, int *status, struct dp_error *err)
{
	struct sinks sinks = { out, errout };
	struct ssh_exec x = {
		.command = command,
		.in_fd = -1,
		.on_stdout = to_out,
		.on_stderr = to_err,
		.data = &sinks,
		.timeout = timeout,
	};
	if (!wait_session(data, h, err))
		return -1;
	return ssh_exec(h->ss, &x, status, err);
}

static int run(struct wait *w, struct wait_host *h, const char *command, double timeout,
	       struct strbuf *out, struct strbuf *errout, int *status, struct dp_error *err)
{
	if (w->exec)
		return w->exec(w->exec_data, h, command, timeout, out, errout, status, err);
	return ssh_run(w, h, command, timeout, out, errout, status, err);
}

/* ---- one poll of one host ---- */

/* A failed poll: counted, told once per outage. The connection is dropped only when
 * it failed itself (SLURM's own failures leave it good for the next poll). */
static void host_failed(struct wait *w, struct wait_host *h, const char *why, bool drop)
{
	h->failures++;
	if (drop) {
		ssh_session_free(h->ss);
		h->ss = NULL;
	}
	if (!h->outage && w->report.failed)
		w->report.failed(w->report.data, h->host, why);
	h->outage = true;
}

static char *first_line(const char *s)
{
	s += strspn(s, "\n");
	return xstrndup(s, strcspn(s, "\n"));
}

/* The host's jobs still waited on: the SLURM ids (strv) and the plain jobs. */
static void host_jobs(const struct wait *w, const struct wait_host *h, char ***ids,
		      struct plainjob_ref **plain, size_t *nplain, bool *awaiting)
{
	for (size_t i = 0; i < w->n; i++) {
		const struct wait_job *j = &w->jobs[i];
		if (j->w.done || !streq(j->host, h->host))
			continue;
		if (!j->plain) {
			/* a PREEMPTED end is taken at the next poll that still says so: a
			 * poll whose queue digest did not change would say nothing */
			*awaiting |= j->w.awaiting_sacct || j->w.preempted > 0;
			if (!strv_contains(*ids, j->id))
				strv_add(ids, j->id);
			continue;
		}
		*plain = xrealloc(*plain, (*nplain + 1) * sizeof(**plain));
		/* a run found LOST starts again, once, if its policy allows (status.sh) */
		(*plain)[(*nplain)++] = (struct plainjob_ref){ .id = j->id, .stage_dir = j->stage_dir,
							       .pgid = j->pgid, .restart = true };
	}
}

/* sacct for the jobs squeue no longer has active, its rows added to *rows. -1 when the
 * poll failed (said). */
static int ask_sacct(struct wait *w, struct wait_host *h, char *const *gone, double timeout,
		     struct slurm_job **rows, size_t *nrows, bool *answered)
{
	struct dp_error err = { 0 };
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	int status;
	slurm_sacct_command(&cmd, gone);
	h->sacct_calls++;
	if (run(w, h, cmd.buf, timeout, &out, &errout, &status, &err) < 0) {
		host_failed(w, h, err.msg, true);
		return -1;
	}
	int sa = slurm_parse_exit(out.buf, "sacct");
	/* without accounting, squeue's rows are all there is */
	if (sa != 0 && !strstr(errout.buf, "accounting storage is disabled")) {
		_cleanup_free_ char *why = errout.len ? first_line(errout.buf)
				: xasprintf("sacct failed (exit status %d)", sa < 0 ? status : sa);
		host_failed(w, h, why, false);
		return -1;
	}
	*answered = sa == 0;
	struct slurm_job *more = NULL;
	size_t nmore = 0;
	slurm_parse_status(out.buf, &more, &nmore);
	*rows = xrealloc(*rows, (*nrows + nmore + 1) * sizeof(**rows));
	for (size_t k = 0; k < nmore; k++)
		(*rows)[(*nrows)++] = more[k];
	free(more);
	return 0;
}

void wait_poll_host(struct wait *w, struct wait_host *h, double timeout)
{
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **ids = NULL;
	_cleanup_free_ struct plainjob_ref *plain = NULL;
	size_t nplain = 0;
	bool awaiting = false; /* a job's end waits for sacct: squeue's rows every poll */
	host_jobs(w, h, &ids, &plain, &nplain, &awaiting);
	if (!ids && !nplain)
		return;

	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	if (ids)
		slurm_squeue_poll_command(&cmd, ids, awaiting ? NULL : h->states);
	if (nplain)
		plainjob_status_command(&cmd, plain, nplain);
	int status;
	if (ids)
		h->squeue_calls++;
	if (run(w, h, cmd.buf, timeout, &out, &errout, &status, &err) < 0) {
		host_failed(w, h, err.msg, true);
		return;
	}
	int sq = ids ? slurm_parse_exit(out.buf, "squeue") : 0;
	if (sq < 0 || slurm_squeue_failed(sq, errout.buf)) {
		_cleanup_free_ char *why = errout.len ? first_line(errout.buf)
				: xasprintf("squeue failed (exit status %d)", sq < 0 ? status : sq);
		host_failed(w, h, why, false);
		return;
	}
	/* No job changed state since the last poll: nothing to decide for them. */
	bool same = ids && slurm_poll_same(out.buf);
	if (ids) {
		free(h->states);
		h->states = slurm_poll_states(out.buf);
	}
	if (same)
		h->same_polls++;
	struct slurm_job *rows = NULL;
	size_t nrows = 0;
	slurm_parse_status(out.buf, &rows, &nrows);

	_cleanup_strv_free_ char **gone = same ? NULL : jobwait_gone(ids, rows, nrows);
	bool sacct_answered = false;
	if (gone && ask_sacct(w, h, gone, timeout, &rows, &nrows, &sacct_answered) < 0) {
		slurm_jobs_free(rows, nrows);
		return;
	}
	struct plainjob_status *ps = NULL;
	size_t nps = nplain ? plainjob_parse_status(out.buf, &ps) : 0;

	if (h->outage && w->report.answers)
		w->report.answers(w->report.data, h->host);
	h->outage = false;
	h->polls++;
	for (size_t i = 0; i < w->n; i++) {
		struct wait_job *j = &w->jobs[i];
		if (j->w.done || !streq(j->host, h->host) || (same && !j->plain))
			continue;
		const char *detail;
		j->w.sacct_answered = sacct_answered;
		enum jobwait_event ev = j->plain ? jobwait_plain(&j->w, ps, nps, &detail)
						 : jobwait_slurm(&j->w, rows, nrows, &detail);
		if (w->report.job)
			w->report.job(w->report.data, j, ev, detail);
	}
	slurm_jobs_free(rows, nrows);
	plainjob_status_free(ps, nps);
}

/* ---- the loop ---- */

void wait_init(struct wait *w, char *const *hosts, struct wait_job *jobs, size_t n)
{
	w->jobs = jobs;
	w->n = n;
	w->nh = strv_len(hosts);
	w->hosts = xcalloc(w->nh ? w->nh : 1, sizeof(*w->hosts));
	for (size_t h = 0; h < w->nh; h++)
		w->hosts[h].host = hosts[h];
}

static bool all_done(const struct wait *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (!w->jobs[i].w.done)
			return false;
	return true;
}

int wait_run(struct wait *w)
{
	double (*clock)(void) = w->clock ? w->clock : monotonic_seconds;
	void (*pause)(double) = w->sleep ? w->sleep : sleep_seconds;
	struct wait_schedule s;
	wait_schedule_init(&s, clock(), w->interval, w->timeout);
	w->polls = 0;
	w->timed_out = false;
	for (;;) {
		w->polls++;
		for (size_t h = 0; h < w->nh; h++)
			wait_poll_host(w, &w->hosts[h], wait_exec_timeout(&s, clock()));
		if (all_done(w))
			break;
		double now = clock();
		if (wait_timed_out(&s, now, true)) {
			w->timed_out = true;
			break;
		}
		pause(wait_next_pause(&s, now));
		if (wait_timed_out(&s, clock(), false)) {
			w->timed_out = true;
			break;
		}
	}
	w->waited = clock() - s.start;

	const struct jobwait **jw = xcalloc(w->n + 1, sizeof(*jw));
	for (size_t i = 0; i < w->n; i++)
		jw[i] = &w->jobs[i].w;
	int r = jobwait_result(jw, w->n, w->timed_out);
	free(jw);
	return r;
}

struct wait_host *wait_host_of(struct wait *w, const char *host)
{
	for (size_t h = 0; h < w->nh; h++)
		if (streq(w->hosts[h].host, host))
			return &w->hosts[h];
	return NULL;
}

/* ---- after the wait ---- */

bool wait_job_failed(const struct wait_job *j)
{
	const struct jobwait *w = &j->w;
	enum job_phase ph = job_phase_of(w->state);
	return w->settled && !w->not_found && !jobwait_ok(w) && w->state &&
	       ph != JOB_PHASE_PENDING && ph != JOB_PHASE_ACTIVE;
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void wait_job_state(const struct wait_job *j, struct job_state *js)
{
	const struct jobwait *w = &j->w;
	*js = (struct job_state){
		.id = xstrdup(w->id),
		.sched = sched_for(NULL, j->plain ? 1 : 0),
		.phase = job_phase_of(w->state),
		.state = dup_or_null(w->state),
		.reason = dup_or_null(w->reason),
		.exit_code = w->exit_code,
		.signal = w->signal,
		.elapsed = JOB_TIME_UNKNOWN,
		.limit = JOB_TIME_UNKNOWN,
		.elapsed_word = dup_or_null(w->elapsed),
		.limit_word = dup_or_null(w->time_limit),
		.nodes = dup_or_null(w->nodes),
		.cancelled_by = dup_or_null(w->cancelled_by),
	};
}

void wait_detail(struct wait *w, struct job_state *st, unsigned want, struct jobs_result *notes)
{
	_cleanup_free_ struct sched_job *own = xcalloc(w->n + 1, sizeof(*own));
	_cleanup_free_ struct job_state **rows = xcalloc(w->n + 1, sizeof(*rows));
	_cleanup_free_ const struct sched_job **jobs = xcalloc(w->n + 1, sizeof(*jobs));
	for (size_t i = 0; i < w->n; i++) {
		const struct wait_job *j = &w->jobs[i];
		wait_job_state(j, &st[i]);
		own[i] = (struct sched_job){ .id = j->id, .arg = j->id, .host = j->host,
					     .stage_dir = j->stage_dir, .pgid = j->pgid };
	}
	for (size_t h = 0; h < w->nh; h++) {
		struct wait_host *wh = &w->hosts[h];
		size_t k = 0;
		bool ask = false;       /* a tail, or a backend's end: then connect */
		for (size_t i = 0; i < w->n; i++) {
			const struct sched_job *sj = w->jobs[i].job ? w->jobs[i].job : &own[i];
			bool run = (want & JOBS_WANT_ATTEMPTS) && sj->run_id && sj->stage_dir;
			if (!streq(w->jobs[i].host, wh->host) || (!wait_job_failed(&w->jobs[i]) && !run))
				continue;
			rows[k] = &st[i];
			jobs[k++] = sj;
			ask |= run || (wait_job_failed(&w->jobs[i]) &&
				       ((want & JOBS_WANT_TAIL) || st[i].sched->end_script));
		}
		struct dp_error err = { 0 };
		struct jobs_host jh = { .host = wh->host };
		if (ask)
			jh.ss = wait_session(w, wh, &err);
		for (size_t i = 0; ask && !jh.ss && (want & JOBS_WANT_TAIL) && i < k; i++)
			if (job_state_failed(rows[i]))
				rows[i]->tail = (struct job_tail){ .fetched = true, .error = xstrdup(err.msg) };
		jobs_detail(&jh, rows, jobs, k, want & (JOBS_WANT_END | JOBS_WANT_TAIL | JOBS_WANT_ATTEMPTS),
			    notes);
	}
}

void wait_release(struct wait *w)
{
	for (size_t h = 0; h < w->nh; h++) {
		ssh_session_free(w->hosts[h].ss);
		free(w->hosts[h].states);
	}
	free(w->hosts);
	w->hosts = NULL;
	w->nh = 0;
}
