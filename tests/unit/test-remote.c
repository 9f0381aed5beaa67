/* SPDX-License-Identifier: MIT */
/*
 * The one remote exchange (lib/remote/remote.h) and what the backends make of its
 * reply (lib/sched/sched.h, lib/jobs/job_state.h), on real captures
 * (tests/unit/data/slurm: the status query of SLURM 22.05, 24.11 and 26.05, squeue's
 * half while slurmctld is down and for a purged id): the builder's record of the
 * sections it emitted, the marks of a reply with their sections' exit statuses, the
 * text of a section, the rows as struct job_state and each field's formatter, which
 * must write every time back as the tools' own parse wrote it.
 */
#include <cjson/cJSON.h>

#include "jobs/jobs.h"
#include "jobs/job_state.h"
#include "remote/remote.h"
#include "sched/sched.h"
#include "sched/slurm/slurm.h"
#include "unit.h"

static void reply_of(struct remote_reply *rr, const char *out, const char *err)
{
	strbuf_reset(&rr->out);
	strbuf_adds(&rr->out, out);
	strbuf_reset(&rr->err);
	strbuf_adds(&rr->err, err ? err : "");
	rr->status = 0;
	remote_reply_parse(rr);
}

static void test_builder(void)
{
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	char *ids[] = { "36", "37", NULL };
	CHECK(remote_script_empty(&rs));
	CHECK(!remote_emitted(&rs, REMOTE_SQUEUE));
	slurm_squeue_command(remote_section(&rs, REMOTE_SQUEUE), ids);
	CHECK(remote_emitted(&rs, REMOTE_SQUEUE));
	CHECK(!remote_emitted(&rs, REMOTE_SACCT));
	CHECK(!remote_script_empty(&rs));
	/* a section not emitted failed at nothing, whatever the reply says */
	struct remote_reply rr = REMOTE_REPLY_INIT;
	reply_of(&rr, "dispatch-squeue-exit 1\ndispatch-sacct-exit 2\n", NULL);
	CHECK_INT(remote_section_exit(&rs, &rr, REMOTE_SQUEUE), 1);
	CHECK_INT(remote_section_exit(&rs, &rr, REMOTE_SACCT), 0);
	CHECK_INT(remote_exit(&rr, REMOTE_SACCT), 2);
	CHECK_INT(remote_exit(&rr, REMOTE_PLAIN_STATUS), -1);   /* reports none */
	remote_reply_release(&rr);
	remote_script_release(&rs);
	/* the names slurm_parse_exit takes, each a section with its key */
	CHECK_INT(remote_section_named("squeue"), REMOTE_SQUEUE);
	CHECK_INT(remote_section_named("scancel"), REMOTE_SCANCEL);
	CHECK_INT(remote_section_named("nonesuch"), REMOTE_SECTION_COUNT);
	CHECK_INT(slurm_parse_exit("dispatch-scancel-exit 0\n", "scancel"), 0);
	CHECK_INT(slurm_parse_exit("dispatch-sinfo-exit 7\n", "sinfo"), 7);
	CHECK_INT(slurm_parse_exit("dispatch-sinfo-exit 7\n", "nonesuch"), -1);
}

