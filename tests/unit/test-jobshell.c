/* SPDX-License-Identifier: MIT */
/* lib/jobs/jobshell: the node a shell goes to, picked from a running two-node job
 * as scontrol -d shows it (captured on the test cluster, SLURM 22.05), the srun
 * line, and the plain-host command run for real in a local sh: it starts in the
 * recorded work dir with DISPATCH_JOB_ID, and the words of a command arrive as
 * they were given (spaces, quotes, $, globs). */
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "gpu/gpu_top.h"
#include "sched/slurm/slurm_top.h"
#include "jobs/jobshell.h"
#include "unit.h"

static void test_pick_node(void)
{
	char *text = unit_fixture("slurm", "shell-job-2nodes-22.05.out");
	struct gpu_top_job j;
	CHECK_INT(gpu_top_parse_job(text, &j), 0);
	CHECK_STR(j.state, "RUNNING");
	CHECK_STR(jobshell_pick_node(&j, NULL), "node1");
	CHECK_STR(jobshell_pick_node(&j, "1"), "node1");
	CHECK_STR(jobshell_pick_node(&j, "2"), "node2");
	CHECK_STR(jobshell_pick_node(&j, "node2"), "node2");
	CHECK(jobshell_pick_node(&j, "3") == NULL);
	CHECK(jobshell_pick_node(&j, "0") == NULL);
	CHECK(jobshell_pick_node(&j, "node3") == NULL);
	CHECK(jobshell_pick_node(&j, "") == NULL);
	CHECK(jobshell_pick_node(&j, "99999999999999999999") == NULL);
	gpu_top_job_release(&j);
	free(text);
}

static void test_slurm_command(void)
{
	struct strbuf sb = STRBUF_INIT;
	jobshell_slurm_command(&sb, "11", "node2", true, NULL);
	CHECK_STR(sb.buf, "exec srun --jobid='11' --overlap -N1 -n1 -w 'node2' --pty \"${SHELL:-/bin/sh}\" -l");
	strbuf_reset(&sb);
	char *argv[] = { "sh", "-c", "echo \"$1\"", "sh", "it's $HOME", NULL };
	jobshell_slurm_command(&sb, "11", "node1", false, argv);
	CHECK_STR(sb.buf, "exec srun --jobid='11' --overlap -N1 -n1 -w 'node1' 'sh' '-c' "
			  "'echo \"$1\"' 'sh' 'it'\\''s $HOME'");
	CHECK_SH_N("the srun line is valid sh", sb.buf);
	strbuf_release(&sb);
}

static char *run_sh(const char *script, int *status)
{
	char path[] = "/tmp/dispatch-test-jobshell-sh.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0 || write(fd, script, strlen(script)) != (ssize_t)strlen(script))
		exit(1);
	close(fd);
	char *cmd = xasprintf("cd / && sh %s 2>&1", path);
	char *out = unit_output(cmd, status);
	unlink(path);
	free(cmd);
	return out;
}

static void test_plain_command(const char *dir)
{
	char *stage = xasprintf("%s/stage 'x'", dir);
	char *work = xasprintf("%s/work dir $w", dir);
	mkdir(stage, 0700);
	mkdir(work, 0700);
	char *rec = xasprintf("%s/workdir", stage);
	FILE *f = fopen(rec, "w");
	fprintf(f, "%s\n", work);
	fclose(f);

	char *argv[] = { "sh", "-c", "echo \"$PWD|$DISPATCH_JOB_ID\"; printf '%s|' \"$@\"; exit 7",
			 "sh", "a b", "$HOME", "it's", "*", NULL };
	struct strbuf sb = STRBUF_INIT;
	jobshell_plain_command(&sb, "train-1", stage, argv);
	int st;
	char *out = run_sh(sb.buf, &st);
	char *want = xasprintf("%s|train-1\na b|$HOME|it's|*|", work);
	CHECK_STR(out, want);
	CHECK_INT(st, 7);
	free(out);
	free(want);

	/* a job launched before the work dir was recorded: a note, and it still runs */
	unlink(rec);
	strbuf_reset(&sb);
	char *pwd[] = { "pwd", NULL };
	jobshell_plain_command(&sb, "train-1", stage, pwd);
	out = run_sh(sb.buf, &st);
	CHECK_CONTAINS(out, "the job recorded no work dir");
	CHECK_CONTAINS(out, "starting in /\n/\n");
	CHECK_INT(st, 0);
	free(out);
	strbuf_release(&sb);
	rmdir(stage);
	rmdir(work);
	free(rec);
	free(stage);
	free(work);
}

int main(void)
{
	char tmpl[] = "/tmp/dispatch-test-jobshell.XXXXXX";
	char *dir = mkdtemp(tmpl);
	if (!dir)
		return 1;
	test_pick_node();
	test_slurm_command();
	test_plain_command(dir);
	rmdir(dir);
	return unit_done();
}
