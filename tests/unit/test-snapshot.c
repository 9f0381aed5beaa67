/* SPDX-License-Identifier: MIT */
/* The snapshot API as submit-packed and ship HOST:PATH use it: into memory (the
 * bytes gunzip to a tar holding the commit's file), the sha256 of what was written,
 * the same bytes whatever the thread count, and a writer that fails mid-way (an SSH
 * channel closing) stopping the snapshot with its errno in the message; files and
 * directories marked export-ignore left out, of a commit (REF) and of the work tree
 * (DIRTY), as git archive leaves them out. */
#include <errno.h>
#include <zlib.h>

#include "base/sha256.h"
#include "code/snapshot.h"
#include "base/strbuf.h"
#include "code/worktree_patch.h"
#include "unit.h"

static int fail_after_first(void *arg, const void *buf, size_t len)
{
	int *calls = arg;
	if (++*calls > 1) {
		errno = EPIPE;
		return -1;
	}
	return 0;
}

static char *gunzip(const struct strbuf *gz, size_t *n)
{
	z_stream s = { 0 };
	size_t cap = 1 << 20;
	char *out = xmalloc(cap);
	inflateInit2(&s, 16 + 15);
	s.next_in = (unsigned char *)gz->buf;
	s.avail_in = (uInt)gz->len;
	s.next_out = (unsigned char *)out;
	s.avail_out = (uInt)cap;
	int r = inflate(&s, Z_FINISH);
	*n = cap - s.avail_out;
	inflateEnd(&s);
	if (r != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	return out;
}

/* The member names of a tar in memory, one a line, each with a trailing newline
 * (ustar headers: the name, its prefix, the size; pax and GNU headers skipped). */
static void tar_names(const char *tar, size_t n, struct strbuf *names)
{
	for (size_t off = 0; off + 512 <= n && tar[off]; ) {
		const char *h = tar + off;
		size_t size = (size_t)strtoul(h + 124, NULL, 8);
		if (h[156] != 'x' && h[156] != 'g' && h[156] != 'L') {
			if (h[345])
				strbuf_addf(names, "%.155s/", h + 345);
			strbuf_addf(names, "%.100s\n", h);
		}
		off += 512 + (size + 511) / 512 * 512;
	}
}

static void check_export_ignore(const char *dir, enum snapshot_mode mode)
{
	struct snapshot_opts o = { .repo = dir, .mode = mode, .threads = 1,
				   .write = snapshot_write_strbuf };
	struct snapshot_info info;
	struct dp_error err = { 0 };
	struct strbuf gz = STRBUF_INIT, names = STRBUF_INIT;
	o.write_arg = &gz;
	CHECK_INT(snapshot_create(&o, &info, &err), 0);
	size_t n = 0;
	char *tar = gunzip(&gz, &n);
	CHECK(tar != NULL);
	if (tar)
		tar_names(tar, n, &names);
	CHECK_CONTAINS(names.buf, "a.txt\n");
	CHECK_CONTAINS(names.buf, "keep/b.txt\n");
	CHECK_CONTAINS(names.buf, ".gitattributes\n");
	CHECK(!strstr(names.buf, "secret.txt"));
	CHECK(!strstr(names.buf, "private"));
	CHECK(!strstr(names.buf, "keep/c.log"));
	if (strstr(names.buf, "secret") || strstr(names.buf, "private") || strstr(names.buf, ".log"))
		printf("#   members:\n%s", names.buf);
	free(tar);
	strbuf_release(&gz);
	strbuf_release(&names);
}

/* The work tree since a commit as a patch (lib/code/worktree_patch.h): an edit, a
 * deletion, an untracked file and a binary one, which git apply puts on a copy of
 * the commit's files (outside any repository, as on a node); an ignored file left
 * out; nothing changed: an empty patch. */
static void test_worktree_patch(void)
{
	char dir[] = "/tmp/dispatch-test-wpatch.XXXXXX";
	if (!mkdtemp(dir))
		return;
	_cleanup_free_ char *setup = xasprintf(
		"cd '%s' && export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 && mkdir repo && cd repo && git init -q && "
		"printf 'a\\n' >a.txt && printf 'b\\n' >b.txt && printf '*.log\\n' >.gitignore && git add . && "
		"git -c user.name=t -c user.email=t@example.com commit -q -m one && git rev-parse HEAD >../head && "
		"git archive HEAD | (mkdir ../node && tar -C ../node -xf -)", dir);
	CHECK_INT(system(setup), 0);
	_cleanup_free_ char *repo = xasprintf("%s/repo", dir), *headf = xasprintf("%s/head", dir);
	size_t n;
	_cleanup_free_ char *head = read_file(headf, &n);
	if (!head)
		return;
	head[40] = '\0';
	struct strbuf patch = STRBUF_INIT;
	size_t files = 99;
	struct dp_error err = { 0 };
	CHECK_INT(worktree_patch(repo, head, &patch, &files, &err), 0);
	CHECK_INT(files, 0);
	CHECK_INT(patch.len, 0);
	_cleanup_free_ char *edit = xasprintf(
		"cd '%s/repo' && printf 'a2\\n' >a.txt && rm b.txt && mkdir -p new && printf 'n\\n' >new/c.txt && "
		"printf '\\000\\001\\002' >bin.dat && printf 'x\\n' >skip.log", dir);
	CHECK_INT(system(edit), 0);
	CHECK_INT(worktree_patch(repo, head, &patch, &files, &err), 0);
	CHECK_INT(files, 4);
	CHECK_CONTAINS(patch.buf, "diff --git a/new/c.txt b/new/c.txt\nnew file mode 100644\n");
	CHECK_CONTAINS(patch.buf, "deleted file mode 100644");
	CHECK_CONTAINS(patch.buf, "GIT binary patch");
	CHECK(!strstr(patch.buf, "skip.log"));
	_cleanup_free_ char *pf = xasprintf("%s/p", dir);
	FILE *f = fopen(pf, "w");
	if (f) {
		fwrite(patch.buf, 1, patch.len, f);
		fclose(f);
	}
	_cleanup_free_ char *apply = xasprintf(
		"cd '%s/node' && GIT_CEILING_DIRECTORIES='%s' git apply '%s' && cat a.txt new/c.txt && "
		"test ! -e b.txt && cmp bin.dat ../repo/bin.dat", dir, dir, pf);
	int st;
	_cleanup_free_ char *out = unit_output(apply, &st);
	CHECK_INT(st, 0);
	CHECK_STR(out, "a2\nn\n");
	CHECK_INT(worktree_patch("/", head, &patch, &files, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);
	CHECK_INT(worktree_patch(repo, "0123456789012345678901234567890123456789", &patch, &files, &err), -1);
	CHECK_CONTAINS(err.msg, "is not in");
	strbuf_release(&patch);
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK_INT(system(rm), 0);
}

int main(void)
{
	char dir[] = "/tmp/dispatch-test-snapshot.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	_cleanup_free_ char *setup = xasprintf(
		"cd '%s' && export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 && git init -q && printf 'hello\\n' >a.txt && git add a.txt && "
		"GIT_COMMITTER_DATE='2020-01-01T00:00:00Z' git -c user.name=t -c user.email=t@example.com "
		"commit -q -m one", dir);
	CHECK_INT(system(setup), 0);

	struct snapshot_opts o = { .repo = dir, .mode = SNAPSHOT_REF, .want_sha256 = true,
				   .threads = 3, .write = snapshot_write_strbuf };
	struct snapshot_info info;
	struct dp_error err = { 0 };
	struct strbuf gz = STRBUF_INIT, gz1 = STRBUF_INIT;
	o.write_arg = &gz;
	CHECK_INT(snapshot_create(&o, &info, &err), 0);
	CHECK_INT(info.bytes, gz.len);
	CHECK_INT(info.files, 1);
	CHECK_INT(info.mtime, 1577836800);
	CHECK_INT(strlen(info.commit), 40);
	CHECK_INT(strlen(info.tree), 40);

	struct sha256 c;
	char hex[65];
	sha256_init(&c);
	sha256_update(&c, gz.buf, gz.len);
	sha256_final_hex(&c, hex);
	CHECK_STR(info.sha256, hex);

	size_t n = 0;
	char *tar = gunzip(&gz, &n);
	CHECK(tar != NULL);
	CHECK_INT(n, info.tar_bytes);
	CHECK(tar && n >= 1024 && streq(tar, "a.txt") && memcmp(tar + 512, "hello\n", 6) == 0);
	free(tar);

	o.threads = 1;
	o.want_sha256 = false;
	o.write_arg = &gz1;
	CHECK_INT(snapshot_create(&o, &info, &err), 0);
	CHECK(gz.len == gz1.len && memcmp(gz.buf, gz1.buf, gz.len) == 0);
	CHECK_STR(info.sha256, "");

	/* A big enough file that the output takes several writes; the second fails. */
	_cleanup_free_ char *big = xasprintf(
		"cd '%s' && export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 && head -c 3000000 /dev/urandom >big && git add big && "
		"git -c user.name=t -c user.email=t@example.com commit -q -m two", dir);
	CHECK_INT(system(big), 0);
	int calls = 0;
	o.write = fail_after_first;
	o.write_arg = &calls;
	CHECK_INT(snapshot_create(&o, &info, &err), -1);
	CHECK_INT(err.kind, DPE_FAIL);
	CHECK_CONTAINS(err.msg, strerror(EPIPE));

	/* export-ignore: a file, a directory, a pattern in a subdirectory (big goes: the
	 * tar is read back whole in memory) */
	_cleanup_free_ char *ign = xasprintf(
		"cd '%s' && export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 && mkdir -p private keep && "
		"printf 's\\n' >secret.txt && printf 'p\\n' >private/key && printf 'b\\n' >keep/b.txt && "
		"printf 'l\\n' >keep/c.log && "
		"printf 'secret.txt export-ignore\\nprivate export-ignore\\n*.log export-ignore\\n' >.gitattributes && "
		"git rm -q big && git add -A && git -c user.name=t -c user.email=t@example.com commit -q -m three", dir);
	CHECK_INT(system(ign), 0);
	check_export_ignore(dir, SNAPSHOT_REF);
	check_export_ignore(dir, SNAPSHOT_DIRTY);

	/* Errors: an unknown ref, and a directory that is no repository. */
	o.write = snapshot_write_strbuf;
	o.write_arg = &gz1;
	o.ref = "no-such-branch";
	CHECK_INT(snapshot_create(&o, &info, &err), -1);
	CHECK_INT(err.kind, DPE_NOTFOUND);
	CHECK_CONTAINS(err.msg, "unknown revision 'no-such-branch'");
	o.ref = NULL;
	o.repo = "/";
	CHECK_INT(snapshot_create(&o, &info, &err), -1);
	CHECK_INT(err.kind, DPE_INPUT);

	strbuf_release(&gz);
	strbuf_release(&gz1);
	test_worktree_patch();
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK_INT(system(rm), 0);
	return unit_done();
}
