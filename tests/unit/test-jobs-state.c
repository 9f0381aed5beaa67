/* SPDX-License-Identifier: MIT */
/* What the commands read of lib/jobs after this move: wait's jobs as struct job_state
 * (wait_job_state, wait_job_failed: which ones get a "why", the failure detail and a
 * log tail), times kept as the scheduler wrote them (job_state_time_of), a step's exit
 * column and JSON (job_step.h), and the backends' steps operations (SLURM has them, a
 * plain host none). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "jobs/job_state.h"
#include "jobs/job_step.h"
#include "jobs/wait.h"
#include "sched/sched.h"
#include "unit.h"

static void settled(struct wait_job *wj, const char *id, const char *state, bool plain)
{
	*wj = (struct wait_job){ .id = id, .host = "hpc", .plain = plain };
	jobwait_init(&wj->w, id, "hpc", plain, false);
	wj->w.state = xstrdup(state);
	wj->w.settled = wj->w.done = wj->w.seen = true;
}

static void test_failed(void)
{
	static const struct { const char *state; bool failed; } cases[] = {
		{ "FAILED", true }, { "CANCELLED", true }, { "TIMEOUT", true },
		{ "OUT_OF_MEMORY", true }, { "NODE_FAIL", true },
		/* after the lag polls, a job known to neither squeue nor sacct */
		{ "UNKNOWN", true },
		{ "COMPLETED", false }, { "PENDING", false }, { "RUNNING", false },
		{ "COMPLETING", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wait_job wj;
		settled(&wj, "7", cases[i].state, false);
		if (wait_job_failed(&wj) != cases[i].failed)
			unit_report(false, __FILE__, __LINE__, cases[i].state);
		jobwait_release(&wj.w);
	}
	struct wait_job wj;
	settled(&wj, "7", "FAILED", false);
	wj.w.settled = false;                   /* still waited on when the wait timed out */
	CHECK(!wait_job_failed(&wj));
	jobwait_release(&wj.w);
	jobwait_init(&wj.w, "8", "hpc", false, false);
	jobwait_not_found(&wj.w);               /* NOT_FOUND is no end */
	CHECK(!wait_job_failed(&wj));
	jobwait_release(&wj.w);
	jobwait_init(&wj.w, "9", "hpc", false, false);
	wj.w.settled = true;                    /* settled without a word */
	CHECK(!wait_job_failed(&wj));
	jobwait_release(&wj.w);
}

static void test_state(void)
{
	struct wait_job wj;
	struct job_state js;
	settled(&wj, "12", "TIMEOUT", false);
	wj.w.elapsed = xstrdup("1:00");
	wj.w.time_limit = xstrdup("1:00");
	wj.w.exit_code = 0;
	wj.w.signal = 15;
	wait_job_state(&wj, &js);
	CHECK_STR(js.id, "12");
	CHECK_STR(js.sched->name, "slurm");
	CHECK_INT(js.phase, JOB_PHASE_ENDED);
	char *t = job_state_elapsed_text(&js);
	CHECK_STR(t, "1:00");
	free(t);
	t = job_state_exit_text(&js);
	CHECK_STR(t, "sig15");
	free(t);
	t = job_state_why(&js);
	CHECK(t && strstr(t, "time limit"));
	free(t);
	job_state_release(&js);
	jobwait_release(&wj.w);

	settled(&wj, "st-1", "FAILED", true);
	wj.w.exit_code = 3;
	wait_job_state(&wj, &js);
	CHECK_STR(js.sched->name, "plain");
	t = job_state_why(&js);
	CHECK_STR(t, "its command exited with code 3");
	free(t);
	CHECK(js.reason == NULL);               /* no answer said one */
	job_state_release(&js);
	jobwait_release(&wj.w);
}

static void test_time_of(void)
{
	long s;
	char *w;
	job_state_time_of("1:02", &s, &w);
	CHECK_INT(s, 62);
	CHECK(!w);
	job_state_time_of("1-02:03:04", &s, &w);
	CHECK_INT(s, 93784);
	CHECK(!w);
	job_state_time_of("UNLIMITED", &s, &w);
	CHECK_INT(s, JOB_TIME_UNLIMITED);
	job_state_time_of("Partition_Limit", &s, &w);
	CHECK_INT(s, JOB_TIME_UNKNOWN);
	CHECK_STR(w, "Partition_Limit");
	free(w);
	job_state_time_of("00:01:02", &s, &w);  /* would not write back alike: kept */
	CHECK_INT(s, JOB_TIME_UNKNOWN);
	CHECK_STR(w, "00:01:02");
	free(w);
	job_state_time_of("", &s, &w);
	CHECK_INT(s, JOB_TIME_UNKNOWN);
	CHECK(!w);
}

static void test_steps(void)
{
	struct job_step st = { .id = "5.batch", .job = "5", .step = "batch", .name = "",
			       .state = "FAILED", .exit_code = 0, .exit_signal = 9,
			       .elapsed = "0:01", .max_rss = "", .max_vmsize = "2G",
			       .max_rss_bytes = -1, .max_vmsize_bytes = 2147483648LL,
			       .ave_cpu = "", .tres_usage = "", .nodes = "n1" };
	char *t = job_step_exit_text(&st);
	CHECK_STR(t, "sig9");
	free(t);
	st.exit_code = 2;
	t = job_step_exit_text(&st);
	CHECK_STR(t, "2");
	free(t);
	st.exit_code = -1;
	t = job_step_exit_text(&st);
	CHECK_STR(t, "-");
	free(t);
	cJSON *o = cJSON_CreateObject();
	job_step_json(o, &st);
	char *s = cJSON_PrintUnformatted(o);
	CHECK_STR(s, "{\"id\":\"5.batch\",\"step\":\"batch\",\"name\":\"\",\"state\":\"FAILED\","
		     "\"exit_code\":null,\"signal\":9,\"elapsed\":\"0:01\",\"max_rss\":\"\","
		     "\"max_rss_bytes\":null,\"max_vmsize\":\"2G\",\"max_vmsize_bytes\":2147483648,"
		     "\"ave_cpu\":\"\",\"tres_usage\":\"\",\"nodes\":\"n1\"}");
	free(s);
	cJSON_Delete(o);

	/* SLURM's steps are asked; a plain host has none (status --steps says so) */
	CHECK(sched_slurm.steps_script && sched_slurm.steps_exit && sched_slurm.steps_take);
	CHECK(!sched_plain.steps_script);
}

int main(void)
{
	test_failed();
	test_state();
	test_time_of();
	test_steps();
	return unit_done();
}
