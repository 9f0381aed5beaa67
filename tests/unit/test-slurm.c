/* SPDX-License-Identifier: MIT */
/* lib/sched/slurm: sbatch --parsable answers among banners, the squeue + sacct status
 * query and its selection, the token lookup after a lost connection, and the shell
 * text of the commands (run through sh -n). Fixtures: tests/unit/data/slurm/. */
#include <stdlib.h>

#include "sched/slurm/slurm.h"
#include "unit.h"

static char *fixture(const char *name)
{
	return unit_fixture("slurm", name);
}

static void check_sbatch(const char *out, const char *want_id, const char *want_cluster)
{
	char *id = NULL, *cluster = NULL;
	int r = slurm_parse_sbatch(out, &id, &cluster);
	if (!want_id) {
		CHECK(r < 0);
		CHECK(id == NULL);
	} else {
		CHECK_INT(r, 0);
		CHECK_STR(id, want_id);
		if (want_cluster)
			CHECK_STR(cluster, want_cluster);
		else
			CHECK(cluster == NULL);
	}
	free(id);
	free(cluster);
}

static void test_sbatch(void)
{
	char *f = fixture("sbatch-plain.out");
	check_sbatch(f, "46", NULL);
	free(f);
	f = fixture("sbatch-refused.err"); /* stderr never holds an id */
	check_sbatch(f, NULL, NULL);
	free(f);
	f = fixture("sbatch-cluster-banner.out");
	check_sbatch(f, "4243", "testbed");
	free(f);
	/* the last matching line wins; other lines never count */
	check_sbatch("12\nbanner 99\n13\n", "13", NULL);
	check_sbatch("13\r\n", "13", NULL);
	check_sbatch("Submitted batch job 77\n", NULL, NULL);
	check_sbatch("77;\n", NULL, NULL);
	check_sbatch("77;a b\n", NULL, NULL);
	check_sbatch(" 77\n", NULL, NULL);
	check_sbatch("", NULL, NULL);
	check_sbatch("55\nwelcome\n", "55", NULL);
}

static const struct slurm_job *find(const struct slurm_job *const *sel, size_t n, const char *id)
{
	for (size_t i = 0; i < n; i++)
		if (streq(sel[i]->id, id))
			return sel[i];
	return NULL;
}

