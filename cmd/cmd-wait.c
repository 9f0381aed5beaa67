/* SPDX-License-Identifier: MIT */
/*
 * dispatch wait JOB...: polls until every job has ended (or, with --until running,
 * runs): the options, the poller of lib/jobs/wait.h (one squeue per host and poll,
 * sacct only for the jobs that left the queue, backing off to --interval, failed polls
 * retried), then how the failed jobs ended and their log tails, printed.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/jobs.h"
#include "jobs/run_attempts.h"
#include "jobs/jobwait.h"
#include "jobs/wait.h"
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

/* A job: what the polls made of it (lib/jobs/wait.h), then as a job_state with how it
 * ended and its log tail (wait_detail). */
struct wjob {
	const struct jobref *ref;
	const struct wait_job *wj;
	struct jobwait *w;      /* its wait_job's */
	struct job_state *st;   /* wait_detail's */
};

/* ---- what the poller tells ---- */

static void told_job(void *data, const struct wait_job *j, enum jobwait_event ev, const char *detail)
{
	const struct dp_ctx *ctx = data;
	if (ev == JOBWAIT_CHANGED)
		info_msg(ctx, "%s@%s: %s%s%s", j->id, j->host, j->w.state, detail[0] ? " " : "", detail);
	else if (ev == JOBWAIT_NOT_FOUND)
		error_msg("job '%s' not found on '%s': %s", j->id, j->host,
			  j->plain ? "no answer for its stage dir" : "neither squeue nor sacct knows it");
}

static void told_failed(void *data, const char *host, const char *why)
{
	const struct dp_ctx *ctx = data;
	if (ctx->verbosity >= 0)
		warning_msg("cannot ask '%s' about its jobs: %s; retrying", host, why);
}

