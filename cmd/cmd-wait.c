/* SPDX-License-Identifier: MIT */
/*
 * dispatch wait JOB...: polls until every job has ended (or, with --until running,
 * runs), cheaply for the controller and without giving up on a failed poll.
 *
 * Each poll asks each host once: one squeue for all of its jobs still waited on (the
 * query of lib/sched/slurm/slurm.h that status uses, cut in two), then sacct, over the same
 * connection, only for the jobs squeue no longer has active; plain-host jobs from
 * their pid and exit_status files (lib/sched/plain/plainjob.h) in the same command. The interval
 * starts at 2 s and grows by half each poll up to --interval. A poll that fails (the
 * connection, squeue's "slurm_load_jobs error", sacct) is retried at the next one,
 * over a fresh connection when the connection failed: only --timeout ends the wait.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/jobwait.h"
#include "sched/plain/plainjob.h"
#include "sched/slurm/slurm.h"
#include "sched/slurm/slurm_why.h"
#include "transport/ssh.h"
#include "base/strbuf.h"
#include "base/termesc.h"

static const char *opt_host;
static double opt_interval = 30, opt_timeout;
static int opt_until = 1; /* running, done */
static bool opt_no_tail;

static const struct dp_option wait_options[] = {
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of jobs given by bare ID (settles an ambiguous ID)", "host"),
	OPT_SECONDS(0, "interval", &opt_interval, "S", "the longest time between polls, in seconds (default 30; polls start at 2 s and back off)",
		    .min = 0.1),
	OPT_SECONDS(0, "timeout", &opt_timeout, "S", "give up after S seconds (exit 3)", .min = 0.001),
	OPT_WORD(0, "until", &opt_until, "WHEN", "'done' (default): until every job ended; 'running': until every job runs (or ended)", "running done"),
	OPT_BOOL(0, "no-tail", &opt_no_tail, "do not print the last lines of a failed job's stderr"),
	OPT_END,
};

#define FIRST_INTERVAL 2.0
#define BACKOFF 1.5
#define EXEC_TIMEOUT 120.0
/* A job and what the polls made of it (lib/jobs/jobwait.h). */
struct wjob {
	const struct jobref *ref;
	struct jobwait w;
	struct job_tail tail;   /* fetched once it ended without COMPLETED */
	struct job_end end;     /* how it ended: memory, canceller (SLURM jobs) */
};

struct whost {
	const char *host;
	struct ssh_session *ss;
	long polls, squeue_calls, sacct_calls, failures, connects;
	long same_polls;        /* polls squeue --only-job-state answered alone */
	char *states;           /* its last digest (slurm_squeue_poll_command) */
	bool outage;
};

static double dmin(double a, double b) { return a < b ? a : b; }
static double dmax(double a, double b) { return a > b ? a : b; }

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
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

/* The command on the host's session, its output gathered; a hung connection (a
 * stopped server, a dropped route) ends at timeout. */
static int run(struct whost *h, const char *command, double timeout, struct strbuf *out,
	       struct strbuf *errout, int *status, struct dp_error *err)
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
	return ssh_exec(h->ss, &x, status, err);
}

/* ---- what an answer means for a job: lib/jobs/jobwait.h; said here ---- */

static void decided(const struct dp_ctx *ctx, const struct wjob *j, enum jobwait_event ev,
		    const char *detail)
{
	if (ev == JOBWAIT_CHANGED)
		info_msg(ctx, "%s@%s: %s%s%s", j->ref->id, j->ref->host, j->w.state,
			 detail[0] ? " " : "", detail);
	else if (ev == JOBWAIT_NOT_FOUND)
		error_msg("job '%s' not found on '%s': %s", j->ref->id, j->ref->host,
			  j->w.plain ? "no answer for its stage dir"
				     : "neither squeue nor sacct knows it");
}

/* ---- one poll of one host ---- */

/* A failed poll: counted, said once per outage. The connection is dropped only when
 * it failed itself (SLURM's own failures leave it good for the next poll). */
static void host_failed(const struct dp_ctx *ctx, struct whost *h, const char *why, bool drop)
{
	h->failures++;
	if (drop) {
		ssh_session_free(h->ss);
		h->ss = NULL;
	}
	if (!h->outage && ctx->verbosity >= 0)
		warning_msg("cannot ask '%s' about its jobs: %s; retrying", h->host, why);
	h->outage = true;
}

