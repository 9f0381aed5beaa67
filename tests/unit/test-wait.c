/* SPDX-License-Identifier: MIT */
/* lib/jobs/wait, wait's poller: its schedule (2 s, backing off by half up to the
 * interval, never sleeping past the timeout, each command bounded by what is left of
 * it), and the loop over polls driven by a clock that the pauses move and by a host
 * whose answers are written out here in the formats of the test cluster's squeue and
 * sacct (tests/unit/data/slurm/wait-*): the digest that spares squeue's rows, and not
 * while a job's end waits for sacct's row; sacct without accounting; an outage told
 * once and its end told once; the timeout. */
#include <stdlib.h>

#include "base/error.h"
#include "jobs/wait.h"
#include "unit.h"

static void test_schedule(void)
{
	struct wait_schedule s;
	wait_schedule_init(&s, 100, 30, 0);
	double want[] = { 2, 3, 4.5, 6.75, 10.125, 15.1875, 22.78125, 30, 30 };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(wait_next_pause(&s, 100 + (double)i) == want[i]);
	CHECK(wait_exec_timeout(&s, 1e6) == WAIT_EXEC_TIMEOUT); /* no timeout */
	CHECK(!wait_timed_out(&s, 1e9, true));

	/* an interval under 2 s: every pause is the interval */
	wait_schedule_init(&s, 0, 0.5, 0);
	CHECK(wait_next_pause(&s, 0) == 0.5);
	CHECK(wait_next_pause(&s, 1) == 0.5);

	/* a timeout: the pause ends at it, the commands get what is left (at least 1 s) */
	wait_schedule_init(&s, 100, 30, 5);
	CHECK(wait_exec_timeout(&s, 100) == 5);
	CHECK(wait_exec_timeout(&s, 102.5) == 2.5);
	CHECK(wait_exec_timeout(&s, 104.5) == 1);
	CHECK(wait_exec_timeout(&s, 200) == 1);
	CHECK(wait_next_pause(&s, 100) == 2);
	CHECK(wait_next_pause(&s, 104) == 1); /* 3 s due, 1 s left */
	CHECK(!wait_timed_out(&s, 104.98, true));
	CHECK(wait_timed_out(&s, 104.995, true)); /* no pause slept only to time out */
	CHECK(!wait_timed_out(&s, 104.995, false));
	CHECK(wait_timed_out(&s, 105, false));
}

/* ---- a host that answers from a script ---- */

struct answer {
	const char *out, *err;  /* the command's output */
	const char *fail;       /* the connection failed, so */
};

static struct host {
	const struct answer *answers;
	size_t n, next;
	char *commands[16];
	double timeouts[16];
	double clock;
	char *told;             /* what the report said, a line each */
} H;

#define DAY 86400.0 /* the timeout of the waits that must end before it */

static double fake_clock(void) { return H.clock; }
static void fake_sleep(double s) { H.clock += s; }

static int fake_exec(void *data, struct wait_host *h, const char *command, double timeout,
		     struct strbuf *out, struct strbuf *errout, int *status, struct dp_error *err)
{
	(void)data;
	(void)h;
	if (H.next >= H.n || H.next >= 16) {
		/* more polls than the script has answers: said once, and the wait's
		 * timeout (DAY) ends it */
		if (H.clock < DAY)
			unit_report(0, __FILE__, __LINE__, "more commands than answers");
		H.clock += DAY;
		return dp_err(err, DPE_CONNECT, "no answer left");
	}
	H.commands[H.next] = xstrdup(command);
	H.timeouts[H.next] = timeout;
	const struct answer *a = &H.answers[H.next++];
	if (a->fail)
		return dp_err(err, DPE_CONNECT, "%s", a->fail);
	strbuf_adds(out, a->out);
	strbuf_adds(errout, a->err ? a->err : "");
	*status = 0;
	return 0;
}

static void tell(const char *what)
{
	char *t = xasprintf("%s%s\n", H.told ? H.told : "", what);
	free(H.told);
	H.told = t;
}

static void told_job(void *data, const struct wait_job *j, enum jobwait_event ev, const char *detail)
{
	(void)data;
	(void)detail;
	char *s = xasprintf("%s %s", j->id, ev == JOBWAIT_NOT_FOUND ? "NOT_FOUND" : j->w.state);
	if (ev != JOBWAIT_SAME)
		tell(s);
	free(s);
}

static void told_failed(void *data, const char *host, const char *why)
{
	(void)data;
	char *s = xasprintf("failed %s: %s", host, why);
	tell(s);
	free(s);
}

