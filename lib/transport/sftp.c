/* SPDX-License-Identifier: MIT */
/*
 * cp over SFTP. struct fs is a file system seen through a handful of operations, the
 * local one (POSIX calls) or the remote one (libssh2_sftp_* on a blocking session);
 * copy_item() walks a source tree on one and writes it on the other.
 *
 * Throughput comes from libssh2 pipelining: sftp_read with a large buffer keeps many
 * read requests in flight (read-ahead), and sftp_write sends the whole buffer it is
 * given as many write requests and returns as acknowledgements arrive; the copy loop
 * keeps that buffer topped up (a sliding window, as libssh2's sftp_write_sliding
 * example), so the pipe never drains between chunks.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>

#include "transport/sftp.h"
#include "transport/sftp_fs.h"
#include "transport/ssh_internal.h"
#include "base/strbuf.h"

/* The copy buffer: an upload keeps at least half of it in write requests, which must
 * be more than the server's channel window (OpenSSH's is 2 MiB) or the pipe drains
 * while the window is reopened: with 2 MiB here, a 32 MiB upload over 50 ms took 2.7 s
 * against scp's 1.9 s; with 4 MiB, 1.9 s. */
#define COPY_BUF (4 * 1024 * 1024)
#define SFTP_TIMEOUT_MS 120000          /* one libssh2 call without progress: connection lost */

/* ---- the local file system ---- */

static int local_err(struct dp_error *err, const char *what, const char *path)
{
	int kind = errno == ENOENT ? DPE_NOTFOUND : DPE_FAIL;
	return dp_err(err, kind, "cannot %s '%s': %s", what, path, strerror(errno));
}

static void stat_from(struct fstat_ *st, const struct stat *sb)
{
	st->type = S_ISREG(sb->st_mode) ? T_FILE : S_ISDIR(sb->st_mode) ? T_DIR :
		   S_ISLNK(sb->st_mode) ? T_LINK : T_OTHER;
	st->mode = (unsigned)sb->st_mode & 07777;
	st->size = (uint64_t)sb->st_size;
	st->atime = (long)sb->st_atime;
	st->mtime = (long)sb->st_mtime;
}

static int l_stat(struct fs *fs, const char *path, bool follow, struct fstat_ *st, struct dp_error *err)
{
	struct stat sb;
	(void)fs;
	if ((follow ? stat(path, &sb) : lstat(path, &sb)) < 0)
		return local_err(err, "stat", path);
	stat_from(st, &sb);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int l_list(struct fs *fs, const char *path, char ***names, struct dp_error *err)
{
	(void)fs;
	DIR *d = opendir(path);
	if (!d)
		return local_err(err, "open directory", path);
	struct dirent *e;
	while ((e = readdir(d)))
		if (!streq(e->d_name, ".") && !streq(e->d_name, ".."))
			strv_add(names, e->d_name);
	closedir(d);
	if (*names)
		qsort(*names, strv_len(*names), sizeof(char *), cmp_str);
	return 0;
}

static int l_readlink(struct fs *fs, const char *path, char **target, struct dp_error *err)
{
	char buf[4096];
	(void)fs;
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return local_err(err, "read link", path);
	*target = xstrndup(buf, (size_t)n);
	return 0;
}

static int l_symlink(struct fs *fs, const char *target, const char *path, struct dp_error *err)
{
	(void)fs;
	if (symlink(target, path) < 0 && (errno != EEXIST || unlink(path) < 0 || symlink(target, path) < 0))
		return local_err(err, "create symlink", path);
	return 0;
}

static int l_mkdir(struct fs *fs, const char *path, struct dp_error *err)
{
	(void)fs;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return local_err(err, "create directory", path);
	return 0;
}

static int l_open_read(struct fs *fs, const char *path, void **h, struct dp_error *err)
{
	(void)fs;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return local_err(err, "open", path);
	*h = (void *)(intptr_t)fd;
	return 0;
}

static ssize_t l_read(struct fs *fs, void *h, char *buf, size_t len, struct dp_error *err)
{
	(void)fs;
	for (;;) {
		ssize_t n = read((int)(intptr_t)h, buf, len);
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return dp_err(err, DPE_FAIL, "cannot read: %s", strerror(errno));
	}
}

static void l_close_read(struct fs *fs, void *h)
{
	(void)fs;
	close((int)(intptr_t)h);
}

/* ".NAME.dispatch-XXXXXX" in the directory of path */
char *sftp_temp_name(const char *path, const char *suffix)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	return xasprintf("%.*s.%s.dispatch-%s", dirlen, path, base, suffix);
}

struct l_file {
	int fd;
	char *path;
};

