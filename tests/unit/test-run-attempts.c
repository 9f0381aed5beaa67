/* SPDX-License-Identifier: MIT */
/* A run's attempts (lib/jobs/run_attempts.h): the script reads a stage dir's attempts
 * file (the lines the sbatch wrapper and the plain launcher append) through sh, the
 * reply is parsed into job_state.attempts, and the formatters show them. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/util.h"
#include "jobs/run_attempts.h"
#include "unit.h"

static char tmpdir[] = "/tmp/test-run-attempts-XXXXXX";

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	if (!fp)
		abort();
	fputs(text, fp);
	fclose(fp);
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

static void test_read(void)
{
	_cleanup_free_ char *s1 = xasprintf("%s/s1", tmpdir);
	_cleanup_free_ char *s2 = xasprintf("%s/s 2", tmpdir);
	_cleanup_free_ char *a1 = xasprintf("%s/attempts", s1);
	CHECK_INT(mkdir(s1, 0700), 0);
	CHECK_INT(mkdir(s2, 0700), 0);
	/* two ends the wrapper wrote, one SLURM requeued itself, and lines that are not
	 * an attempt's (a hostile or broken file): skipped */
	write_file(a1, "0 TIMEOUT 1764623000 node1\n"
		       "1 REQUEUED - -\n"
		       "2 PREEMPTED 1764623300 node2.cluster\n"
		       "3 timeout 1764623400 node1\n"
		       "4 TIMEOUT 1764623400 node|1\n"
		       "x TIMEOUT 1764623400 node1\n"
		       "5 TIMEOUT 1764623400 \033[31mnode1\n");
	_cleanup_free_ char *g1 = xasprintf("%s/gave-up", s1);
	write_file(g1, "gave up after 4 restarts: TIMEOUT, REQUEUED\033[2J; attempt 5 ended TIMEOUT\n");
	struct sched_job jobs[] = {
		{ .id = "41", .stage_dir = s1, .run_id = "run-00000000000000aa", .max_restarts = 4 },
		{ .id = "42", .stage_dir = s2, .run_id = "run-00000000000000bb", .max_restarts = 2 },
		{ .id = "43", .stage_dir = s1 },        /* not a run: not asked */
	};
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	run_attempts_script(&rs, jobs, 3);
	CHECK(remote_emitted(&rs, REMOTE_ATTEMPTS));
	CHECK(!strstr(rs.text.buf, "43"));
	struct remote_reply rr = REMOTE_REPLY_INIT;
	run(&rs, &rr);
	CHECK_INT(rr.status, 0);

	struct job_state js = { .state = xstrdup("RUNNING") };
	run_attempts_take(&rr, &jobs[0], &js);
	CHECK_STR(js.run_id, "run-00000000000000aa");
	CHECK_INT(js.nattempts, 3);
	CHECK_INT(js.attempts[1].ended, -1);
	CHECK(js.attempts[1].node == NULL);
	CHECK_STR(js.attempts[2].node, "node2.cluster");
	_cleanup_free_ char *st = job_state_state_text(&js);
	CHECK_STR(st, "RUNNING attempt 4/5");
	_cleanup_free_ char *hist = job_state_attempts_text(&js);
	CHECK_STR(hist, "attempt 1 TIMEOUT 2025-12-01T21:03:20Z on node1; attempt 2 REQUEUED; "
			"attempt 3 PREEMPTED 2025-12-01T21:08:20Z on node2.cluster");
	cJSON *o = cJSON_CreateObject();
	job_state_json_run(o, &js);
	_cleanup_free_ char *json = cJSON_PrintUnformatted(o);
	CHECK_STR(json, "{\"run_id\":\"run-00000000000000aa\",\"attempt\":4,\"max_attempts\":5,"
			"\"attempts\":[{\"attempt\":1,\"state\":\"TIMEOUT\",\"ended\":\"2025-12-01T21:03:20Z\","
			"\"node\":\"node1\"},{\"attempt\":2,\"state\":\"REQUEUED\",\"ended\":null,\"node\":null},"
			"{\"attempt\":3,\"state\":\"PREEMPTED\",\"ended\":\"2025-12-01T21:08:20Z\","
			"\"node\":\"node2.cluster\"}]}");
	cJSON_Delete(o);
	/* out of restarts: why it failed, the gave-up line (escapes shown, not sent) */
	free(js.state);
	js.state = xstrdup("FAILED");
	js.phase = job_phase_of("FAILED");
	_cleanup_free_ char *gave = job_state_why(&js);
	CHECK_STR(gave, "the run gave up after 4 restarts: TIMEOUT, REQUEUED\\e[2J; attempt 5 ended TIMEOUT");
	/* requeued, held until its BeginTime: said as a restart, not as a --begin */
	js.phase = job_phase_of("PENDING");
	free(js.state);
	js.state = xstrdup("PENDING");
	js.reason = xstrdup("BeginTime");
	_cleanup_free_ char *why = job_state_why(&js);
	CHECK_STR(why, "restarted after attempt 3 ended PREEMPTED: SLURM starts a requeued job again "
		       "once its BeginTime (about two minutes after the requeue) has come (BeginTime)");
	job_state_release(&js);

	/* a run with no attempts file yet: attempt 1, no history */
	js = (struct job_state){ .state = xstrdup("PENDING") };
	run_attempts_take(&rr, &jobs[1], &js);
	_cleanup_free_ char *st2 = job_state_state_text(&js);
	CHECK_STR(st2, "PENDING attempt 1/3");
	CHECK(job_state_attempts_text(&js) == NULL);
	job_state_release(&js);

	/* not a run: nothing, and the state as it was */
	js = (struct job_state){ .state = xstrdup("RUNNING") };
	run_attempts_take(&rr, &jobs[2], &js);
	CHECK(js.run_id == NULL && js.nattempts == 0);
	_cleanup_free_ char *st3 = job_state_state_text(&js);
	CHECK_STR(st3, "RUNNING");
	o = cJSON_CreateObject();
	job_state_json_run(o, &js);
	CHECK(o->child == NULL);
	cJSON_Delete(o);
	job_state_release(&js);
	remote_reply_release(&rr);
	remote_script_release(&rs);

	/* no runs among the jobs: no section at all */
	struct remote_script none = REMOTE_SCRIPT_INIT;
	run_attempts_script(&none, &jobs[2], 1);
	CHECK(remote_script_empty(&none));
	remote_script_release(&none);
}

