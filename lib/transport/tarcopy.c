/* SPDX-License-Identifier: MIT */
/*
 * cp -r's trees as tar streams (see tarcopy.h): the upload. The local tree is walked
 * and written as a restricted pax stream straight into the stdin of
 * tar_upload.sh's `tar -x` on the host (ssh_exec_write: no thread, pipe or
 * temporary file), entries named t/... under the private directory the script makes
 * beside the target; the script renames t into place once tar has it all.
 */
#include "transport/tarcopy.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/marker.h"
#include "base/shquote.h"
#include "base/strbuf.h"
#include "base/termesc.h"
#include "base/util.h"
#include "shfiles.h"
#include "transport/sftp_fs.h"
#include "transport/ssh.h"

/* tar_upload.sh's exit statuses (the others are tar's failure, or a signal's) */
enum {
	TAR_FAILED = 91,        /* tar -x failed: its messages on stderr */
	TAR_NO_TEMP = 92,       /* no private directory beside the target */
	TAR_NO_MV_T = 93,       /* no `mv -T` to rename it into place */
	TAR_NOT_DIR = 94,       /* several sources and dest is not a directory */
	TAR_MISSING = 97,       /* no tar or mktemp on the host */
	TAR_EXISTS = 98,        /* the target exists: SFTP merges into it */
};

bool tar_copy_fits(const struct sftp_copy *c)
{
	return c->recursive && !c->update && !c->delete_extra && !c->sftp_only;
}

struct item {
	char *src, *rel;        /* rel: below the source ("" for itself) */
	enum sftp_item_type type;
	uint64_t bytes;
	unsigned mode;
};

/* What a source's stream held, told to c->copied once the tree is in place. */
struct items {
	struct item *v;
	size_t n;
};

/* Failures as they come: to the caller's callback, the first kept. While hold is
 * set they wait in held[] instead (an upload's local ones, until the host said it
 * took the stream: when it did not, the SFTP copy that follows says them itself). */
struct tally {
	const struct sftp_copy *c;
	unsigned failures;
	struct dp_error first;
	bool hold;
	struct dp_error *held;
	size_t nheld;
};

static void tell(struct tally *t, const struct dp_error *e)
{
	if (!t->failures++)
		t->first = *e;
	if (t->c->failed)
		t->c->failed(t->c->data, e);
}

_printf_(3, 4) static void failed(struct tally *t, int kind, const char *fmt, ...)
{
	struct dp_error e = { .kind = kind };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e.msg, sizeof(e.msg), fmt, ap);
	va_end(ap);
	if (!t->hold) {
		tell(t, &e);
		return;
	}
	t->held = xrealloc(t->held, (t->nheld + 1) * sizeof(*t->held));
	t->held[t->nheld++] = e;
}

/* The held failures said (say true) or dropped; holding ends. */
static void release_held(struct tally *t, bool say)
{
	for (size_t i = 0; say && i < t->nheld; i++)
		tell(t, &t->held[i]);
	free(t->held);
	t->held = NULL;
	t->nheld = 0;
	t->hold = false;
}

struct up {
	const struct sftp_copy *c;
	struct tally t;
	struct ssh_channel *ch;
	struct archive *a;
	struct archive_entry *e;
	struct dp_error chan_err;       /* why the channel took no more */
	bool chan_broken;
	char *changed;                  /* a file that shrank as it was read: the stream is cut */
	bool cut;                       /* send nothing more */
	struct items items;
	struct strbuf out, errout;
	char buf[256 * 1024];
};

static bool cancelled(const struct up *u)
{
	return u->c->cancel && *u->c->cancel;
}


/* A command's output kept, its first 8 KiB (what a failure quotes) */
static int keep_some(struct strbuf *sb, const char *buf, size_t len)
{
	if (sb->len < 8192)
		strbuf_add(sb, buf, len);
	return 0;
}

static int gather_out(void *data, const char *buf, size_t len)
{
	return keep_some(&((struct up *)data)->out, buf, len);
}

static int gather_err(void *data, const char *buf, size_t len)
{
	return keep_some(&((struct up *)data)->errout, buf, len);
}

/* What the host's tar said, escaped for the terminal, without the last newline. */
static char *said_text(const char *buf)
{
	size_t n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	_cleanup_free_ char *cut = xstrndup(buf, n);
	return printable(cut);
}

