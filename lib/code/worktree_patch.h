/* SPDX-License-Identifier: MIT */
/*
 * The work tree's changes since a commit, as one patch that `git apply` takes
 * (dispatch notebook sync): tracked files' edits, deletions, and untracked files that
 * are not ignored, binary ones as git's binary patches, paths relative to the top of
 * the work tree (where a packed job's code is extracted).
 */
#ifndef DISPATCH_WORKTREE_PATCH_H
#define DISPATCH_WORKTREE_PATCH_H

#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"

/* The patch from commit (hex, as the ledger holds it) to the work tree of the
 * repository dir is in (or below) into *patch (empty when nothing changed), and how
 * many files it touches into *files. 0, or -1 with err: DPE_INPUT (not a repository,
 * a bare one, an unknown commit), DPE_FAIL. */
int worktree_patch(const char *dir, const char *commit, struct strbuf *patch, size_t *files,
		   struct dp_error *err);

#endif