static int l_open_temp(struct fs *fs, const char *path, char **tmp, void **h, struct dp_error *err)
{
	(void)fs;
	char *t = sftp_temp_name(path, "XXXXXX");
	int fd = mkstemp(t);
	if (fd < 0) {
		local_err(err, "create a file beside", path);
		free(t);
		return -1;
	}
	struct l_file *f = xmalloc(sizeof(*f));
	f->fd = fd;
	f->path = t;
	*tmp = xstrdup(t);
	*h = f;
	return 0;
}

static ssize_t l_write(struct fs *fs, void *h, const char *buf, size_t len, struct dp_error *err)
{
	struct l_file *f = h;
	(void)fs;
	for (;;) {
		ssize_t n = write(f->fd, buf, len);
		if (n >= 0)
			return n;
		if (errno != EINTR)
			return dp_err(err, DPE_FAIL, "cannot write '%s': %s", f->path, strerror(errno));
	}
}

static void l_free(struct l_file *f)
{
	free(f->path);
	free(f);
}

static int l_finish(struct fs *fs, void *h, const struct fstat_ *st, struct dp_error *err)
{
	struct l_file *f = h;
	int r = 0;
	(void)fs;
	if (fchmod(f->fd, st->mode) < 0)
		r = local_err(err, "set the mode of", f->path);
	if (r == 0 && st->mtime >= 0) {
		struct timespec ts[2] = { { st->atime, 0 }, { st->mtime, 0 } };
		if (futimens(f->fd, ts) < 0)
			r = local_err(err, "set the times of", f->path);
	}
	if (close(f->fd) < 0 && r == 0)
		r = local_err(err, "write", f->path);
	l_free(f);
	return r;
}

static void l_abandon(struct fs *fs, void *h)
{
	struct l_file *f = h;
	(void)fs;
	close(f->fd);
	l_free(f);
}

static int l_set_attrs(struct fs *fs, const char *path, const struct fstat_ *st, struct dp_error *err)
{
	(void)fs;
	if (chmod(path, st->mode) < 0)
		return local_err(err, "set the mode of", path);
	if (st->mtime >= 0) {
		struct timespec ts[2] = { { st->atime, 0 }, { st->mtime, 0 } };
		if (utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW) < 0)
			return local_err(err, "set the times of", path);
	}
	return 0;
}

static int l_rename(struct fs *fs, const char *from, const char *to, struct dp_error *err)
{
	(void)fs;
	if (rename(from, to) < 0)
		return dp_err(err, DPE_FAIL, "cannot rename '%s' to '%s': %s", from, to, strerror(errno));
	return 0;
}

static int l_unlink(struct fs *fs, const char *path, struct dp_error *err)
{
	(void)fs;
	if (unlink(path) < 0)
		return local_err(err, "remove", path);
	return 0;
}

static const struct fs_ops local_ops = {
	l_stat, l_list, l_readlink, l_symlink, l_mkdir, l_open_read, l_read, l_close_read, l_open_temp,
	l_write, l_finish, l_abandon, l_set_attrs, l_rename, l_unlink,
};

/* ---- the remote file system ---- */

static const char *fx_name(unsigned long code)
{
	switch (code) {
	case LIBSSH2_FX_NO_SUCH_FILE: return "No such file or directory";
	case LIBSSH2_FX_PERMISSION_DENIED: return "Permission denied";
	case LIBSSH2_FX_FAILURE: return "Failure";
	case LIBSSH2_FX_FILE_ALREADY_EXISTS: return "File exists";
	case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: return "No space left on device";
	case LIBSSH2_FX_QUOTA_EXCEEDED: return "Quota exceeded";
	case LIBSSH2_FX_NOT_A_DIRECTORY: return "Not a directory";
	case LIBSSH2_FX_OP_UNSUPPORTED: return "Operation unsupported";
	default: return "SFTP error";
	}
}

/* The failure of the last SFTP call: a status from the server, or a dead connection. */
static int r_err(struct fs *fs, struct dp_error *err, const char *what, const char *path)
{
	char *msg = NULL;
	int code = libssh2_session_last_error(fs->ls, &msg, NULL, 0);
	if (code == LIBSSH2_ERROR_SFTP_PROTOCOL) {
		unsigned long fx = libssh2_sftp_last_error(fs->sftp);
		int kind = fx == LIBSSH2_FX_NO_SUCH_FILE ? DPE_NOTFOUND : DPE_FAIL;
		return dp_err(err, kind, "cannot %s '%s%s': %s", what, fs->name, path, fx_name(fx));
	}
	fs->dead = true;
	libssh2_session_set_timeout(fs->ls, 1000);     /* what follows is cleanup only */
	return dp_err(err, DPE_CONNECT, "connection to '%s' lost while trying to %s '%s': %s",
		      ssh_session_name(fs->s), what, path, msg && *msg ? msg : "unknown error");
}

