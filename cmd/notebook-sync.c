/* SPDX-License-Identifier: MIT */
/*
 * dispatch notebook sync JOB: the work tree's changes since the notebook job's commit
 * (lib/code/worktree_patch.h) into the job's code directory on its node, so that the
 * running kernel's %autoreload picks them up. One exchange: the patch goes on the
 * standard input of lib/notebook_sync.sh, run inside the job as dispatch shell runs
 * a command (lib/jobs/jobshell.h: srun --overlap on SLURM), which takes the last
 * sync's patch back and applies this one whole, or nothing and says which file does
 * not apply.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "code/worktree_patch.h"
#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "jobs/jobshell.h"
#include "shfiles.h"
#include "base/marker.h"
#include "transport/ssh.h"

static const char *opt_repo = ".", *opt_host;

static const struct dp_option sync_options[] = {
	OPT_STRING(0, "repo", &opt_repo, "DIR", "the repository the notebook's code came from (default .)", "dir"),
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of a job given by bare ID", "host"),
	OPT_END,
};

/* stdout: the program's "dispatch-synced N" line kept, the rest passed on */
struct sync_out {
	struct strbuf out;
};

static int take_out(void *data, const char *buf, size_t len)
{
	strbuf_add(&((struct sync_out *)data)->out, buf, len);
	return 0;
}

static int cmd_notebook_sync(struct dp_ctx *ctx, const struct dp_args *args)
{
	struct dp_error err = { 0 };
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, args->pos, 1, opt_host, &set);
	if (r)
		return r;
	const struct jobref *ref = &set.refs[0];
	if (!ref->in_ledger || !ref->rec.commit) {
		error_msg("%s: no commit in the ledger: sync sends the changes since the commit a "
			  "notebook (or submit-packed job) started from", ref->arg);
		return DPE_INPUT;
	}
	if (ref->rec.dirty) {
		error_msg("%s runs an uncommitted work tree (--dirty): its code is not commit %.12s, so "
			  "the changes since it would not apply; start the notebook from a commit",
			  ref->arg, ref->rec.commit);
		return DPE_INPUT;
	}
	_cleanup_strbuf_ struct strbuf patch = STRBUF_INIT;
	size_t files;
	if (worktree_patch(opt_repo, ref->rec.commit, &patch, &files, &err) < 0)
		return report_error(&err);

	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (ssh_session_open(&sc, inventory_ssh_destination(ctx->inv, ref->host), &ss, &err) < 0)
		return report_error(&err);
	_cleanup_free_ char *stage = job_stage_dir(ref);
	char *argv[] = { "bash", "-c", (char *)shfile_notebook_sync, "sync", stage, NULL };
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT, remote_err = STRBUF_INIT;
	struct jobshell_request rq = { .id = ref->id, .arg = ref->arg, .host = ref->host,
				       .stage_dir = stage, .pgid = ref->rec.pid, .argv = argv };
	bool usage;
	if (!stage)
		return error_msg("%s: no stage directory in the ledger", ref->arg), DPE_INPUT;
	if (jobshell_prepare(ss, job_is_plain(ctx, ref), &rq, &cmd, &remote_err, &usage, &err) < 0) {
		fputs(remote_err.buf, stderr);
		return usage ? usage_error(ctx, "%s", err.msg) : report_error(&err);
	}
	struct sync_out so = { STRBUF_INIT };
	struct ssh_exec x = { .command = cmd.buf, .in_fd = -1, .in_buf = patch.buf,
			      .in_len = patch.len, .on_stdout = take_out, .on_stderr = pass_stderr,
			      .data = &so };
	int status;
	r = ssh_exec(ss, &x, &status, &err);
	_cleanup_free_ char *synced = marker_find(so.out.buf, "dispatch-synced");
	strbuf_release(&so.out);
	if (r < 0)
		return report_error(&err);
	if (status != 0 || !synced) {
		error_msg("%s: nothing synced (exit status %d)", ref->arg, status);
		return DPE_FAIL;
	}
	if (ctx->json) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddStringToObject(doc, "job", ref->arg);
		cJSON_AddNumberToObject(doc, "files", (double)files);
		cJSON_AddStringToObject(doc, "commit", ref->rec.commit);
		json_print(doc);
	} else if (files) {
		printf("%s: %zu file%s changed since %.12s, in its code now\n", ref->arg, files,
		       files == 1 ? "" : "s", ref->rec.commit);
	} else {
		printf("%s: the work tree is at %.12s: the code is as the job started\n", ref->arg,
		       ref->rec.commit);
	}
	return 0;
}

const struct dispatch_cmd dispatch_cmd_notebook_sync = {
	.name = "notebook sync",
	.summary = "send the work tree's changes into a running notebook's code",
	.usage = "[--repo DIR] [-H HOST] JOB",
	.description =
		"Sends the changes of the work tree since the notebook job's commit (edits,\n"
		"deletions, untracked files that are not ignored) into the job's code directory\n"
		"on its node, in one exchange, so that %autoreload picks them up. The last\n"
		"sync's changes are taken back first; the new ones apply whole or not at all,\n"
		"and a file that does not apply (edited in the notebook?) is named.",
	.opts = sync_options,
	.min_args = 1,
	.max_args = 1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_notebook_sync,
};