static void test_marks(void)
{
	struct remote_reply rr = REMOTE_REPLY_INIT;
	reply_of(&rr, "noise dispatch-pid 3\n"
		 "dispatch-pid 42\r\n"
		 "dispatch-\n"
		 "dispatch-PID 1\n"
		 "dispatch-pidx\n"
		 "dispatch-new-key a b\n"
		 "dispatch-sacct\n"
		 "row 1\nrow 2\n"
		 "dispatch-squeue-exit 300\n"
		 "dispatch-pid 43", NULL);
	CHECK_INT(rr.n, 6);
	CHECK_STR(rr.marks[0].key, MARK_PID);
	CHECK(rr.marks[0].known);
	CHECK_STR(rr.marks[0].value, "42");
	CHECK_STR(rr.marks[1].key, "dispatch-pidx");
	CHECK(!rr.marks[1].known);
	CHECK_STR(rr.marks[2].value, "a b");
	CHECK_STR(remote_value(&rr, MARK_PID), "43");          /* the last one */
	CHECK_INT(remote_long(&rr, MARK_PID, 0, 100), 43);
	CHECK(remote_value(&rr, MARK_JOB) == NULL);
	CHECK_INT(remote_exit(&rr, REMOTE_SQUEUE), -1);        /* 300 is no exit status */
	char *sec = remote_section_text(&rr, MARK_SACCT);
	CHECK_STR(sec, "row 1\nrow 2\n");
	free(sec);
	CHECK(remote_section_text(&rr, MARK_STEPS) == NULL);
	/* parsing again starts over */
	reply_of(&rr, "", NULL);
	CHECK_INT(rr.n, 0);
	remote_reply_release(&rr);
	/* every key is in the table once */
	for (size_t i = 0; remote_keys[i]; i++)
		for (size_t k = i + 1; remote_keys[k]; k++)
			CHECK(!streq(remote_keys[i], remote_keys[k]) || !printf("# %s\n", remote_keys[i]));
	for (int s = 0; s < REMOTE_SECTION_COUNT; s++)
		CHECK(remote_sections[s].name != NULL);
}

/* The rows sched_slurm gives for id from the capture. */
static size_t rows_of(struct sched_answer *a, const char *id, struct job_state **rows)
{
	struct sched_job j = { .id = id, .arg = id };
	struct dp_error err = { 0 };
	size_t n = 0;
	*rows = NULL;
	size_t got = sched_slurm.query_rows(a, &j, "hpc", rows, &n, &err);
	CHECK_INT(got, n);
	if (!got)
		CHECK(strstr(err.msg, "neither squeue nor sacct knows it") != NULL);
	return n;
}

static void test_status_capture(const char *rel)
{
	char name[64];
	snprintf(name, sizeof(name), "status-%s.out", rel);
	char *out = unit_fixture("slurm", name);
	struct remote_reply rr = REMOTE_REPLY_INIT;
	reply_of(&rr, out, NULL);
	CHECK(remote_value(&rr, MARK_SACCT) != NULL);
	/* every row's times come back as the parse of the tools wrote them */
	struct slurm_job *sj;
	size_t nsj;
	slurm_parse_status(out, &sj, &nsj);
	struct sched_answer *a = sched_slurm.parse(&rr);
	for (size_t i = 0; i < nsj; i++) {
		struct job_state *rows;
		size_t n = rows_of(a, sj[i].id, &rows);
		for (size_t k = 0; k < n; k++) {
			const struct slurm_job **sel;
			size_t nsel;
			slurm_select(sj, nsj, sj[i].id, &sel, &nsel);
			CHECK_INT(nsel, n);
			if (k < nsel) {
				char *e = job_state_elapsed_text(&rows[k]);
				char *l = job_state_limit_text(&rows[k]);
				CHECK_STR(e, sel[k]->elapsed);
				CHECK_STR(l, sel[k]->time_limit);
				CHECK_STR(rows[k].state, sel[k]->state);
				CHECK(rows[k].sched == &sched_slurm);
				free(e);
				free(l);
			}
			free(sel);
		}
		job_states_free(rows, n);
	}
	slurm_jobs_free(sj, nsj);
	sched_slurm.answer_free(a);
	remote_reply_release(&rr);
	free(out);
}

