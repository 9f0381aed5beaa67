/* SPDX-License-Identifier: MIT */
/*
 * dispatch notebook sync JOB: the work tree's changes since the notebook job's commit
 * into the job's code directory on its node (lib/notebook_sync.h), so that the running
 * kernel's %autoreload picks them up.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>

#include "dispatch.h"
#include "inventory/inventory.h"
#include "jobref.h"
#include "notebook_sync.h"
#include "transport/ssh.h"

static const char *opt_repo = ".", *opt_host;

static const struct dp_option sync_options[] = {
	OPT_STRING(0, "repo", &opt_repo, "DIR", "the repository the notebook's code came from (default .)", "dir"),
	OPT_STRING('H', "host", &opt_host, "HOST", "the host of a job given by bare ID", "host"),
	OPT_END,
};

static int cmd_notebook_sync(struct dp_ctx *ctx, const struct dp_args *args)
{
	struct dp_error err = { 0 };
	_cleanup_(job_set_release) struct job_set set = { 0 };
	int r = job_args_resolve(ctx, args->pos, 1, opt_host, &set);
	if (r)
		return r;
	const struct jobref *ref = &set.refs[0];
	_cleanup_free_ char *stage = job_stage_dir(ref);
	if (!ref->in_ledger || !ref->rec.commit || !stage) {
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
	struct ssh_ctx sc;
	cmd_ssh_ctx(ctx, &sc);
	_cleanup_ssh_session_ struct ssh_session *ss = NULL;
	if (ssh_session_open(&sc, inventory_ssh_destination(ctx->inv, ref->host), &ss, &err) < 0)
		return report_error(&err);
	struct notebook_sync ns = { .repo = opt_repo, .commit = ref->rec.commit, .id = ref->id,
				    .arg = ref->arg, .host = ref->host, .stage_dir = stage,
				    .pgid = ref->rec.pid, .plain = job_is_plain(ctx, ref) };
	_cleanup_strbuf_ struct strbuf remote_err = STRBUF_INIT;
	size_t files;
	bool usage;
	if (notebook_sync_run(ss, &ns, &files, &remote_err, &usage, &err) < 0) {
		fputs(remote_err.buf, stderr); /* the job's side: which file does not apply */
		return usage ? usage_error(ctx, "%s", err.msg) : report_error(&err);
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
