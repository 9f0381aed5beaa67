/* SPDX-License-Identifier: MIT */
/* lib/sched/slurm, the parts `dispatch wait` polls with: the squeue and sacct halves of the
 * status query (valid sh, ids quoted), their exit-status lines, which squeue errors
 * are failures to retry (slurmctld down) and which are answers (a purged id), the
 * rows of both halves, and SLURM's elapsed-time format. Fixtures: real outputs of the
 * test cluster, tests/unit/data/slurm/wait-*. */
#include <stdlib.h>

#include "sched/slurm/slurm.h"
#include "base/marker.h"
#include "unit.h"

static char *fixture(const char *name)
{
	return unit_fixture("slurm", name);
}

static void test_commands(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *ids[] = { "12", "13_4", NULL };
	slurm_squeue_command(&sb, ids);
	CHECK_CONTAINS(sb.buf, "squeue -h -t all -j '12,13_4' -o ");
	CHECK_CONTAINS(sb.buf, "echo \"dispatch-squeue-exit $?\"");
	CHECK(!strstr(sb.buf, "sacct"));
	CHECK_SH_N("squeue half parses", sb.buf);
	strbuf_reset(&sb);
	slurm_sacct_command(&sb, ids);
	CHECK_CONTAINS(sb.buf, "echo " MARK_SACCT "\n");
	CHECK_CONTAINS(sb.buf, "sacct -n -P -X -j '12,13_4' -o ");
	CHECK_CONTAINS(sb.buf, "echo \"dispatch-sacct-exit $?\"");
	CHECK(!strstr(sb.buf, "squeue"));
	CHECK_SH_N("sacct half parses", sb.buf);
	strbuf_release(&sb);
}

static void test_exit_lines(void)
{
	char *sq = fixture("wait-squeue-22.05.out"), *sa = fixture("wait-sacct-22.05.out");
	char *down = fixture("wait-squeue-down.out"), *purged = fixture("wait-squeue-purged.out");
	CHECK_INT(slurm_parse_exit(sq, "squeue"), 0);
	CHECK_INT(slurm_parse_exit(sa, "sacct"), 0);
	CHECK_INT(slurm_parse_exit(down, "squeue"), 1);
	CHECK_INT(slurm_parse_exit(purged, "squeue"), 1);
	/* the other half's line, none, or a broken one: not known */
	CHECK_INT(slurm_parse_exit(sq, "sacct"), -1);
	CHECK_INT(slurm_parse_exit("", "squeue"), -1);
	CHECK_INT(slurm_parse_exit("dispatch-squeue-exit 300\n", "squeue"), -1);
	CHECK_INT(slurm_parse_exit("dispatch-squeue-exit x\n", "squeue"), -1);
	CHECK_INT(slurm_parse_exit("  dispatch-squeue-exit 0\n", "squeue"), -1);
	free(sq);
	free(sa);
	free(down);
	free(purged);
}

static void test_squeue_failed(void)
{
	char *down = fixture("wait-squeue-down.err"), *purged = fixture("wait-squeue-purged.err");
	CHECK(slurm_squeue_failed(1, down));      /* slurmctld down: retry */
	CHECK(!slurm_squeue_failed(1, purged));   /* the id left its memory: sacct's turn */
	CHECK(!slurm_squeue_failed(0, ""));
	CHECK(!slurm_squeue_failed(0, down));
	CHECK(slurm_squeue_failed(1, ""));
	CHECK(slurm_squeue_failed(1, NULL));
	CHECK(slurm_squeue_failed(127, "bash: squeue: command not found\n"));
	free(down);
	free(purged);
}

static const struct slurm_job *row(const struct slurm_job *jobs, size_t n, const char *id,
				   bool from_sacct)
{
	for (size_t i = 0; i < n; i++)
		if (streq(jobs[i].id, id) && jobs[i].from_sacct == from_sacct)
			return &jobs[i];
	return NULL;
}