static la_ssize_t stream_out(struct archive *a, void *data, const void *buf, size_t len)
{
	struct up *u = data;
	if (u->cut) {
		archive_set_error(a, EPIPE, "the stream was cut");
		return -1;
	}
	if (cancelled(u)) {
		archive_set_error(a, EINTR, "interrupted");
		return -1;
	}
	if (ssh_exec_write(u->ch, buf, len, &u->chan_err) < 0) {
		u->chan_broken = true;
		archive_set_error(a, EIO, "%s", u->chan_err.msg);
		return -1;
	}
	return (la_ssize_t)len;
}

static void items_add(struct items *l, const char *src, const char *rel,
		      enum sftp_item_type type, uint64_t bytes, unsigned mode)
{
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = (struct item){ .src = xstrdup(src), .rel = xstrdup(rel), .type = type,
				      .bytes = bytes, .mode = mode };
}

static int add(struct up *u, const char *path, const char *rel, bool top);

/* A regular file's bytes, as long as it was when looked at (as the SFTP copy). */
static int add_data(struct up *u, int fd, const char *path, uint64_t size)
{
	uint64_t done = 0;
	if (u->c->progress)
		u->c->progress(u->c->data, path, 0, size);
	while (done < size) {
		if (cancelled(u))
			return -1;
		size_t want = size - done < sizeof(u->buf) ? (size_t)(size - done) : sizeof(u->buf);
		ssize_t n = read(fd, u->buf, want);
		if (n < 0 && errno == EINTR && !cancelled(u))
			continue;
		if (n <= 0) {   /* shrank, or unreadable now: the header promised size bytes */
			u->changed = xstrdup(path);
			return -1;
		}
		if (archive_write_data(u->a, u->buf, (size_t)n) != n)
			return -1;
		done += (uint64_t)n;
		if (u->c->progress)
			u->c->progress(u->c->data, path, done, size);
	}
	return 0;
}

static int add_dir(struct up *u, const char *path, const char *rel)
{
	DIR *d = opendir(path);
	if (!d) {
		failed(&u->t, DPE_FAIL, "cannot read directory '%s': %s", path, strerror(errno));
		return 0;
	}
	_cleanup_strv_free_ char **names = NULL;
	for (struct dirent *de; (de = readdir(d));)
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			strv_add(&names, de->d_name);
	closedir(d);
	for (size_t i = 0; names && names[i]; i++) {
		if (cancelled(u))
			return -1;
		_cleanup_free_ char *p = sftp_join(path, names[i]), *r = sftp_join(rel, names[i]);
		if (add(u, p, r, false) < 0)
			return -1;
	}
	return 0;
}

/* path as t/rel in the stream (a directory with what it holds); the source on the
 * command line (top) is followed where it is a symbolic link, as cp -H. -1 when the
 * stream broke. */
static int add(struct up *u, const char *path, const char *rel, bool top)
{
	struct stat st;
	int fd = -1;
	if ((top ? stat(path, &st) : lstat(path, &st)) < 0) {
		failed(&u->t, errno == ENOENT ? DPE_NOTFOUND : DPE_FAIL, "cannot stat '%s': %s", path,
		       strerror(errno));
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			failed(&u->t, DPE_FAIL, "cannot open '%s': %s", path,
			       fd < 0 ? strerror(errno) : "it changed as it was looked at");
			if (fd >= 0)
				close(fd);
			return 0;
		}
	} else if (!S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
		failed(&u->t, DPE_FAIL, "skipping '%s': not a regular file", path);
		return 0;
	}
	_cleanup_free_ char *name = *rel ? xasprintf("t/%s", rel) : xstrdup("t");
	_cleanup_free_ char *target = NULL;
	if (S_ISLNK(st.st_mode)) {
		target = xcalloc(1, (size_t)st.st_size + 2);
		ssize_t n = readlink(path, target, (size_t)st.st_size + 1);
		if (n < 0 || n > st.st_size) {
			failed(&u->t, DPE_FAIL, "cannot read link '%s': %s", path,
			       n < 0 ? strerror(errno) : "it changed as it was read");
			return 0;
		}
	}
	struct archive_entry *e = u->e;
	archive_entry_clear(e);
	archive_entry_copy_pathname(e, name);
	archive_entry_set_mode(e, st.st_mode);
	archive_entry_set_mtime(e, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	archive_entry_set_size(e, S_ISREG(st.st_mode) ? st.st_size : 0);
	if (target)
		archive_entry_copy_symlink(e, target);
	int r = archive_write_header(u->a, e) == ARCHIVE_OK ? 0 : -1;
	enum sftp_item_type type = S_ISDIR(st.st_mode) ? SFTP_DIR : S_ISLNK(st.st_mode) ? SFTP_SYMLINK
										  : SFTP_FILE;
	if (r == 0 && fd >= 0)
		r = add_data(u, fd, path, (uint64_t)st.st_size);
	if (fd >= 0)
		close(fd);
	if (r == 0 && type == SFTP_DIR)
		r = add_dir(u, path, rel);
	if (r == 0)
		items_add(&u->items, path, rel, type, type == SFTP_FILE ? (uint64_t)st.st_size : 0,
		     (unsigned)st.st_mode & 07777);
	return r;
}

