/* SPDX-License-Identifier: MIT */
/*
 * lib/submission: what is decided before anything is sent (token, stage, where the
 * code goes, once), and the recovery after a lost connection, settled on the captured
 * answers of the token look-up (tests/unit/data/slurm/lookup-*.out) and of a plain
 * host's pid look-up.
 */
#include <stdlib.h>
#include <string.h>

#include "base/marker.h"
#include "inventory/inventory.h"
#include "inventory/jobspec.h"
#include "sched/plain/plainjob.h"
#include "submission.h"
#include "unit.h"

static const char token[] = "dsp-00112233445566778899aabbccddeeff";

static void check_settle(const char *name, enum submission_state want, const char *want_id,
			 const char *want_err)
{
	char *out = unit_fixture("slurm", name);
	char *id = NULL;
	int sbatch_status = -2;
	struct strbuf err = STRBUF_INIT;
	CHECK_INT(submission_settle_slurm(out, token, &id, &sbatch_status, &err), want);
	if (want_id)
		CHECK_STR(id, want_id);
	else
		CHECK(id == NULL);
	if (want_err)
		CHECK_CONTAINS(err.buf, want_err);
	else
		CHECK_INT((int)err.len, 0);
	if (want == SUBMISSION_REFUSED)
		CHECK(sbatch_status > 0);
	free(id);
	strbuf_release(&err);
	free(out);
}

static void test_settle_slurm(void)
{
	/* sbatch's recorded answer wins; else the token in squeue, then in sacct */
	check_settle("lookup-status-file.out", SUBMISSION_SUBMITTED, "4400", NULL);
	check_settle("lookup-squeue.out", SUBMISSION_SUBMITTED, "4401", NULL);
	check_settle("lookup-sacct.out", SUBMISSION_SUBMITTED, "4402", NULL);
	/* sbatch refused it: nothing runs, and its words are kept for the user */
	check_settle("lookup-refused.out", SUBMISSION_REFUSED, NULL,
		     "Invalid partition name specified");
	/* nothing found: unknown, never "not submitted" */
	check_settle("lookup-none.out", SUBMISSION_UNKNOWN, NULL, NULL);
}

static void test_settle_plain(void)
{
	long pid = 0;
	struct strbuf cmd = STRBUF_INIT;
	plainjob_pid_command(&cmd, "/home/u/.dispatch/stage 1");
	CHECK_CONTAINS(cmd.buf, "'/home/u/.dispatch/stage 1'/pid");
	CHECK_CONTAINS(cmd.buf, "printf 'dispatch-pid %s\\n'");
	CHECK_SH_N("pid look-up parses", cmd.buf);
	strbuf_release(&cmd);
	CHECK_INT(submission_settle_plain("motd\ndispatch-pid 4242\n", &pid), SUBMISSION_SUBMITTED);
	CHECK_INT(pid, 4242);
	/* the pid file is not there (yet): the job did not start, or not yet */
	CHECK_INT(submission_settle_plain("dispatch-pid \n", &pid), SUBMISSION_UNKNOWN);
	CHECK_INT(submission_settle_plain("", &pid), SUBMISSION_UNKNOWN);
}

/* The submit command's own answer: what is certain (submitted, refused) and what
 * only a look-up by the token can settle. A lost answer taken for a refusal would
 * drop the ledger row of a job that runs, and the user would submit it twice. */