/* The host's connection, opened again after a failure. */
static int host_connect(const struct dp_ctx *ctx, struct whost *h, struct dp_error *err)
{
	if (h->ss)
		return 0;
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	if (ssh_session_open(&sc, inventory_ssh_destination(ctx->inv, h->host), &h->ss, err) < 0)
		return -1;
	h->connects++;
	return 0;
}

static char *first_line(const char *s)
{
	s += strspn(s, "\n");
	return xstrndup(s, strcspn(s, "\n"));
}

static void poll_host(const struct dp_ctx *ctx, struct whost *h, struct wjob *jobs, size_t n,
		      double timeout)
{
	struct dp_error err = { 0 };
	_cleanup_strv_free_ char **ids = NULL, **dirs = NULL;
	_cleanup_free_ struct plainjob_ref *plain = NULL;
	size_t nplain = 0;
	bool awaiting = false; /* a job's end waits for sacct: squeue's rows every poll */
	for (size_t i = 0; i < n; i++) {
		struct wjob *j = &jobs[i];
		if (j->w.done || !streq(j->ref->host, h->host))
			continue;
		if (!j->w.plain) {
			awaiting |= j->w.awaiting_sacct;
			if (!strv_contains(ids, j->ref->id))
				strv_add(&ids, j->ref->id);
			continue;
		}
		char *dir = job_stage_dir(j->ref);
		strv_push(&dirs, dir);
		plain = xrealloc(plain, (nplain + 1) * sizeof(*plain));
		plain[nplain++] = (struct plainjob_ref){ .id = j->ref->id, .stage_dir = dir,
							  .pgid = j->ref->rec.pid };
	}
	if (!ids && !nplain)
		return;

	if (host_connect(ctx, h, &err) < 0) {
		host_failed(ctx, h, err.msg, true);
		return;
	}
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, errout = STRBUF_INIT;
	if (ids)
		slurm_squeue_poll_command(&cmd, ids, awaiting ? NULL : h->states);
	if (nplain)
		plainjob_status_command(&cmd, plain, nplain);
	int status;
	if (ids)
		h->squeue_calls++;
	if (run(h, cmd.buf, timeout, &out, &errout, &status, &err) < 0) {
		host_failed(ctx, h, err.msg, true);
		return;
	}
	int sq = ids ? slurm_parse_exit(out.buf, "squeue") : 0;
	if (sq < 0 || slurm_squeue_failed(sq, errout.buf)) {
		_cleanup_free_ char *why = errout.len ? first_line(errout.buf)
				: xasprintf("squeue failed (exit status %d)", sq < 0 ? status : sq);
		host_failed(ctx, h, why, false);
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

	/* sacct for the jobs squeue no longer has active */
	_cleanup_strv_free_ char **gone = same ? NULL : jobwait_gone(ids, rows, nrows);
	bool sacct_answered = false;
	if (gone) {
		_cleanup_strbuf_ struct strbuf c2 = STRBUF_INIT, o2 = STRBUF_INIT, e2 = STRBUF_INIT;
		slurm_sacct_command(&c2, gone);
		h->sacct_calls++;
		if (run(h, c2.buf, timeout, &o2, &e2, &status, &err) < 0) {
			slurm_jobs_free(rows, nrows);
			host_failed(ctx, h, err.msg, true);
			return;
		}
		int sa = slurm_parse_exit(o2.buf, "sacct");
		/* without accounting, squeue's rows are all there is */
		if (sa != 0 && !strstr(e2.buf, "accounting storage is disabled")) {
			_cleanup_free_ char *why = e2.len ? first_line(e2.buf)
					: xasprintf("sacct failed (exit status %d)", sa < 0 ? status : sa);
			slurm_jobs_free(rows, nrows);
			host_failed(ctx, h, why, false);
			return;
		}
		sacct_answered = sa == 0;
		struct slurm_job *more = NULL;
		size_t nmore = 0;
		slurm_parse_status(o2.buf, &more, &nmore);
		rows = xrealloc(rows, (nrows + nmore + 1) * sizeof(*rows));
		for (size_t k = 0; k < nmore; k++)
			rows[nrows++] = more[k];
		free(more);
	}
	struct plainjob_status *ps = NULL;
	size_t nps = nplain ? plainjob_parse_status(out.buf, &ps) : 0;

	if (h->outage && ctx->verbosity >= 0)
		note_msg("'%s' answers again", h->host);
	h->outage = false;
	h->polls++;
	for (size_t i = 0; i < n; i++) {
		struct wjob *j = &jobs[i];
		if (j->w.done || !streq(j->ref->host, h->host) || (same && !j->w.plain))
			continue;
		const char *detail;
		j->w.sacct_answered = sacct_answered;
		enum jobwait_event ev = j->w.plain ? jobwait_plain(&j->w, ps, nps, &detail)
						   : jobwait_slurm(&j->w, rows, nrows, &detail);
		decided(ctx, j, ev, detail);
	}
	slurm_jobs_free(rows, nrows);
	plainjob_status_free(ps, nps);
}

/* ---- output ---- */

static void exit_text(const struct jobwait *j, char *buf, size_t size)
{
	if (j->exit_code >= 0 && j->signal > 0 && j->exit_code == 0)
		snprintf(buf, size, "signal %d", j->signal);
	else if (j->exit_code >= 0)
		snprintf(buf, size, "exit %d", j->exit_code);
	else
		buf[0] = '\0';
}

static struct slurm_why_job why_job(const struct wjob *wj)
{
	const struct jobwait *j = &wj->w;
	struct slurm_why_job w = { .state = j->state, .reason = j->reason,
				   .exit_code = j->exit_code, .signal = j->signal,
				   .nodes = j->nodes, .elapsed = j->elapsed,
				   .time_limit = j->time_limit, .cancelled_by = j->cancelled_by };
	job_end_apply(&wj->end, &w);
	return w;
}

/* Why a job ended without COMPLETED (or waits). */
static char *why_of(const struct wjob *wj)
{
	struct slurm_why_job w = why_job(wj);
	return wj->w.plain ? slurm_why_plain(w.state, w.exit_code, w.signal) : slurm_why(&w);
}

/* Ended, and not as asked: what a "why" and the details are for. */
static bool ended_failed(const struct jobwait *j)
{
	return j->settled && !j->not_found && !jobwait_ok(j) && j->state &&
	       !slurm_state_active(j->state);
}

/* ": why" after a job that ended without COMPLETED (or waits, pending). */
static void print_why(const struct wjob *j)
{
	_cleanup_free_ char *why = why_of(j);
	if (why)
		printf(": %s", why);
}

static void print_text(const struct wjob *jobs, size_t n, bool until_running, double waited)
{
	for (size_t i = 0; i < n; i++) {
		const struct jobwait *j = &jobs[i].w;
		_cleanup_free_ char *job = xasprintf("%s@%s", j->id, j->host);
		const char *state = j->state ? j->state : "UNKNOWN";
		char ex[32];
		exit_text(j, ex, sizeof(ex));
		if (until_running && j->seen_running && !j->settled) {
			printf("%s RUNNING on %s\n", job, j->first_node ? j->first_node : "?");
		} else if (j->settled && !j->not_found) {
			printf("%s %s%s%s", job, state, ex[0] ? " " : "", ex);
			if (j->elapsed && j->elapsed[0])
				printf(" elapsed %s", j->elapsed);
			if (j->ntasks > 1)
				printf(" (%zu tasks)", j->ntasks);
			if (until_running && !j->seen_running)
				printf(" (ended before it was seen running)");
			print_why(&jobs[i]);
			putchar('\n');
			job_tail_print(&jobs[i].tail, job);
		} else if (j->not_found) {
			printf("%s NOT_FOUND\n", job);
		} else {
			bool why = j->reason && j->reason[0] && !streq(j->reason, "None");
			_cleanup_free_ char *reason = printable(why ? j->reason : "");
			printf("%s %s%s%s%s (still waiting after %.0f s)\n", job, state,
			       why ? " (" : "", reason, why ? ")" : "", waited);
		}
	}
}

static void print_json(const struct wjob *jobs, size_t n, const struct whost *hosts, size_t nh,
		       long polls, bool until_running, bool timed_out, double waited)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "until", until_running ? "running" : "done");
	cJSON_AddBoolToObject(doc, "timed_out", timed_out);
	cJSON_AddNumberToObject(doc, "polls", (double)polls);
	cJSON_AddNumberToObject(doc, "seconds", (double)(long)(waited * 10 + 0.5) / 10);
	cJSON *ha = cJSON_AddArrayToObject(doc, "hosts");
	for (size_t i = 0; i < nh; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "host", hosts[i].host);
		cJSON_AddNumberToObject(o, "polls", (double)hosts[i].polls);
		cJSON_AddNumberToObject(o, "squeue_calls", (double)hosts[i].squeue_calls);
		cJSON_AddNumberToObject(o, "state_only_polls", (double)hosts[i].same_polls);
		cJSON_AddNumberToObject(o, "sacct_calls", (double)hosts[i].sacct_calls);
		cJSON_AddNumberToObject(o, "failed_polls", (double)hosts[i].failures);
		cJSON_AddNumberToObject(o, "connections", (double)hosts[i].connects);
		cJSON_AddItemToArray(ha, o);
	}
	cJSON *ja = cJSON_AddArrayToObject(doc, "jobs");
	for (size_t i = 0; i < n; i++) {
		const struct jobwait *j = &jobs[i].w;
		cJSON *o = cJSON_CreateObject();
		_cleanup_free_ char *job = xasprintf("%s@%s", j->id, j->host);
		cJSON_AddStringToObject(o, "job", job);
		cJSON_AddStringToObject(o, "asked", jobs[i].ref->arg);
		cJSON_AddStringToObject(o, "id", j->id);
		cJSON_AddStringToObject(o, "host", j->host);
		cJSON_AddStringToObject(o, "type", j->plain ? "plain" : "slurm");
		json_add_str_or_null(o, "state", j->state);
		cJSON_AddBoolToObject(o, "ended", j->settled && !j->not_found);
		cJSON_AddBoolToObject(o, "ok", jobwait_ok(j));
		cJSON_AddBoolToObject(o, "seen_running", j->seen_running);
		json_add_str_or_null(o, "first_node", j->first_node);
		json_add_int_or_null(o, "exit_code", j->exit_code);
		json_add_int_or_null(o, "signal", j->signal);
		json_add_str_or_null(o, "elapsed", j->elapsed);
		json_add_str_or_null(o, "nodes", j->nodes);
		json_add_str_or_null(o, "reason", j->reason);
		_cleanup_free_ char *why = why_of(&jobs[i]);
		json_add_str_or_null(o, "why", why);
		struct slurm_why_job w = why_job(&jobs[i]);
		job_end_json(o, &w, ended_failed(j));
		job_tail_json(o, &jobs[i].tail);
		cJSON_AddNumberToObject(o, "tasks", (double)j->ntasks);
		cJSON_AddItemToArray(ja, o);
	}
	json_print(doc);
}