/* The directory a path is in, trailing slashes ignored ("a/b/" -> "a", "b" -> ".",
 * "/b" -> "/"); sftp_base_name is the rest. */
static char *parent_dir(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	while (n > 0 && path[n - 1] != '/')
		n--;
	if (n == 0)
		return xstrdup(".");
	while (n > 1 && path[n - 1] == '/')
		n--;
	return xstrndup(path, n);
}

/* The script for one source: its settings, then tar_upload.sh. */
static void upload_script(struct strbuf *sb, const char *dest, const char *base, bool many,
			  bool preserve)
{
	_cleanup_free_ char *parent = parent_dir(dest), *name = sftp_base_name(dest);
	strbuf_adds(sb, "d=");
	sh_quote(sb, dest);
	strbuf_adds(sb, "\nbase=");
	sh_quote(sb, base);
	strbuf_adds(sb, "\ndparent=");
	sh_quote(sb, parent);
	strbuf_adds(sb, "\ndname=");
	sh_quote(sb, name);
	strbuf_addf(sb, "\nmany=%d\nopts='%s'\n", many ? 1 : 0, preserve ? "-p" : "-m");
	strbuf_adds(sb, shfile_transport_tar_upload);
}

static void items_release(struct items *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].src);
		free(l->v[i].rel);
	}
	free(l->v);
	*l = (struct items){ 0 };
}

/* The items, once the tree is in place under dest. */
static void items_report(const struct sftp_copy *c, const struct items *l, const char *dest)
{
	for (size_t i = 0; i < l->n && c->copied; i++) {
		const struct item *it = &l->v[i];
		_cleanup_free_ char *d = sftp_join(dest, it->rel);
		struct sftp_item si = { .src = it->src, .dest = d, .type = it->type,
					.bytes = it->bytes, .mode = it->mode,
					.connections = it->type == SFTP_FILE };
		c->copied(c->data, &si);
	}
}

enum outcome { COPIED, FELL_BACK, NO_TAR, FAILED, STOP };

static enum outcome upload_one(struct up *u, struct ssh_session *s, const char *src,
			       const char *dest, bool many, struct dp_error *err)
{
	_cleanup_free_ char *base = sftp_base_name(src);
	if (streq(base, ".") || streq(base, "..") || streq(base, "/"))
		return FELL_BACK;       /* "cp -r . host:dir" merges into dir: SFTP's */
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	upload_script(&cmd, dest, base, many, u->c->preserve);
	strbuf_reset(&u->out);
	strbuf_reset(&u->errout);
	struct ssh_exec x = { .command = cmd.buf, .in_fd = -1, .on_stdout = gather_out,
			      .on_stderr = gather_err, .data = u, .cancel = u->c->cancel };
	if (ssh_exec_start(s, &x, &u->ch, err) < 0)
		return STOP;
	u->t.hold = true;
	u->a = archive_write_new();
	u->e = archive_entry_new();
	if (!u->a || !u->e)
		abort();
	int r = -1;
	if (archive_write_set_format_pax_restricted(u->a) == ARCHIVE_OK &&
	    archive_write_add_filter_none(u->a) == ARCHIVE_OK &&
	    archive_write_set_bytes_per_block(u->a, 64 * 1024) == ARCHIVE_OK &&
	    archive_write_set_bytes_in_last_block(u->a, 1) == ARCHIVE_OK &&
	    archive_write_open2(u->a, u, NULL, stream_out, NULL, NULL) == ARCHIVE_OK)
		r = add(u, src, "", true);
	/* On a failure the stream is cut: nothing more is sent (not the end of the
	 * archive, nor the padding of a file that shrank), so the host's tar sees it end
	 * early and puts nothing in place. Closing still frees what libarchive holds. */
	u->cut = r < 0;
	if (archive_write_close(u->a) != ARCHIVE_OK)
		r = -1;
	archive_write_free(u->a);
	archive_entry_free(u->e);
	u->a = NULL;
	u->e = NULL;
	int status = -1;
	struct dp_error fe = { 0 };
	int fr = ssh_exec_finish(u->ch, &status, &fe);
	u->ch = NULL;
	if (cancelled(u)) {
		release_held(&u->t, false);
		dp_err(err, DPE_FAIL, "interrupted");
		return STOP;
	}
	struct dp_error *ce = u->chan_broken ? &u->chan_err : fr < 0 ? &fe : NULL;
	if (ce && (ce->kind == DPE_CONNECT || ce->kind == DPE_TIMEOUT)) {
		release_held(&u->t, false);
		*err = *ce;
		return STOP;
	}
	bool sftp_next = status == TAR_MISSING || status == TAR_EXISTS || status == TAR_NO_TEMP ||
			 status == TAR_NO_MV_T || status == TAR_NOT_DIR;
	release_held(&u->t, !sftp_next);        /* else SFTP's copy says them */
	if (status == TAR_MISSING)
		return NO_TAR;
	if (sftp_next)
		return FELL_BACK;
	_cleanup_free_ char *into = marker_find(u->out.buf, MARK_CP_INTO);
	if (status == 0 && into) {
		_cleanup_free_ char *top = streq(into, "1") ? sftp_join(dest, base) : xstrdup(dest);
		items_report(u->c, &u->items, top);
		return COPIED;
	}
	_cleanup_free_ char *said = said_text(u->errout.buf);
	size_t len = strlen(said);
	if (u->changed)
		failed(&u->t, DPE_FAIL, "'%s' changed as it was read: '%s' not copied (run cp again)",
		       u->changed, src);
	else if (status == TAR_FAILED)
		failed(&u->t, DPE_FAIL, "cannot copy '%s' to '%s:%s': tar on the host failed%s%s", src,
		       ssh_session_name(s), dest, len ? ": " : "", said);
	else
		failed(&u->t, DPE_FAIL, "cannot copy '%s' to '%s:%s': tar on the host %s %d", src,
		       ssh_session_name(s), dest, status > 128 ? "died of signal" : "exited with",
		       status > 128 ? status - 128 : status);
	return FAILED;
}