static void stat_from_attrs(struct fstat_ *st, const LIBSSH2_SFTP_ATTRIBUTES *a)
{
	unsigned long m = a->permissions;
	st->type = LIBSSH2_SFTP_S_ISREG(m) ? T_FILE : LIBSSH2_SFTP_S_ISDIR(m) ? T_DIR :
		   LIBSSH2_SFTP_S_ISLNK(m) ? T_LINK : T_OTHER;
	st->mode = (unsigned)(m & 07777);
	st->size = a->filesize;
	st->atime = (long)a->atime;
	st->mtime = (long)a->mtime;
}

static int r_stat(struct fs *fs, const char *path, bool follow, struct fstat_ *st, struct dp_error *err)
{
	LIBSSH2_SFTP_ATTRIBUTES a;
	if (libssh2_sftp_stat_ex(fs->sftp, path, (unsigned)strlen(path),
				 follow ? LIBSSH2_SFTP_STAT : LIBSSH2_SFTP_LSTAT, &a) != 0)
		return r_err(fs, err, "stat", path);
	stat_from_attrs(st, &a);
	return 0;
}

static int r_list(struct fs *fs, const char *path, char ***names, struct dp_error *err)
{
	LIBSSH2_SFTP_HANDLE *d = libssh2_sftp_opendir(fs->sftp, path);
	if (!d)
		return r_err(fs, err, "open directory", path);
	char name[4096];
	LIBSSH2_SFTP_ATTRIBUTES a;
	int n, r = 0;
	while ((n = libssh2_sftp_readdir(d, name, sizeof(name), &a)) > 0)
		if (!streq(name, ".") && !streq(name, ".."))
			strv_add(names, name);
	if (n < 0)
		r = r_err(fs, err, "read directory", path);
	libssh2_sftp_closedir(d);
	if (*names)
		qsort(*names, strv_len(*names), sizeof(char *), cmp_str);
	return r;
}

static int r_readlink(struct fs *fs, const char *path, char **target, struct dp_error *err)
{
	char buf[4096];
	int n = libssh2_sftp_readlink(fs->sftp, path, buf, sizeof(buf) - 1);
	if (n < 0)
		return r_err(fs, err, "read link", path);
	*target = xstrndup(buf, (size_t)n);
	return 0;
}

/* Whether path is a symlink to target. */
static bool r_link_is(struct fs *fs, const char *path, const char *target)
{
	char buf[4096];
	int n = libssh2_sftp_readlink(fs->sftp, path, buf, sizeof(buf) - 1);
	return n >= 0 && (size_t)n == strlen(target) && memcmp(buf, target, (size_t)n) == 0;
}

/* OpenSSH's sftp-server takes SSH_FXP_SYMLINK's arguments as symlink(2) does
 * (target first), which is the order libssh2 sends them in. libssh2 (1.10, and
 * 1.11.1 still) reports failure even when the link was made (it reads the reply's
 * request id as the status code), so the result is read back. An existing link or file there is replaced, as cp -r does. */
static int r_symlink(struct fs *fs, const char *target, const char *path, struct dp_error *err)
{
	struct fstat_ st;
	struct dp_error ignored;
	if (r_stat(fs, path, false, &st, &ignored) == 0 && st.type != T_DIR)
		libssh2_sftp_unlink(fs->sftp, path);
	if (fs->dead)
		return dp_err(err, ignored.kind, "%s", ignored.msg);
	if (libssh2_sftp_symlink(fs->sftp, target, (char *)path) == 0 || r_link_is(fs, path, target))
		return 0;
	return r_err(fs, err, "create symlink", path);
}

static int r_mkdir(struct fs *fs, const char *path, struct dp_error *err)
{
	if (libssh2_sftp_mkdir(fs->sftp, path, 0700) == 0)
		return 0;
	struct fstat_ st;
	struct dp_error ignored;
	if (!fs->dead && r_stat(fs, path, true, &st, &ignored) == 0 && st.type == T_DIR)
		return 0;
	return r_err(fs, err, "create directory", path);
}

static int r_open_read(struct fs *fs, const char *path, void **h, struct dp_error *err)
{
	LIBSSH2_SFTP_HANDLE *f = libssh2_sftp_open(fs->sftp, path, LIBSSH2_FXF_READ, 0);
	if (!f)
		return r_err(fs, err, "open", path);
	*h = f;
	return 0;
}

static ssize_t r_read(struct fs *fs, void *h, char *buf, size_t len, struct dp_error *err)
{
	ssize_t n = libssh2_sftp_read(h, buf, len);
	if (n < 0)
		return r_err(fs, err, "read", "");
	return n;
}

