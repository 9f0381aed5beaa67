/* SPDX-License-Identifier: MIT */
/* Notebooks: the job's command, the poll command and its answers (captured on the
 * testbed's hpc and box1, ready and after cancel; and crafted), the token file. */
#include <stdlib.h>
#include <sys/stat.h>

#include "notebook.h"
#include "slurm/plainjob.h"
#include "unit.h"

static void poll_fixture(const char *name, bool plain, struct notebook_poll *res)
{
	char *out = unit_fixture("notebook", name);
	CHECK_INT(notebook_parse_poll(out, plain, res), 0);
	free(out);
}

int main(void)
{
	const char *cmd = notebook_job_command();
	CHECK_SH_N("job command", cmd);
	CHECK(!strstr(cmd, "token"));                  /* it reaches the server by env only */
	CHECK_CONTAINS(cmd, "uv run --with jupyterlab jupyter lab");
	CHECK_CONTAINS(cmd, "--port=\"$dnb_port\" --port-retries=0 --log-level=WARN");

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
