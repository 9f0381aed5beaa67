/* SPDX-License-Identifier: MIT */
/*
 * dispatch notebook sync (dispatch-notebook(1) SYNC): the work tree's changes since a
 * notebook job's commit (lib/code/worktree_patch.h) into the job's code directory on
 * its node, in one exchange. The patch goes on the standard input of
 * notebook_sync.sh, run inside the job as dispatch shell runs a command
 * (lib/jobs/jobshell.h: srun --overlap on SLURM), which takes the last sync's patch
 * back and applies this one whole, or nothing and says which file does not apply.
 */
#ifndef DISPATCH_NOTEBOOK_SYNC_H
#define DISPATCH_NOTEBOOK_SYNC_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

struct ssh_session;

struct notebook_sync {
	const char *repo;       /* a directory of the work tree */
	const char *commit;     /* the job's commit (the ledger's) */
	const char *id, *arg;   /* the job's id, and as the user named it */
	const char *host;
	const char *stage_dir;  /* the job's (the ledger's) */
	long pgid;              /* a plain host's job: its process group */
	bool plain;             /* a plain host's job, else SLURM's */
};

/* Syncs ns over ss: *files the files the patch touches (0: the code is the commit's
 * again). 0, or -1 with err (DPE_INPUT: not the repository or commit; DPE_FAIL:
 * nothing applied); remote_err gets what the job's side said on stderr (why a file
 * does not apply), for the caller to show; *usage when the job cannot be asked as
 * named (jobshell_prepare's). */
int notebook_sync_run(struct ssh_session *ss, const struct notebook_sync *ns, size_t *files,
		      struct strbuf *remote_err, bool *usage, struct dp_error *err);

#endif