/* Handles are closed even on a dead connection: libssh2 frees them only there. */
static void r_close_read(struct fs *fs, void *h)
{
	(void)fs;
	libssh2_sftp_close(h);
}

struct r_file {
	LIBSSH2_SFTP_HANDLE *h;
	char *path;
};

static int r_open_temp(struct fs *fs, const char *path, char **tmp, void **h, struct dp_error *err)
{
	static unsigned counter;
	for (int i = 0; i < 10; i++) {
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "%06x", (unsigned)(getpid() * 7919u + (unsigned)time(NULL) * 31u + counter++) & 0xffffff);
		char *t = sftp_temp_name(path, suffix);
		LIBSSH2_SFTP_HANDLE *f = libssh2_sftp_open(fs->sftp, t,
			LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_EXCL, 0600);
		if (f) {
			struct r_file *rf = xmalloc(sizeof(*rf));
			rf->h = f;
			rf->path = t;
			*tmp = xstrdup(t);
			*h = rf;
			return 0;
		}
		r_err(fs, err, "create a file beside", path);
		free(t);
		if (fs->dead || libssh2_sftp_last_error(fs->sftp) != LIBSSH2_FX_FAILURE)
			break;          /* FAILURE is how sftp-server says EEXIST */
	}
	return -1;
}

static ssize_t r_write(struct fs *fs, void *h, const char *buf, size_t len, struct dp_error *err)
{
	struct r_file *f = h;
	ssize_t n = libssh2_sftp_write(f->h, buf, len);
	if (n < 0)
		return r_err(fs, err, "write", f->path);
	return n;
}

static void attrs_of(LIBSSH2_SFTP_ATTRIBUTES *a, const struct fstat_ *st)
{
	memset(a, 0, sizeof(*a));
	a->flags = LIBSSH2_SFTP_ATTR_PERMISSIONS;
	a->permissions = st->mode;
	if (st->mtime >= 0) {
		a->flags |= LIBSSH2_SFTP_ATTR_ACMODTIME;
		a->atime = (unsigned long)st->atime;
		a->mtime = (unsigned long)st->mtime;
	}
}

static int r_finish(struct fs *fs, void *h, const struct fstat_ *st, struct dp_error *err)
{
	struct r_file *f = h;
	LIBSSH2_SFTP_ATTRIBUTES a;
	int r = 0;
	attrs_of(&a, st);
	if (libssh2_sftp_fsetstat(f->h, &a) != 0)
		r = r_err(fs, err, "set the mode of", f->path);
	if (libssh2_sftp_close(f->h) != 0 && r == 0)
		r = r_err(fs, err, "write", f->path);
	free(f->path);
	free(f);
	return r;
}

static void r_abandon(struct fs *fs, void *h)
{
	struct r_file *f = h;
	(void)fs;
	libssh2_sftp_close(f->h);
	free(f->path);
	free(f);
}

static int r_set_attrs(struct fs *fs, const char *path, const struct fstat_ *st, struct dp_error *err)
{
	LIBSSH2_SFTP_ATTRIBUTES a;
	attrs_of(&a, st);
	if (libssh2_sftp_setstat(fs->sftp, path, &a) != 0)
		return r_err(fs, err, "set the mode of", path);
	return 0;
}

/* SFTP version 3 has no overwriting rename (OpenSSH's server links the new name and
 * fails when it exists), so the temporary file takes the final name through OpenSSH's
 * posix-rename@openssh.com extension: rename(2), atomic, replacing what was there.
 * A server without the extension gets the plain rename, after removing an existing
 * file: for a moment the final name is absent there, but never partial. */
static int r_rename(struct fs *fs, const char *from, const char *to, struct dp_error *err)
{
	long flags = LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE;
	if (libssh2_sftp_posix_rename_ex(fs->sftp, from, strlen(from), to, strlen(to)) == 0)
		return 0;
	if (libssh2_session_last_errno(fs->ls) != LIBSSH2_ERROR_SFTP_PROTOCOL)
		return r_err(fs, err, "rename a temporary file to", to); /* the connection */
	if (libssh2_sftp_rename_ex(fs->sftp, from, (unsigned)strlen(from), to, (unsigned)strlen(to), flags) == 0)
		return 0;
	if (!fs->dead && libssh2_sftp_unlink(fs->sftp, to) == 0 &&
	    libssh2_sftp_rename_ex(fs->sftp, from, (unsigned)strlen(from), to, (unsigned)strlen(to), flags) == 0)
		return 0;
	return r_err(fs, err, "rename a temporary file to", to);
}

