/* SPDX-License-Identifier: MIT */
/* A sweep as one object (lib/jobs/sweeps.h): task lists in SLURM's array syntax,
 * which task each answer row is (an array's task, its pending rest, a split array's
 * offset, a plain run, a retry's newer row), the ledger's sweep ids by prefix; and
 * a job's metrics (lib/jobs/job_metrics.h): the script through sh over real log
 * files, the reply into each task's row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "jobs/job_metrics.h"
#include "jobs/sweeps.h"
#include "unit.h"

static char tmpdir[] = "/tmp/test-sweeps-XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs(text, fp);
	fclose(fp);
}

static char *set_text(const bool *set, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n; i++)
		strbuf_addch(&sb, set[i] ? '1' : '0');
	return strbuf_detach(&sb);
}

static void test_parse_tasks(void)
{
	static const struct { const char *spec; const char *want; } ok[] = {
		{ "0-9", "1111111111" }, { "3,7", "0001000100" }, { "[2-5%2]", "0011110000" },
		{ "0-9:3", "1001001001" }, { "4", "0000100000" }, { "[1,3-4]", "0101100000" },
		{ "0-9%1", "1111111111" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
		bool set[10] = { 0 };
		CHECK(sweeps_parse_tasks(ok[i].spec, set, 10));
		_cleanup_free_ char *got = set_text(set, 10);
		CHECK_STR(got, ok[i].want);
	}
	static const char *const bad[] = { "", "10", "0-10", "5-3", "a", "1,", "[1-2", "1-2]",
					   "-1", "0-9:0", "1 2", "1%x" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		bool set[10] = { 0 };
		bool accepted = sweeps_parse_tasks(bad[i], set, 10);
		CHECK(!accepted);
		if (accepted)
			fprintf(stderr, "  accepted: '%s'\n", bad[i]);
	}
}

static struct job_state row(const char *id, const char *state)
{
	return (struct job_state){ .id = (char *)id, .state = (char *)state };
}

static void test_take(void)
{
	/* an array of tasks 0-5; a retry of 1 and 4 (a newer row) */
	struct ledger_job first = { .row = 1, .job_id = "42", .host = "hpc", .sweep_size = 6 };
	struct ledger_job retry = { .row = 2, .job_id = "50", .host = "hpc", .sweep_size = 6,
				    .sweep_tasks = "1,4" };
	struct sweep_task *t = xcalloc(6, sizeof(*t));
	struct job_state done = row("42_0", "COMPLETED"), failed = row("42_1", "FAILED");
	struct job_state rest = row("42_[2-5%2]", "PENDING"), r1 = row("50_1", "COMPLETED");
	struct job_state other = row("43_2", "FAILED"), plain = row("42", "RUNNING");
	/* the retry's answer may come first: the newer row wins either way */
	CHECK_INT(sweeps_take(&retry, &r1, t, 6), 1);
	CHECK_INT(sweeps_take(&first, &done, t, 6), 1);
	CHECK_INT(sweeps_take(&first, &failed, t, 6), 0);
	CHECK_INT(sweeps_take(&first, &rest, t, 6), 4); /* 2-5: no answer of the retry's has 4 */
	CHECK_INT(sweeps_take(&first, &other, t, 6), 0);
	CHECK_INT(sweeps_take(&first, &plain, t, 6), 0);
	CHECK(t[0].st == &done && t[1].st == &r1 && t[2].st == &rest && t[5].st == &rest);
	CHECK(t[4].st == &rest);
	struct job_state r4 = row("50_4", "RUNNING");
	CHECK_INT(sweeps_take(&retry, &r4, t, 6), 1);
	CHECK(t[4].st == &r4);
	CHECK_STR(t[1].job, "50_1");
	CHECK_STR(t[3].job, "42_3");
	sweep_tasks_free(t, 6);

	/* a sweep split over arrays: the second runs 4-7 as its tasks 0-3 */
	struct ledger_job second = { .row = 3, .job_id = "61", .host = "hpc", .sweep_size = 10,
				     .sweep_first = 4, .sweep_tasks = "4-7" };
	t = xcalloc(10, sizeof(*t));
	struct job_state s2 = row("61_2", "RUNNING"), s9 = row("61_[3-5]", "PENDING");
	CHECK_INT(sweeps_take(&second, &s2, t, 10), 1);
	CHECK(t[6].st == &s2);
	CHECK_STR(t[6].job, "61_2");
	CHECK_INT(sweeps_take(&second, &s9, t, 10), 1); /* 7 only: 8 and 9 are not its own */
	CHECK(t[7].st == &s9 && !t[8].st);
	sweep_tasks_free(t, 10);

	/* a plain host's run: one task, by its stage name */
	struct ledger_job run = { .row = 4, .job_id = "train-20261202-1a2b-3", .host = "box1",
				  .sweep_size = 6, .sweep_first = 3, .sweep_tasks = "3" };
	t = xcalloc(6, sizeof(*t));
	struct job_state p = row("train-20261202-1a2b-3", "RUNNING");
	CHECK_INT(sweeps_take(&run, &p, t, 6), 1);
	CHECK(t[3].st == &p);
	CHECK_STR(t[3].job, "train-20261202-1a2b-3");
	sweep_tasks_free(t, 6);

	/* the row that ran a task last */
	struct ledger_job rows[] = { first, retry, second };
	CHECK(sweeps_row_of(rows, 2, 1) == &rows[1]);
	CHECK(sweeps_row_of(rows, 2, 2) == &rows[0]);
	CHECK(sweeps_row_of(rows, 2, 6) == NULL);
}