int tar_upload(struct ssh_session *s, char *const *srcs, const char *dest,
	       const struct sftp_copy *c, bool *sftp, struct dp_error *err)
{
	struct up *u = xcalloc(1, sizeof(*u));
	u->c = c;
	u->t.c = c;
	strbuf_init(&u->out);
	strbuf_init(&u->errout);
	size_t n = strv_len((char **)srcs);
	bool no_tar = false;
	int r = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		sftp[i] = no_tar || stat(srcs[i], &st) < 0 || !S_ISDIR(st.st_mode);
		if (sftp[i])
			continue;
		enum outcome o = upload_one(u, s, srcs[i], dest, n > 1, err);
		items_release(&u->items);
		free(u->changed);
		u->changed = NULL;
		u->chan_broken = false;
		u->cut = false;
		if (o == STOP) {
			r = -1;
			break;
		}
		if (o == NO_TAR)
			no_tar = true;
		sftp[i] = o == NO_TAR || o == FELL_BACK;
	}
	if (r == 0 && u->t.failures) {
		*err = u->t.first;
		r = 1;
	}
	strbuf_release(&u->out);
	strbuf_release(&u->errout);
	free(u);
	return r;
}

/* ---- download ------------------------------------------------------------------ */

/* A tree read from the host's `tar -c` (in a thread of its own: ssh_exec hands the
 * stream to a pipe) and written here, entry by entry, under a new private directory
 * beside the target (t inside it), through directory descriptors opened without
 * following links: a name that climbs out (.., /, a link on the way) is refused. */
struct down {
	const struct sftp_copy *c;
	struct ssh_session *s;
	const char *host;               /* for messages: the session's name */
	const char *src;                /* as given */
	const char *base;               /* its last name: the stream's top entry */
	int rfd;                        /* the stream */
	int tmpfd;                      /* the private directory */
	struct tally t;
	struct items items;
	struct dir_fix { char *rel; unsigned mode; struct timespec mtime; } *dirs;
	size_t ndirs;
	char buf[256 * 1024];
};

static void down_free(struct down *d)
{
	items_release(&d->items);
	for (size_t k = 0; k < d->ndirs; k++)
		free(d->dirs[k].rel);
	free(d->dirs);
	free(d);
}

/* the thread that runs the host's tar */
struct down_run {
	struct ssh_session *s;
	const char *command;
	const volatile sig_atomic_t *cancel;
	int wfd;
	int status;
	int r;
	struct dp_error err;
	struct strbuf errout;
};