static void test_answers(void)
{
	char *id = NULL;
	int st = -2;
	long pid = -2;
	CHECK_INT(submission_sbatch_answer("4242\ndispatch-sbatch-exit 0\n", &id, &st),
		  SUBMISSION_SUBMITTED);
	CHECK_STR(id, "4242");
	CHECK_INT(st, 0);
	free(id);
	CHECK_INT(submission_sbatch_answer("4243;hpc\ndispatch-sbatch-exit 0\n", &id, &st),
		  SUBMISSION_SUBMITTED);
	CHECK_STR(id, "4243");
	free(id);
	/* sbatch said no: certain, nothing runs */
	CHECK_INT(submission_sbatch_answer("dispatch-sbatch-exit 1\n", &id, &st), SUBMISSION_REFUSED);
	CHECK(id == NULL);
	CHECK_INT(st, 1);
	/* the shell died before it reported sbatch's status: sbatch may have submitted it */
	CHECK_INT(submission_sbatch_answer("4244\n", &id, &st), SUBMISSION_UNKNOWN);
	CHECK_INT(st, -1);
	CHECK(id == NULL);
	CHECK_INT(submission_sbatch_answer("", &id, &st), SUBMISSION_UNKNOWN);
	/* status 0 and no job id: look it up too */
	CHECK_INT(submission_sbatch_answer("dispatch-sbatch-exit 0\n", &id, &st), SUBMISSION_UNKNOWN);
	CHECK_INT(st, 0);
	CHECK(id == NULL);

	CHECK_INT(submission_start_answer(0, "dispatch-pid 4242\n", &pid), SUBMISSION_SUBMITTED);
	CHECK_INT(pid, 4242);
	CHECK_INT(submission_start_answer(1, "dispatch-pid 4242\n", &pid), SUBMISSION_REFUSED);
	/* started, and its pid lost: it may run */
	CHECK_INT(submission_start_answer(0, "", &pid), SUBMISSION_UNKNOWN);
	CHECK_INT(submission_start_answer(0, "dispatch-pid \n", &pid), SUBMISSION_UNKNOWN);
}

static void test_prepare(void)
{
	struct inv_cluster c = { .name = "c", .work = "/w", .share = "/w/.dispatch" };
	struct inv_host h = { .name = "login", .type = INV_HOST_SLURM, .cluster = &c };
	struct jobspec spec = { 0 };
	struct dp_error err = { 0 };
	jobspec_set(&spec, "job-name", "train", NULL, &err);
	char *argv[] = { "python", "train.py", NULL };
	jobspec_set_command_argv(&spec, argv, 2);
	static unsigned char code[SUBMISSION_EMBED_MAX + 1] = { 0x1f, 0x8b, 8 }; /* gzip */
	const char *sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct submission_job job = { .spec = &spec, .host = &h, .code = code,
				      .code_len = SUBMISSION_EMBED_MAX, .code_sha256 = sha };

	/* up to the limit, inside the bootstrap */
	struct submission sub;
	CHECK_INT(submission_prepare(&job, &sub, &err), 0);
	CHECK(!sub.code_uploaded);
	CHECK(sub.js.bootstrap && strstr(sub.js.bootstrap, sha) == NULL);
	CHECK(strncmp(sub.token, "dsp-", 4) == 0);
	CHECK(strncmp(sub.stage, "train-", 6) == 0);
	CHECK_CONTAINS(sub.bootstrap_path, sub.stage);
	CHECK(strncmp(sub.bootstrap_path, "/w/.dispatch/", 13) == 0);
	submission_release(&sub);

	/* past it, read from {share}/code/SHA256.tar.gz, named in the script */
	job.code_len = SUBMISSION_EMBED_MAX + 1;
	CHECK_INT(submission_prepare(&job, &sub, &err), 0);
	CHECK(sub.code_uploaded);
	CHECK(sub.js.bootstrap && strstr(sub.js.bootstrap, "/w/.dispatch/code/0123456789abcdef"));
	submission_release(&sub);

	/* no content hash (submit --payload): always inside, whatever its size */
	job.code_sha256 = NULL;
	CHECK_INT(submission_prepare(&job, &sub, &err), 0);
	CHECK(!sub.code_uploaded);
	submission_release(&sub);
	jobspec_release(&spec);
}

int main(void)
{
	test_settle_slurm();
	test_settle_plain();
	test_answers();
	test_prepare();
	return unit_done();
}