static void test_status_22(void)
{
	char *out = unit_fixture("slurm", "status-22.05.out");
	struct remote_reply rr = REMOTE_REPLY_INIT;
	reply_of(&rr, out, NULL);
	struct sched_answer *a = sched_slurm.parse(&rr);
	struct job_state *r;
	/* failed with exit code 3 */
	size_t n = rows_of(a, "37", &r);
	CHECK_INT(n, 1);
	CHECK_INT(r[0].phase, JOB_PHASE_ENDED);
	CHECK(job_state_failed(&r[0]));
	CHECK(!job_state_active(&r[0]));
	char *t = job_state_exit_text(&r[0]);
	CHECK_STR(t, "3");
	free(t);
	CHECK_INT(r[0].elapsed, 1);
	CHECK_INT(r[0].limit, JOB_TIME_UNLIMITED);
	t = job_state_why(&r[0]);
	CHECK(t && strstr(t, "3"));
	free(t);
	t = job_state_name(&r[0], "hpc");
	CHECK_STR(t, "37@hpc");
	free(t);
	cJSON *o = cJSON_CreateObject();
	job_state_json_state(o, &r[0]);
	job_state_json_times(o, &r[0]);
	job_state_json_exit(o, &r[0]);
	job_state_json_failure(o, &r[0]);
	job_state_json_pending(o, &r[0]);
	job_state_json_tail(o, &r[0]);
	char *js = cJSON_PrintUnformatted(o);
	CHECK_STR(js, "{\"state\":\"FAILED\",\"active\":false,\"elapsed\":\"0:01\",\"time_limit\":\"UNLIMITED\","
		  "\"exit_code\":3,\"signal\":0,\"failure\":{\"state\":\"FAILED\",\"out_of_memory\":false,"
		  "\"exit_code\":3,\"signal\":null,\"signal_name\":null,\"max_rss_bytes\":null,"
		  "\"mem_limit_bytes\":null,\"max_rss_node\":null,\"max_rss_step\":null,\"nodes\":\"node1\","
		  "\"failed_nodes\":null,\"elapsed\":\"0:01\",\"time_limit\":\"UNLIMITED\","
		  "\"cancelled_by_uid\":null,\"cancelled_by\":null},\"pending\":null,\"log_path\":null,"
		  "\"log_tail\":null,\"log_tail_error\":null}");
	free(js);
	cJSON_Delete(o);
	job_states_free(r, n);
	/* cancelled by a uid; a limit of 365 days is no limit */
	n = rows_of(a, "40", &r);
	CHECK_INT(n, 1);
	CHECK_STR(r[0].state, "CANCELLED");
	CHECK_STR(r[0].cancelled_by, "1001");
	CHECK_INT(r[0].limit, JOB_TIME_UNLIMITED);
	CHECK(r[0].from_accounting);
	job_states_free(r, n);
	/* pending on a dependency: active, not failed */
	n = rows_of(a, "39", &r);
	CHECK_INT(n, 1);
	CHECK_INT(r[0].phase, JOB_PHASE_PENDING);
	CHECK(job_state_active(&r[0]) && !job_state_failed(&r[0]));
	t = job_state_exit_text(&r[0]);
	CHECK_STR(t, "-");
	free(t);
	job_states_free(r, n);
	/* an array: running while any task runs */
	n = rows_of(a, "41", &r);
	CHECK(n >= 4);
	const struct job_state **p = xcalloc(n, sizeof(*p));
	for (size_t i = 0; i < n; i++)
		p[i] = &r[i];
	CHECK_STR(jobs_summary_state(p, n), "RUNNING");
	size_t ended = 0;   /* the tasks that ended: COMPLETED */
	for (size_t i = 0; i < n; i++)
		if (!job_state_active(&r[i]))
			p[ended++] = &r[i];
	CHECK_INT(ended, 2);
	CHECK_STR(jobs_summary_state(p, ended), "COMPLETED");
	CHECK(jobs_summary_state(p, 0) == NULL);
	free(p);
	job_states_free(r, n);
	/* not known */
	n = rows_of(a, "99", &r);
	CHECK_INT(n, 0);
	free(r);
	sched_slurm.answer_free(a);
	remote_reply_release(&rr);
	free(out);
}

