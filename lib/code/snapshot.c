/* SPDX-License-Identifier: MIT */
/*
 * Snapshots (see snapshot.h). One pipeline for the three kinds:
 *
 *   entries (a tree walk, or git status of the work tree)
 *     -> libarchive, restricted pax (ustar unless a path or link needs more; names
 *        as raw bytes, as git archive writes them)
 *     -> pgzip (blocks compressed on every core)
 *     -> sink (byte count, optional sha256) -> the caller's write callback
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <git2.h>
#include <git2/sys/repository.h>
#include <limits.h>
#include <locale.h>
#ifdef __APPLE__
#include <xlocale.h> /* newlocale, uselocale, locale_t: macOS declares them here */
#endif
#include <sys/stat.h>

#include "code/export_subst.h"
#include "base/sha256.h"
#include "code/snapshot.h"
#include "base/strbuf.h"

/* ---- cleanup handles ---- */

static inline void repo_freep(git_repository **p) { git_repository_free(*p); }
static inline void object_freep(git_object **p) { git_object_free(*p); }
static inline void tree_freep(git_tree **p) { git_tree_free(*p); }
static inline void index_freep(git_index **p) { git_index_free(*p); }
static inline void status_freep(git_status_list **p) { git_status_list_free(*p); }
#define _cleanup_repo_ _cleanup_(repo_freep)
#define _cleanup_object_ _cleanup_(object_freep)
#define _cleanup_tree_ _cleanup_(tree_freep)
#define _cleanup_index_ _cleanup_(index_freep)
#define _cleanup_status_ _cleanup_(status_freep)

static const char *git_msg(void)
{
	const git_error *e = git_error_last();
	return e && e->message ? e->message : "unknown libgit2 error";
}

/* ---- the output end: tar -> pgzip -> sink ---- */

struct writer {
	const struct snapshot_opts *opts;
	struct snapshot_info *info;
	struct dp_error *err;
	struct sha256 sha;
	struct pgzip *z;
	struct archive *a;
	struct archive_entry *e;
	bool write_failed;      /* err already says why */
	bool discard;           /* failed: the archive's trailer goes nowhere */
	char *buf;              /* DIRTY/FILES: for reading files */
	/* DIRTY/FILES: the deepest directory written and the export-ignored directory
	 * being skipped, each with its '/'; repo set when export-ignore applies. */
	char lastdir[PATH_MAX];
	char skipdir[PATH_MAX];
	git_repository *repo;
};

static int sink(void *arg, const void *buf, size_t len)
{
	struct writer *w = arg;
	if (w->opts->want_sha256)
		sha256_update(&w->sha, buf, len);
	return w->opts->write(w->opts->write_arg, buf, len);
}

static la_ssize_t tar_out(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct writer *w = arg;
	if (w->discard)
		return (la_ssize_t)len;
	if (pgzip_write(w->z, buf, len, w->err) < 0) {
		w->write_failed = true;
		return -1;
	}
	return (la_ssize_t)len;
}

static int archive_fail(struct writer *w, const char *path)
{
	if (w->write_failed)
		return -1;
	return dp_err(w->err, DPE_FAIL, "cannot add '%s' to the snapshot: %s", path,
		      archive_error_string(w->a) ? archive_error_string(w->a) : "libarchive error");
}

