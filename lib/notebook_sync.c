/* SPDX-License-Identifier: MIT */
/* dispatch notebook sync: notebook_sync.h. */
#include "notebook_sync.h"

#include <stdlib.h>

#include "base/marker.h"
#include "base/util.h"
#include "code/worktree_patch.h"
#include "jobs/jobshell.h"
#include "shfiles.h"
#include "transport/ssh.h"

int notebook_sync_run(struct ssh_session *ss, const struct notebook_sync *ns, size_t *files,
		      struct strbuf *remote_err, bool *usage, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf patch = STRBUF_INIT, cmd = STRBUF_INIT, out = STRBUF_INIT;
	*usage = false;
	if (worktree_patch(ns->repo, ns->commit, &patch, files, err) < 0)
		return -1;
	char *argv[] = { "bash", "-c", (char *)shfile_notebook_sync, "sync", (char *)ns->stage_dir, NULL };
	struct jobshell_request rq = { .id = ns->id, .arg = ns->arg, .host = ns->host,
				       .stage_dir = ns->stage_dir, .pgid = ns->pgid, .argv = argv };
	if (jobshell_prepare(ss, ns->plain, &rq, &cmd, remote_err, usage, err) < 0)
		return -1;
	int status;
	if (ssh_exec_capture(ss, cmd.buf, &patch, &out, remote_err, &status, err) < 0)
		return -1;
	_cleanup_free_ char *synced = marker_find(out.buf, MARK_SYNCED);
	if (status != 0 || !synced)
		return dp_err(err, DPE_FAIL, "%s: nothing synced (exit status %d)", ns->arg, status);
	return 0;
}