/* squeue could not ask its controller: no answer; a purged id: an answer. */
static void test_squeue_failure(void)
{
	struct remote_script rs = REMOTE_SCRIPT_INIT;
	struct sched_job j = { .id = "36" };
	sched_slurm.query_script(&rs, &j, 1);
	CHECK(remote_emitted(&rs, REMOTE_SQUEUE) && remote_emitted(&rs, REMOTE_SACCT));
	struct remote_reply rr = REMOTE_REPLY_INIT;
	char *out = unit_fixture("slurm", "wait-squeue-down.out");
	char *err = unit_fixture("slurm", "wait-squeue-down.err");
	reply_of(&rr, out, err);
	const char *tool = NULL;
	int code = 0;
	CHECK(sched_slurm.query_failed(&rs, &rr, &tool, &code));
	CHECK_STR(tool, "squeue");
	CHECK_INT(code, 1);
	free(out);
	free(err);
	out = unit_fixture("slurm", "wait-squeue-purged.out");
	err = unit_fixture("slurm", "wait-squeue-purged.err");
	reply_of(&rr, out, err);
	CHECK(!sched_slurm.query_failed(&rs, &rr, &tool, &code));
	free(out);
	free(err);
	/* a script without squeue: nothing failed */
	remote_script_release(&rs);
	CHECK(!sched_slurm.query_failed(&rs, &rr, &tool, &code));
	remote_reply_release(&rr);
}

static void test_plain(void)
{
	struct remote_reply rr = REMOTE_REPLY_INIT;
	reply_of(&rr, "dispatch-now 1000\n"
		 "dispatch-job p|900||pending|-|waiting for 1 GPU\n"
		 "dispatch-job r|990||running|0,1|\n"
		 "dispatch-job k|900||exited 137 950|-|\n"
		 "dispatch-cancel r signalled\n", NULL);
	struct sched_answer *a = sched_plain.parse(&rr);
	struct sched_job j = { .id = "r", .arg = "r", .stage_dir = "/s/r", .in_ledger = true };
	struct job_state *rows = NULL;
	size_t n = 0;
	struct dp_error err = { 0 };
	CHECK_INT(sched_plain.query_rows(a, &j, "box", &rows, &n, &err), 1);
	CHECK_STR(rows[0].state, "RUNNING");
	CHECK_STR(rows[0].nodes, "box");
	CHECK_STR(rows[0].gpus, "0,1");
	CHECK_INT(rows[0].elapsed, 10);
	char *t = job_state_limit_text(&rows[0]);
	CHECK_STR(t, "UNLIMITED");
	free(t);
	t = job_state_elapsed_text(&rows[0]);
	CHECK_STR(t, "0:10");
	free(t);
	j.id = "k";
	CHECK_INT(sched_plain.query_rows(a, &j, "box", &rows, &n, &err), 1);
	t = job_state_exit_text(&rows[1]);
	CHECK_STR(t, "137");
	free(t);
	t = job_state_why(&rows[1]);
	CHECK(t && strstr(t, "9"));
	free(t);
	j.id = "gone";
	CHECK_INT(sched_plain.query_rows(a, &j, "box", &rows, &n, &err), 0);
	CHECK_STR(err.msg, "job 'gone' not found on 'box': no answer for its stage dir");
	job_states_free(rows, n);
	/* cancel's outcome from the reply's marks */
	j.id = "r";
	CHECK_STR(sched_plain.cancel_outcome(&rr, &j, true, "box", &err), "signalled");
	j.id = "p";
	CHECK(sched_plain.cancel_outcome(&rr, &j, true, "box", &err) == NULL);
	CHECK_STR(err.msg, "cannot cancel 'r' on 'box': no answer");
	j.stage_dir = NULL;
	CHECK(!sched_plain.can_query(&j));
	CHECK(!sched_plain.can_cancel(&j, "box", &err));
	sched_plain.answer_free(a);
	remote_reply_release(&rr);
	/* which backend */
	CHECK(sched_for(NULL, 0) == &sched_slurm);
	CHECK(sched_for(NULL, 1234) == &sched_plain);
}

int main(void)
{
	test_builder();
	test_marks();
	test_status_22();
	test_status_capture("22.05");
	test_status_capture("24.11");
	test_status_capture("26.05");
	test_squeue_failure();
	test_plain();
	return unit_done();
}