static void test_status(void)
{
	char *out = fixture("status-22.05.out");
	struct slurm_job *jobs;
	size_t n;
	CHECK_INT(slurm_parse_status(out, &jobs, &n), 0);
	CHECK_INT(n, 20);
	CHECK(!jobs[0].from_sacct);
	CHECK(jobs[10].from_sacct);

	const struct slurm_job **sel;
	size_t ns;
	/* running: squeue's row, not sacct's */
	slurm_select(jobs, n, "38", &sel, &ns);
	CHECK_INT(ns, 1);
	CHECK(!sel[0]->from_sacct);
	CHECK_STR(sel[0]->state, "RUNNING");
	CHECK_STR(sel[0]->nodes, "node2");
	CHECK_INT(sel[0]->exit_code, -1);
	free(sel);
	/* pending: squeue's reason (sacct says None) */
	slurm_select(jobs, n, "39", &sel, &ns);
	CHECK_INT(ns, 1);
	CHECK_STR(sel[0]->state, "PENDING");
	CHECK_STR(sel[0]->reason, "Dependency");
	free(sel);
	/* ended, in both: sacct's, with the exit code */
	slurm_select(jobs, n, "37", &sel, &ns);
	CHECK_INT(ns, 1);
	CHECK(sel[0]->from_sacct);
	CHECK_STR(sel[0]->state, "FAILED");
	CHECK_INT(sel[0]->exit_code, 3);
	CHECK_INT(sel[0]->exit_signal, 0);
	free(sel);
	slurm_select(jobs, n, "36", &sel, &ns);
	CHECK_INT(ns, 1);
	CHECK_STR(sel[0]->state, "COMPLETED");
	CHECK_INT(sel[0]->exit_code, 0);
	free(sel);
	/* "CANCELLED by 1001" is CANCELLED */
	slurm_select(jobs, n, "40", &sel, &ns);
	CHECK_INT(ns, 1);
	CHECK_STR(sel[0]->state, "CANCELLED");
	free(sel);
	/* the array mid-way: each task once, squeue's pending rest, not sacct's stale one */
	slurm_select(jobs, n, "41", &sel, &ns);
	CHECK_INT(ns, 5);
	CHECK(find(sel, ns, "41_[4-5%2]") != NULL);
	CHECK(find(sel, ns, "41_[2-5%2]") == NULL);
	CHECK(find(sel, ns, "41_0") && find(sel, ns, "41_0")->from_sacct);
	CHECK(find(sel, ns, "41_2") && !find(sel, ns, "41_2")->from_sacct);
	CHECK(find(sel, ns, "41_3") && streq(find(sel, ns, "41_3")->state, "RUNNING"));
	free(sel);
	/* one task */
	slurm_select(jobs, n, "41_1", &sel, &ns);
	CHECK_INT(ns, 1);
	CHECK_STR(sel[0]->id, "41_1");
	CHECK_STR(sel[0]->state, "COMPLETED");
	free(sel);
	/* unknown */
	slurm_select(jobs, n, "99", &sel, &ns);
	CHECK_INT(ns, 0);
	free(sel);
	slurm_jobs_free(jobs, n);
	free(out);

	/* squeue only (accounting off): its finished row is the answer */
	slurm_parse_status("7|COMPLETED|0:01|UNLIMITED|node1|None\ndispatch-sacct\n", &jobs, &n);
	slurm_select(jobs, n, "7", &sel, &ns);
	CHECK_INT(ns, 1);
	CHECK_STR(sel[0]->state, "COMPLETED");
	free(sel);
	slurm_jobs_free(jobs, n);
	/* sacct only (the job left the controller): even its active-looking rows */
	slurm_parse_status("Last login: today\ndispatch-sacct\n8|RUNNING|00:00:01|UNLIMITED|n1|0:0|None\n", &jobs, &n);
	slurm_select(jobs, n, "8", &sel, &ns);
	CHECK_INT(ns, 1);
	free(sel);
	slurm_jobs_free(jobs, n);
	/* an array whose record sacct has not split into tasks yet: the tasks only */
	slurm_parse_status("114_0|COMPLETED|0:01|UNLIMITED|node1|None\n"
			   "114_1|COMPLETED|0:01|UNLIMITED|node1|None\n"
			   "dispatch-sacct\n114|COMPLETED|00:00:01||node2|0:0|None\n", &jobs, &n);
	slurm_select(jobs, n, "114", &sel, &ns);
	CHECK_INT(ns, 2);
	CHECK(find(sel, ns, "114") == NULL);
	free(sel);
	slurm_jobs_free(jobs, n);
	/* a job that ended a moment ago: squeue has its end, sacct still says RUNNING
	 * (accounting lags): squeue's end is the answer, not "known to neither" */
	slurm_parse_status("235|COMPLETED|0:00|UNLIMITED|node1|None\ndispatch-squeue-exit 0\n"
			   "dispatch-sacct\n235|RUNNING|00:00:00|UNLIMITED|node1|0:0|None\n"
			   "dispatch-sacct-exit 0\n", &jobs, &n);
	slurm_select(jobs, n, "235", &sel, &ns);
	CHECK_INT(ns, 1);
	CHECK(ns == 1 && streq(sel[0]->state, "COMPLETED") && !sel[0]->from_sacct);
	free(sel);
	slurm_jobs_free(jobs, n);
	/* the same for one task of an array: every task is reported */
	slurm_parse_status("208_2|COMPLETED|0:01|UNLIMITED|node2|None\n"
			   "208_1|COMPLETED|0:01|UNLIMITED|node2|None\n"
			   "208_0|COMPLETED|0:01|UNLIMITED|node1|None\n"
			   "dispatch-sacct\n208_0|COMPLETED|00:00:01|UNLIMITED|node1|0:0|None\n"
			   "208_1|COMPLETED|00:00:01|UNLIMITED|node2|0:0|None\n"
			   "208_2|RUNNING|00:00:01|UNLIMITED|node2|0:0|None\n", &jobs, &n);
	slurm_select(jobs, n, "208", &sel, &ns);
	CHECK_INT(ns, 3);
	CHECK(find(sel, ns, "208_2") && streq(find(sel, ns, "208_2")->state, "COMPLETED"));
	CHECK(find(sel, ns, "208_0") && find(sel, ns, "208_0")->from_sacct);
	free(sel);
	slurm_jobs_free(jobs, n);
	/* a reason with '|' stays whole; short lines are skipped */
	slurm_parse_status("8|PENDING|0:00|1:00|n|a|b\n9|RUNNING\n", &jobs, &n);
	CHECK_INT(n, 1);
	CHECK_STR(jobs[0].reason, "a|b");
	slurm_jobs_free(jobs, n);
}

static void test_matches(void)
{
	CHECK(slurm_id_matches("12", "12"));
	CHECK(slurm_id_matches("12", "12_3"));
	CHECK(slurm_id_matches("12", "12_[4-9]"));
	CHECK(!slurm_id_matches("12", "123"));
	CHECK(!slurm_id_matches("12_3", "12_4"));
	CHECK(!slurm_id_matches("12_3", "12"));
	CHECK(slurm_state_active("PENDING") && slurm_state_active("COMPLETING"));
	CHECK(!slurm_state_active("COMPLETED") && !slurm_state_active("CANCELLED"));
}

