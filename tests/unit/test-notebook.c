/* SPDX-License-Identifier: MIT */
/* Notebooks: the job's command, the poll command and its answers (captured on the
 * testbed's hpc and box1, ready and after cancel; and crafted), the token file. */
#include <stdlib.h>
#include <sys/stat.h>

#include "notebook.h"
#include "sched/plain/plainjob.h"
#include "unit.h"

static void poll_fixture(const char *name, bool plain, struct notebook_poll *res)
{
	char *out = unit_fixture("notebook", name);
	CHECK_INT(notebook_parse_poll(out, plain, res), 0);
	free(out);
}

/* The job command, run by bash with a fake jupyter (it prints its runtime directory,
 * leaves a connection file there and exits 3): the directory is a new 0700 one, never
 * /tmp/dispatch-notebook-ID that another user may have made first (job ids are
 * sequential), and it is removed when the server ends. */
static void test_runtime_dir(void)
{
	char tmp[] = "/tmp/dispatch-test-nb.XXXXXX";
	CHECK(mkdtemp(tmp) != NULL);
	char *t = xasprintf("%s/t", tmp), *bin = xasprintf("%s/bin", tmp);
	char *squat = xasprintf("%s/dispatch-notebook-nb-1", t);
	CHECK_INT(mkdir(t, 0700), 0);
	CHECK_INT(mkdir(bin, 0700), 0);
	CHECK_INT(mkdir(squat, 0777), 0);
	CHECK_INT(chmod(squat, 0777), 0);       /* as another user would leave it */
	char *fake = xasprintf("%s/jupyter", bin);
	FILE *f = fopen(fake, "w");
	fputs("#!/bin/sh\n"
	      "case \"$*\" in *--version*) exit 0 ;; esac\n"
	      "echo \"rt=$JUPYTER_RUNTIME_DIR $(ls -ld \"$JUPYTER_RUNTIME_DIR\" | cut -c1-10)\"\n"
	      "echo secret >\"$JUPYTER_RUNTIME_DIR/jpserver-1.json\"\n"
	      "exit 3\n", f);
	fclose(f);
	CHECK_INT(chmod(fake, 0755), 0);
	char *script = xasprintf("%s/job.sh", tmp);
	f = fopen(script, "w");
	fprintf(f, "export TMPDIR='%s' DISPATCH_JOB_ID=nb-1 PATH='%s':$PATH\ncd '%s' || exit 9\n%s",
		t, bin, tmp, notebook_job_command());
	fclose(f);
	char *cmd = xasprintf("bash '%s' 2>/dev/null", script);
	struct strbuf out = STRBUF_INIT;
	char *text = unit_output(cmd, NULL);
	strbuf_adds(&out, text);
	free(text);
	char *want = xasprintf("rt=%s.", squat);
	CHECK_CONTAINS(out.buf, want);          /* dispatch-notebook-nb-1.XXXXXXXX */
	CHECK_CONTAINS(out.buf, " drwx------\n");
	CHECK_CONTAINS(out.buf, "dispatch-notebook-exit 3\n");
	char *used = xasprintf("rt=%s ", squat);
	CHECK(!strstr(out.buf, used));
	char *leaked = xasprintf("%s/jpserver-1.json", squat);
	CHECK(access(leaked, F_OK) != 0);       /* nothing in the other user's directory */
	const char *rt = strstr(out.buf, "rt=");
	if (rt) {
		char *dir = xstrndup(rt + 3, strcspn(rt + 3, " "));
		CHECK(access(dir, F_OK) != 0);  /* removed when the server ended */
		free(dir);
	}
	char *rm = xasprintf("rm -rf '%s'", tmp);
	CHECK_INT(system(rm), 0);
	free(rm);
	free(leaked);
	free(used);
	free(want);
	strbuf_release(&out);
	free(cmd);
	free(script);
	free(fake);
	free(squat);
	free(bin);
	free(t);
}