/* A job array's tasks (a sweep's on SLURM, each requeued alone): each its own
 * attempts.ID_TASK and gave-up.ID_TASK, its own run id (the run's, -INDEX: the task
 * id plus the array's sweep_first), never another task's or array's lines. */
static void test_array_tasks(void)
{
	_cleanup_free_ char *s3 = xasprintf("%s/s3", tmpdir);
	CHECK_INT(mkdir(s3, 0700), 0);
	_cleanup_free_ char *t1 = xasprintf("%s/attempts.50_1", s3);
	_cleanup_free_ char *t3 = xasprintf("%s/attempts.50_3", s3);
	_cleanup_free_ char *g3 = xasprintf("%s/gave-up.50_3", s3);
	_cleanup_free_ char *other = xasprintf("%s/attempts.500_1", s3); /* another array */
	write_file(t1, "0 FAILED 1764623000 node1\n");
	write_file(t3, "0 FAILED 1764623000 node2\n1 FAILED 1764623100 node1\n");
	write_file(g3, "gave up after 1 restarts: FAILED; attempt 2 ended FAILED\n");
	write_file(other, "0 TIMEOUT 1764623000 node9\n0 TIMEOUT 1764623000 node9\n");
	struct sched_job job = { .id = "50", .stage_dir = s3, .run_id = "run-00000000000000cc",
				 .max_restarts = 1, .sweep_first = 4 };
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	run_attempts_script(&rs, &job, 1);
	struct remote_reply rr = REMOTE_REPLY_INIT;
	run(&rs, &rr);
	CHECK_INT(rr.status, 0);

	struct job_state js = { .id = xstrdup("50_1"), .state = xstrdup("RUNNING") };
	run_attempts_take(&rr, &job, &js);
	CHECK_STR(js.run_id, "run-00000000000000cc-5");
	CHECK_INT(js.nattempts, 1);
	CHECK_STR(js.attempts[0].node, "node1");
	CHECK(js.gave_up == NULL);
	_cleanup_free_ char *st = job_state_state_text(&js);
	CHECK_STR(st, "RUNNING attempt 2/2");
	job_state_release(&js);

	js = (struct job_state){ .id = xstrdup("50_3"), .state = xstrdup("FAILED") };
	run_attempts_take(&rr, &job, &js);
	CHECK_STR(js.run_id, "run-00000000000000cc-7");
	CHECK_INT(js.nattempts, 2);
	CHECK_STR(js.gave_up, "gave up after 1 restarts: FAILED; attempt 2 ended FAILED");
	job_state_release(&js);

	/* a task that has not ended an attempt, and the array's pending rest */
	js = (struct job_state){ .id = xstrdup("50_2"), .state = xstrdup("PENDING") };
	run_attempts_take(&rr, &job, &js);
	CHECK_STR(js.run_id, "run-00000000000000cc-6");
	CHECK_INT(js.nattempts, 0);
	job_state_release(&js);
	js = (struct job_state){ .id = xstrdup("50_[4-9%2]"), .state = xstrdup("PENDING") };
	run_attempts_take(&rr, &job, &js);
	CHECK_STR(js.run_id, "run-00000000000000cc");
	CHECK_INT(js.nattempts, 0);
	job_state_release(&js);

	/* the task named alone (50_3): its own lines */
	struct sched_job task = job;
	task.id = "50_3";
	struct remote_script rs2 = REMOTE_SCRIPT_INIT;
	run_attempts_script(&rs2, &task, 1);
	struct remote_reply rr2 = REMOTE_REPLY_INIT;
	run(&rs2, &rr2);
	js = (struct job_state){ .id = xstrdup("50_3"), .state = xstrdup("FAILED") };
	run_attempts_take(&rr2, &task, &js);
	CHECK_INT(js.nattempts, 2);
	CHECK(js.gave_up != NULL);
	job_state_release(&js);
	remote_reply_release(&rr2);
	remote_script_release(&rs2);
	remote_reply_release(&rr);
	remote_script_release(&rs);
}

int main(void)
{
	if (!mkdtemp(tmpdir))
		return 1;
	test_read();
	test_array_tasks();
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", tmpdir);
	CHECK_INT(system(rm), 0);
	return unit_done();
}