/* ---- the command ---- */

static int cmd_wait(struct dp_ctx *ctx, const struct dp_args *args)
{
	const char *host_opt = opt_host;
	double interval = opt_interval, timeout = opt_timeout;
	bool until_running = opt_until == 0, tail = !opt_no_tail;
	if (args->npos == 0)
		return usage_error(ctx, "'%s' needs a JOB: 'dispatch jobs' lists the jobs dispatch submitted"
				   " (ID@HOST)", ctx->cmd->name);
	return wait_for_jobs(ctx, args->pos, (size_t)args->npos, host_opt, interval, timeout,
			     until_running, tail);
}

/* A SLURM job of host that ended without COMPLETED. */
static bool ended_here(const struct wjob *j, const char *host)
{
	return streq(j->ref->host, host) && !j->w.plain && ended_failed(&j->w);
}

/* How each host's SLURM jobs that ended without COMPLETED ended: one command per host. */
static void fetch_ends(const struct dp_ctx *ctx, struct wjob *jobs, size_t n, struct whost *hosts,
		       size_t nh)
{
	_cleanup_free_ struct job_end_of *of = xcalloc(n + 1, sizeof(*of));
	_cleanup_free_ struct job_end **d = xcalloc(n + 1, sizeof(*d));
	for (size_t h = 0; h < nh; h++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			const struct jobwait *w = &jobs[i].w;
			if (!ended_here(&jobs[i], hosts[h].host))
				continue;
			of[k] = (struct job_end_of){ .id = w->id, .state = w->state,
						     .cancelled_by = w->cancelled_by, .nodes = w->nodes };
			d[k++] = &jobs[i].end;
		}
		struct dp_error err = { 0 };
		if (k && host_connect(ctx, &hosts[h], &err) == 0)
			job_end_fetch(ctx, hosts[h].ss, of, d, k);
	}
}