static void test_resolve(void)
{
	CHECK(sweeps_is_ref("sweep-0f73"));
	CHECK(!sweeps_is_ref("sweep-"));
	CHECK(!sweeps_is_ref("sweep-xyz"));
	CHECK(!sweeps_is_ref("train-20261202-120000-1a2b"));
	_cleanup_free_ char *dir = xasprintf("%s/state", tmpdir);
	struct ledger *l;
	struct dp_error err = { 0 };
	CHECK(ledger_open(dir, &l, &err) == 0);
	struct ledger_job a = { .host = "hpc", .token = "dsp-a", .sweep_id = "sweep-0f73aa",
				.sweep_size = 2 };
	struct ledger_job b = { .host = "hpc", .token = "dsp-b", .sweep_id = "sweep-0f74bb",
				.sweep_size = 2 };
	struct ledger_job c = { .host = "hpc", .token = "dsp-c", .sweep_id = "sweep-0f73aa",
				.sweep_size = 2, .sweep_tasks = "1" };
	CHECK(ledger_begin(l, &a, &err) == 0 && ledger_begin(l, &b, &err) == 0 &&
	      ledger_begin(l, &c, &err) == 0);
	char *id = NULL;
	CHECK(sweeps_resolve(l, "sweep-0f73", &id, &err) == 0);
	CHECK_STR(id, "sweep-0f73aa");
	free(id);
	CHECK(sweeps_resolve(l, "sweep-0f7", &id, &err) < 0);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_CONTAINS(err.msg, "it starts sweep-0f73aa, sweep-0f74bb");
	CHECK(sweeps_resolve(l, "sweep-1", &id, &err) < 0);
	CHECK_INT(err.kind, DPE_NOTFOUND);
	ledger_close(l);
}

/* The script through sh, its reply parsed. */
static void run(const struct remote_script *rs, struct remote_reply *rr)
{
	_cleanup_free_ char *file = xasprintf("%s/cmd.sh", tmpdir);
	write_file(file, rs->text.buf);
	_cleanup_free_ char *sh = xasprintf("sh '%s'", file);
	FILE *p = popen(sh, "r");
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		strbuf_add(&rr->out, buf, n);
	rr->status = WEXITSTATUS(pclose(p));
	remote_reply_parse(rr);
}