static void told_answers(void *data, const char *host)
{
	(void)data;
	char *s = xasprintf("answers %s", host);
	tell(s);
	free(s);
}

/* Waits for SLURM job 5 on host hpc, the host answering as answers say. */
static int run_wait(const struct answer *answers, size_t n, double interval, double timeout,
		    struct wait *w, struct wait_job *j)
{
	for (size_t i = 0; i < H.next; i++)
		free(H.commands[i]);
	free(H.told);
	H = (struct host){ .answers = answers, .n = n, .clock = 1000 };
	char *hosts[] = { "hpc", NULL };
	*j = (struct wait_job){ .id = "5", .host = "hpc" };
	jobwait_init(&j->w, "5", "hpc", false, false);
	*w = (struct wait){ .interval = interval, .timeout = timeout,
			    .report = { told_job, told_failed, told_answers, NULL },
			    .clock = fake_clock, .sleep = fake_sleep, .exec = fake_exec };
	wait_init(w, hosts, j, 1);
	return wait_run(w);
}

#define SQ_EXIT "dispatch-squeue-exit 0\n"
#define RUNNING_ROW "5|RUNNING|0:05|UNLIMITED|node1|None\n"

/* The digest spares squeue's rows while nothing changes; an end that only squeue gave
 * (sacct answered without its row: accounting lags) asks for the rows again, not the
 * digest; sacct's row settles it. */
static void test_digest_and_lag(void)
{
	const struct answer a[] = {
		{ .out = RUNNING_ROW "dispatch-squeue-states 111 2\n" SQ_EXIT },
		{ .out = "dispatch-squeue-states 111 2\ndispatch-squeue-same\n" SQ_EXIT },
		{ .out = "5|COMPLETED|0:09|UNLIMITED|node1|None\ndispatch-squeue-states 222 2\n" SQ_EXIT },
		{ .out = "dispatch-sacct\ndispatch-sacct-exit 0\n" }, /* not there yet */
		{ .out = "5|COMPLETED|0:09|UNLIMITED|node1|None\ndispatch-squeue-states 222 2\n" SQ_EXIT },
		{ .out = "dispatch-sacct\n5|COMPLETED|00:00:09|UNLIMITED|node1|0:0|None\n"
			 "dispatch-sacct-exit 0\n" },
	};
	struct wait w;
	struct wait_job j;
	CHECK_INT(run_wait(a, 6, 30, DAY, &w, &j), 0);
	CHECK_INT(H.next, 6);
	CHECK_INT(w.polls, 4);
	CHECK(!w.timed_out);
	CHECK_CONTAINS(H.commands[0], "[ \"$h\" = '-' ]");     /* nothing known yet */
	CHECK_CONTAINS(H.commands[1], "[ \"$h\" = '111 2' ]"); /* the last digest */
	CHECK_CONTAINS(H.commands[2], "[ \"$h\" = '111 2' ]");
	CHECK_CONTAINS(H.commands[3], "sacct ");
	/* awaiting sacct's row: squeue's rows again, whatever the digest says */
	CHECK_CONTAINS(H.commands[4], "[ \"$h\" = '-' ]");
	CHECK_INT(w.hosts[0].same_polls, 1);
	CHECK_INT(w.hosts[0].squeue_calls, 4);
	CHECK_INT(w.hosts[0].sacct_calls, 2);
	CHECK_INT(w.hosts[0].polls, 4);
	CHECK_INT(w.hosts[0].failures, 0);
	CHECK_STR(j.w.state, "COMPLETED");
	CHECK_INT(j.w.exit_code, 0);
	CHECK(j.w.settled);
	CHECK_STR(H.told, "5 RUNNING\n5 COMPLETED\n");
	/* the pauses: 2 s, 3 s, 4.5 s */
	CHECK(H.clock == 1009.5);
	CHECK(w.waited == 9.5);
	jobwait_release(&j.w);
	wait_release(&w);
}

/* PREEMPTED is an end only when the next poll says it again (a requeue may follow):
 * that poll asks for the rows, not the digest, which an unchanged queue would answer
 * with nothing (the wait went on until its timeout: SLURM 24.11, PreemptMode=CANCEL). */