static const char token[] = "dsp-00112233445566778899aabbccddeeff";

static void check_lookup(const char *name, int want_status, const char *want_id)
{
	char *out = fixture(name);
	struct slurm_lookup lk = SLURM_LOOKUP_INIT;
	slurm_parse_lookup(out, token, &lk);
	CHECK_INT(lk.sbatch_status, want_status);
	if (want_id)
		CHECK_STR(lk.job_id, want_id);
	else
		CHECK(lk.job_id == NULL);
	if (want_status > 0)
		CHECK_CONTAINS(lk.err.buf, "Invalid partition name specified");
	slurm_lookup_release(&lk);
	free(out);
}

static void test_lookup(void)
{
	check_lookup("lookup-status-file.out", 0, "4400");
	check_lookup("lookup-squeue.out", -1, "4401");
	check_lookup("lookup-sacct.out", -1, "4402");
	check_lookup("lookup-refused.out", 1, NULL);
	check_lookup("lookup-none.out", -1, NULL);
}

/* The status command run by sh with squeue and sacct as shell functions: squeue
 * prints rows (exit status squeue_exit), sacct says which ids it was asked about. */
static char *status_run(const char *rows, int squeue_exit, char **ids)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "squeue() { printf '%s'; return %d; }\n"
		    "sacct() { echo \"sacct-asked $5\"; }\n", rows, squeue_exit);
	slurm_status_command(&sb, ids);
	setenv("DSQ_SCRIPT", sb.buf, 1);
	strbuf_release(&sb);
	return unit_output("sh -c \"$DSQ_SCRIPT\"", NULL);
}

/* sacct (slurmdbd: the slow part) only for what squeue did not answer */
static void test_status_sacct_needed(void)
{
	char *ids[] = { "12", "13_4", "14", "15", "16", "17", NULL };
	_cleanup_free_ char *out = status_run("12|RUNNING|1:00|10:00|n1|None\n"
					      "13_4|COMPLETED|0:05|10:00|n1|None\n"
					      "14|FAILED|0:01|10:00|n1|NonZeroExitCode\n"
					      "15_1|COMPLETED|0:05|10:00|n1|None\n"
					      "17|PENDING|0:00|10:00||Priority\n", 0, ids);
	/* 12 running, 13_4 completed, 17 pending: answered; 14 failed (its exit
	 * code), 15 an array (tasks may have left), 16 not listed: sacct */
	CHECK_CONTAINS(out, "17|PENDING|0:00|10:00||Priority\ndispatch-squeue-exit 0\n");
	CHECK_CONTAINS(out, "dispatch-sacct\nsacct-asked 14,15,16\ndispatch-sacct-exit 0\n");
	struct slurm_job *jobs;
	size_t n;
	slurm_parse_status(out, &jobs, &n);
	CHECK_INT(n, 5);
	CHECK_STR(jobs[1].state, "COMPLETED");
	CHECK_INT(jobs[1].exit_code, 0); /* COMPLETED: every process exited 0 */
	CHECK_INT(jobs[2].exit_code, -1); /* FAILED: sacct's to say */
	slurm_jobs_free(jobs, n);

	char *all[] = { "12", "13_4", NULL };
	free(out);
	out = status_run("12|RUNNING|1:00|10:00|n1|None\n13_4|COMPLETING|0:05|10:00|n1|None\n", 0, all);
	CHECK_CONTAINS(out, "dispatch-sacct\ndispatch-sacct-exit 0\n");
	CHECK(strstr(out, "sacct-asked") == NULL);

	/* squeue failed (every id left the controller, or no controller): sacct for all */
	free(out);
	out = status_run("", 1, all);
	CHECK_CONTAINS(out, "dispatch-squeue-exit 1\ndispatch-sacct\nsacct-asked 12,13_4\n");
}