/* The log tails of the jobs that ended without COMPLETED, over each host's connection. */
static void fetch_tails(const struct dp_ctx *ctx, struct wjob *jobs, size_t n, struct whost *hosts,
			size_t nh)
{
	for (size_t h = 0; h < nh; h++) {
		for (size_t i = 0; i < n; i++) {
			struct wjob *j = &jobs[i];
			struct dp_error err = { 0 };
			if (!streq(j->ref->host, hosts[h].host) || !j->w.settled || j->w.not_found ||
			    jobwait_ok(&j->w) || !j->w.state || slurm_state_active(j->w.state))
				continue;
			if (host_connect(ctx, &hosts[h], &err) < 0) {
				j->tail = (struct job_tail){ .fetched = true, .error = xstrdup(err.msg) };
				continue;
			}
			job_tail_fetch(hosts[h].ss, j->ref, j->w.plain, &j->tail);
		}
	}
}

int wait_for_jobs(struct dp_ctx *ctx, char *const *args, size_t nargs, const char *host_opt,
		  double interval, double timeout, bool until_running, bool tail)
{
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, args, nargs, host_opt, &set);
	if (r)
		return r;

	struct wjob *jobs = xcalloc(set.n, sizeof(*jobs));
	size_t nh = strv_len(set.hosts);
	struct whost *hosts = xcalloc(nh ? nh : 1, sizeof(*hosts));
	for (size_t h = 0; h < nh; h++)
		hosts[h].host = set.hosts[h];
	for (size_t i = 0; i < set.n; i++) {
		struct wjob *j = &jobs[i];
		j->ref = &set.refs[i];
		bool plain = job_is_plain(ctx, j->ref);
		jobwait_init(&j->w, j->ref->id, j->ref->host, plain, until_running);
		_cleanup_free_ char *dir = plain ? job_stage_dir(j->ref) : NULL;
		if (plain && !dir) {
			error_msg("job '%s' not found on '%s': dispatch did not submit it", j->ref->arg,
				  j->ref->host);
			jobwait_not_found(&j->w);
		}
	}

	double start = now_seconds(), pause = dmin(FIRST_INTERVAL, interval);
	long polls = 0;
	bool timed_out = false;
	for (;;) {
		polls++;
		for (size_t h = 0; h < nh; h++) {
			double left = timeout > 0 ? timeout - (now_seconds() - start) : EXEC_TIMEOUT;
			poll_host(ctx, &hosts[h], jobs, set.n, dmax(1.0, dmin(EXEC_TIMEOUT, left)));
		}
		bool all = true;
		for (size_t i = 0; i < set.n; i++)
			all = all && jobs[i].w.done;
		if (all)
			break;
		double waited = now_seconds() - start;
		if (timeout > 0 && waited + 0.01 >= timeout) {
			timed_out = true;
			break;
		}
		sleep_seconds(timeout > 0 ? dmin(pause, timeout - waited) : pause);
		pause = dmin(pause * BACKOFF, interval);
		if (timeout > 0 && now_seconds() - start >= timeout) {
			timed_out = true;
			break;
		}
	}
	double waited = now_seconds() - start;
	info_msg(ctx, "%ld polls in %.1f s", polls, waited);
	fetch_ends(ctx, jobs, set.n, hosts, nh);
	if (tail)
		fetch_tails(ctx, jobs, set.n, hosts, nh);

	if (ctx->json)
		print_json(jobs, set.n, hosts, nh, polls, until_running, timed_out, waited);
	else if (ctx->verbosity >= 0 || timed_out)
		print_text(jobs, set.n, until_running, waited);

	const struct jobwait **w = xcalloc(set.n, sizeof(*w));
	for (size_t i = 0; i < set.n; i++)
		w[i] = &jobs[i].w;
	r = jobwait_result(w, set.n, timed_out);
	free(w);
	if (timed_out)
		error_msg("timed out after %.0f s waiting for %s", waited,
			  until_running ? "the jobs to run" : "the jobs to end");
	for (size_t i = 0; i < set.n; i++) {
		jobwait_release(&jobs[i].w);
		job_tail_release(&jobs[i].tail);
		job_end_release(&jobs[i].end);
	}
	for (size_t h = 0; h < nh; h++) {
		ssh_session_free(hosts[h].ss);
		free(hosts[h].states);
	}
	free(hosts);
	free(jobs);
	return r;
}

const struct dispatch_cmd dispatch_cmd_wait = {
	.name = "wait",
	.summary = "wait until jobs end (or run), polling each host once per round",
	.usage = "[-H HOST] [--interval S] [--timeout S] [--until running|done] [--no-tail] JOB...",
	.description =
		"Polls until every job has ended: one squeue per host and poll for all of its\n"
		"jobs, sacct only for the jobs that left the queue, plain-host jobs from their\n"
		"exit files. Polls start 2 s apart and back off to --interval; a failed poll is\n"
		"retried and never ends the wait. A job that ended without COMPLETED is shown\n"
		"with why and the last 20 lines of its stderr (--no-tail: without). Exit 0 when\n"
		"every job COMPLETED, 1 when one ended otherwise, 3 when --timeout ran out.",
	.opts = wait_options,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_wait,
};