static void test_preempted(void)
{
	const struct answer a[] = {
		{ .out = RUNNING_ROW "dispatch-squeue-states 111 2\n" SQ_EXIT },
		{ .out = "dispatch-squeue-states 222 1\n" SQ_EXIT },
		{ .out = "dispatch-sacct\n5|PREEMPTED|00:00:09|UNLIMITED|node2|0:0|None\n"
			 "dispatch-sacct-exit 0\n" },
		{ .out = "dispatch-squeue-states 222 1\n" SQ_EXIT },
		{ .out = "dispatch-sacct\n5|PREEMPTED|00:00:09|UNLIMITED|node2|0:0|None\n"
			 "dispatch-sacct-exit 0\n" },
	};
	struct wait w;
	struct wait_job j;
	CHECK_INT(run_wait(a, 5, 30, 300, &w, &j), DPE_FAIL);
	CHECK(!w.timed_out);
	CHECK_INT(H.next, 5);
	CHECK_CONTAINS(H.commands[3], "[ \"$h\" = '-' ]"); /* the rows, not the digest */
	CHECK_STR(j.w.state, "PREEMPTED");
	CHECK(j.w.settled);
	jobwait_release(&j.w);
	wait_release(&w);
}

/* Without accounting, squeue's end is all there is: no failure, settled at once. */
static void test_no_accounting(void)
{
	const struct answer a[] = {
		{ .out = "5|FAILED|0:09|UNLIMITED|node1|NonZeroExitCode\n" SQ_EXIT },
		{ .out = "dispatch-sacct\ndispatch-sacct-exit 1\n",
		  .err = "sacct: error: Slurm accounting storage is disabled\n" },
	};
	struct wait w;
	struct wait_job j;
	CHECK_INT(run_wait(a, 2, 30, DAY, &w, &j), DPE_FAIL);
	CHECK_INT(w.polls, 1);
	CHECK_INT(w.hosts[0].failures, 0);
	CHECK_STR(j.w.state, "FAILED");
	CHECK_STR(H.told, "5 FAILED\n");
	jobwait_release(&j.w);
	wait_release(&w);
}

/* A lost connection, then slurmctld down: told once; its end told once; neither ends
 * the wait. A failing sacct is a failed poll too. */
static void test_outage(void)
{
	const struct answer a[] = {
		{ .fail = "connection reset" },
		{ .out = "dispatch-squeue-exit 1\n",
		  .err = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n" },
		{ .out = RUNNING_ROW SQ_EXIT },
		{ .out = "5|COMPLETED|0:09|UNLIMITED|node1|None\n" SQ_EXIT },
		{ .out = "dispatch-sacct\n", .err = "sacct: error: slurmdbd down\n" },
		{ .out = "5|COMPLETED|0:09|UNLIMITED|node1|None\n" SQ_EXIT },
		{ .out = "dispatch-sacct\n5|COMPLETED|00:00:09|UNLIMITED|node1|0:0|None\n"
			 "dispatch-sacct-exit 0\n" },
	};
	struct wait w;
	struct wait_job j;
	CHECK_INT(run_wait(a, 7, 30, DAY, &w, &j), 0);
	CHECK_INT(w.polls, 5);
	CHECK_INT(w.hosts[0].failures, 3);
	CHECK_INT(w.hosts[0].polls, 2);
	CHECK_STR(H.told, "failed hpc: connection reset\nanswers hpc\n5 RUNNING\n"
			  "failed hpc: sacct: error: slurmdbd down\nanswers hpc\n5 COMPLETED\n");
	jobwait_release(&j.w);
	wait_release(&w);
}

/* Only the timeout ends a wait: the last pause is cut to it, each command gets what is
 * left of it (at least 1 s). */
static void test_timeout(void)
{
	const struct answer a[] = {
		{ .out = "5|PENDING|0:00|UNLIMITED||Priority\n" SQ_EXIT },
		{ .fail = "connection timed out" },
		{ .out = "5|PENDING|0:00|UNLIMITED||Priority\n" SQ_EXIT },
		{ .out = "5|PENDING|0:00|UNLIMITED||Priority\n" SQ_EXIT },
	};
	struct wait w;
	struct wait_job j;
	CHECK_INT(run_wait(a, 4, 30, 10, &w, &j), DPE_TIMEOUT);
	CHECK(w.timed_out);
	CHECK_INT(w.polls, 4); /* at 0, 2, 5 and 9.5 s */
	CHECK(w.waited == 10);
	CHECK(H.timeouts[0] == 10);
	CHECK(H.timeouts[1] == 8);
	CHECK(H.timeouts[2] == 5);
	CHECK(H.timeouts[3] == 1);
	CHECK(!j.w.done);
	CHECK_STR(j.w.state, "PENDING");
	jobwait_release(&j.w);
	wait_release(&w);
}

int main(void)
{
	test_schedule();
	test_digest_and_lag();
	test_no_accounting();
	test_preempted();
	test_outage();
	test_timeout();
	for (size_t i = 0; i < H.next; i++)
		free(H.commands[i]);
	free(H.told);
	return unit_done();
}
