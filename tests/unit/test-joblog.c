/* SPDX-License-Identifier: MIT */
/* dispatch logs: where a job writes (scontrol show job, captured on the test cluster,
 * and sbatch patterns filled in for ledger jobs), and the remote commands of
 * lib/jobs/joblog.h run here in sh: cat, and following a file while a plain-host job's
 * process group runs or while a stand-in squeue says the job runs. */
#include <signal.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jobs/joblog.h"
#include "remote/remote.h"
#include "sched/slurm/slurm.h"
#include "unit.h"

static char *fixture(const char *name)
{
	return unit_fixture("slurm", name);
}

static void paths(const char *name, struct slurm_paths *p)
{
	_cleanup_free_ char *text = fixture(name);
	slurm_parse_job_paths(text ? text : "", p);
}

static void test_paths(void)
{
	struct slurm_paths p;
	paths("paths-pattern-22.05.out", &p);
	CHECK_INT(p.records, 1);
	CHECK_STR(p.user, "dispatch-test");
	CHECK_STR(p.out, "/tmp/jwb out dir/jwbpath a|b-16.out");
	CHECK_STR(p.err, "/tmp/jwb out dir/dispatch-test-16.err");
	slurm_paths_release(&p);

	/* a pending array not yet split: no one path, whatever StdOut= says */
	paths("paths-array-pending-22.05.out", &p);
	CHECK(p.records > 1);
	slurm_paths_release(&p);

	paths("paths-array-task-22.05.out", &p);
	CHECK_INT(p.records, 1);
	CHECK_STR(p.out, "/tmp/jwb/17_1.out");
	CHECK_STR(p.err, "/tmp/jwb/17_1.out");
	slurm_paths_release(&p);

	paths("paths-unknown-22.05.out", &p);
	CHECK_INT(p.records, 0);
	CHECK(p.out == NULL && p.err == NULL);
	CHECK_STR(p.user, "dispatch-test");
	slurm_paths_release(&p);

	/* the command asks for the id quoted */
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	slurm_job_paths_command(&sb, "12_3");
	CHECK_CONTAINS(sb.buf, "scontrol show job '12_3'");
}