static void test_commands(void)
{
	struct strbuf sb = STRBUF_INIT;
	char *ids[] = { "12", "13_4", NULL };
	slurm_status_command(&sb, ids);
	CHECK_CONTAINS(sb.buf, "dsq_ids='12,13_4'\ndsq_q=$(squeue -h -t all -j \"$dsq_ids\"");
	CHECK_CONTAINS(sb.buf, "sacct -n -P -X -j \"$dsq_ids\"");
	CHECK_SH_N("status command parses", sb.buf);
	strbuf_reset(&sb);
	struct slurm_sbatch call = { .workdir = "/w/it's", .stage_dir = "/w/.dispatch/x y",
				     .token = token };
	slurm_submit_command(&sb, &call);
	CHECK_CONTAINS(sb.buf, "--comment='dsp-");
	CHECK_CONTAINS(sb.buf, "'/w/it'\\''s'");
	CHECK_CONTAINS(sb.buf, "r=\"$d\"/'sbatch'\n");
	CHECK_CONTAINS(sb.buf, " \"$d/sbatch.sh\" >\"$r.out\"");
	CHECK_SH_N("submit command parses", sb.buf);
	/* sbatch's exit status is reported on a line of its own, after its answer */
	CHECK_CONTAINS(sb.buf, "cat \"$r.out\"\ncat \"$r.err\" >&2\n"
			       "echo \"dispatch-sbatch-exit $st\"\n");
	/* one array of a sweep: its task ids and throttle, after the array before it,
	 * the sweep index of its task 0 as the script's argument, files of its own */
	strbuf_reset(&sb);
	call = (struct slurm_sbatch){ .workdir = "/w", .stage_dir = "/w/s", .token = token,
				      .record = "sbatch-2", .array = "0-3%2",
				      .dependency = "afterok:7,afterany:4243", .arg = "8" };
	slurm_submit_command(&sb, &call);
	CHECK_CONTAINS(sb.buf, "r=\"$d\"/'sbatch-2'\n");
	CHECK_CONTAINS(sb.buf, "--comment='dsp-00112233445566778899aabbccddeeff' --array='0-3%2' "
			       "--dependency='afterok:7,afterany:4243' \"$d/sbatch.sh\" '8' >\"$r.out\"");
	CHECK_SH_N("array submit command parses", sb.buf);
	strbuf_reset(&sb);
	slurm_sbatch_options(&sb, &(struct slurm_sbatch){ .array = "0-9" });
	CHECK_STR(sb.buf, " --array='0-9'");
	CHECK_INT(slurm_parse_exit("4242\ndispatch-sbatch-exit 0\n", "sbatch"), 0);
	CHECK_INT(slurm_parse_exit("dispatch-sbatch-exit 1\n", "sbatch"), 1);
	CHECK_INT(slurm_parse_exit("4242\n", "sbatch"), -1);
	strbuf_reset(&sb);
	slurm_lookup_command(&sb, "/w/.dispatch/$x", NULL, token);
	CHECK_CONTAINS(sb.buf, "'/w/.dispatch/$x'");
	CHECK_CONTAINS(sb.buf, "r=\"$d\"/'sbatch'\nt=");
	CHECK_CONTAINS(sb.buf, "if [ -f \"$r.status\" ]; then\n");
	CHECK_SH_N("lookup command parses", sb.buf);
	strbuf_reset(&sb);
	slurm_lookup_command(&sb, "/w/s", "sbatch-2", token);
	CHECK_CONTAINS(sb.buf, "r=\"$d\"/'sbatch-2'\nt=");
	strbuf_reset(&sb);
	slurm_cancel_command(&sb, ids);
	CHECK_STR(sb.buf, "scancel '12' '13_4'\necho \"dispatch-scancel-exit $?\"\n");
	CHECK_INT(slurm_parse_exit("dispatch-scancel-exit 1\n", "scancel"), 1);
	strbuf_release(&sb);
}

/* MaxArraySize: scontrol show config of each release's test cluster (SLURM's default,
 * 1001), the one line the submission asks for as its marker line, and what is not it. */
static void test_max_array_size(void)
{
	static const char *const rel[] = { "config-22.05.out", "config-24.11.out", "config-26.05.out" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char *out = unit_fixture("slurm", rel[i]);
		CHECK_INT(slurm_parse_max_array_size(out), 1001);
		free(out);
	}
	CHECK_INT(slurm_parse_max_array_size("dispatch-max-array MaxArraySize            = 4\n"), 4);
	CHECK_INT(slurm_parse_max_array_size("x\ndispatch-max-array MaxArraySize = 4000001\r\n"),
		  4000001);
	CHECK_INT(slurm_parse_max_array_size("dispatch-max-array \n"), -1); /* scontrol failed */
	CHECK_INT(slurm_parse_max_array_size("MaxArraySize = many\n"), -1);
	CHECK_INT(slurm_parse_max_array_size("MaxArraySizeX = 4\n"), -1);
	CHECK_INT(slurm_parse_max_array_size("MaxJobCount = 4\n"), -1);
	CHECK_INT(slurm_parse_max_array_size(""), -1);
	struct strbuf sb = STRBUF_INIT;
	slurm_max_array_command(&sb);
	CHECK_STR(sb.buf, "printf 'dispatch-max-array %s\\n' "
			  "\"$(scontrol show config 2>/dev/null | grep '^MaxArraySize')\"\n");
	CHECK_SH_N("max array command parses", sb.buf);
	strbuf_release(&sb);
}

int main(void)
{
	test_sbatch();
	test_status();
	test_matches();
	test_lookup();
	test_commands();
	test_status_sacct_needed();
	test_max_array_size();
	return unit_done();
}