static int to_pipe(void *data, const char *buf, size_t len)
{
	struct down_run *d = data;
	while (len) {
		ssize_t n = write(d->wfd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;      /* the reader stopped (EPIPE): stop the command */
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int err_gather(void *data, const char *buf, size_t len)
{
	return keep_some(&((struct down_run *)data)->errout, buf, len);
}

static void *down_thread(void *data)
{
	struct down_run *d = data;
	struct ssh_exec x = { .command = d->command, .in_fd = -1, .on_stdout = to_pipe,
			      .on_stderr = err_gather, .data = d, .cancel = d->cancel };
	d->r = ssh_exec(d->s, &x, &d->status, &d->err);
	close(d->wfd);
	return NULL;
}

static la_ssize_t stream_in(struct archive *a, void *data, const void **buf)
{
	struct down *d = data;
	for (;;) {
		if (d->c->cancel && *d->c->cancel) {
			archive_set_error(a, EINTR, "interrupted");
			return -1;
		}
		ssize_t n = read(d->rfd, d->buf, sizeof(d->buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			archive_set_error(a, errno, "%s", strerror(errno));
			return -1;
		}
		*buf = d->buf;
		return n;
	}
}


/* rel below the top ("" for it) from the stream's name, or NULL when the name is not
 * the top's or below it, or climbs (an empty, . or .. component). */
static char *entry_rel(const char *base, const char *name)
{
	while (startswith(name, "./"))
		name += 2;
	size_t b = strlen(base);
	if (strncmp(name, base, b) != 0 || (name[b] && name[b] != '/'))
		return NULL;
	char *rel = xstrdup(name + b + (name[b] == '/'));
	size_t n = strlen(rel);
	while (n && rel[n - 1] == '/')
		rel[--n] = '\0';
	for (char *c = rel; *c;) {
		char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.')) {
			free(rel);
			return NULL;
		}
		c += len + (slash != NULL);
	}
	return rel;
}

/* The directory that holds t/rel, opened component by component without following
 * links; *name its last component (in rel). -1 with errno. */
static int parent_of(int tmpfd, const char *rel, const char **name)
{
	int fd = openat(tmpfd, "t", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	const char *c = rel;
	for (const char *slash; fd >= 0 && (slash = strchr(c, '/'));) {
		_cleanup_free_ char *comp = xstrndup(c, (size_t)(slash - c));
		int next = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		errno = e;
		fd = next;
		c = slash + 1;
	}
	*name = c;
	return fd;
}

static int write_data(struct down *d, struct archive *a, int fd, const char *shown,
		      uint64_t size)
{
	const void *blk;
	size_t len;
	la_int64_t off;
	uint64_t done = 0;
	if (d->c->progress)
		d->c->progress(d->c->data, shown, 0, size);
	for (;;) {
		int r = archive_read_data_block(a, &blk, &len, &off);
		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK)
			return -2;      /* the stream: not this file's fault */
		for (size_t put = 0; put < len;) {
			ssize_t n = pwrite(fd, (const char *)blk + put, len - put, (off_t)off + (off_t)put);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -1;
			put += (size_t)n;
		}
		done += len;
		if (d->c->progress && done <= size)
			d->c->progress(d->c->data, shown, done, size);
	}
	if (ftruncate(fd, (off_t)size) < 0)     /* a hole at the end */
		return -1;
	if (d->c->progress && done != size)
		d->c->progress(d->c->data, shown, size, size);
	return 0;
}

/* An entry's modification time as access and modification times (-p). */
static void entry_times(struct archive_entry *e, struct timespec ts[2])
{
	ts[0].tv_sec = ts[1].tv_sec = archive_entry_mtime(e);
	ts[0].tv_nsec = ts[1].tv_nsec = archive_entry_mtime_nsec(e);
}

/* One entry of the stream into place under t. -1 when the stream itself failed. */
static int extract(struct down *d, struct archive *a, struct archive_entry *e)
{
	const char *name = archive_entry_pathname(e);
	_cleanup_free_ char *shown_name = printable(name ? name : "");
	_cleanup_free_ char *rel = name ? entry_rel(d->base, name) : NULL;
	if (!rel) {
		failed(&d->t, DPE_FAIL, "refusing '%s' from '%s:%s': not a name under '%s'",
			    shown_name, d->host, d->src, d->base);
		return archive_read_data_skip(a) == ARCHIVE_OK ? 0 : -1;
	}
	_cleanup_free_ char *src = sftp_join(d->src, rel);
	_cleanup_free_ char *shown = printable(src);
	mode_t type = archive_entry_filetype(e);
	unsigned mode = (unsigned)archive_entry_perm(e) & 07777;
	const char *hard = archive_entry_hardlink(e);
	bool preserve = d->c->preserve;
	if (!*rel && type != AE_IFDIR) {
		failed(&d->t, DPE_FAIL, "refusing '%s:%s': the stream's top is not a directory",
			    d->host, shown);
		return archive_read_data_skip(a) == ARCHIVE_OK ? 0 : -1;
	}
	const char *last;
	int pfd = *rel ? parent_of(d->tmpfd, rel, &last) : dup(d->tmpfd);
	if (!*rel)
		last = "t";
	if (pfd < 0) {
		failed(&d->t, DPE_FAIL, "cannot copy '%s:%s': %s", d->host, shown,
			    errno == ELOOP || errno == ENOTDIR ? "a name on its way is not a directory"
			    : strerror(errno));
		return archive_read_data_skip(a) == ARCHIVE_OK ? 0 : -1;
	}
	int r = 0, fd = -1;
	struct stat st;
	enum sftp_item_type it = SFTP_FILE;
	uint64_t bytes = 0;
	if (hard) {
		_cleanup_free_ char *hrel = entry_rel(d->base, hard);
		const char *hlast;
		int hfd = hrel && *hrel ? parent_of(d->tmpfd, hrel, &hlast) : -1;
		if (hfd < 0 || linkat(hfd, hlast, pfd, last, 0) < 0)
			r = -1;
		if (hfd >= 0)
			close(hfd);
		if (r == 0 && fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0)
			bytes = (uint64_t)st.st_size;
	} else if (type == AE_IFDIR) {
		it = SFTP_DIR;
		if (mkdirat(pfd, last, 0700) < 0 && !(errno == EEXIST &&
		    fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)))
			r = -1;
		if (r == 0) {
			d->dirs = xrealloc(d->dirs, (d->ndirs + 1) * sizeof(*d->dirs));
			d->dirs[d->ndirs++] = (struct dir_fix){ .rel = xstrdup(rel), .mode = mode,
				.mtime = { archive_entry_mtime(e), archive_entry_mtime_nsec(e) } };
		}
	} else if (type == AE_IFLNK) {
		it = SFTP_SYMLINK;
		const char *target = archive_entry_symlink(e);
		if (!target || symlinkat(target, pfd, last) < 0)
			r = -1;
	} else if (type == AE_IFREG) {
		bytes = (uint64_t)archive_entry_size(e);
		fd = openat(pfd, last, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    preserve ? 0600 : mode & 0777);
		if (fd < 0)
			r = -1;
		else
			r = write_data(d, a, fd, shown, bytes);
		if (r == 0 && preserve) {
			struct timespec ts[2];
			entry_times(e, ts);
			if (fchmod(fd, mode) < 0 || futimens(fd, ts) < 0)
				r = -1;
		}
		if (fd >= 0 && close(fd) < 0 && r == 0)
			r = -1;
		if (r != 0 && fd >= 0)
			unlinkat(pfd, last, 0);
	} else {
		failed(&d->t, DPE_FAIL, "skipping '%s:%s': not a regular file",
			    d->host, shown);
		close(pfd);
		return archive_read_data_skip(a) == ARCHIVE_OK ? 0 : -1;
	}
	int e_no = errno;
	if (r == 0 && preserve && (it == SFTP_SYMLINK)) {
		struct timespec ts[2];
		entry_times(e, ts);
		utimensat(pfd, last, ts, AT_SYMLINK_NOFOLLOW);
	}
	close(pfd);
	if (r == -2)
		return -1;
	if (r < 0) {
		failed(&d->t, DPE_FAIL, "cannot write '%s' (from '%s:%s'): %s", last,
			    d->host, shown, strerror(e_no));
		return type == AE_IFREG && !hard ? 0 : archive_read_data_skip(a) == ARCHIVE_OK ? 0 : -1;
	}
	if (it != SFTP_DIR && !hard && type != AE_IFREG && archive_read_data_skip(a) != ARCHIVE_OK)
		return -1;
	items_add(&d->items, src, rel, it, bytes, mode);
	return 0;
}

/* Directory modes (and times with -p) once what they hold is in: deepest first. */
static void fix_dirs(struct down *d, unsigned umask_bits)
{
	for (size_t i = d->ndirs; i-- > 0;) {
		const struct dir_fix *f = &d->dirs[i];
		_cleanup_free_ char *path = *f->rel ? xasprintf("t/%s", f->rel) : xstrdup("t");
		unsigned mode = d->c->preserve ? f->mode : f->mode & 0777 & ~umask_bits;
		fchmodat(d->tmpfd, path, mode, 0);
		if (d->c->preserve) {
			struct timespec ts[2] = { f->mtime, f->mtime };
			utimensat(d->tmpfd, path, ts, AT_SYMLINK_NOFOLLOW);
		}
	}
}

/* Removes name under dirfd, a tree, never through a link. */
static void remove_tree(int dirfd, const char *name)
{
	if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
		return;
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	for (struct dirent *de; (de = readdir(dir));)
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			remove_tree(fd, de->d_name);
	closedir(dir);
	unlinkat(dirfd, name, AT_REMOVEDIR);
}

/* Every entry of the stream on d->rfd into place under d->tmpfd's t: true when the
 * stream ended as a tar archive ends (*any: it held an entry). */
static bool read_stream(struct down *d, bool *any)
{
	struct archive *a = archive_read_new();
	if (!a)
		abort();
	archive_read_support_format_tar(a);
	archive_read_support_filter_none(a);
	bool ok = false;
	if (archive_read_open(a, d, NULL, stream_in, NULL) == ARCHIVE_OK) {
		struct archive_entry *e;
		int r;
		while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN) {
			*any = true;
			if (extract(d, a, e) < 0)
				break;
		}
		ok = r == ARCHIVE_EOF;
	}
	archive_read_free(a);
	return ok;
}

int tar_extract_fd(int fd, const char *base, const char *dir, struct dp_error *err)
{
	static const struct sftp_copy quiet = { .recursive = true };
	struct down *d = xcalloc(1, sizeof(*d));
	*d = (struct down){ .c = &quiet, .t = { .c = &quiet }, .host = "stream", .src = base,
			    .base = base, .rfd = fd };
	d->tmpfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int r = -1;
	if (d->tmpfd < 0) {
		dp_err(err, DPE_FAIL, "cannot open '%s': %s", dir, strerror(errno));
	} else {
		bool any = false;
		if (read_stream(d, &any)) {
			fix_dirs(d, 022);
			r = (int)d->t.failures;
		} else {
			dp_err(err, DPE_FAIL, "the stream broke");
		}
		close(d->tmpfd);
	}
	down_free(d);
	return r;
}

static void download_script(struct strbuf *sb, const char *src, const char *base)
{
	_cleanup_free_ char *parent = parent_dir(src);
	_cleanup_free_ char *top = xasprintf("./%s", base);
	strbuf_adds(sb, "command -v tar >/dev/null 2>&1 || exit 97\ncd ");
	if (parent[0] == '-')
		strbuf_adds(sb, "./");
	sh_quote(sb, parent);
	strbuf_adds(sb, " 2>/dev/null || exit 96\nt=");
	sh_quote(sb, top);
	strbuf_adds(sb, "\n[ -e \"$t\" ] || [ -h \"$t\" ] || exit 96\n"
		    "{ [ -d \"$t\" ] && [ ! -h \"$t\" ]; } || exit 95\n"
		    "exec tar -cf - \"$t\"\n");
}

static enum outcome download_one(struct down *d, const char *target, struct dp_error *err)
{
	_cleanup_free_ char *base = sftp_base_name(d->src);
	if (streq(base, ".") || streq(base, "..") || streq(base, "/"))
		return FELL_BACK;
	d->base = base;
	_cleanup_free_ char *dir = parent_dir(target);
	_cleanup_free_ char *tmpl = xasprintf("%s%s.dispatch-cp.XXXXXX", streq(dir, "/") ? "" : dir,
					      "/");
	if (!mkdtemp(tmpl))
		return FELL_BACK;       /* SFTP's copy says why it cannot write there */
	d->tmpfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int fds[2];
	if (d->tmpfd < 0 || pipe(fds) < 0) {
		dp_err(err, DPE_FAIL, "cannot copy '%s': %s", d->src, strerror(errno));
		if (d->tmpfd >= 0)
			close(d->tmpfd);
		rmdir(tmpl);
		return STOP;
	}
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;
	download_script(&cmd, d->src, base);
	struct down_run run = { .s = d->s, .command = cmd.buf, .cancel = d->c->cancel,
				.wfd = fds[1], .status = -1 };
	strbuf_init(&run.errout);
	d->rfd = fds[0];
	pthread_t th;
	if (pthread_create(&th, NULL, down_thread, &run) != 0) {
		close(fds[0]);
		close(fds[1]);
		close(d->tmpfd);
		rmdir(tmpl);
		strbuf_release(&run.errout);
		return FELL_BACK;
	}
	bool any = false, stream_ok = read_stream(d, &any);
	/* what tar writes after the archive's end (its last record's padding) is read
	 * too, up to a bound, so that the command ends as it would into a pipe */
	for (size_t left = 1 << 20; stream_ok && left;) {
		ssize_t got = read(fds[0], d->buf, sizeof(d->buf) < left ? sizeof(d->buf) : left);
		if (got < 0 && errno == EINTR && !(d->c->cancel && *d->c->cancel))
			continue;
		if (got <= 0)
			break;
		left -= (size_t)got;
	}
	close(fds[0]);          /* a writer still going gets EPIPE and stops the command */
	pthread_join(th, NULL);
	mode_t mask = umask(022);
	umask(mask);
	enum outcome o = COPIED;
	bool cancel = d->c->cancel && *d->c->cancel;
	if (cancel) {
		dp_err(err, DPE_FAIL, "interrupted");
		o = STOP;
	} else if (run.r < 0 && (run.err.kind == DPE_CONNECT || run.err.kind == DPE_TIMEOUT)) {
		*err = run.err;
		o = STOP;
	} else if (run.status == TAR_MISSING) {
		o = NO_TAR;
	} else if (run.status == 95) {
		o = FELL_BACK;
	} else if (run.status == 96) {
		failed(&d->t, DPE_NOTFOUND, "cannot stat '%s:%s': No such file or directory",
			    d->host, d->src);
		o = FAILED;
	} else if (!stream_ok || !any || run.r < 0 ||
		   (run.status != 0 && run.status != 2 && run.status != 1)) {
		_cleanup_free_ char *said = said_text(run.errout.buf);
		size_t len = strlen(said);
		if (run.r < 0)
			failed(&d->t, DPE_FAIL, "cannot copy '%s:%s': %s", d->host,
				    d->src, run.err.msg);
		else
			failed(&d->t, DPE_FAIL, "cannot copy '%s:%s': tar on the host exited with %d%s%s",
				    d->host, d->src, run.status, len ? ": " : "", said);
		o = FAILED;
	} else if (run.status != 0) {
		/* files the host's tar could not read: named, the rest copied */
		for (char *line = run.errout.buf, *nl; line && *line; line = nl) {
			nl = strchr(line, '\n');
			if (nl)
				*nl++ = '\0';
			_cleanup_free_ char *said = printable(line);
			/* GNU tar's summary of what it said already */
			if (*said && !strstr(said, "Exiting with failure status"))
				failed(&d->t, DPE_FAIL, "%s: %s", d->host, said);
		}
	}
	if (o == COPIED) {
		fix_dirs(d, (unsigned)mask);
		if (renameat(d->tmpfd, "t", AT_FDCWD, target) < 0) {
			failed(&d->t, DPE_FAIL, "cannot put '%s' in place: %s", target, strerror(errno));
			o = FAILED;
		}
	}
	if (o == COPIED) {
		items_report(d->c, &d->items, target);
	}
	remove_tree(d->tmpfd, "t");
	close(d->tmpfd);
	rmdir(tmpl);
	strbuf_release(&run.errout);
	return o;
}

int tar_download(struct ssh_session *s, char *const *srcs, const char *dest,
		 const struct sftp_copy *c, bool *sftp, struct dp_error *err)
{
	size_t n = strv_len((char **)srcs);
	struct stat st;
	bool into = stat(dest, &st) == 0 && S_ISDIR(st.st_mode);
	bool no_tar = false;
	unsigned failures = 0;
	struct dp_error first = { 0 };
	int r = 0;
	for (size_t i = 0; i < n; i++)
		sftp[i] = true;
	if (!into && n > 1)
		return 0;       /* SFTP's copy says dest is not a directory */
	for (size_t i = 0; i < n && !no_tar; i++) {
		_cleanup_free_ char *base = sftp_base_name(srcs[i]);
		_cleanup_free_ char *target = into ? sftp_join(dest, base) : xstrdup(dest);
		if (lstat(target, &st) == 0 || errno != ENOENT)
			continue;       /* there: SFTP merges */
		struct down *d = xcalloc(1, sizeof(*d));
		*d = (struct down){ .c = c, .t = { .c = c }, .s = s, .host = ssh_session_name(s),
				    .src = srcs[i], .tmpfd = -1 };
		enum outcome o = download_one(d, target, err);
		if (d->t.failures && !failures)
			first = d->t.first;
		failures += d->t.failures;
		down_free(d);
		if (o == STOP) {
			r = -1;
			break;
		}
		no_tar = o == NO_TAR;
		sftp[i] = o == NO_TAR || o == FELL_BACK;
	}
	if (r == 0 && failures) {
		*err = first;
		r = 1;
	}
	return r;
}
