/* SPDX-License-Identifier: MIT */
/*
 * export-subst over a repository made once (two commits, an annotated tag, a branch):
 * the input is a file's bytes. Aborts when a property breaks:
 *  - bytes without "$Format:" come out unchanged;
 *  - the text before the first "$Format:" comes out unchanged;
 *  - a second run over the same input (a new archive) gives the same bytes.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <ftw.h>
#include <git2.h>
#include <stdint.h>
#include <unistd.h>

#include "code/export_subst.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_INPUT = 4096 };

static git_repository *repo;
static git_commit *commit;
static char dir[] = "/tmp/dispatch-fuzz-subst.XXXXXX";

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void cleanup(void)
{
	git_commit_free(commit);
	git_repository_free(repo);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	git_libgit2_shutdown();
}

static void make_commit(const char *msg, git_oid *id, const git_oid *parent)
{
	git_signature *sig = NULL;
	git_treebuilder *tb = NULL;
	git_tree *tree = NULL;
	git_commit *p = NULL;
	git_oid tree_id, blob;
	if (git_signature_new(&sig, "Fuzz Er", "fuzz@example.com", 1600000000, -330) < 0 ||
	    git_blob_create_from_buffer(&blob, repo, msg, strlen(msg)) < 0 ||
	    git_treebuilder_new(&tb, repo, NULL) < 0 ||
	    git_treebuilder_insert(NULL, tb, "f", &blob, GIT_FILEMODE_BLOB) < 0 ||
	    git_treebuilder_write(&tree_id, tb) < 0 || git_tree_lookup(&tree, repo, &tree_id) < 0 ||
	    (parent && git_commit_lookup(&p, repo, parent) < 0) ||
	    git_commit_create_v(id, repo, "HEAD", sig, sig, NULL, msg, tree, p ? 1 : 0, p) < 0)
		abort();
	git_commit_free(p);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	git_signature_free(sig);
}

static void setup(void)
{
	git_oid one, two;
	git_object *target = NULL;
	git_signature *sig = NULL;
	git_oid tag;
	git_libgit2_init();
	if (!mkdtemp(dir) || git_repository_init(&repo, dir, false) < 0)
		abort();
	make_commit("first\n\nbody\n", &one, NULL);
	if (git_object_lookup(&target, repo, &one, GIT_OBJECT_COMMIT) < 0 ||
	    git_signature_new(&sig, "T", "t@example.com", 1600000001, 60) < 0 ||
	    git_tag_create(&tag, repo, "v1.0", target, sig, "v1.0\n", false) < 0)
		abort();
	make_commit("second line\nmore\n", &two, &one);
	if (git_commit_lookup(&commit, repo, &two) < 0)
		abort();
	git_reference *br = NULL;
	if (git_branch_create(&br, repo, "other", commit, false) < 0)
		abort();
	git_reference_free(br);
	git_signature_free(sig);
	git_object_free(target);
	atexit(cleanup);
}

static void run(const char *in, size_t len, struct strbuf *out)
{
	struct export_subst xs = EXPORT_SUBST_INIT(repo, commit);
	export_subst_apply(&xs, in, len, out);
	export_subst_release(&xs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > MAX_INPUT)
		return 0;
	if (!repo)
		setup();
	const char *in = (const char *)data;
	_cleanup_strbuf_ struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
	run(in, size, &a);
	run(in, size, &b);
	if (a.len != b.len || (a.len && memcmp(a.buf, b.buf, a.len) != 0))
		abort();
	size_t plain = size;
	for (size_t i = 0; i + 8 <= size; i++)
		if (memcmp(in + i, "$Format:", 8) == 0) {
			plain = i;
			break;
		}
	if (a.len < plain || (plain && memcmp(a.buf, in, plain) != 0))
		abort();
	if (plain == size && a.len != size)
		abort();
	return 0;
}