static void test_patterns(void)
{
	struct {
		const char *pattern, *id, *task, *name, *user, *want;
	} cases[] = {
		{ "slurm-%j.out", "12", NULL, "n", "u", "slurm-12.out" },
		{ "/l/%x-%j.out", "12", NULL, "a b|c", "u", "/l/a b|c-12.out" },
		{ "/l/%A_%a.out", "12", "3", "n", "u", "/l/12_3.out" },
		{ "/l/%A_%a.out", "12", NULL, "n", "u", "/l/12_%a.out" },
		{ "/home/%u/%%j-%j", "7", NULL, "n", "ann", "/home/ann/%j-7" },
		{ "/l/%N-%t-%x", "7", NULL, NULL, NULL, "/l/%N-%t-%x" },
		{ "trailing%", "7", NULL, "n", "u", "trailing%" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *got = slurm_expand_pattern(cases[i].pattern, cases[i].id, cases[i].task,
								cases[i].name, cases[i].user);
		CHECK_STR(got, cases[i].want);
	}
}

/* ---- the remote commands, run here ---- */

static char tmpdir[] = "/tmp/test-joblog.XXXXXX";

static void write_file(const char *path, const char *text, mode_t mode)
{
	FILE *fp = fopen(path, "w");
	if (!fp)
		return;
	fputs(text, fp);
	fclose(fp);
	chmod(path, mode);
}

/* Starts `sh -c cmd` with the command's text in a file; PATH starts with tmpdir. */
static FILE *start(const struct strbuf *cmd)
{
	_cleanup_free_ char *file = xasprintf("%s/cmd.sh", tmpdir);
	write_file(file, cmd->buf, 0600);
	_cleanup_free_ char *sh = xasprintf("PATH='%s':\"$PATH\" sh '%s'", tmpdir, file);
	return popen(sh, "r");
}

static int finish(FILE *fp, struct strbuf *out)
{
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
		strbuf_add(out, buf, n);
	int st = pclose(fp);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cat(void)
{
	_cleanup_free_ char *path = xasprintf("%s/it's a log", tmpdir);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT, out2 = STRBUF_INIT;
	write_file(path, "one\ntwo $HOME\n", 0644);
	joblog_cat_command(&cmd, path);
	FILE *fp = start(&cmd);
	CHECK_INT(finish(fp, &out), 0);
	CHECK_STR(out.buf, "one\ntwo $HOME\n");

	strbuf_reset(&cmd);
	_cleanup_free_ char *missing = xasprintf("%s/no such", tmpdir);
	joblog_cat_command(&cmd, missing);
	fp = start(&cmd);
	CHECK_INT(finish(fp, &out2), JOBLOG_NO_FILE);
}

/* The last lines of a failed job's log, each cut at 1000 bytes; a missing file. */
static void test_tail(void)
{
	_cleanup_free_ char *path = xasprintf("%s/it's a tail", tmpdir);
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT, cmd = STRBUF_INIT, want = STRBUF_INIT;
	for (int i = 1; i <= 30; i++)
		strbuf_addf(&text, "line %d $HOME\n", i);
	for (int i = 0; i < 1500; i++)
		strbuf_addch(&text, 'x');
	strbuf_addch(&text, '\n');
	write_file(path, text.buf, 0644);
	_cleanup_free_ char *missing = xasprintf("%s/no such", tmpdir);
	char *paths[] = { path, missing };
	joblog_tails_command(&cmd, paths, 2, JOBLOG_TAIL_LINES);
	struct remote_reply rr = REMOTE_REPLY_INIT;
	CHECK_INT(finish(start(&cmd), &rr.out), 0);
	remote_reply_parse(&rr);
	_cleanup_free_ char *out = NULL, *err = NULL, *out2 = NULL, *err2 = NULL;
	CHECK_INT(joblog_tails_take(&rr, 0, &out, &err), 0);
	for (int i = 12; i <= 30; i++)
		strbuf_addf(&want, "line %d $HOME\n", i);
	for (int i = 0; i < 1000; i++)
		strbuf_addch(&want, 'x');
	strbuf_addch(&want, '\n');
	CHECK_STR(out, want.buf);
	CHECK_INT(joblog_tails_take(&rr, 1, &out2, &err2), -1);
	CHECK_STR(err2, "the job wrote no such file");
	remote_reply_release(&rr);
}

/* Several tails in one script (jobs.c's detail): each job's lines whole, a log whose
 * lines read as the script's own marks read as lines, a missing file and one tail
 * cannot read each said as one tail would say them; a NULL path is skipped. */
static void test_tails(void)
{
	_cleanup_free_ char *a = xasprintf("%s/it's a tail", tmpdir);
	_cleanup_free_ char *b = xasprintf("%s/hostile", tmpdir);
	_cleanup_free_ char *c = xasprintf("%s/no such", tmpdir);
	_cleanup_free_ char *d = xasprintf("%s/a dir", tmpdir);
	write_file(b, "dispatch-tail-exit 104\ndispatch-tail-job 3\nlast, no newline", 0644);
	CHECK_INT(mkdir(d, 0755), 0);
	char *paths[] = { a, NULL, b, c, d };
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	struct remote_reply rr = REMOTE_REPLY_INIT;
	joblog_tails_command(&cmd, paths, 5, JOBLOG_TAIL_LINES);
	CHECK_INT(finish(start(&cmd), &rr.out), 0);
	remote_reply_parse(&rr);
	char *text, *error;
	CHECK_INT(joblog_tails_take(&rr, 0, &text, &error), 0);
	CHECK_CONTAINS(text, "line 12 $HOME\n");
	CHECK(!strstr(text, "line 11 "));
	CHECK(error == NULL);
	free(text);
	CHECK_INT(joblog_tails_take(&rr, 1, &text, &error), -1);  /* skipped: never asked */
	CHECK_STR(error, "no answer for its log");
	free(error);
	CHECK_INT(joblog_tails_take(&rr, 2, &text, &error), 0);
	CHECK_STR(text, "dispatch-tail-exit 104\ndispatch-tail-job 3\nlast, no newline\n");
	free(text);
	CHECK_INT(joblog_tails_take(&rr, 3, &text, &error), -1);
	CHECK_STR(error, "the job wrote no such file");
	free(error);
	CHECK_INT(joblog_tails_take(&rr, 4, &text, &error), -1);
	CHECK_CONTAINS(error, "cannot read it (exit status 0): tail: ");
	CHECK_CONTAINS(error, "Is a directory");
	free(error);
	remote_reply_release(&rr);
}

/* A plain-host job: a process group that writes a line, waits for the go file (the
 * follower has shown the first line), writes two more and records its exit status. */
static void test_follow_plain(void)
{
	_cleanup_free_ char *stage = xasprintf("%s/stage", tmpdir);
	_cleanup_free_ char *log = xasprintf("%s/stage/log", tmpdir);
	_cleanup_free_ char *go = xasprintf("%s/go", tmpdir);
	mkdir(stage, 0700);
	pid_t pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		_cleanup_free_ char *script = xasprintf(
			"echo first >'%s'; i=0; while [ ! -e '%s' ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; "
			"echo second >>'%s'; echo third >>'%s'; echo 0 >'%s/exit_status'",
			log, go, log, log, stage);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	joblog_follow_plain_command(&cmd, log, stage, pid);
	FILE *fp = start(&cmd);
	char line[256] = "";
	/* the first line comes while the job still runs (it waits for us) */
	CHECK(fgets(line, sizeof(line), fp) != NULL);
	CHECK_STR(line, "first\n");
	_cleanup_free_ char *exit_status = xasprintf("%s/exit_status", stage);
	CHECK(access(exit_status, F_OK) != 0);
	write_file(go, "", 0644);
	int st = finish(fp, &out);
	CHECK_INT(st, 0);
	CHECK_STR(out.buf, "second\nthird\n");
	waitpid(pid, NULL, 0);
}

/* A SLURM job: the stand-in squeue says RUNNING while the file running exists. With
 * gnu false, a stand-in tail hides GNU's --version (the other tails' path). */
static void test_follow_slurm(bool gnu)
{
	_cleanup_free_ char *tail = xasprintf("%s/tail", tmpdir);
	_cleanup_free_ char *real_tail = NULL;
	FILE *which = popen("command -v tail", "r");
	char tail_path[512] = "";
	if (which) {
		if (fgets(tail_path, sizeof(tail_path), which))
			tail_path[strcspn(tail_path, "\n")] = '\0';
		pclose(which);
	}
	real_tail = xasprintf("#!/bin/sh\n[ \"$1\" = --version ] && { echo 'tail (not GNU)'; exit 0; }\n"
			      "exec '%s' \"$@\"\n", tail_path);
	if (gnu)
		unlink(tail);
	else
		write_file(tail, real_tail, 0755);
	_cleanup_free_ char *log = xasprintf("%s/slurm log", tmpdir);
	_cleanup_free_ char *running = xasprintf("%s/running", tmpdir);
	_cleanup_free_ char *squeue = xasprintf("%s/squeue", tmpdir);
	_cleanup_free_ char *args = xasprintf("%s/squeue.args", tmpdir);
	_cleanup_free_ char *script = xasprintf(
		"#!/bin/sh\necho \"$*\" >'%s'\nif [ -e '%s' ]; then echo RUNNING; else echo COMPLETED; fi\n",
		args, running);
	write_file(squeue, script, 0755);
	write_file(running, "", 0644);
	write_file(log, "step 1\n", 0644);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, out = STRBUF_INIT;
	joblog_follow_slurm_command(&cmd, log, "42_1");
	FILE *fp = start(&cmd);
	char line[256] = "";
	CHECK(fgets(line, sizeof(line), fp) != NULL);
	CHECK_STR(line, "step 1\n");
	/* the job writes more, then ends */
	FILE *lf = fopen(log, "a");
	if (lf) {
		fputs("step 2\n", lf);
		fclose(lf);
	}
	unlink(running);
	CHECK_INT(finish(fp, &out), 0);
	CHECK_STR(out.buf, "step 2\n");
	_cleanup_free_ char *asked = read_file(args, NULL);
	CHECK_CONTAINS(asked, "-j 42_1");

	/* no file and the job gone: the no-file status */
	_cleanup_free_ char *missing = xasprintf("%s/never", tmpdir);
	strbuf_reset(&cmd);
	strbuf_reset(&out);
	joblog_follow_slurm_command(&cmd, missing, "43");
	fp = start(&cmd);
	CHECK_INT(finish(fp, &out), JOBLOG_NO_FILE);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_paths();
	test_patterns();
	if (!mkdtemp(tmpdir)) {
		CHECK(!"mkdtemp");
		return unit_done();
	}
	test_cat();
	test_tail();
	test_tails();
	test_follow_plain();
	test_follow_slurm(true);
	test_follow_slurm(false);
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", tmpdir);
	CHECK_INT(system(rm), 0);
	return unit_done();
}