static int r_unlink(struct fs *fs, const char *path, struct dp_error *err)
{
	if (fs->dead)
		return dp_err(err, DPE_CONNECT, "connection lost");
	if (libssh2_sftp_unlink(fs->sftp, path) != 0)
		return r_err(fs, err, "remove", path);
	return 0;
}

static const struct fs_ops remote_ops = {
	r_stat, r_list, r_readlink, r_symlink, r_mkdir, r_open_read, r_read, r_close_read, r_open_temp,
	r_write, r_finish, r_abandon, r_set_attrs, r_rename, r_unlink,
};

/* ---- the copy ---- */

struct copy {
	const struct sftp_copy *c;
	struct fs *from, *to;
	char *buf;
	int result;                     /* 0, or the first failure, in first_err */
	struct dp_error first_err;
};

static bool cancelled(const struct copy *cp)
{
	return cp->c->cancel && *cp->c->cancel;
}

/* A failure of one item: remembered, reported, and the copy goes on (unless the
 * connection is gone, or we were interrupted: then everything stops). */
static int item_failed(struct copy *cp, struct dp_error *e)
{
	if (cancelled(cp))
		dp_err(e, DPE_FAIL, "interrupted");
	bool fatal = e->kind == DPE_CONNECT || cancelled(cp);
	if (!cp->result) {
		cp->result = -1;
		cp->first_err = *e;
	}
	if (cp->c->failed)
		cp->c->failed(cp->c->data, e);
	return fatal ? -1 : 0;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	if (n == 0 || streq(dir, "."))
		return xstrdup(name);
	return xasprintf("%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", name);
}

static void done_item(struct copy *cp, const char *src, const char *dest, enum sftp_item_type type,
		      uint64_t bytes, unsigned mode)
{
	struct sftp_item it = { src, dest, type, bytes, mode };
	if (cp->c->copied)
		cp->c->copied(cp->c->data, &it);
}

static int copy_file(struct copy *cp, const char *src, const char *dest, const struct fstat_ *st,
		     struct dp_error *err)
{
	void *in = NULL, *out = NULL;
	_cleanup_free_ char *tmp = NULL;
	uint64_t done = 0, got = 0;
	size_t off = 0, have = 0;       /* the bytes not yet taken: buf[off, off + have) */
	bool eof = false;

	if (cp->from->ops->open_read(cp->from, src, &in, err) < 0)
		return -1;
	if (cp->to->ops->open_temp(cp->to, dest, &tmp, &out, err) < 0)
		goto fail;
	if (cp->c->progress)
		cp->c->progress(cp->c->data, src, 0, st->size);
	while (!eof || have) {
		if (cancelled(cp)) {
			dp_err(err, DPE_FAIL, "interrupted");
			goto fail;
		}
		/* Top the buffer up once half of it was taken: the bytes left (at most half)
		 * move to its start, so each byte is moved at most once, where moving the
		 * rest after every write (an SFTP write returns as soon as one 30 kB request
		 * is acknowledged) moved the whole buffer per request. The writer is always
		 * offered at least COPY_BUF / 2 (the SFTP requests kept in flight) until the
		 * end of the file. */
		if (!eof && have <= COPY_BUF / 2) {
			if (off) {
				memmove(cp->buf, cp->buf + off, have);
				off = 0;
			}
			/* The size the source had when it was looked at is copied, as scp
			 * does (a file that shrinks ends early). Asking for no more than that
			 * matters: libssh2 keeps four times the length asked for in read
			 * requests in flight, so a 5 kB file read into the whole buffer had
			 * 8 MiB of requests answered before its handle could close, and
			 * reading on to see the end cost a round trip per file. */
			size_t room = COPY_BUF - have;
			if (st->size - got < room)
				room = (size_t)(st->size - got);
			ssize_t n = room ? cp->from->ops->read(cp->from, in, cp->buf + have, room, err) : 0;
			if (n < 0)
				goto fail;
			have += (size_t)n;
			got += (uint64_t)n;
			if (n == 0 || got == st->size)
				eof = true;
		}
		if (!have)
			continue;
		ssize_t w = cp->to->ops->write(cp->to, out, cp->buf + off, have, err);
		if (w < 0)
			goto fail;
		off += (size_t)w;
		have -= (size_t)w;
		done += (uint64_t)w;
		if (cp->c->progress && w > 0)
			cp->c->progress(cp->c->data, src, done, st->size);
	}
	struct fstat_ want = *st;
	if (!cp->c->preserve) {
		want.mode &= 0777;
		want.mtime = -1;
	}
	int r = cp->to->ops->finish(cp->to, out, &want, err);
	out = NULL;
	if (r < 0 || cp->to->ops->rename(cp->to, tmp, dest, err) < 0)
		goto fail;
	cp->from->ops->close_read(cp->from, in);
	done_item(cp, src, dest, SFTP_FILE, done, want.mode);
	return 0;
fail:
	if (out)
		cp->to->ops->abandon(cp->to, out);
	if (tmp) {
		struct dp_error ignored;
		cp->to->ops->unlink(cp->to, tmp, &ignored);
	}
	cp->from->ops->close_read(cp->from, in);
	return -1;
}