static int writer_open(struct writer *w, const struct snapshot_opts *opts,
		       struct snapshot_info *info, struct dp_error *err)
{
	w->opts = opts;
	w->info = info;
	w->err = err;
	sha256_init(&w->sha);
	w->z = pgzip_new(opts->level, opts->threads, sink, w, err);
	if (!w->z)
		return -1;
	w->a = archive_write_new();
	w->e = archive_entry_new();
	if (!w->a || !w->e)
		abort();
	/* Restricted pax: plain ustar headers unless a name needs an extended one; names
	 * are written as their raw bytes (git does not know their encoding either). */
	if (archive_write_set_format_pax_restricted(w->a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(w->a) != ARCHIVE_OK ||
	    archive_write_open2(w->a, w, NULL, tar_out, NULL, NULL) != ARCHIVE_OK)
		return dp_err(err, DPE_FAIL, "cannot start the tar stream: %s", archive_error_string(w->a));
	return 0;
}

static int writer_close(struct writer *w)
{
	if (archive_write_close(w->a) != ARCHIVE_OK)
		return archive_fail(w, "the end of the archive");
	if (pgzip_finish(w->z, w->err) < 0)
		return -1;
	w->info->tar_bytes = pgzip_bytes_in(w->z);
	w->info->bytes = pgzip_bytes_out(w->z);
	if (w->opts->want_sha256)
		sha256_final_hex(&w->sha, w->info->sha256);
	return 0;
}

static void writer_free(struct writer *w)
{
	w->discard = true;
	free(w->buf);
	if (w->e)
		archive_entry_free(w->e);
	if (w->a)
		archive_write_free(w->a);
	pgzip_free(w->z);
	sha256_release(&w->sha);
}

enum kind { K_FILE, K_EXEC, K_LINK, K_DIR };

/* Writes one header; for K_LINK data is the target. Modes are git archive's (its
 * default tar.umask 002). Files then get their bytes through put_data. */
static int put_header(struct writer *w, const char *path, enum kind k, int64_t size,
		      const char *target)
{
	struct archive_entry *e = w->e;
	archive_entry_clear(e);
	archive_entry_copy_pathname(e, path);
	archive_entry_set_mtime(e, w->info->mtime, 0);
	switch (k) {
	case K_FILE:
	case K_EXEC:
		archive_entry_set_filetype(e, AE_IFREG);
		archive_entry_set_perm(e, k == K_EXEC ? 0775 : 0664);
		archive_entry_set_size(e, size);
		w->info->files++;
		break;
	case K_LINK:
		archive_entry_set_filetype(e, AE_IFLNK);
		archive_entry_set_perm(e, 0777);
		archive_entry_copy_symlink(e, target);
		archive_entry_set_size(e, 0);
		w->info->files++;
		break;
	case K_DIR:
		archive_entry_set_filetype(e, AE_IFDIR);
		archive_entry_set_perm(e, 0775);
		archive_entry_set_size(e, 0);
		break;
	}
	/* ARCHIVE_WARN: a name that is not UTF-8, written as its bytes (hdrcharset=BINARY) */
	if (archive_write_header(w->a, e) < ARCHIVE_WARN)
		return archive_fail(w, path);
	return 0;
}

static int put_data(struct writer *w, const char *path, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		la_ssize_t n = archive_write_data(w->a, p, len);
		if (n <= 0)
			return archive_fail(w, path);
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- opening the repository ---- */

static int open_repo(const char *dir, git_repository **repo, struct dp_error *err)
{
	struct stat st;
	if (stat(dir, &st) < 0)
		return dp_err(err, DPE_INPUT, "cannot use '%s' as the repository: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return dp_err(err, DPE_INPUT, "cannot use '%s' as the repository: not a directory", dir);
	int r = git_repository_open_ext(repo, dir, 0, NULL);
	if (r == GIT_ENOTFOUND)
		return dp_err(err, DPE_INPUT,
			      "'%s' is not in a git repository (give --repo DIR inside one, or run 'git init')",
			      dir);
	if (r < 0)
		return dp_err(err, DPE_FAIL, "cannot open the git repository at '%s': %s", dir, git_msg());
	return 0;
}

/* info->subdir: dir's path below the top of the work tree ("" at the top or when it
 * cannot be known, as in a bare repository). */
static void set_subdir(git_repository *repo, const char *dir, struct snapshot_info *info)
{
	const char *top = git_repository_workdir(repo);
	char rtop[PATH_MAX], rdir[PATH_MAX];
	info->subdir[0] = '\0';
	info->name[0] = '\0';
	if (!top || !realpath(top, rtop)) {
		/* a bare repository: its directory, "proj.git" as "proj" */
		const char *path = git_repository_path(repo);
		if (path && realpath(path, rtop)) {
			const char *b = strrchr(rtop, '/') ? strrchr(rtop, '/') + 1 : rtop;
			size_t n = strlen(b);
			if (n > 4 && !strcmp(b + n - 4, ".git"))
				n -= 4;
			snprintf(info->name, sizeof(info->name), "%.*s",
				 (int)(n < sizeof(info->name) ? n : sizeof(info->name) - 1), b);
		}
		return;
	}
	const char *b = strrchr(rtop, '/') && strrchr(rtop, '/')[1] ? strrchr(rtop, '/') + 1 : rtop;
	snprintf(info->name, sizeof(info->name), "%.*s", (int)(sizeof(info->name) - 1), b);
	if (!realpath(dir, rdir))
		return;
	size_t n = strlen(rtop);
	if (strncmp(rdir, rtop, n) == 0 && rdir[n] == '/')
		snprintf(info->subdir, sizeof(info->subdir), "%s", rdir + n + 1);
}

static const char *repo_name(git_repository *repo)
{
	const char *w = git_repository_workdir(repo);
	return w ? w : git_repository_path(repo);
}

/* HEAD's commit, or *commit NULL when the repository has no commit yet. */
static int head_commit(git_repository *repo, git_commit **commit, struct dp_error *err)
{
	git_object *obj = NULL;
	*commit = NULL;
	int r = git_revparse_single(&obj, repo, "HEAD");
	if (r == GIT_ENOTFOUND || r == GIT_EUNBORNBRANCH)
		return 0;
	if (r < 0 || git_object_peel((git_object **)commit, obj, GIT_OBJECT_COMMIT) < 0) {
		git_object_free(obj);
		return dp_err(err, DPE_FAIL, "cannot read HEAD of '%s': %s", repo_name(repo), git_msg());
	}
	git_object_free(obj);
	return 0;
}

/* ---- SNAPSHOT_REF: a tree walk ---- */

struct walk {
	struct writer *w;
	git_repository *repo;
	bool attrs;             /* some attributes file exists: look them up per path */
	bool autocrlf;          /* core.autocrlf converts text even without attributes */
	const git_oid *commit;  /* where text filters take attributes from, or NULL */
	struct export_subst *xs; /* the commit's export-subst, or NULL (a tree) */
	int status;
	struct strbuf path;
};

static bool export_ignored(git_repository *repo, uint32_t flags, const char *path)
{
	const char *v = NULL;
	if (git_attr_get(&v, repo, flags, path, "export-ignore") < 0)
		return false;
	return GIT_ATTR_IS_TRUE(v);
}

static bool file_exists(const char *path)
{
	struct stat st;
	return path && *path && stat(path, &st) == 0;
}

static bool is_gitattributes(const char *path)
{
	const char *base = strrchr(path, '/');
	return streq(base ? base + 1 : path, ".gitattributes");
}

/* Could any attribute apply besides those of .gitattributes files in the tree?
 * libgit2 looks each one up through realpath(), a dozen system calls per path, so a
 * snapshot asks only when some attributes file exists. When unsure: yes. */
static bool attribute_files_outside_tree(git_repository *repo)
{
	git_buf b = { 0 };
	bool any = false;

	if (git_repository_item_path(&b, repo, GIT_REPOSITORY_ITEM_INFO) == 0) {
		_cleanup_free_ char *p = xasprintf("%s/attributes", b.ptr);
		any = any || file_exists(p);
	}
	git_buf_dispose(&b);

	git_config *cfg = NULL;
	if (git_repository_config_snapshot(&cfg, repo) == 0) {
		if (git_config_get_path(&b, cfg, "core.attributesfile") == 0)
			any = any || file_exists(b.ptr);
		git_buf_dispose(&b);
		git_config_free(cfg);
	}
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	_cleanup_free_ char *p1 = xdg && *xdg ? xasprintf("%s/git/attributes", xdg) : NULL;
	_cleanup_free_ char *p2 = home && *home ? xasprintf("%s/.config/git/attributes", home) : NULL;
	any = any || file_exists(p1) || file_exists(p2);

	if (git_libgit2_opts(GIT_OPT_GET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, &b) == 0) {
		_cleanup_free_ char *dirs = xstrdup(b.ptr ? b.ptr : "");
		char *save = NULL;
		for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			_cleanup_free_ char *p = xasprintf("%s/gitattributes", d);
			any = any || file_exists(p);
		}
	} else {
		any = true;
	}
	git_buf_dispose(&b);
	git_error_clear();
	return any;
}

static bool autocrlf_on(git_repository *repo)
{
	git_config *cfg = NULL;
	const char *v = NULL;
	bool on = false;
	if (git_repository_config_snapshot(&cfg, repo) < 0)
		return true;
	if (git_config_get_string(&v, cfg, "core.autocrlf") == 0)
		on = !streq(v, "false") && !streq(v, "no") && !streq(v, "off") && !streq(v, "0");
	git_config_free(cfg);
	git_error_clear();
	return on;
}

/* The blob's bytes as 'git archive' writes them: through the to-work-tree filters
 * (eol conversion, ident) when attributes ask for any, then export-subst. */
static int put_blob(struct walk *wk, const char *path, const git_tree_entry *te, enum kind k,
		    bool filter, bool subst)
{
	git_blob *blob = NULL;
	if (git_blob_lookup(&blob, wk->repo, git_tree_entry_id(te)) < 0)
		return dp_err(wk->w->err, DPE_FAIL, "cannot read '%s': %s", path, git_msg());

	const void *data = git_blob_rawcontent(blob);
	size_t len = (size_t)git_blob_rawsize(blob);
	git_buf filtered = { 0 };
	if (k != K_LINK && filter) {
		git_filter_list *fl = NULL;
		git_filter_options fo = { .version = GIT_FILTER_OPTIONS_VERSION };
		if (wk->commit) {
			fo.flags = GIT_FILTER_ATTRIBUTES_FROM_COMMIT;
			git_oid_cpy(&fo.attr_commit_id, wk->commit);
		}
		if (git_filter_list_load_ext(&fl, wk->repo, blob, path, GIT_FILTER_TO_WORKTREE, &fo) < 0 ||
		    (fl && git_filter_list_apply_to_blob(&filtered, fl, blob) < 0)) {
			git_filter_list_free(fl);
			git_blob_free(blob);
			return dp_err(wk->w->err, DPE_FAIL, "cannot filter '%s': %s", path, git_msg());
		}
		if (fl) {
			data = filtered.ptr;
			len = filtered.size;
		}
		git_filter_list_free(fl);
	}
	_cleanup_strbuf_ struct strbuf substituted = STRBUF_INIT;
	if (k != K_LINK && subst && wk->xs) {
		export_subst_apply(wk->xs, data, len, &substituted);
		data = substituted.buf ? substituted.buf : "";
		len = substituted.len;
	}

	int r;
	if (k == K_LINK) {
		char *target = xstrndup(data, len);
		r = put_header(wk->w, path, K_LINK, 0, target);
		free(target);
	} else {
		r = put_header(wk->w, path, k, (int64_t)len, NULL);
		if (r == 0)
			r = put_data(wk->w, path, data, len);
	}
	git_buf_dispose(&filtered);
	git_blob_free(blob);
	return r;
}

static int walk_cb(const char *root, const git_tree_entry *te, void *payload)
{
	struct walk *wk = payload;
	struct strbuf *p = &wk->path;
	git_filemode_t mode = git_tree_entry_filemode(te);

	strbuf_reset(p);
	strbuf_adds(p, root);
	strbuf_adds(p, git_tree_entry_name(te));
	/* Attributes from the archived tree only (the in-memory index), as git archive;
	 * one lookup for export-ignore and whether any filter applies. */
	bool filter = wk->autocrlf, subst = false;
	if (wk->attrs) {
		static const char *names[] = { "export-ignore", "export-subst", "text", "eol", "crlf",
					       "ident", "filter" };
		const char *v[ARRAY_SIZE(names)] = { 0 };
		if (git_attr_get_many(v, wk->repo, GIT_ATTR_CHECK_INDEX_ONLY, p->buf, ARRAY_SIZE(names),
				      names) < 0) {
			git_error_clear();
			filter = true;
		} else {
			if (GIT_ATTR_IS_TRUE(v[0]))
				return 1; /* and for a tree: not its contents either */
			subst = GIT_ATTR_IS_TRUE(v[1]);
			for (size_t i = 2; i < ARRAY_SIZE(names); i++)
				filter = filter || v[i] != NULL;
		}
	}

	int r = 0;
	switch (mode) {
	case GIT_FILEMODE_TREE:
	case GIT_FILEMODE_COMMIT: /* a submodule: an empty directory, as git archive */
		strbuf_addch(p, '/');
		r = put_header(wk->w, p->buf, K_DIR, 0, NULL);
		break;
	case GIT_FILEMODE_BLOB:
		r = put_blob(wk, p->buf, te, K_FILE, filter, subst);
		break;
	case GIT_FILEMODE_BLOB_EXECUTABLE:
		r = put_blob(wk, p->buf, te, K_EXEC, filter, subst);
		break;
	case GIT_FILEMODE_LINK:
		r = put_blob(wk, p->buf, te, K_LINK, false, false);
		break;
	default:
		break;
	}
	if (r < 0) {
		wk->status = -1;
		return -1;
	}
	return 0;
}

static int snapshot_ref(git_repository *repo, struct writer *w, const char *ref)
{
	struct dp_error *err = w->err;
	_cleanup_object_ git_object *obj = NULL;
	_cleanup_object_ git_object *commit = NULL;
	_cleanup_tree_ git_tree *tree = NULL;
	_cleanup_index_ git_index *index = NULL;

	int r = git_revparse_single(&obj, repo, ref);
	if (r == GIT_ENOTFOUND || r == GIT_EUNBORNBRANCH) {
		if (streq(ref, "HEAD") && git_repository_is_empty(repo) == 1)
			return dp_err(err, DPE_NOTFOUND,
				      "'%s' has no commits yet: commit first, or snapshot the work tree with --dirty",
				      repo_name(repo));
		return dp_err(err, DPE_NOTFOUND, "unknown revision '%s' in '%s'", ref, repo_name(repo));
	}
	if (r == GIT_EAMBIGUOUS)
		return dp_err(err, DPE_NOTFOUND, "ambiguous revision '%s' in '%s': give more of it", ref,
			      repo_name(repo));
	if (r < 0)
		return dp_err(err, DPE_INPUT, "bad revision '%s': %s", ref, git_msg());

	w->info->mtime = SNAPSHOT_EPOCH;
	if (git_object_peel(&commit, obj, GIT_OBJECT_COMMIT) == 0) {
		git_oid_tostr(w->info->commit, sizeof(w->info->commit), git_object_id(commit));
		w->info->mtime = git_commit_time((git_commit *)commit);
	}
	if (git_object_peel((git_object **)&tree, obj, GIT_OBJECT_TREE) < 0)
		return dp_err(err, DPE_INPUT, "'%s' names a %s, not a commit or tree", ref,
			      git_object_type2string(git_object_type(obj)));
	git_oid_tostr(w->info->tree, sizeof(w->info->tree), git_tree_id(tree));

	/* git archive reads .gitattributes from the tree it archives: give libgit2 an
	 * index of that tree, and ask it for attributes from the index only. */
	if (git_index_new(&index) < 0 || git_index_read_tree(index, tree) < 0 ||
	    git_repository_set_index(repo, index) < 0)
		return dp_err(err, DPE_FAIL, "cannot read the tree of '%s': %s", ref, git_msg());

	struct export_subst xs = EXPORT_SUBST_INIT(repo, (const git_commit *)commit);
	struct walk wk = { .w = w, .repo = repo, .path = STRBUF_INIT,
			   .commit = commit ? git_object_id(commit) : NULL, .xs = commit ? &xs : NULL,
			   .attrs = attribute_files_outside_tree(repo), .autocrlf = autocrlf_on(repo) };
	for (size_t i = 0; !wk.attrs && i < git_index_entrycount(index); i++)
		wk.attrs = is_gitattributes(git_index_get_byindex(index, i)->path);
	r = git_tree_walk(tree, GIT_TREEWALK_PRE, walk_cb, &wk);
	strbuf_release(&wk.path);
	export_subst_release(&xs);
	if (wk.status < 0)
		return -1;
	if (r < 0)
		return dp_err(err, DPE_FAIL, "cannot walk the tree of '%s': %s", ref, git_msg());
	return 0;
}

/* ---- SNAPSHOT_DIRTY and SNAPSHOT_FILES: the work tree through git status ---- */

/* Directory entries for the parents of path not written yet. Paths come sorted by
 * bytes, so a directory's contents are contiguous and this is git's tree order. */
static int put_parents(struct writer *w, const char *path)
{
	if (w->skipdir[0] && startswith(path, w->skipdir))
		return 1;
	w->skipdir[0] = '\0';
	size_t keep = 0, n = strlen(w->lastdir);
	/* Longest prefix of lastdir (ending in '/') that is also a prefix of path. */
	for (size_t i = 0; i < n; i++) {
		if (path[i] != w->lastdir[i])
			break;
		if (w->lastdir[i] == '/')
			keep = i + 1;
	}
	w->lastdir[keep] = '\0';
	for (const char *s = path + keep; (s = strchr(s, '/')); s++) {
		size_t len = (size_t)(s - path) + 1;
		if (len >= sizeof(w->lastdir))
			return dp_err(w->err, DPE_FAIL, "path too long: '%s'", path);
		memcpy(w->lastdir, path, len);
		w->lastdir[len - 1] = '\0';
		if (w->repo && export_ignored(w->repo, GIT_ATTR_CHECK_FILE_THEN_INDEX, w->lastdir)) {
			memcpy(w->skipdir, path, len);
			w->skipdir[len] = '\0';
			w->lastdir[keep] = '\0';
			return 1;
		}
		w->lastdir[len - 1] = '/';
		w->lastdir[len] = '\0';
		if (put_header(w, w->lastdir, K_DIR, 0, NULL) < 0)
			return -1;
		keep = len;
	}
	return 0;
}

static int put_disk_file(struct writer *w, const char *full, const char *path,
			 const struct stat *st, enum kind k)
{
	_cleanup_close_ int fd = open(full, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return dp_err(w->err, DPE_FAIL, "cannot read '%s': %s", path, strerror(errno));
	if (put_header(w, path, k, st->st_size, NULL) < 0)
		return -1;
	const size_t bufsize = 256 * 1024;
	if (!w->buf)
		w->buf = xmalloc(bufsize);
	int64_t left = st->st_size;
	while (left > 0) {
		ssize_t n = read(fd, w->buf, left < (int64_t)bufsize ? (size_t)left : bufsize);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return dp_err(w->err, DPE_FAIL, "cannot read '%s': %s", path, strerror(errno));
		if (n == 0)
			return dp_err(w->err, DPE_FAIL,
				      "'%s' shrank while the snapshot was made: try again", path);
		if (put_data(w, path, w->buf, (size_t)n) < 0)
			return -1;
		left -= n;
	}
	return 0;
}

/* One path of the work tree, as it is on disk; index_mode is its mode in the index
 * (0 for an untracked file). Returns 1 when it is not there (a directory where the
 * index has a file counts as gone: its files come as untracked ones), 2 when it is in
 * an export-ignored directory. */
static int put_disk_entry(struct writer *w, const char *workdir, const char *path,
			  bool filemode, git_filemode_t index_mode)
{
	_cleanup_free_ char *full = xasprintf("%s%s", workdir, path);
	bool index_exec = index_mode == GIT_FILEMODE_BLOB_EXECUTABLE;
	struct stat st;
	if (lstat(full, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return 1;
		return dp_err(w->err, DPE_FAIL, "cannot read '%s': %s", path, strerror(errno));
	}
	if (S_ISDIR(st.st_mode) && index_mode != GIT_FILEMODE_COMMIT)
		return 1;
	int r = put_parents(w, path);
	if (r != 0)
		return r < 0 ? -1 : 2;
	if (S_ISREG(st.st_mode)) {
		bool exec = filemode ? (st.st_mode & S_IXUSR) != 0 : index_exec;
		return put_disk_file(w, full, path, &st, exec ? K_EXEC : K_FILE);
	}
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX + 1];
		ssize_t n = readlink(full, target, sizeof(target) - 1);
		if (n < 0)
			return dp_err(w->err, DPE_FAIL, "cannot read the link '%s': %s", path, strerror(errno));
		target[n] = '\0';
		return put_header(w, path, K_LINK, 0, target);
	}
	if (S_ISDIR(st.st_mode)) { /* a submodule: an empty directory, as git archive */
		_cleanup_free_ char *dir = xasprintf("%s/", path);
		return put_header(w, dir, K_DIR, 0, NULL);
	}
	return 0; /* sockets, fifos: nothing git would track */
}

/* Is path one of the named paths or under one of them? */
static bool under_any(char *const *paths, const char *path)
{
	for (; paths && *paths; paths++) {
		size_t n = strlen(*paths);
		if (n == 0 || (strncmp(path, *paths, n) == 0 && (path[n] == '\0' || path[n] == '/')))
			return true;
	}
	return false;
}

/* Lexically resolves name (relative to the directory prefix, which is relative to the
 * top of the work tree and ends in '/' unless empty) to a path from the top without
 * '.', '..' or a trailing '/'. NULL when it leaves the work tree. */
static char *resolve_path(const char *prefix, const char *name)
{
	_cleanup_free_ char *joined = xasprintf("%s%s", prefix, name);
	char *out = xmalloc(strlen(joined) + 1);
	size_t len = 0;
	char *save = NULL;
	for (char *c = strtok_r(joined, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (streq(c, "."))
			continue;
		if (streq(c, "..")) {
			if (len == 0) {
				free(out);
				return NULL;
			}
			while (len > 0 && out[len - 1] != '/')
				len--;
			if (len > 0)
				len--;
			continue;
		}
		if (len)
			out[len++] = '/';
		memcpy(out + len, c, strlen(c));
		len += strlen(c);
	}
	out[len] = '\0';
	return out;
}

/* The named paths relative to the top of the work tree: checked, '..' resolved. */
static int resolve_files(const char *repo_dir, const char *workdir, char *const *files,
			 char ***out, struct dp_error *err)
{
	char real_dir[PATH_MAX], real_top[PATH_MAX];
	if (!realpath(repo_dir, real_dir) || !realpath(workdir, real_top))
		return dp_err(err, DPE_FAIL, "cannot resolve '%s': %s", repo_dir, strerror(errno));
	size_t tn = strlen(real_top);
	_cleanup_free_ char *prefix = NULL;
	if (streq(real_dir, real_top))
		prefix = xstrdup("");
	else if (strncmp(real_dir, real_top, tn) == 0 && real_dir[tn] == '/')
		prefix = xasprintf("%s/", real_dir + tn + 1);
	else
		prefix = xstrdup("");
	if (!files || !*files)
		return dp_err(err, DPE_INPUT, "no paths to snapshot: name files or directories");

	for (char *const *f = files; *f; f++) {
		const char *name = *f;
		if (name[0] == '/' && strncmp(name, real_top, tn) == 0 && (name[tn] == '/' || !name[tn]))
			name += tn + (name[tn] == '/'); /* absolute, inside the work tree */
		char *p = name[0] == '/' ? NULL : resolve_path(name == *f ? prefix : "", name);
		if (!p)
			return dp_err(err, DPE_INPUT,
				      "'%s' is outside the repository '%s': name paths inside it", *f, real_top);
		_cleanup_free_ char *full = xasprintf("%s/%s", real_top, p);
		struct stat st;
		if (lstat(full, &st) < 0) {
			free(p);
			return dp_err(err, DPE_NOTFOUND, "cannot snapshot '%s': %s", *f, strerror(errno));
		}
		if (p[0] == '\0') { /* the top itself: everything */
			free(p);
			p = xstrdup("");
		}
		strv_push(out, p);
	}
	return 0;
}

/* Entries besides git status's, as a kind letter and the path. */
static int cmp_extra(const void *a, const void *b)
{
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

static int snapshot_worktree(git_repository *repo, struct writer *w, const struct snapshot_opts *o)
{
	struct dp_error *err = w->err;
	struct snapshot_info *info = w->info;
	const char *workdir = git_repository_workdir(repo);
	if (!workdir)
		return dp_err(err, DPE_INPUT,
			      "'%s' is a bare repository: --dirty and --files need a work tree (--ref works)",
			      git_repository_path(repo));

	git_commit *head = NULL;
	if (head_commit(repo, &head, err) < 0)
		return -1;
	info->mtime = SNAPSHOT_EPOCH;
	if (head) {
		git_oid_tostr(info->commit, sizeof(info->commit), git_commit_id(head));
		info->mtime = git_commit_time(head);
		git_commit_free(head);
	}

	_cleanup_strv_free_ char **named = NULL;
	if (o->mode == SNAPSHOT_FILES &&
	    resolve_files(o->repo ? o->repo : ".", workdir, o->files, &named, err) < 0)
		return -1;

	int filemode = 1;
	git_config *cfg = NULL;
	if (git_repository_config_snapshot(&cfg, repo) == 0) {
		if (git_config_get_bool(&filemode, cfg, "core.filemode") < 0)
			filemode = 1;
		git_config_free(cfg);
	}
	git_error_clear();

	git_status_options so = { .version = GIT_STATUS_OPTIONS_VERSION };
	so.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	so.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
		   GIT_STATUS_OPT_INCLUDE_UNMODIFIED | GIT_STATUS_OPT_SORT_CASE_SENSITIVELY |
		   GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	_cleanup_status_ git_status_list *st = NULL;
	if (git_status_list_new(&st, repo, &so) < 0)
		return dp_err(err, DPE_FAIL, "cannot read the status of '%s': %s", workdir, git_msg());

	/* DIRTY honours export-ignore: look attributes up only when a file has some. */
	if (o->mode == SNAPSHOT_DIRTY) {
		bool attrs = attribute_files_outside_tree(repo);
		for (size_t i = 0; !attrs && i < git_status_list_entrycount(st); i++) {
			const git_status_entry *e = git_status_byindex(st, i);
			const git_diff_delta *d = e->index_to_workdir ? e->index_to_workdir : e->head_to_index;
			attrs = d && is_gitattributes(d->new_file.path);
		}
		if (attrs)
			w->repo = repo;
	}

	/* Besides git status: submodules from the index ('s'; status leaves them out, as
	 * its submodule code leaks in libgit2 1.5), and for FILES the named files that git
	 * ignores, which come all the same ('i'). */
	size_t n = git_status_list_entrycount(st);
	_cleanup_strv_free_ char **extra = NULL;
	_cleanup_index_ git_index *index = NULL;
	if (git_repository_index(&index, repo) < 0)
		return dp_err(err, DPE_FAIL, "cannot read the index of '%s': %s", workdir, git_msg());
	for (size_t i = 0; i < git_index_entrycount(index); i++) {
		const git_index_entry *ie = git_index_get_byindex(index, i);
		if (ie->mode == GIT_FILEMODE_COMMIT && git_index_entry_stage(ie) == 0)
			strv_push(&extra, xasprintf("s%s", ie->path));
	}
	for (char **f = named; f && *f; f++) {
		_cleanup_free_ char *full = xasprintf("%s%s", workdir, *f);
		struct stat sb;
		if (**f && lstat(full, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
			int ignored = 0;
			if (git_ignore_path_is_ignored(&ignored, repo, *f) == 0 && ignored)
				strv_push(&extra, xasprintf("i%s", *f));
		}
	}
	size_t nextra = strv_len(extra), ie = 0;
	if (nextra)
		qsort(extra, nextra, sizeof(*extra), cmp_extra);

	for (size_t i = 0; i <= n; i++) {
		const git_status_entry *e = i < n ? git_status_byindex(st, i) : NULL;
		const git_diff_delta *d = e ? (e->index_to_workdir ? e->index_to_workdir : e->head_to_index) : NULL;
		const char *path = d ? d->new_file.path : NULL;

		/* Merge in the other entries, keeping byte order. */
		for (; ie < nextra && (!path || strcmp(extra[ie] + 1, path) <= 0); ie++) {
			const char *x = extra[ie] + 1;
			bool sub = extra[ie][0] == 's';
			if ((path && streq(x, path)) ||
			    (sub && o->mode == SNAPSHOT_FILES && !under_any(named, x)) ||
			    (sub && w->repo && export_ignored(repo, GIT_ATTR_CHECK_FILE_THEN_INDEX, x)))
				continue;
			int r = put_disk_entry(w, workdir, x, filemode != 0,
					       sub ? GIT_FILEMODE_COMMIT : GIT_FILEMODE_BLOB);
			if (r < 0)
				return -1;
			if (r == 0 && !sub)
				info->untracked++;
		}
		if (!e)
			break;
		if (!d || (e->status & GIT_STATUS_IGNORED))
			continue;
		if (o->mode == SNAPSHOT_FILES && !under_any(named, path))
			continue;
		if (path[strlen(path) - 1] == '/') /* an untracked nested repository */
			continue;
		if (w->repo && export_ignored(repo, GIT_ATTR_CHECK_FILE_THEN_INDEX, path))
			continue;
		git_filemode_t index_mode = e->head_to_index ? e->head_to_index->new_file.mode :
					    e->index_to_workdir ? e->index_to_workdir->old_file.mode : 0;
		int r = put_disk_entry(w, workdir, path, filemode != 0, index_mode);
		if (r < 0)
			return -1;
		if (r == 2)
			continue;
		if (r == 1) {
			if (e->status & (GIT_STATUS_WT_DELETED | GIT_STATUS_INDEX_DELETED))
				info->deleted++;
			continue;
		}
		if (e->status == GIT_STATUS_WT_NEW ||
		    e->status == (GIT_STATUS_WT_NEW | GIT_STATUS_INDEX_DELETED))
			info->untracked++;
		else if (e->status != GIT_STATUS_CURRENT)
			info->modified++;
	}
	return 0;
}

/* ---- the entry point ---- */

/* libarchive converts names through the locale: in the "C" locale it cannot, and marks
 * every non-ASCII name as binary. A UTF-8 locale for this thread only makes the pax
 * headers plain UTF-8 (names that are not UTF-8 still go as their bytes), and the
 * output the same whatever the user's locale. */
static locale_t utf8_locale(void)
{
	static const char *const names[] = { "C.UTF-8", "C.utf8", "en_US.UTF-8", "UTF-8" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		locale_t l = newlocale(LC_CTYPE_MASK, names[i], (locale_t)0);
		if (l)
			return l;
	}
	return (locale_t)0;
}

int snapshot_create(const struct snapshot_opts *o, struct snapshot_info *info, struct dp_error *err)
{
	const char *dir = o->repo ? o->repo : ".";
	memset(info, 0, sizeof(*info));
	locale_t utf8 = utf8_locale(), old = utf8 ? uselocale(utf8) : (locale_t)0;

	git_libgit2_init();
	/* Pack and zlib checksums still guard the data; re-hashing every blob read (on
	 * by default in libgit2, off in git) would cost a fifth of the run. */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);

	_cleanup_repo_ git_repository *repo = NULL;
	struct writer w = { 0 };
	int r = open_repo(dir, &repo, err);
	if (r == 0)
		set_subdir(repo, dir, info);
	if (r == 0 && o->mode != SNAPSHOT_REF && git_repository_is_bare(repo))
		r = dp_err(err, DPE_INPUT,
			   "'%s' is a bare repository: --dirty and --files need a work tree (--ref works)",
			   git_repository_path(repo));
	if (r == 0)
		r = writer_open(&w, o, info, err);
	if (r == 0)
		r = o->mode == SNAPSHOT_REF ? snapshot_ref(repo, &w, o->ref ? o->ref : "HEAD")
					    : snapshot_worktree(repo, &w, o);
	if (r == 0)
		r = writer_close(&w);
	writer_free(&w);
	git_repository_free(repo);
	repo = NULL;
	git_libgit2_shutdown();
	if (utf8) {
		uselocale(old);
		freelocale(utf8);
	}
	return r;
}

void snapshot_summary(const struct snapshot_info *info, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%llu modified, %llu untracked", (unsigned long long)info->modified,
			 (unsigned long long)info->untracked);
	if (info->deleted && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ", %llu deleted", (unsigned long long)info->deleted);
}

int snapshot_write_fd(void *arg, const void *buf, size_t len)
{
	return write_all(*(int *)arg, buf, len);
}

int snapshot_write_strbuf(void *arg, const void *buf, size_t len)
{
	strbuf_add(arg, buf, len);
	return 0;
}