static void test_rows(void)
{
	char *sq = fixture("wait-squeue-22.05.out"), *sa = fixture("wait-sacct-22.05.out");
	char *both = xasprintf("%s%s", sq, sa);
	struct slurm_job *jobs;
	size_t n;
	slurm_parse_status(sq, &jobs, &n);
	CHECK_INT((int)n, 5);
	for (size_t i = 0; i < n; i++)
		CHECK(!jobs[i].from_sacct);
	const struct slurm_job *r = row(jobs, n, "160", false);
	CHECK(r && streq(r->state, "RUNNING") && streq(r->nodes, "node1"));
	r = row(jobs, n, "161", false);
	CHECK(r && streq(r->state, "PENDING") && streq(r->reason, "Dependency"));
	slurm_jobs_free(jobs, n);

	slurm_parse_status(sa, &jobs, &n);
	CHECK_INT((int)n, 5);
	r = row(jobs, n, "3", true);
	CHECK(r && streq(r->state, "FAILED") && r->exit_code == 3 && r->exit_signal == 0);
	r = row(jobs, n, "162", true);
	CHECK(r && streq(r->state, "CANCELLED"));
	slurm_jobs_free(jobs, n);

	/* wait joins the halves' rows: the ended jobs are sacct's, the others squeue's */
	slurm_parse_status(both, &jobs, &n);
	CHECK_INT((int)n, 10);
	const struct slurm_job **sel;
	size_t ns;
	slurm_select(jobs, n, "3", &sel, &ns);
	CHECK(ns == 1 && sel[0]->from_sacct && sel[0]->exit_code == 3);
	free(sel);
	slurm_select(jobs, n, "160", &sel, &ns);
	CHECK(ns == 1 && !sel[0]->from_sacct && streq(sel[0]->state, "RUNNING"));
	free(sel);
	slurm_jobs_free(jobs, n);
	free(both);
	free(sq);
	free(sa);
}

static void test_format_seconds(void)
{
	const struct {
		long s;
		const char *want;
	} cases[] = {
		{ -1, "" }, { 0, "0:00" }, { 65, "1:05" }, { 3599, "59:59" }, { 3600, "1:00:00" },
		{ 3725, "1:02:05" }, { 86399, "23:59:59" }, { 86400, "1-00:00:00" },
		{ 90061, "1-01:01:01" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *got = slurm_format_seconds(cases[i].s);
		CHECK_STR(got, cases[i].want);
		free(got);
	}
}

/* One form for elapsed times and limits, whichever tool answered (issue 19): the
 * captured squeue and sacct rows of the same jobs read alike. */
static void test_durations(void)
{
	const struct {
		const char *text, *want;
		long s;
	} cases[] = {
		{ "0:01", "0:01", 1 }, { "00:00:01", "0:01", 1 }, { "2:00", "2:00", 120 },
		{ "00:02:00", "2:00", 120 }, { "1:02:05", "1:02:05", 3725 },
		{ "01:02:05", "1:02:05", 3725 }, { "1-00:00:00", "1-00:00:00", 86400 },
		{ "2-03", "2-03:00:00", 183600 }, { "2-03:04", "2-03:04:00", 183840 },
		{ "365-00:00:00", "UNLIMITED", 365L * 86400 }, { "UNLIMITED", "UNLIMITED", -1 },
		{ "Partition_Limit", "Partition_Limit", -1 }, { "", "", -1 }, { "1:60", "1:60", -1 },
		{ "1:61:00", "1:61:00", -1 }, { "-1:00", "-1:00", -1 }, { "1::00", "1::00", -1 },
		{ "1:2:3:4", "1:2:3:4", -1 }, { "12", "12", -1 }, { "INVALID", "INVALID", -1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		CHECK_INT((int)slurm_parse_duration(cases[i].text), (int)cases[i].s);
		char *got = slurm_format_duration(cases[i].text);
		CHECK_STR(got, cases[i].want);
		free(got);
	}
	char *sq = fixture("wait-squeue-22.05.out");
	char *sa = fixture("wait-sacct-22.05.out");
	struct slurm_job *q, *a;
	size_t nq, na;
	slurm_parse_status(sq, &q, &nq);
	slurm_parse_status(sa, &a, &na);
	size_t same = 0;
	for (size_t i = 0; i < nq; i++)
		for (size_t k = 0; k < na; k++)
			if (streq(q[i].id, a[k].id) && !slurm_state_active(q[i].state)) {
				CHECK_STR(q[i].elapsed, a[k].elapsed);
				CHECK_STR(q[i].time_limit, a[k].time_limit);
				same++;
			}
	CHECK_INT((int)same, 3);
	/* sacct's "CANCELLED by 1001": the state word, and who */
	for (size_t k = 0; k < na; k++)
		if (streq(a[k].id, "162")) {
			CHECK_STR(a[k].state, "CANCELLED");
			CHECK_STR(a[k].cancelled_by, "1001");
		} else {
			CHECK(a[k].cancelled_by == NULL);
		}
	slurm_jobs_free(q, nq);
	slurm_jobs_free(a, na);
	free(sq);
	free(sa);
}

int main(void)
{
	test_durations();
	test_commands();
	test_exit_lines();
	test_squeue_failed();
	test_rows();
	test_format_seconds();
	return unit_done();
}