static void told_answers(void *data, const char *host)
{
	const struct dp_ctx *ctx = data;
	if (ctx->verbosity >= 0)
		note_msg("'%s' answers again", host);
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

/* Why a job ended without COMPLETED (or waits). */
static char *why_of(const struct wjob *wj)
{
	return wj->w->state ? job_state_why(wj->st) : NULL;
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
		const struct jobwait *j = jobs[i].w;
		_cleanup_free_ char *job = xasprintf("%s@%s", j->id, j->host);
		const char *state = j->state ? j->state : "UNKNOWN";
		char ex[32];
		exit_text(j, ex, sizeof(ex));
		if (until_running && j->seen_running && !j->settled) {
			printf("%s RUNNING on %s\n", job, j->first_node ? j->first_node : "?");
		} else if (j->settled && !j->not_found) {
			_cleanup_free_ char *attempt = job_state_attempt_text(jobs[i].st);
			printf("%s %s%s%s", job, state, ex[0] ? " " : "", ex);
			if (attempt)
				printf(" %s", attempt);
			if (j->elapsed && j->elapsed[0])
				printf(" elapsed %s", j->elapsed);
			if (j->ntasks > 1)
				printf(" (%zu tasks)", j->ntasks);
			if (until_running && !j->seen_running)
				printf(" (ended before it was seen running)");
			print_why(&jobs[i]);
			putchar('\n');
			_cleanup_free_ char *attempts = job_state_attempts_text(jobs[i].st);
			if (attempts)
				printf("%s: %s ended: %s\n", job, jobs[i].st->run_id, attempts);
			job_tail_print(&jobs[i].st->tail, job);
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

static void print_json(const struct wjob *jobs, const struct wait *wt, bool until_running)
{
	const struct wait_host *hosts = wt->hosts;
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddStringToObject(doc, "until", until_running ? "running" : "done");
	cJSON_AddBoolToObject(doc, "timed_out", wt->timed_out);
	cJSON_AddNumberToObject(doc, "polls", (double)wt->polls);
	cJSON_AddNumberToObject(doc, "seconds", (double)(long)(wt->waited * 10 + 0.5) / 10);
	cJSON *ha = cJSON_AddArrayToObject(doc, "hosts");
	for (size_t i = 0; i < wt->nh; i++) {
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
	for (size_t i = 0; i < wt->n; i++) {
		const struct jobwait *j = jobs[i].w;
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
		if (wait_job_failed(jobs[i].wj))
			job_state_json_failure(o, jobs[i].st);
		else
			cJSON_AddNullToObject(o, "failure");
		job_state_json_tail(o, jobs[i].st);
		cJSON_AddNumberToObject(o, "tasks", (double)j->ntasks);
		job_state_json_run(o, jobs[i].st);
		cJSON_AddItemToArray(ja, o);
	}
	json_print(doc);
}

/* Sweeps whose jobs all ended: each one's table of tasks, from one more exchange per
 * host (the tasks' ends and metrics); exit 0 only when every task COMPLETED (a
 * retried task counts by its last run). */
static int sweeps_ended(struct dp_ctx *ctx, const struct job_set *set, int r)
{
	_cleanup_(status_answer_release) struct status_answer a = { .ctx = ctx };
	status_query_hosts(ctx, set, JOBS_WANT_METRICS, &a);
	bool completed = true;
	int s = sweep_status_print(&a, set, NULL, &completed);
	if (s)
		return s;
	return completed ? 0 : r ? r : DPE_FAIL;
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

int wait_for_jobs(struct dp_ctx *ctx, char *const *args, size_t nargs, const char *host_opt,
		  double interval, double timeout, bool until_running, bool tail)
{
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, args, nargs, host_opt, &set);
	if (r)
		return r;

	struct wjob *jobs = xcalloc(set.n + 1, sizeof(*jobs));
	struct wait_job *wj = xcalloc(set.n + 1, sizeof(*wj));
	struct jobs_target *t = xcalloc(set.n + 1, sizeof(*t));
	struct job_state *st = xcalloc(set.n + 1, sizeof(*st));
	char **dirs = xcalloc(set.n + 1, sizeof(*dirs));
	for (size_t i = 0; i < set.n; i++) {
		const struct jobref *ref = &set.refs[i];
		bool plain = job_is_plain(ctx, ref);
		jobs_target_of(ctx, ref, &t[i], &dirs[i]);
		jobs[i] = (struct wjob){ .ref = ref, .wj = &wj[i], .w = &wj[i].w, .st = &st[i] };
		wj[i] = (struct wait_job){ .id = ref->id, .host = ref->host, .plain = plain,
					   .stage_dir = plain ? job_stage_dir(ref) : NULL,
					   .pgid = ref->rec.pid, .job = &t[i].job };
		jobwait_init(&wj[i].w, ref->id, ref->host, plain, until_running);
		if (plain && !wj[i].stage_dir) {
			error_msg("job '%s' not found on '%s': dispatch did not submit it", ref->arg, ref->host);
			jobwait_not_found(&wj[i].w);
		}
	}
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	struct wait wt = { .sc = &sc, .inv = ctx->inv, .interval = interval, .timeout = timeout,
			   .report = { told_job, told_failed, told_answers, ctx } };
	wait_init(&wt, set.hosts, wj, set.n);
	r = wait_run(&wt);
	info_msg(ctx, "%ld polls in %.1f s", wt.polls, wt.waited);
	struct jobs_result notes = { 0 };
	wait_detail(&wt, st, JOBS_WANT_END | JOBS_WANT_ATTEMPTS | (tail ? JOBS_WANT_TAIL : 0), &notes);
	for (size_t i = 0; i < notes.nnotes; i++)
		info_msg(ctx, "%s", notes.notes[i].text);
	jobs_result_release(&notes);

	if (set.nsweeps && !set.njobs && !until_running && !wt.timed_out) {
		r = sweeps_ended(ctx, &set, r);
	} else if (ctx->json) {
		print_json(jobs, &wt, until_running);
	} else if (ctx->verbosity >= 0 || wt.timed_out) {
		print_text(jobs, set.n, until_running, wt.waited);
	}
	if (wt.timed_out)
		error_msg("timed out after %.0f s waiting for %s", wt.waited,
			  until_running ? "the jobs to run" : "the jobs to end");
	for (size_t i = 0; i < set.n; i++) {
		jobwait_release(&wj[i].w);
		free((char *)wj[i].stage_dir);
		job_state_release(&st[i]);
		free(dirs[i]);
	}
	wait_release(&wt);
	free(wj);
	free(jobs);
	free(t);
	free(st);
	free(dirs);
	return r;
}

const struct dispatch_cmd dispatch_cmd_wait = {
	.name = "wait",
	.summary = "wait until jobs end (or run), polling each host once per round",
	.usage = "[-H HOST] [--interval S] [--timeout S] [--until running|done] [--no-tail] JOB...|SWEEP...",
	.description =
		"Polls until every job has ended: one squeue per host and poll for all of its\n"
		"jobs, sacct only for the jobs that left the queue, plain-host jobs from their\n"
		"exit files. Polls start 2 s apart and back off to --interval; a failed poll is\n"
		"retried and never ends the wait. A job that ended without COMPLETED is shown\n"
		"with why and the last 20 lines of its stderr (--no-tail: without). Exit 0 when\n"
		"every job COMPLETED, 1 when one ended otherwise, 3 when --timeout ran out.\n"
		"A SWEEP waits for every job of the sweep, then shows its table of tasks as\n"
		"status does; exit 0 only when every task COMPLETED (a retried task by its last\n"
		"run).",
	.opts = wait_options,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_wait,
};