static void test_metrics(void)
{
	_cleanup_free_ char *logs = xasprintf("%s/logs dir", tmpdir);
	CHECK_INT(mkdir(logs, 0700), 0);
	_cleanup_free_ char *l0 = xasprintf("%s/grid-42_0.out", logs);
	_cleanup_free_ char *l11 = xasprintf("%s/grid-42_11.out", logs);
	_cleanup_free_ char *lp = xasprintf("%s/plain.out", logs);
	write_file(l0, "epoch 1\nDISPATCH_METRIC loss=0.5\nDISPATCH_METRIC acc=0.1\n"
		       "DISPATCH_METRIC loss=0.25\n  DISPATCH_METRIC nope=1\nDISPATCH_METRIC =2\n"
		       "DISPATCH_METRIC bad name=3\nDISPATCH_METRIC  spaced=4\n");
	/* a hostile value: a command, an escape sequence; and more than 32 names */
	struct strbuf many = STRBUF_INIT;
	strbuf_adds(&many, "DISPATCH_METRIC loss=$(touch pwned) \033[2J\n");
	for (int i = 0; i < 40; i++)
		strbuf_addf(&many, "DISPATCH_METRIC m%d=%d\n", i, i);
	write_file(l11, many.buf);
	strbuf_release(&many);
	write_file(lp, "DISPATCH_METRIC loss=1\nDISPATCH_METRIC loss=0.75\n");
	_cleanup_free_ char *pattern = xasprintf("%s/grid-42_%%a.out", logs);
	struct sched_job jobs[] = {
		{ .id = "42", .log_path = pattern },
		{ .id = "run-1", .log_path = lp },
		{ .id = "43", .log_path = NULL },
	};
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	job_metrics_script(&rs, jobs, 3);
	CHECK(remote_emitted(&rs, REMOTE_METRICS));
	struct remote_reply rr = REMOTE_REPLY_INIT;
	run(&rs, &rr);
	CHECK_INT(rr.status, 0);
	struct job_state t0 = { .id = xstrdup("42_0") }, t11 = { .id = xstrdup("42_11") };
	struct job_state t1 = { .id = xstrdup("42_1") }, p = { .id = xstrdup("run-1") };
	struct job_metrics m;
	job_metrics_index(&rr, &m);
	job_metrics_take(&m, &jobs[0], &t0);
	job_metrics_take(&m, &jobs[0], &t11);
	job_metrics_take(&m, &jobs[0], &t1);
	job_metrics_take(&m, &jobs[1], &p);
	job_metrics_release(&m);
	CHECK_INT(t0.nmetrics, 3);
	CHECK(t0.nmetrics == 3 && streq(t0.metrics[0].name, "loss") && streq(t0.metrics[1].name, "acc"));
	CHECK_STR(job_state_metric(&t0, "loss"), "0.25");
	CHECK_STR(job_state_metric(&t0, "acc"), "0.1");
	CHECK_STR(job_state_metric(&t0, "spaced"), "4");
	CHECK(job_state_metric(&t0, "nope") == NULL);
	CHECK_INT(t11.nmetrics, JOB_METRICS_MAX);
	CHECK_STR(job_state_metric(&t11, "loss"), "$(touch pwned) \033[2J");
	CHECK(job_state_metric(&t11, "m31") == NULL && job_state_metric(&t11, "m30") != NULL);
	CHECK_INT(t1.nmetrics, 0);
	CHECK_STR(job_state_metric(&p, "loss"), "0.75");
	_cleanup_free_ char *pwned = xasprintf("%s/pwned", tmpdir);
	CHECK(access("pwned", F_OK) != 0 && access(pwned, F_OK) != 0);
	job_state_release(&t0);
	job_state_release(&t11);
	job_state_release(&t1);
	job_state_release(&p);
	remote_reply_release(&rr);
	remote_script_release(&rs);
}

int main(void)
{
	CHECK(mkdtemp(tmpdir) != NULL);
	test_parse_tasks();
	test_take();
	test_resolve();
	test_metrics();
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", tmpdir);
	CHECK(system(rm) == 0);
	return unit_done();
}
