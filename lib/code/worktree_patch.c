/* SPDX-License-Identifier: MIT */
/* The work tree's changes since a commit, as a patch: worktree_patch.h. */
#include "code/worktree_patch.h"

#include <git2.h>
#include <string.h>

#include "base/util.h"

static const char *git_msg(void)
{
	const git_error *e = git_error_last();
	return e && e->message ? e->message : "unknown libgit2 error";
}

int worktree_patch(const char *dir, const char *commit, struct strbuf *patch, size_t *files,
		   struct dp_error *err)
{
	git_repository *repo = NULL;
	git_object *obj = NULL;
	git_tree *tree = NULL;
	git_diff *diff = NULL;
	git_buf buf = { 0 };
	int r = -1;

	*files = 0;
	git_libgit2_init();
	if (git_repository_open_ext(&repo, dir, 0, NULL) < 0) {
		dp_err(err, DPE_INPUT, "'%s' is not in a git repository (give --repo DIR, the "
		       "repository the notebook's code came from)", dir);
		goto out;
	}
	if (git_repository_is_bare(repo)) {
		dp_err(err, DPE_INPUT, "'%s' is a bare repository: sync needs a work tree", dir);
		goto out;
	}
	if (git_revparse_single(&obj, repo, commit) < 0 ||
	    git_object_peel((git_object **)&tree, obj, GIT_OBJECT_TREE) < 0) {
		dp_err(err, DPE_INPUT, "commit %.12s of the job is not in '%s' (give --repo DIR, the "
		       "repository the notebook's code came from)", commit, dir);
		goto out;
	}
	git_diff_options opts;
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
		     GIT_DIFF_SHOW_UNTRACKED_CONTENT | GIT_DIFF_SHOW_BINARY;
	if (git_diff_tree_to_workdir_with_index(&diff, repo, tree, &opts) < 0 ||
	    git_diff_to_buf(&buf, diff, GIT_DIFF_FORMAT_PATCH) < 0) {
		dp_err(err, DPE_FAIL, "cannot diff the work tree against %.12s: %s", commit, git_msg());
		goto out;
	}
	*files = git_diff_num_deltas(diff);
	strbuf_add(patch, buf.ptr ? buf.ptr : "", buf.size);
	r = 0;
out:
	git_buf_dispose(&buf);
	git_diff_free(diff);
	git_tree_free(tree);
	git_object_free(obj);
	git_repository_free(repo);
	return r;
}