static int copy_item(struct copy *cp, const char *src, const char *dest, bool top);

static int copy_dir(struct copy *cp, const char *src, const char *dest, const struct fstat_ *st,
		    struct dp_error *err)
{
	_cleanup_strv_free_ char **names = NULL;
	struct fstat_ dst;
	struct dp_error e2;

	if (cp->to->ops->stat(cp->to, dest, true, &dst, &e2) == 0 && dst.type != T_DIR)
		return dp_err(err, DPE_FAIL, "cannot overwrite non-directory '%s%s' with directory '%s%s'",
			      cp->to->name, dest, cp->from->name, src);
	if (cp->to->dead)
		return dp_err(err, e2.kind, "%s", e2.msg);
	if (cp->from->ops->list(cp->from, src, &names, err) < 0 ||
	    cp->to->ops->mkdir(cp->to, dest, err) < 0)
		return -1;
	for (char **n = names; n && *n; n++) {
		_cleanup_free_ char *s = join(src, *n), *d = join(dest, *n);
		if (copy_item(cp, s, d, false) < 0)
			return -2;      /* fatal, already recorded */
	}
	struct fstat_ want = *st;
	if (!cp->c->preserve) {
		want.mode &= 0777;
		want.mtime = -1;
	}
	if (cp->to->ops->set_attrs(cp->to, dest, &want, err) < 0)
		return -1;
	done_item(cp, src, dest, SFTP_DIR, 0, want.mode);
	return 0;
}

/* Copies src to dest; returns -1 only when the whole copy must stop. */
static int copy_item(struct copy *cp, const char *src, const char *dest, bool top)
{
	struct dp_error err = { 0 };
	struct fstat_ st;
	int r = 0;

	if (cancelled(cp)) {
		dp_err(&err, DPE_FAIL, "interrupted");
		return item_failed(cp, &err);
	}
	if (cp->from->ops->stat(cp->from, src, top, &st, &err) < 0)
		return item_failed(cp, &err);
	switch (st.type) {
	case T_LINK: {
		_cleanup_free_ char *target = NULL;
		r = cp->from->ops->readlink(cp->from, src, &target, &err);
		if (r == 0)
			r = cp->to->ops->symlink(cp->to, target, dest, &err);
		if (r == 0)
			done_item(cp, src, dest, SFTP_SYMLINK, 0, st.mode);
		break;
	}
	case T_DIR:
		if (!cp->c->recursive)
			r = dp_err(&err, DPE_FAIL, "omitting directory '%s%s' (use -r to copy directories)",
				   cp->from->name, src);
		else
			r = copy_dir(cp, src, dest, &st, &err);
		if (r == -2)
			return -1;
		break;
	case T_FILE: {
		struct fstat_ dst;
		struct dp_error e2;
		if (cp->to->ops->stat(cp->to, dest, true, &dst, &e2) == 0 && dst.type == T_DIR)
			r = dp_err(&err, DPE_FAIL, "cannot overwrite directory '%s%s' with non-directory '%s%s'",
				   cp->to->name, dest, cp->from->name, src);
		else if (cp->to->dead)
			r = dp_err(&err, e2.kind, "%s", e2.msg);
		else
			r = copy_file(cp, src, dest, &st, &err);
		break;
	}
	case T_OTHER:
		r = dp_err(&err, DPE_FAIL, "skipping '%s%s': not a regular file", cp->from->name, src);
		break;
	}
	if (r < 0)
		return item_failed(cp, &err);
	return 0;
}

/* The last component of a source path, trailing slashes ignored ("a/b/" -> "b"). */
static char *base_name(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	size_t start = n;
	while (start > 0 && path[start - 1] != '/')
		start--;
	return xstrndup(path + start, n - start);
}