int main(void)
{
	const char *cmd = notebook_job_command();
	CHECK_SH_N("job command", cmd);
	CHECK(!strstr(cmd, "token"));                  /* it reaches the server by env only */
	CHECK_CONTAINS(cmd, "uv run --with jupyterlab jupyter lab");
	CHECK_CONTAINS(cmd, "--port=\"$dnb_port\" --port-retries=0 --log-level=WARN");
	test_runtime_dir();

	struct strbuf sb = STRBUF_INIT;
	notebook_poll_command(&sb, "/log dir/nb-1.out", "12", NULL);
	CHECK_CONTAINS(sb.buf, "grep -E '^dispatch-notebook(-exit)? ' '/log dir/nb-1.out' 2>/dev/null\n");
	CHECK_CONTAINS(sb.buf, "squeue -h -j '12' -o %T");
	CHECK_SH_N("slurm poll", sb.buf);
	strbuf_reset(&sb);
	struct plainjob_ref p = { .id = "nb-x", .stage_dir = "/s/nb-x", .pgid = 77 };
	notebook_poll_command(&sb, "/l/nb-x.out", NULL, &p);
	CHECK_CONTAINS(sb.buf, "'/l/nb-x.out'");
	CHECK_SH_N("plain poll", sb.buf);
	strbuf_release(&sb);

	struct notebook_poll r;
	poll_fixture("poll-slurm-ready.out", false, &r);
	CHECK(r.ready);
	CHECK_STR(r.node, "node1");
	CHECK_STR(r.addr, "10.144.2.11");
	CHECK_INT(r.port, 44191);
	CHECK_STR(r.state, "RUNNING");
	CHECK(notebook_state_alive(r.state));
	CHECK_INT(r.exit_status, -1);
	notebook_poll_release(&r);
	poll_fixture("poll-slurm-cancelled.out", false, &r);
	CHECK(r.ready);                                 /* the log still says so */
	CHECK_STR(r.state, "");
	CHECK(!notebook_state_alive(r.state));
	notebook_poll_release(&r);
	poll_fixture("poll-plain-ready.out", true, &r);
	CHECK(r.ready);
	CHECK_STR(r.addr, "127.0.0.1");
	CHECK_INT(r.port, 43635);
	CHECK_STR(r.state, "RUNNING");
	notebook_poll_release(&r);
	poll_fixture("poll-plain-cancelled.out", true, &r);
	CHECK_STR(r.state, "CANCELLED");
	CHECK(!notebook_state_alive(r.state));
	notebook_poll_release(&r);
	poll_fixture("poll-crafted.out", false, &r);
	CHECK(!r.ready);                                /* port 70000, too few words */
	CHECK_INT(r.exit_status, 3);
	CHECK_STR(r.state, "PENDING");
	CHECK(notebook_state_alive(r.state));
	notebook_poll_release(&r);
	CHECK_INT(notebook_parse_poll("dispatch-notebook n a 1\n", false, &r), -1); /* no state */
	notebook_poll_release(&r);

	char *t1 = notebook_new_token(), *t2 = notebook_new_token();
	CHECK_INT(strlen(t1), 48);
	CHECK(strcmp(t1, t2) != 0);
	char dir[] = "/tmp/test-notebook.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *state = xasprintf("%s/state", dir);
	setenv("DISPATCH_STATE_DIR", state, 1);
	struct dp_error err = { 0 };
	char *back = NULL;
	CHECK_INT(notebook_token_load("dsp-1", &back, &err), -1);
	CHECK_INT(err.kind, DPE_NOTFOUND);
	CHECK_INT(notebook_token_save("dsp-1", t1, &err), 0);
	CHECK_INT(notebook_token_load("dsp-1", &back, &err), 0);
	CHECK_STR(back, t1);
	char *file = xasprintf("%s/notebooks/dsp-1", state), *nbdir = xasprintf("%s/notebooks", state);
	struct stat st;
	CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK(stat(nbdir, &st) == 0 && (st.st_mode & 0777) == 0700);
	unlink(file);
	rmdir(nbdir);
	rmdir(state);
	rmdir(dir);
	free(file);
	free(nbdir);
	free(state);
	free(back);
	free(t1);
	free(t2);
	return unit_done();
}
