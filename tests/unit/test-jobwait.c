/* SPDX-License-Identifier: MIT */
/* lib/jobs/jobwait, wait's state machine, on the captured answers of the test cluster
 * (tests/unit/data/slurm/wait-* and status-22.05.out: ended, failed, running, pending
 * jobs and a throttled array mid-way) and on crafted rows in the same formats for
 * what a capture cannot hold still: PREEMPTED twice or requeued, a job that drops
 * out of both squeue and sacct, an array that ended, plain-host answers. */
#include <stdlib.h>

#include "base/error.h"
#include "jobs/jobwait.h"
#include "unit.h"

static struct slurm_job *rows_of(const char *text, size_t *n)
{
	struct slurm_job *rows = NULL;
	slurm_parse_status(text, &rows, n);
	return rows;
}

/* The wait poll's answer: the squeue half and the sacct half, joined. */
static struct slurm_job *wait_fixture(size_t *n)
{
	char *sq = unit_fixture("slurm", "wait-squeue-22.05.out");
	char *sa = unit_fixture("slurm", "wait-sacct-22.05.out");
	char *both = xasprintf("%s%s", sq, sa);
	struct slurm_job *rows = rows_of(both, n);
	free(both);
	free(sq);
	free(sa);
	return rows;
}

static void test_captured(void)
{
	size_t n;
	struct slurm_job *rows = wait_fixture(&n);
	struct jobwait j;
	const char *detail;

	/* failed: sacct's row, with its exit code; an end */
	jobwait_init(&j, "3", "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "FAILED");
	CHECK(j.settled && j.done && !j.not_found);
	CHECK_INT(j.exit_code, 3);
	CHECK(!jobwait_ok(&j));
	jobwait_release(&j);

	/* completed */
	jobwait_init(&j, "2", "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK(j.settled && jobwait_ok(&j));
	CHECK_STR(j.elapsed, "0:15");
	jobwait_release(&j);

	/* cancelled ("CANCELLED by 1001" in sacct) */
	jobwait_init(&j, "162", "hpc", false, false);
	jobwait_slurm(&j, rows, n, &detail);
	CHECK_STR(j.state, "CANCELLED");
	CHECK(j.settled && !jobwait_ok(&j));
	jobwait_release(&j);

	/* running: said once, with its node; done only when waiting until it runs */
	jobwait_init(&j, "160", "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(detail, "node1");
	CHECK(j.seen_running && !j.done && !j.settled);
	CHECK_STR(j.first_node, "node1");
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_SAME);
	jobwait_release(&j);
	jobwait_init(&j, "160", "hpc", false, true);
	jobwait_slurm(&j, rows, n, &detail);
	CHECK(j.done && !j.settled && jobwait_ok(&j));
	jobwait_release(&j);

	/* pending on a dependency: the reason is the detail */
	jobwait_init(&j, "161", "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(detail, "Dependency");
	CHECK_STR(j.state, "PENDING");
	CHECK(!j.done && !j.seen_running);
	jobwait_release(&j);

	/* an id neither half knows, never seen: not found at once */
	jobwait_init(&j, "999", "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_NOT_FOUND);
	CHECK(j.not_found && j.settled);
	CHECK_STR(j.state, "NOT_FOUND");
	jobwait_release(&j);

	slurm_jobs_free(rows, n);
}

static void test_gone(void)
{
	char *sq = unit_fixture("slurm", "wait-squeue-22.05.out");
	size_t n;
	struct slurm_job *rows = rows_of(sq, &n);
	char *ids[] = { "2", "3", "160", "161", "162", "999", NULL };
	char **gone = jobwait_gone(ids, rows, n);
	CHECK_INT(strv_len(gone), 4);
	CHECK(strv_contains(gone, "2") && strv_contains(gone, "3") && strv_contains(gone, "162") &&
	      strv_contains(gone, "999"));
	strv_free(gone);
	char *active[] = { "160", "161", NULL };
	CHECK(jobwait_gone(active, rows, n) == NULL);
	slurm_jobs_free(rows, n);
	free(sq);
}

static void test_array(void)
{
	char *text = unit_fixture("slurm", "status-22.05.out");
	size_t n;
	struct slurm_job *rows = rows_of(text, &n);
	struct jobwait j;
	const char *detail;

	/* tasks running, done and pending: running, every task counted */
	jobwait_init(&j, "41", "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "RUNNING");
	CHECK(j.seen_running && !j.settled);
	CHECK(j.ntasks >= 5);
	CHECK(j.first_node && (streq(j.first_node, "node1") || streq(j.first_node, "node2")));
	slurm_jobs_free(rows, n);
	free(text);

	/* all tasks ended, one failed: the worst end is the array's */
	rows = rows_of("dispatch-sacct\n"
		       "41_0|COMPLETED|00:00:03|UNLIMITED|node1|0:0|None\n"
		       "41_1|COMPLETED|00:00:03|UNLIMITED|node1|0:0|None\n"
		       "41_2|FAILED|00:00:04|UNLIMITED|node2|2:0|None\n"
		       "41_3|COMPLETED|00:00:03|UNLIMITED|node1|0:0|None\n"
		       "dispatch-sacct-exit 0\n", &n);
	CHECK_INT(n, 4);
	CHECK_INT(jobwait_slurm(&j, rows, n, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "FAILED");
	CHECK_INT(j.exit_code, 2);
	CHECK_INT(j.ntasks, 4);
	CHECK(j.settled && !jobwait_ok(&j));
	slurm_jobs_free(rows, n);
	jobwait_release(&j);
}

static void test_preempted(void)
{
	const char *preempted = "dispatch-sacct\n50|PREEMPTED|00:01:00|UNLIMITED|node1|0:0|None\n"
				"dispatch-sacct-exit 0\n";
	const char *requeued = "50|PENDING|0:00|UNLIMITED||BeginTime\ndispatch-squeue-exit 0\n";
	size_t n, m;
	struct slurm_job *p = rows_of(preempted, &n), *q = rows_of(requeued, &m);
	struct jobwait j;
	const char *detail;

	/* seen once: not an end yet; twice in a row: an end */
	jobwait_init(&j, "50", "hpc", false, false);
	CHECK_INT(jobwait_slurm(&j, p, n, &detail), JOBWAIT_CHANGED);
	CHECK(!j.settled && !j.done);
	CHECK_INT(jobwait_slurm(&j, p, n, &detail), JOBWAIT_SAME);
	CHECK(j.settled && j.done);
	CHECK_STR(j.state, "PREEMPTED");
	jobwait_release(&j);

	/* preempted, requeued (pending again), preempted again: still once each time */
	jobwait_init(&j, "50", "hpc", false, false);
	jobwait_slurm(&j, p, n, &detail);
	CHECK_INT(jobwait_slurm(&j, q, m, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "PENDING");
	CHECK_STR(detail, "BeginTime");
	CHECK_INT(j.preempted, 0);
	jobwait_slurm(&j, p, n, &detail);
	CHECK(!j.settled);
	jobwait_slurm(&j, p, n, &detail);
	CHECK(j.settled);
	jobwait_release(&j);
	slurm_jobs_free(p, n);
	slurm_jobs_free(q, m);
}

static void test_lag(void)
{
	size_t n;
	struct slurm_job *rows = wait_fixture(&n);
	struct jobwait j;
	const char *detail;

	/* seen running, then named by neither half: LAG_POLLS polls, then UNKNOWN */
	jobwait_init(&j, "160", "hpc", false, false);
	jobwait_slurm(&j, rows, n, &detail);
	for (int i = 1; i < JOBWAIT_LAG_POLLS; i++) {
		CHECK_INT(jobwait_slurm(&j, NULL, 0, &detail), JOBWAIT_SAME);
		CHECK(!j.settled && !j.not_found);
	}
	/* an answer in between starts the count again */
	jobwait_slurm(&j, rows, n, &detail);
	CHECK_INT(j.lag, 0);
	for (int i = 0; i < JOBWAIT_LAG_POLLS; i++)
		jobwait_slurm(&j, NULL, 0, &detail);
	CHECK(j.settled && !j.not_found);
	CHECK_STR(j.state, "UNKNOWN");
	CHECK(!jobwait_ok(&j));
	jobwait_release(&j);
	slurm_jobs_free(rows, n);
}

/* squeue has the end, sacct still the job running (accounting lags): wait for sacct's
 * end and its exit code, LAG_POLLS polls at most; without accounting, squeue's end at
 * once (the t7200 failure under load: "FAILED ... SLURM gave no exit code"). */
static void test_sacct_lag(void)
{
	const char *sq = "7|FAILED|0:01|UNLIMITED|node2|NonZeroExitCode\n"
			 "dispatch-squeue-exit 0\n";
	char *lag_text = xasprintf("%sdispatch-sacct\n7|RUNNING|00:00:01|UNLIMITED|node2|0:0|None\n"
				   "dispatch-sacct-exit 0\n", sq);
	char *end_text = xasprintf("%sdispatch-sacct\n7|FAILED|00:00:01|UNLIMITED|node2|3:0|None\n"
				   "dispatch-sacct-exit 0\n", sq);
	size_t nl, ne, ns;
	struct slurm_job *lag = rows_of(lag_text, &nl), *end = rows_of(end_text, &ne);
	struct slurm_job *squeue_only = rows_of(sq, &ns);
	struct jobwait j;
	const char *detail;

	jobwait_init(&j, "7", "hpc", false, false);
	j.sacct_answered = true;
	CHECK_INT(jobwait_slurm(&j, lag, nl, &detail), JOBWAIT_CHANGED);
	CHECK_STR(j.state, "FAILED");
	CHECK(!j.settled && !j.done && j.awaiting_sacct);
	CHECK_INT(jobwait_slurm(&j, end, ne, &detail), JOBWAIT_SAME);
	CHECK(j.settled && !j.awaiting_sacct);
	CHECK_INT(j.exit_code, 3);
	jobwait_release(&j);

	/* sacct answers without the job's row at all: the same wait */
	jobwait_init(&j, "7", "hpc", false, false);
	j.sacct_answered = true;
	jobwait_slurm(&j, squeue_only, ns, &detail);
	CHECK(!j.settled && j.awaiting_sacct);
	jobwait_release(&j);

	/* accounting never catches up: squeue's end after LAG_POLLS polls */
	jobwait_init(&j, "7", "hpc", false, false);
	j.sacct_answered = true;
	for (int i = 1; i < JOBWAIT_LAG_POLLS; i++) {
		jobwait_slurm(&j, lag, nl, &detail);
		CHECK(!j.settled);
	}
	jobwait_slurm(&j, lag, nl, &detail);
	CHECK(j.settled && !j.awaiting_sacct);
	CHECK_STR(j.state, "FAILED");
	CHECK_INT(j.exit_code, -1);
	jobwait_release(&j);

	/* no accounting (sacct did not answer): squeue's end is all there is, at once */
	jobwait_init(&j, "7", "hpc", false, false);
	jobwait_slurm(&j, squeue_only, ns, &detail);
	CHECK(j.settled && !j.awaiting_sacct);
	jobwait_release(&j);

	slurm_jobs_free(lag, nl);
	slurm_jobs_free(end, ne);
	slurm_jobs_free(squeue_only, ns);
	free(lag_text);
	free(end_text);
}

static void test_plain(void)
{
	struct plainjob_status running[] = {
		{ .id = "other", .state = "COMPLETED", .exit_code = 0, .exit_signal = 0, .elapsed = 1 },
		{ .id = "s1", .state = "RUNNING", .exit_code = -1, .exit_signal = -1, .elapsed = 65 },
	};
	struct plainjob_status ended[] = {
		{ .id = "s1", .state = "FAILED", .exit_code = 137, .exit_signal = 9, .elapsed = 3725 },
	};
	struct jobwait j;
	const char *detail;

	jobwait_init(&j, "s1", "box1", true, false);
	CHECK_INT(jobwait_plain(&j, running, 2, &detail), JOBWAIT_CHANGED);
	CHECK_STR(detail, "");
	CHECK(j.seen_running && !j.done);
	CHECK_STR(j.first_node, "box1");
	CHECK_STR(j.nodes, "box1");
	CHECK_STR(j.elapsed, "1:05");
	CHECK_INT(jobwait_plain(&j, running, 2, &detail), JOBWAIT_SAME);
	CHECK_INT(jobwait_plain(&j, ended, 1, &detail), JOBWAIT_CHANGED);
	CHECK(j.settled && !jobwait_ok(&j));
	CHECK_INT(j.signal, 9);
	CHECK_STR(j.elapsed, "1:02:05");
	jobwait_release(&j);

	/* until running: done as soon as it runs */
	jobwait_init(&j, "s1", "box1", true, true);
	jobwait_plain(&j, running, 2, &detail);
	CHECK(j.done && !j.settled && jobwait_ok(&j));
	jobwait_release(&j);

	/* no answer for its stage dir */
	jobwait_init(&j, "s2", "box1", true, false);
	CHECK_INT(jobwait_plain(&j, running, 2, &detail), JOBWAIT_NOT_FOUND);
	CHECK(j.not_found && j.settled);
	jobwait_release(&j);

	/* not found without asking */
	jobwait_init(&j, "s3", "box1", true, false);
	jobwait_not_found(&j);
	CHECK(j.not_found && j.done);
	CHECK_STR(j.state, "NOT_FOUND");
	jobwait_release(&j);
}

/* wait's exit status over its jobs (jobwait_result): 0 when every job did what was
 * waited for, 1 when one ended otherwise, 4 when one was not found (over 1), 3 when
 * the time ran out (over both; a job not done yet counts through that alone). */
static void test_result(void)
{
	struct plainjob_status st[] = {
		{ .id = "ok", .state = "COMPLETED", .exit_code = 0, .exit_signal = 0, .elapsed = 1 },
		{ .id = "bad", .state = "FAILED", .exit_code = 3, .exit_signal = 0, .elapsed = 1 },
		{ .id = "run", .state = "RUNNING", .exit_code = -1, .exit_signal = -1, .elapsed = 1 },
	};
	struct jobwait ok, bad, run, gone, up;
	const char *detail;
	jobwait_init(&ok, "ok", "box1", true, false);
	jobwait_init(&bad, "bad", "box1", true, false);
	jobwait_init(&run, "run", "box1", true, false);
	jobwait_init(&gone, "gone", "box1", true, false);
	jobwait_init(&up, "run", "box1", true, true);
	jobwait_plain(&ok, st, 3, &detail);
	jobwait_plain(&bad, st, 3, &detail);
	jobwait_plain(&run, st, 3, &detail);
	jobwait_not_found(&gone);
	jobwait_plain(&up, st, 3, &detail);

	const struct jobwait *all_ok[] = { &ok, &up };
	CHECK_INT(jobwait_result(all_ok, 2, false), 0);
	const struct jobwait *none[] = { NULL };
	CHECK_INT(jobwait_result(none, 0, false), 0);
	const struct jobwait *one_failed[] = { &ok, &bad, &ok };
	CHECK_INT(jobwait_result(one_failed, 3, false), DPE_FAIL);
	CHECK_INT(DPE_FAIL, 1);
	/* still running when the time ran out: 3, not 0 or 1 */
	const struct jobwait *running[] = { &ok, &run };
	CHECK_INT(jobwait_result(running, 2, false), 0);
	CHECK_INT(jobwait_result(running, 2, true), DPE_TIMEOUT);
	CHECK_INT(DPE_TIMEOUT, 3);
	/* not found outranks failed, whichever comes first */
	const struct jobwait *bad_gone[] = { &bad, &gone };
	CHECK_INT(jobwait_result(bad_gone, 2, false), DPE_NOTFOUND);
	const struct jobwait *gone_bad[] = { &gone, &bad };
	CHECK_INT(jobwait_result(gone_bad, 2, false), DPE_NOTFOUND);
	CHECK_INT(DPE_NOTFOUND, 4);
	CHECK_INT(jobwait_result(gone_bad, 2, true), DPE_TIMEOUT);
	jobwait_release(&ok);
	jobwait_release(&bad);
	jobwait_release(&run);
	jobwait_release(&gone);
	jobwait_release(&up);
}

int main(void)
{
	test_captured();
	test_gone();
	test_array();
	test_preempted();
	test_lag();
	test_sacct_lag();
	test_plain();
	test_result();
	return unit_done();
}