static int copy_all(struct fs *from, struct fs *to, char *const *srcs, const char *dest,
		    const struct sftp_copy *c, struct dp_error *err)
{
	struct copy cp = { .c = c, .from = from, .to = to };
	struct fstat_ st;
	struct dp_error e2;
	bool into = false;

	if (to->ops->stat(to, dest, true, &st, &e2) == 0)
		into = st.type == T_DIR;
	else if (e2.kind != DPE_NOTFOUND)
		return dp_err(err, e2.kind, "%s", e2.msg);
	if (!into && strv_len(srcs) > 1)
		return dp_err(err, DPE_FAIL, "target '%s%s' is not a directory", to->name, dest);

	cp.buf = xmalloc(COPY_BUF);
	for (char *const *s = srcs; *s; s++) {
		_cleanup_free_ char *base = base_name(*s);
		_cleanup_free_ char *d = NULL;
		if (!into)
			d = xstrdup(dest);
		else if (streq(base, ".") || streq(base, "..") || streq(base, "/"))
			d = xstrdup(dest);      /* "cp -r . host:dir" merges into dir */
		else
			d = join(dest, base);
		if (copy_item(&cp, *s, d, true) < 0)
			break;
	}
	free(cp.buf);
	if (cp.result < 0) {
		*err = cp.first_err;
		return -1;
	}
	return 0;
}

/* "~" and "~/x" are the home directory, which is where relative SFTP paths start. */
static int remote_path(const char *path, char **out, struct dp_error *err)
{
	if (!*path || streq(path, "~"))
		*out = xstrdup(".");
	else if (startswith(path, "~/"))
		*out = xstrdup(path[2] ? path + 2 : ".");
	else if (path[0] == '~')
		return dp_err(err, DPE_INPUT, "cannot use '%s': only '~' and '~/...' are understood; "
			      "give the path to the other user's home", path);
	else
		*out = xstrdup(path);
	return 0;
}

static int open_remote(struct ssh_session *s, struct fs *fs, char **name, struct dp_error *err)
{
	LIBSSH2_SESSION *ls = ssh_session_libssh2(s);
	*name = xasprintf("%s:", ssh_session_name(s));
	fs->ops = &remote_ops;
	fs->name = *name;
	fs->s = s;
	if (ssh_session_mux(s))
		return msftp_open(s, fs, err);
	fs->ls = ls;
	libssh2_session_set_blocking(ls, 1);
	libssh2_session_set_timeout(ls, SFTP_TIMEOUT_MS);
	fs->sftp = libssh2_sftp_init(ls);
	if (!fs->sftp) {
		char *msg = NULL;
		libssh2_session_last_error(ls, &msg, NULL, 0);
		return dp_err(err, DPE_CONNECT, "cannot start SFTP on '%s': %s (does the server "
			      "have the sftp subsystem?)", ssh_session_name(s), msg ? msg : "");
	}
	return 0;
}

static void close_remote(struct fs *fs)
{
	msftp_close(fs);
	if (fs->sftp) {
		if (fs->dead)
			libssh2_session_set_timeout(fs->ls, 1000);
		libssh2_sftp_shutdown(fs->sftp);
	}
}

/* ---- single files on an open SFTP session (job scripts, packed code) ---- */

struct sftp_files {
	struct fs fs;
	char *name;
	long timeout_ms;        /* the session's, given back at the end */
	void (*progress)(void *data, const char *path, uint64_t done, uint64_t total);
	void *progress_data;
};

void sftp_files_set_progress(struct sftp_files *f,
			     void (*fn)(void *data, const char *path, uint64_t done, uint64_t total),
			     void *data)
{
	f->progress = fn;
	f->progress_data = data;
}

int sftp_files_open(struct ssh_session *s, struct sftp_files **out, struct dp_error *err)
{
	struct sftp_files *f = xcalloc(1, sizeof(*f));
	*out = NULL;
	if (ssh_session_mux(s)) {
		if (open_remote(s, &f->fs, &f->name, err) < 0) {
			free(f->name);
			free(f);
			return -1;
		}
		*out = f;
		return 0;
	}
	f->timeout_ms = libssh2_session_get_timeout(ssh_session_libssh2(s));
	if (open_remote(s, &f->fs, &f->name, err) < 0) {
		libssh2_session_set_timeout(f->fs.ls, f->timeout_ms);
		free(f->name);
		free(f);
		return -1;
	}
	*out = f;
	return 0;
}

void sftp_files_close(struct sftp_files *f)
{
	if (!f)
		return;
	close_remote(&f->fs);
	if (f->fs.ls)
		libssh2_session_set_timeout(f->fs.ls, f->timeout_ms);
	free(f->name);
	free(f);
}

