/* SPDX-License-Identifier: MIT */
/*
 * submit --wait / --follow: once the job is submitted, stay attached until it ends,
 * as sbatch --wait and dstack's attached apply do. The waiting (wait's polling, and
 * with --follow first logs -f, which ends by itself when the job ends) runs in a
 * thread of its own while this thread waits for Ctrl-C with sigwait, so that an
 * interrupt is seen at once even while a remote command blocks: the first Ctrl-C
 * detaches (the job keeps running, said so), a second within 2 s cancels the job.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "dispatch.h"
#include "jobref.h"
#include "jobs/jobs.h"
#include "transport/ssh.h"

#define SIG_DONE SIGUSR1        /* the waiting thread has finished */
#define SIG_WINDOW SIGUSR2      /* the 2 s after the first Ctrl-C are over */
#define CANCEL_WINDOW 2         /* seconds */
#define EXIT_DETACHED 130       /* 128 + SIGINT, as a shell reports an interrupt */

struct attach {
	struct dp_ctx *ctx;
	char *const *jobs;      /* the job, or a sweep's job arrays */
	const char *job;        /* the first, whose log --follow shows */
	bool follow, tail;
	pthread_t main;
	int status;
};

static void *waiter(void *data)
{
	struct attach *a = data;
	int r = 0;
	if (a->follow)
		r = logs_print(a->ctx, a->job, NULL, true, false);
	/* logs -f ends when the job leaves the queue; wait says how it ended (a job
	 * whose log never appeared is still waited for). */
	if (r == 0 || r == DPE_NOTFOUND)
		r = wait_for_jobs(a->ctx, a->jobs, strv_len(a->jobs), NULL, 10, 0, false,
				  a->tail);
	fflush(stdout);
	a->status = r;
	pthread_kill(a->main, SIG_DONE);
	return NULL;
}

static void *window(void *data)
{
	pthread_t *main = data;
	struct timespec ts = { .tv_sec = CANCEL_WINDOW };
	while (nanosleep(&ts, &ts) < 0)
		;
	pthread_kill(*main, SIG_WINDOW);
	return NULL;
}

int cancel_one_job(struct dp_ctx *ctx, const char *job)
{
	char *const jobs[] = { (char *)job, NULL };
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, jobs, 1, NULL, &set);
	if (r)
		return r;
	const struct jobref *ref = &set.refs[0];
	struct jobs_target t;
	_cleanup_free_ char *stage = NULL;
	jobs_target_of(ctx, ref, &t, &stage);
	if (job_is_plain(ctx, ref) && !stage) {
		error_msg("cannot cancel job '%s': the ledger has no stage dir for it", job);
		return DPE_NOTFOUND;
	}
	struct jobs_host h = jobs_host_of(ctx, ref->host);
	struct jobs_result res = { 0 };
	const char *outcome = NULL;
	jobs_cancel(&h, &t, 1, &outcome, &res);
	ssh_session_free(h.ss);
	if (res.failure == JOBS_NO_CONNECTION) {
		r = report_error(&res.err);
	} else if (streq(outcome, "failed")) {
		bool asked = false;
		for (size_t i = 0; i < res.nnotes; i++)
			asked |= res.notes[i].kind == JOBS_NOTE_REMOTE;
		for (size_t i = 0; i < res.nnotes; i++)
			if (res.notes[i].kind == JOBS_NOTE_REMOTE)
				fputs(res.notes[i].text, stderr); /* scancel's own words */
			else if (!asked)
				error_msg("%s", res.notes[i].text);
		error_msg("cannot cancel job '%s'", job);
		r = DPE_FAIL;
	}
	jobs_result_release(&res);
	if (r)
		return r;
	note_msg("cancelled job %s", job);
	return 0;
}

__attribute__((noreturn)) static void detach(const char *job)
{
	note_msg("detached from job %s: 'dispatch wait %s' or 'dispatch logs -f %s' to attach "
		 "again, 'dispatch cancel %s' to stop it", job, job, job, job);
	fflush(stdout);
	fflush(stderr);
	/* The waiting thread may be inside a remote command: end here without unwinding
	 * it (the server ends that command when the connection closes). */
	_exit(EXIT_DETACHED);
}

int submit_attach(struct dp_ctx *ctx, char *const *jobs, bool follow, bool tail)
{
	const char *job = jobs[0];
	fflush(stdout);
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIG_DONE);
	sigaddset(&set, SIG_WINDOW);
	/* Blocked here before the threads start, so blocked in them too: every one of
	 * these signals reaches sigwait below. */
	pthread_sigmask(SIG_BLOCK, &set, &old);
	/* An ignored signal is discarded even while blocked (a shell starts background
	 * commands with SIGINT ignored): the default action, never taken while blocked,
	 * lets sigwait see it. */
	struct sigaction dfl = { .sa_handler = SIG_DFL }, oldint;
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGINT, &dfl, &oldint);
	struct attach a = { .ctx = ctx, .jobs = jobs, .job = job, .follow = follow, .tail = tail,
			    .main = pthread_self() };
	pthread_t w, win;
	if (pthread_create(&w, NULL, waiter, &a) != 0) {
		sigaction(SIGINT, &oldint, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		error_msg("cannot start waiting for job %s: out of threads", job);
		return DPE_FAIL;
	}
	bool timer = false;
	for (;;) {
		int sig;
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIG_DONE) {
			pthread_join(w, NULL);
			if (timer)
				pthread_join(win, NULL);
			sigaction(SIGINT, &oldint, NULL);
			pthread_sigmask(SIG_SETMASK, &old, NULL);
			return a.status;
		}
		if (sig == SIGINT && !timer) {
			note_msg("detaching: job %s keeps running (Ctrl-C again within %d s cancels it)",
				 job, CANCEL_WINDOW);
			timer = pthread_create(&win, NULL, window, &a.main) == 0;
			if (timer)
				continue;
			detach(job); /* no timer: detach at once */
		}
		if (sig == SIGINT) {
			int r = 0;
			for (size_t i = 0; jobs[i]; i++) {
				int c = cancel_one_job(ctx, jobs[i]);
				r = r ? r : c;
			}
			fflush(stdout);
			fflush(stderr);
			_exit(r ? r : DPE_FAIL); /* cancelled: the job did not complete */
		}
		if (sig == SIG_WINDOW)
			detach(job);
	}
}