int sftp_put_new(struct sftp_files *f, const char *path, const void *buf, size_t len, int mode,
		 struct dp_error *err)
{
	if (f->fs.msftp)
		return msftp_put_new(&f->fs, path, buf, len, mode, err);
	LIBSSH2_SFTP_HANDLE *h = libssh2_sftp_open(f->fs.sftp, path,
		LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_EXCL, mode);
	if (!h)
		return r_err(&f->fs, err, "create", path);
	struct r_file rf = { .h = h, .path = (char *)path };
	const uint64_t total = len;
	if (f->progress)
		f->progress(f->progress_data, path, 0, total);
	/* libssh2 sends all it is offered as requests at once: offer COPY_BUF at a time,
	 * as the copies do, so that the requests in flight stay bounded and the progress
	 * hook hears of each acknowledgement. */
	for (const char *p = buf; len;) {
		ssize_t n = r_write(&f->fs, &rf, p, len < COPY_BUF ? len : COPY_BUF, err);
		if (n < 0) {
			libssh2_sftp_close(h);
			return -1;
		}
		p += n;
		len -= (size_t)n;
		if (f->progress && n > 0)
			f->progress(f->progress_data, path, total - len, total);
	}
	if (libssh2_sftp_close(h) != 0)
		return r_err(&f->fs, err, "write", path);
	return 0;
}

int sftp_size(struct sftp_files *f, const char *path, uint64_t *size, struct dp_error *err)
{
	struct fstat_ st;
	struct dp_error e = { 0 };
	if (f->fs.ops->stat(&f->fs, path, true, &st, &e) == 0) {
		*size = st.size;
		return 1;
	}
	if (e.kind == DPE_NOTFOUND ||
	    (!f->fs.dead && !f->fs.msftp && libssh2_sftp_last_error(f->fs.sftp) == LIBSSH2_FX_NO_SUCH_PATH))
		return 0;
	*err = e;
	return -1;
}

int sftp_rename_new(struct sftp_files *f, const char *from, const char *to, struct dp_error *err)
{
	/* Without OVERWRITE: SFTP v3 rename (what OpenSSH speaks) refuses to replace. */
	if (f->fs.msftp)
		return msftp_rename_new(&f->fs, from, to, err);
	if (libssh2_sftp_rename_ex(f->fs.sftp, from, (unsigned)strlen(from), to, (unsigned)strlen(to),
				   LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE) == 0)
		return 0;
	r_err(&f->fs, err, "rename a temporary file to", to);
	uint64_t size;
	struct dp_error e2 = { 0 };
	if (!f->fs.dead && sftp_size(f, to, &size, &e2) == 1)
		return 1;
	return -1;
}

int sftp_remove(struct sftp_files *f, const char *path, struct dp_error *err)
{
	struct dp_error e = { 0 };
	return f->fs.ops->unlink(&f->fs, path, err ? err : &e);
}

int sftp_upload(struct ssh_session *s, char *const *srcs, const char *dest,
		const struct sftp_copy *c, struct dp_error *err)
{
	struct fs local = { .ops = &local_ops, .name = "" }, remote = { 0 };
	_cleanup_free_ char *name = NULL, *rdest = NULL;
	if (remote_path(dest, &rdest, err) < 0)
		return -1;
	if (open_remote(s, &remote, &name, err) < 0)
		return -1;
	int r = copy_all(&local, &remote, srcs, rdest, c, err);
	close_remote(&remote);
	return r;
}

int sftp_download(struct ssh_session *s, char *const *srcs, const char *dest,
		  const struct sftp_copy *c, struct dp_error *err)
{
	struct fs local = { .ops = &local_ops, .name = "" }, remote = { 0 };
	_cleanup_free_ char *name = NULL;
	_cleanup_strv_free_ char **rsrcs = NULL;
	for (char *const *p = srcs; *p; p++) {
		char *r;
		if (remote_path(*p, &r, err) < 0)
			return -1;
		strv_push(&rsrcs, r);
	}
	if (open_remote(s, &remote, &name, err) < 0)
		return -1;
	int r = copy_all(&remote, &local, rsrcs, dest, c, err);
	close_remote(&remote);
	return r;
}

bool sftp_split_operand(const char *arg, char **host, char **path)
{
	const char *p = arg;
	*host = *path = NULL;
	if (arg[0] == '/' || arg[0] == ':' || startswith(arg, "./") || startswith(arg, "../"))
		return false;
	/* user@[v6::addr]:path: the colons inside brackets are the address's */
	const char *at = strchr(arg, '@');
	const char *h = at && (!strchr(arg, ':') || at < strchr(arg, ':')) ? at + 1 : arg;
	if (*h == '[') {
		const char *close = strchr(h, ']');
		if (!close)
			return false;
		p = close + 1;
	}
	for (; *p && *p != ':'; p++)
		if (*p == '/')
			return false;
	if (*p != ':' || p == arg)
		return false;
	const char *colon = p;
	/* host:PORT:path */
	const char *q = colon + 1;
	while (*q >= '0' && *q <= '9')
		q++;
	if (q > colon + 1 && *q == ':')
		colon = q;
	*host = xstrndup(arg, (size_t)(colon - arg));
	*path = xstrdup(colon + 1);
	return true;
}
