/* SPDX-License-Identifier: MIT */
/*
 * cp and single files through an OpenSSH master: libssh2's SFTP needs a libssh2
 * channel, which a session through a master does not have, so this speaks SFTP
 * version 3 (draft-ietf-secsh-filexfer-02, as OpenSSH's sftp-server) itself, over the
 * pipes of the master's "sftp" subsystem session. It is sftp.c's third file system
 * (struct fs_ops): the copy algorithm, and so its guarantees (a temporary name, the
 * mode set before the rename, posix-rename@openssh.com to replace atomically,
 * progress), stay sftp.c's.
 *
 * Reads and writes are pipelined: one call on a 2 MB buffer sends its 32 kB requests
 * all at once and then collects the answers in order (sftp-server answers in order),
 * reading while it sends so that neither pipe can fill up and stall both sides.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>

#include "transport/mux.h"
#include "transport/sftp_fs.h"
#include "transport/ssh_internal.h"

#define TIMEOUT_MS 120000       /* no progress at all for this long: connection lost */
#define CHUNK 32768
#define MAX_INFLIGHT 64
#define MAX_PACKET (256u * 1024u)

enum {
	FXP_INIT = 1, FXP_VERSION = 2, FXP_OPEN = 3, FXP_CLOSE = 4, FXP_READ = 5, FXP_WRITE = 6,
	FXP_LSTAT = 7, FXP_SETSTAT = 9, FXP_FSETSTAT = 10, FXP_OPENDIR = 11,
	FXP_READDIR = 12, FXP_REMOVE = 13, FXP_MKDIR = 14, FXP_RMDIR = 15, FXP_STAT = 17, FXP_RENAME = 18,
	FXP_READLINK = 19, FXP_SYMLINK = 20, FXP_STATUS = 101, FXP_HANDLE = 102,
	FXP_DATA = 103, FXP_NAME = 104, FXP_ATTRS = 105, FXP_EXTENDED = 200,
};
enum { FX_OK = 0, FX_EOF = 1, FX_NO_SUCH_FILE = 2, FX_PERMISSION_DENIED = 3, FX_FAILURE = 4 };
#define FXF_READ 0x01u
#define FXF_WRITE 0x02u
#define FXF_CREAT 0x08u
#define FXF_EXCL 0x20u
#define ATTR_SIZE 0x01u
#define ATTR_UIDGID 0x02u
#define ATTR_PERMISSIONS 0x04u
#define ATTR_ACMODTIME 0x08u
#define ATTR_EXTENDED 0x80000000u
#define S_IFMT_ 0170000u
#define S_IFREG_ 0100000u
#define S_IFDIR_ 0040000u
#define S_IFLNK_ 0120000u

struct msftp {
	struct ssh_session *s;
	struct mux_session *ms;
	int in, out;                    /* the server's stdin (we write), stdout (we read) */
	struct strbuf obuf;             /* requests not yet written */
	size_t ooff;
	struct strbuf ibuf;             /* answers read, not yet taken */
	size_t ioff;
	uint32_t next_id;
	bool posix_rename;
	bool ended;                     /* the session ended: read stdout to its end */
	struct dp_error lost;           /* kind != 0: the connection is gone, and why */
	/* Writes whose answers are still to come (m_write leaves up to MAX_INFLIGHT for
	 * its next call, so the pipeline never empties between calls): their ids from
	 * wfirst, the file's fs and path, the first failure among them. */
	size_t wpending;
	uint32_t wfirst;
	struct fs *wfs;
	const char *wpath;
	struct dp_error werr;
};

/* An answer: its type, id, and the bytes after them. */
struct reply {
	uint8_t type;
	uint32_t id;
	const uint8_t *p;
	size_t n;
	struct strbuf pkt;
};

/* ---- encoding ---- */

static void put_u32(struct strbuf *sb, uint32_t v)
{
	char b[4] = { (char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v };
	strbuf_add(sb, b, 4);
}

static void put_u64(struct strbuf *sb, uint64_t v)
{
	put_u32(sb, (uint32_t)(v >> 32));
	put_u32(sb, (uint32_t)v);
}

static void put_strn(struct strbuf *sb, const void *s, size_t n)
{
	put_u32(sb, (uint32_t)n);
	strbuf_add(sb, s, n);
}

static void put_str(struct strbuf *sb, const char *s)
{
	put_strn(sb, s, strlen(s));
}

static void put_attrs(struct strbuf *sb, const struct fstat_ *st, unsigned mode_only)
{
	uint32_t flags = ATTR_PERMISSIONS;
	if (st && st->mtime >= 0)
		flags |= ATTR_ACMODTIME;
	put_u32(sb, flags);
	put_u32(sb, st ? st->mode : mode_only);
	if (flags & ATTR_ACMODTIME) {
		put_u32(sb, (uint32_t)st->atime);
		put_u32(sb, (uint32_t)st->mtime);
	}
}

static bool get_u32(struct reply *r, uint32_t *v)
{
	if (r->n < 4)
		return false;
	*v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	r->n -= 4;
	return true;
}

static bool get_u64(struct reply *r, uint64_t *v)
{
	uint32_t hi, lo;
	if (!get_u32(r, &hi) || !get_u32(r, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

static bool get_str(struct reply *r, const uint8_t **s, uint32_t *len)
{
	if (!get_u32(r, len) || r->n < *len)
		return false;
	*s = r->p;
	r->p += *len;
	r->n -= *len;
	return true;
}

static bool get_attrs(struct reply *r, struct fstat_ *st)
{
	uint32_t flags, v, v2, count;
	uint64_t size = 0;
	const uint8_t *s;
	memset(st, 0, sizeof(*st));
	st->type = T_OTHER;
	if (!get_u32(r, &flags))
		return false;
	if ((flags & ATTR_SIZE) && !get_u64(r, &size))
		return false;
	st->size = size;
	if ((flags & ATTR_UIDGID) && (!get_u32(r, &v) || !get_u32(r, &v2)))
		return false;
	if (flags & ATTR_PERMISSIONS) {
		if (!get_u32(r, &v))
			return false;
		st->mode = v & 07777;
		st->type = (v & S_IFMT_) == S_IFREG_ ? T_FILE : (v & S_IFMT_) == S_IFDIR_ ? T_DIR :
			   (v & S_IFMT_) == S_IFLNK_ ? T_LINK : T_OTHER;
	}
	if (flags & ATTR_ACMODTIME) {
		if (!get_u32(r, &v) || !get_u32(r, &v2))
			return false;
		st->atime = (long)v;
		st->mtime = (long)v2;
	}
	if (flags & ATTR_EXTENDED) {
		if (!get_u32(r, &count))
			return false;
		for (uint32_t i = 0; i < count; i++)
			if (!get_str(r, &s, &v) || !get_str(r, &s, &v))
				return false;
	}
	return true;
}

ssize_t msftp_parse_attrs(const void *buf, size_t len, struct fstat_ *st)
{
	struct reply r = { .p = buf, .n = len };
	if (!get_attrs(&r, st))
		return -1;
	return (ssize_t)(len - r.n);
}

int msftp_parse_names(const void *buf, size_t len, struct sftp_dirent **e, size_t *n)
{
	struct reply r = { .p = buf, .n = len };
	uint32_t count;
	if (!get_u32(&r, &count))
		return -1;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *s, *l;
		uint32_t sl, ll, flags;
		struct fstat_ st;
		if (!get_str(&r, &s, &sl) || !get_str(&r, &l, &ll))
			return -1;
		struct reply peek = r;
		if (!get_u32(&peek, &flags) || !get_attrs(&r, &st))
			return -1;
		*e = xrealloc(*e, (*n + 1) * sizeof(**e));
		struct sftp_dirent *d = &(*e)[(*n)++];
		d->name = xmalloc((size_t)sl + 1);
		memcpy(d->name, s, sl);
		d->name[sl] = '\0';
		d->len = sl;
		d->st = st;
		d->has_st = (flags & (ATTR_SIZE | ATTR_PERMISSIONS)) == (ATTR_SIZE | ATTR_PERMISSIONS);
	}
	return 0;
}

int msftp_parse_version(const void *body, size_t len, uint32_t *version, bool *posix_rename)
{
	struct reply r = { .p = body, .n = len };
	*posix_rename = false;
	if (r.n < 1 || r.p[0] != FXP_VERSION)
		return -1;
	r.p++;
	r.n--;
	if (!get_u32(&r, version))
		return -1;
	while (r.n) {
		const uint8_t *name, *data;
		uint32_t nl, dl;
		if (!get_str(&r, &name, &nl) || !get_str(&r, &data, &dl))
			return -1;
		if (nl == 24 && memcmp(name, "posix-rename@openssh.com", 24) == 0)
			*posix_rename = true;
	}
	return 0;
}

/* A request of type with a new id, its length patched in by end(). */
/* A request of type at the end of sb: at 0, sb holds it alone (sent by end);
 * at sb->len, it follows what sb holds (the output buffer: end_in_place). */
static uint32_t begin(struct msftp *m, struct strbuf *sb, uint8_t type, size_t at)
{
	if (!at)
		strbuf_reset(sb);
	put_u32(sb, 0);
	strbuf_addch(sb, (char)type);
	uint32_t id = ++m->next_id;
	put_u32(sb, id);
	return id;
}

/* The length of the packet that starts at sb's offset at, once it is whole. */
static void end_in_place(struct strbuf *sb, size_t at)
{
	uint32_t n = (uint32_t)(sb->len - at) - 4;
	sb->buf[at] = (char)(n >> 24);
	sb->buf[at + 1] = (char)(n >> 16);
	sb->buf[at + 2] = (char)(n >> 8);
	sb->buf[at + 3] = (char)n;
}

static void end(struct msftp *m, struct strbuf *sb)
{
	end_in_place(sb, 0);
	strbuf_add(&m->obuf, sb->buf, sb->len);
}

/* ---- moving bytes ---- */

static int lost(struct msftp *m, struct dp_error *err, const char *fmt, ...) _printf_(3, 4);
static int lost(struct msftp *m, struct dp_error *err, const char *fmt, ...)
{
	if (!m->lost.kind) {
		char why[200];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(why, sizeof(why), fmt, ap);
		va_end(ap);
		dp_err(&m->lost, DPE_CONNECT, "connection to '%s' lost (through its master): %s",
		       ssh_session_name(m->s), why);
	}
	*err = m->lost;
	return -1;
}

static bool have_packet(const struct msftp *m)
{
	size_t left = m->ibuf.len - m->ioff;
	if (left < 4)
		return false;
	const uint8_t *p = (const uint8_t *)m->ibuf.buf + m->ioff;
	uint32_t n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	return left - 4 >= n;
}

/* Write pending requests and read answers until all requests are out (need false)
 * or a whole answer is in (need true). */
static int pump(struct msftp *m, bool need, struct dp_error *err)
{
	char buf[65536];
	if (m->lost.kind) {
		*err = m->lost;
		return -1;
	}
	for (;;) {
		if (need ? have_packet(m) : m->ooff == m->obuf.len)
			return 0;
		if (!m->ended) {
			struct dp_error e;
			int r = mux_session_read(m->ms, &e);
			if (r < 0)
				return lost(m, err, "%s", e.msg);
			if (r > 0)
				m->ended = true;
		}
		struct pollfd p[3] = {
			{ .fd = m->out, .events = POLLIN },
			{ .fd = m->ooff < m->obuf.len ? m->in : -1, .events = POLLOUT },
			{ .fd = m->ended ? -1 : mux_session_fd(m->ms), .events = POLLIN },
		};
		int n = poll(p, 3, TIMEOUT_MS);
		if (n < 0 && errno != EINTR)
			return lost(m, err, "poll: %s", strerror(errno));
		if (n == 0)
			return lost(m, err, "no answer from the sftp server for %d s", TIMEOUT_MS / 1000);
		if (p[0].revents) {
			ssize_t k = read(m->out, buf, sizeof(buf));
			if (k == 0)
				return lost(m, err, "the sftp server ended");
			if (k > 0) {
				if (m->ioff > 0 && m->ioff == m->ibuf.len) {
					strbuf_reset(&m->ibuf);
					m->ioff = 0;
				} else if (m->ioff > (1u << 20)) {
					memmove(m->ibuf.buf, m->ibuf.buf + m->ioff, m->ibuf.len - m->ioff);
					m->ibuf.len -= m->ioff;
					m->ioff = 0;
				}
				strbuf_add(&m->ibuf, buf, (size_t)k);
			} else if (errno != EAGAIN && errno != EINTR) {
				return lost(m, err, "read: %s", strerror(errno));
			}
		}
		if (p[1].revents) {
			ssize_t k = write(m->in, m->obuf.buf + m->ooff, m->obuf.len - m->ooff);
			if (k > 0) {
				m->ooff += (size_t)k;
				if (m->ooff == m->obuf.len) {
					strbuf_reset(&m->obuf);
					m->ooff = 0;
				}
			} else if (k < 0 && errno != EAGAIN && errno != EINTR) {
				return lost(m, err, "write: %s", strerror(errno));
			}
		}
	}
}

static void reply_release(struct reply *r)
{
	strbuf_release(&r->pkt);
}

static void collect_writes(struct msftp *m, size_t keep);

/* The next answer, which must be the one to id (the answers to writes still in
 * flight, which come first, are taken before). */
static int next_reply(struct msftp *m, uint32_t id, struct reply *r, struct dp_error *err)
{
	if (m->wpending && id != m->wfirst)
		collect_writes(m, 0);
	if (pump(m, true, err) < 0)
		return -1;
	const uint8_t *p = (const uint8_t *)m->ibuf.buf + m->ioff;
	uint32_t n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	if (n < 5 || n > MAX_PACKET)
		return lost(m, err, "a malformed answer from the sftp server (length %u)", n);
	strbuf_reset(&r->pkt);
	strbuf_add(&r->pkt, p + 4, n);
	m->ioff += 4 + (size_t)n;
	r->p = (const uint8_t *)r->pkt.buf;
	r->n = n;
	r->type = *r->p++;
	r->n--;
	if (!get_u32(r, &r->id) || r->id != id)
		return lost(m, err, "an answer out of order from the sftp server");
	return 0;
}

/* Send the request in sb and take its answer. */
static int call(struct msftp *m, struct strbuf *sb, uint32_t id, struct reply *r,
		struct dp_error *err)
{
	end(m, sb);
	return next_reply(m, id, r, err);
}

static const char *fx_name(uint32_t code)
{
	switch (code) {
	case FX_NO_SUCH_FILE: return "No such file or directory";
	case FX_PERMISSION_DENIED: return "Permission denied";
	case FX_FAILURE: return "Failure";
	case 8: return "Operation unsupported";
	default: return "SFTP error";
	}
}

/* The failure of a request: its status (-1 with err), a lost connection, or an
 * answer of a type not expected. *code gets the status code (or -1). */
static int failed(struct fs *fs, int r, struct reply *rp, const char *what, const char *path,
		  long *code, struct dp_error *err)
{
	struct msftp *m = fs->msftp;
	uint32_t c;
	if (code)
		*code = -1;
	if (r < 0) {
		fs->dead = true;
		return -1;
	}
	if (rp->type != FXP_STATUS || !get_u32(rp, &c)) {
		fs->dead = true;
		return lost(m, err, "an unexpected answer (type %u) to %s '%s'", rp->type, what, path);
	}
	if (code)
		*code = c;
	return dp_err(err, c == FX_NO_SUCH_FILE ? DPE_NOTFOUND : DPE_FAIL, "cannot %s '%s%s': %s",
		      what, fs->name, path, fx_name(c));
}

/* A request answered by a status: 0 when it is FX_OK. */
static int simple(struct fs *fs, struct strbuf *sb, uint32_t id, const char *what,
		  const char *path, long *code, struct dp_error *err)
{
	struct reply rp = { .pkt = STRBUF_INIT };
	int r = call(fs->msftp, sb, id, &rp, err);
	uint32_t c;
	if (r == 0 && rp.type == FXP_STATUS && rp.n >= 4) {
		struct reply peek = rp;
		get_u32(&peek, &c);
		if (c == FX_OK) {
			reply_release(&rp);
			if (code)
				*code = FX_OK;
			return 0;
		}
	}
	r = failed(fs, r, &rp, what, path, code, err);
	reply_release(&rp);
	return r;
}

/* ---- the file system ---- */

static int m_stat(struct fs *fs, const char *path, bool follow, struct fstat_ *st, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct reply rp = { .pkt = STRBUF_INIT };
	uint32_t id = begin(fs->msftp, &sb, follow ? FXP_STAT : FXP_LSTAT, 0);
	put_str(&sb, path);
	int r = call(fs->msftp, &sb, id, &rp, err);
	if (r == 0 && rp.type == FXP_ATTRS && get_attrs(&rp, st)) {
		reply_release(&rp);
		return 0;
	}
	r = failed(fs, r, &rp, "stat", path, NULL, err);
	reply_release(&rp);
	return r;
}

/* OPEN or OPENDIR: the handle into h. */
static int open_handle(struct fs *fs, struct strbuf *sb, uint32_t id, const char *what,
		       const char *path, struct strbuf *h, long *code, struct dp_error *err)
{
	struct reply rp = { .pkt = STRBUF_INIT };
	const uint8_t *s;
	uint32_t len;
	int r = call(fs->msftp, sb, id, &rp, err);
	if (r == 0 && rp.type == FXP_HANDLE && get_str(&rp, &s, &len)) {
		strbuf_add(h, s, len);
		reply_release(&rp);
		return 0;
	}
	r = failed(fs, r, &rp, what, path, code, err);
	reply_release(&rp);
	return r;
}

static int close_handle(struct fs *fs, const struct strbuf *h, const char *path,
			struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (fs->msftp->lost.kind) {
		*err = fs->msftp->lost;
		return -1;
	}
	uint32_t id = begin(fs->msftp, &sb, FXP_CLOSE, 0);
	put_strn(&sb, h->buf, h->len);
	return simple(fs, &sb, id, "write", path, NULL, err);
}

/* Every entry goes to sftp_listing_check as sent ("." and ".." too), with the lstat
 * the listing carries (OpenSSH's sftp-server sends it): no stat per entry. */
static int m_list(struct fs *fs, const char *path, char ***names, struct fstat_ **sts,
		  char ***refused, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, h = STRBUF_INIT;
	struct reply rp = { .pkt = STRBUF_INIT };
	struct dp_error ignored;
	struct sftp_dirent *e = NULL;
	size_t n = 0;
	*sts = NULL;
	uint32_t id = begin(fs->msftp, &sb, FXP_OPENDIR, 0);
	put_str(&sb, path);
	if (open_handle(fs, &sb, id, "open directory", path, &h, NULL, err) < 0)
		return -1;
	int r = 0;
	for (;;) {
		id = begin(fs->msftp, &sb, FXP_READDIR, 0);
		put_strn(&sb, h.buf, h.len);
		int c = call(fs->msftp, &sb, id, &rp, err);
		if (c == 0 && rp.type == FXP_NAME) {
			if (msftp_parse_names(rp.p, rp.n, &e, &n) == 0)
				continue;
			fs->dead = true;
			r = lost(fs->msftp, err, "a malformed directory listing of '%s'", path);
			break;
		}
		long code;
		r = failed(fs, c, &rp, "read directory", path, &code, err);
		if (code == FX_EOF)
			r = 0;
		break;
	}
	reply_release(&rp);
	if (!fs->dead)
		close_handle(fs, &h, path, &ignored);
	sftp_listing_check(ssh_session_name(fs->s), path, e, n, names, sts, refused);
	free(e);
	return r;
}

static int m_readlink(struct fs *fs, const char *path, char **target, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct reply rp = { .pkt = STRBUF_INIT };
	uint32_t id = begin(fs->msftp, &sb, FXP_READLINK, 0);
	put_str(&sb, path);
	int r = call(fs->msftp, &sb, id, &rp, err);
	uint32_t count, len;
	const uint8_t *s;
	if (r == 0 && rp.type == FXP_NAME && get_u32(&rp, &count) && count >= 1 &&
	    get_str(&rp, &s, &len)) {
		*target = xstrndup((const char *)s, len);
		reply_release(&rp);
		return 0;
	}
	r = failed(fs, r, &rp, "read link", path, NULL, err);
	reply_release(&rp);
	return r;
}

static int m_unlink(struct fs *fs, const char *path, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (fs->dead)
		return dp_err(err, DPE_CONNECT, "connection lost");
	uint32_t id = begin(fs->msftp, &sb, FXP_REMOVE, 0);
	put_str(&sb, path);
	return simple(fs, &sb, id, "remove", path, NULL, err);
}

static int m_rmdir(struct fs *fs, const char *path, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	if (fs->dead)
		return dp_err(err, DPE_CONNECT, "connection lost");
	uint32_t id = begin(fs->msftp, &sb, FXP_RMDIR, 0);
	put_str(&sb, path);
	return simple(fs, &sb, id, "remove directory", path, NULL, err);
}

/* As sftp.c's: OpenSSH's sftp-server takes the target first, as symlink(2); an
 * existing link or file there is replaced, as cp -r does. */
static int m_symlink(struct fs *fs, const char *target, const char *path, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct fstat_ st;
	struct dp_error ignored;
	if (m_stat(fs, path, false, &st, &ignored) == 0 && st.type != T_DIR)
		m_unlink(fs, path, &ignored);
	if (fs->dead)
		return dp_err(err, ignored.kind, "%s", ignored.msg);
	uint32_t id = begin(fs->msftp, &sb, FXP_SYMLINK, 0);
	put_str(&sb, target);
	put_str(&sb, path);
	return simple(fs, &sb, id, "create symlink", path, NULL, err);
}

static int m_mkdir(struct fs *fs, const char *path, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	uint32_t id = begin(fs->msftp, &sb, FXP_MKDIR, 0);
	put_str(&sb, path);
	put_attrs(&sb, NULL, 0700);
	if (simple(fs, &sb, id, "create directory", path, NULL, err) == 0)
		return 1;
	struct fstat_ st;
	struct dp_error ignored;
	if (!fs->dead && m_stat(fs, path, true, &st, &ignored) == 0 && st.type == T_DIR)
		return 0;
	return -1;
}

struct m_file {
	struct strbuf h;
	char *path;
	uint64_t off;
	bool eof;
	/* Reads in flight (m_read): rpending of them, ids from rfirst on, their lengths
	 * in the ring rlen from rhead; rsent: the offset after the last byte asked for. */
	size_t rpending, rhead;
	uint32_t rfirst;
	uint32_t rlen[MAX_INFLIGHT];
	uint64_t rsent;
};

static void m_file_free(struct m_file *f)
{
	strbuf_release(&f->h);
	free(f->path);
	free(f);
}

static int m_open_read(struct fs *fs, const char *path, void **h, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct m_file *f = xcalloc(1, sizeof(*f));
	strbuf_init(&f->h);
	uint32_t id = begin(fs->msftp, &sb, FXP_OPEN, 0);
	put_str(&sb, path);
	put_u32(&sb, FXF_READ);
	put_u32(&sb, 0);        /* no attributes */
	if (open_handle(fs, &sb, id, "open", path, &f->h, NULL, err) < 0) {
		m_file_free(f);
		return -1;
	}
	f->path = xstrdup(path);
	*h = f;
	return 0;
}

/* The oldest read in flight: its answer, and its length asked for in *want. */
static int next_read(struct fs *fs, struct m_file *f, struct reply *rp, uint32_t *want,
		     struct dp_error *err)
{
	*want = f->rlen[f->rhead];
	int c = next_reply(fs->msftp, f->rfirst, rp, err);
	f->rfirst++;
	f->rhead = (f->rhead + 1) % MAX_INFLIGHT;
	f->rpending--;
	return c;
}

/* The reads still in flight answered, their answers dropped (the end of the file
 * came before them, a read failed, or the file is closed). */
static void drop_reads(struct fs *fs, struct m_file *f)
{
	struct reply rp = { .pkt = STRBUF_INIT };
	struct dp_error ignored;
	uint32_t want;
	while (f->rpending && !fs->dead)
		if (next_read(fs, f, &rp, &want, &ignored) < 0)
			fs->dead = true;
	f->rpending = 0;
	reply_release(&rp);
}

/* Up to len bytes from f's offset, through a sliding window as m_write's: the
 * requests for [off, off + len) go out up to MAX_INFLIGHT in flight, the answers are
 * taken in order until half of them are left (or all, once nothing more may be
 * asked for), and those stay in flight for the next call: the pipeline never
 * empties while the file lasts (asking for a buffer and waiting for every answer
 * emptied it every 2 MiB). No request goes past off + len, which the copy keeps
 * within the file's size. A short answer is the end of the file (as it was): the
 * answers after it are void, and the next call asks again from there. */
static ssize_t m_read(struct fs *fs, void *h, char *buf, size_t len, struct dp_error *err)
{
	struct m_file *f = h;
	struct msftp *m = fs->msftp;
	struct reply rp = { .pkt = STRBUF_INIT };
	uint64_t until = f->off + len;
	size_t got = 0;
	bool short_ = false;
	int r = 0;

	if (f->eof)
		return 0;
	if (f->rsent < f->off)
		f->rsent = f->off;
	while (f->rpending < MAX_INFLIGHT && f->rsent < until) {
		uint32_t n = until - f->rsent < CHUNK ? (uint32_t)(until - f->rsent) : CHUNK;
		size_t at = m->obuf.len;
		uint32_t id = begin(m, &m->obuf, FXP_READ, at);
		if (!f->rpending)
			f->rfirst = id;
		put_strn(&m->obuf, f->h.buf, f->h.len);
		put_u64(&m->obuf, f->rsent);
		put_u32(&m->obuf, n);
		end_in_place(&m->obuf, at);
		f->rlen[(f->rhead + f->rpending++) % MAX_INFLIGHT] = n;
		f->rsent += n;
	}
	while (f->rpending && got + f->rlen[f->rhead] <= len &&
	       (!got || f->rpending > MAX_INFLIGHT / 2 || f->rsent >= until)) {
		uint32_t want, n;
		const uint8_t *d;
		int c = next_read(fs, f, &rp, &want, err);
		if (c == 0 && rp.type == FXP_DATA && get_str(&rp, &d, &n) && n <= want) {
			memcpy(buf + got, d, n);
			got += n;
			if (n == want)
				continue;
			short_ = true;          /* the end (then the next read says so) */
			break;
		}
		long code;
		r = failed(fs, c, &rp, "read", f->path, &code, err);
		if (code == FX_EOF)
			r = 0;
		f->eof = true;
		break;
	}
	if (!got && f->rpending && !f->eof && !short_ && r == 0)
		r = dp_err(err, DPE_FAIL, "cannot read '%s%s': %zu bytes asked for, under a read in flight",
			   fs->name, f->path, len);
	reply_release(&rp);
	if (f->eof || short_)
		drop_reads(fs, f);
	if (r < 0)
		return -1;
	f->off += got;
	if (short_)
		f->rsent = f->off;
	return (ssize_t)got;
}

static int m_close_read(struct fs *fs, void *h)
{
	struct m_file *f = h;
	struct dp_error ignored;
	drop_reads(fs, f);
	if (!fs->dead)
		close_handle(fs, &f->h, f->path, &ignored);
	m_file_free(f);
	return 0;
}

static int open_new(struct fs *fs, const char *path, unsigned mode, struct m_file **out,
		    long *code, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct m_file *f = xcalloc(1, sizeof(*f));
	strbuf_init(&f->h);
	uint32_t id = begin(fs->msftp, &sb, FXP_OPEN, 0);
	put_str(&sb, path);
	put_u32(&sb, FXF_WRITE | FXF_CREAT | FXF_EXCL);
	put_attrs(&sb, NULL, mode);
	if (open_handle(fs, &sb, id, "create", path, &f->h, code, err) < 0) {
		m_file_free(f);
		return -1;
	}
	f->path = xstrdup(path);
	*out = f;
	return 0;
}

/* As sftp.c's: the file has its mode from the open, the server's umask applied;
 * with -p, finish sets it exactly. */
static int m_open_temp(struct fs *fs, const char *path, unsigned mode, char **tmp, void **h,
		       struct dp_error *err)
{
	static unsigned counter;
	for (int i = 0; i < 10; i++) {
		char suffix[32];
		snprintf(suffix, sizeof(suffix), "%06x", (unsigned)(getpid() * 7919u + (unsigned)time(NULL) * 31u + counter++) & 0xffffff);
		_cleanup_free_ char *t = sftp_temp_name(path, suffix);
		struct m_file *f;
		long code;
		if (open_new(fs, t, mode & 0777, &f, &code, err) == 0) {
			*tmp = xstrdup(t);
			*h = f;
			return 0;
		}
		if (fs->dead || code != FX_FAILURE)     /* FAILURE is how sftp-server says EEXIST */
			break;
	}
	return -1;
}

/* All of buf from f's offset: the requests at once, then their answers. */
/* Takes answers to writes in flight until at most keep are left; the first failure
 * goes to m->werr (a lost connection marks the file system dead, as failed() does). */
static void collect_writes(struct msftp *m, size_t keep)
{
	while (m->wpending > keep) {
		struct reply rp = { .pkt = STRBUF_INIT };
		struct dp_error e = { 0 };
		int c = next_reply(m, m->wfirst, &rp, &e);      /* (the guard there: it is wfirst) */
		m->wfirst++;
		m->wpending--;
		uint32_t code;
		struct reply peek = rp;
		if (!(c == 0 && rp.type == FXP_STATUS && get_u32(&peek, &code) && code == FX_OK)) {
			failed(m->wfs, c, &rp, "write", m->wpath, NULL, &e);
			if (!m->werr.kind)
				m->werr = e;
		}
		reply_release(&rp);
		if (m->wfs->dead)
			m->wpending = 0;
	}
}

/* The file's writes all answered: 0, or -1 with the first failure among them. */
static int writes_done(struct fs *fs, struct dp_error *err)
{
	struct msftp *m = fs->msftp;
	collect_writes(m, 0);
	if (!m->werr.kind)
		return 0;
	*err = m->werr;
	m->werr = (struct dp_error){ 0 };
	return -1;
}

/* A sliding window: the next request goes out as each answer comes in, so that
 * MAX_INFLIGHT stay in flight through the whole file (sending a buffer's requests
 * and then waiting for every answer emptied the pipeline every 2 MB: 1.65x scp's
 * time through the same master). Up to MAX_INFLIGHT are still in flight when it
 * returns: a failure among them comes with a later call, or m_finish. Each request
 * is built in the output buffer itself. */
static ssize_t m_write(struct fs *fs, void *h, const char *buf, size_t len, struct dp_error *err)
{
	struct m_file *f = h;
	struct msftp *m = fs->msftp;
	m->wfs = fs;
	m->wpath = f->path;
	for (size_t off = 0; off < len && !m->werr.kind && !fs->dead;) {
		collect_writes(m, MAX_INFLIGHT - 1);
		size_t n = len - off < CHUNK ? len - off : CHUNK;
		size_t at = m->obuf.len;
		uint32_t id = begin(m, &m->obuf, FXP_WRITE, at);
		if (!m->wpending)
			m->wfirst = id;
		put_strn(&m->obuf, f->h.buf, f->h.len);
		put_u64(&m->obuf, f->off + off);
		put_strn(&m->obuf, buf + off, n);
		end_in_place(&m->obuf, at);
		m->wpending++;
		off += n;
	}
	if (fs->dead && !m->werr.kind)
		m->werr = m->lost;
	if (m->werr.kind)
		return writes_done(fs, err);
	f->off += len;
	return (ssize_t)len;
}

static int m_set_attrs(struct fs *fs, const char *path, const struct fstat_ *st, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	uint32_t id = begin(fs->msftp, &sb, FXP_SETSTAT, 0);
	put_str(&sb, path);
	put_attrs(&sb, st, 0);
	return simple(fs, &sb, id, "set the mode of", path, NULL, err);
}

/* With -p (st->mtime >= 0) the mode and times exactly; without, nothing more. */
static int m_finish(struct fs *fs, void *h, const struct fstat_ *st, struct dp_error *err)
{
	struct m_file *f = h;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = writes_done(fs, err);
	if (r == 0 && st->mtime >= 0) {
		uint32_t id = begin(fs->msftp, &sb, FXP_FSETSTAT, 0);
		put_strn(&sb, f->h.buf, f->h.len);
		put_attrs(&sb, st, 0);
		r = simple(fs, &sb, id, "set the mode of", f->path, NULL, err);
	}
	struct dp_error e2;
	if (!fs->dead && close_handle(fs, &f->h, f->path, r < 0 ? &e2 : err) < 0 && r == 0)
		r = -1;
	m_file_free(f);
	return r;
}

static int m_abandon(struct fs *fs, void *h)
{
	struct dp_error ignored;
	writes_done(fs, &ignored);
	return m_close_read(fs, h);
}

static int plain_rename(struct fs *fs, const char *from, const char *to, long *code,
			struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	uint32_t id = begin(fs->msftp, &sb, FXP_RENAME, 0);
	put_str(&sb, from);
	put_str(&sb, to);
	return simple(fs, &sb, id, "rename a temporary file to", to, code, err);
}

/* As sftp.c's: posix-rename@openssh.com replaces atomically; without it, the plain
 * rename after removing what is there. */
static int m_rename(struct fs *fs, const char *from, const char *to, struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct dp_error ignored;
	if (fs->msftp->posix_rename) {
		uint32_t id = begin(fs->msftp, &sb, FXP_EXTENDED, 0);
		put_str(&sb, "posix-rename@openssh.com");
		put_str(&sb, from);
		put_str(&sb, to);
		return simple(fs, &sb, id, "rename a temporary file to", to, NULL, err);
	}
	if (plain_rename(fs, from, to, NULL, err) == 0)
		return 0;
	if (!fs->dead && m_unlink(fs, to, &ignored) == 0 && plain_rename(fs, from, to, NULL, err) == 0)
		return 0;
	return -1;
}

static const struct fs_ops mux_ops = {
	m_stat, m_list, m_readlink, m_symlink, m_mkdir, m_open_read, m_read, m_close_read,
	m_open_temp, m_write, m_finish, m_abandon, m_set_attrs, m_rename, m_unlink, m_rmdir,
};

/* ---- the session ---- */

static void msftp_free(struct msftp *m)
{
	if (!m)
		return;
	mux_session_free(m->ms);
	strbuf_release(&m->obuf);
	strbuf_release(&m->ibuf);
	free(m);
}

int msftp_open(struct ssh_session *s, struct fs *fs, struct dp_error *err)
{
	struct msftp *m = xcalloc(1, sizeof(*m));
	enum mux_failure why;
	struct dp_error e = { 0 };
	strbuf_init(&m->obuf);
	strbuf_init(&m->ibuf);
	m->s = s;
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	/* SendEnv and SetEnv, as ssh -s sftp sends them: in the new-session request,
	 * before the master asks for the subsystem (clientloop.c's client_session2_setup). */
	_cleanup_strv_free_ char **env = ssh_host_config_env(&s->cfg);
	struct mux_exec x = { .command = "sftp", .subsystem = true, .in_fd = -1, .out_fd = -1,
			      .err_fd = devnull, .env = (const char *const *)env };
	int r = mux_exec_start(ssh_session_mux(s), &x, &m->ms, &why, &e);
	if (devnull >= 0)
		close(devnull);
	if (r < 0) {
		msftp_free(m);
		return dp_err(err, DPE_CONNECT, "cannot start SFTP on '%s' through its master: %s",
			      ssh_session_name(s), e.msg);
	}
	m->in = mux_session_stdin(m->ms);
	m->out = mux_session_stdout(m->ms);
	fs->msftp = m;
	fs->ops = &mux_ops;
	fs->ls = NULL;
	fs->sftp = NULL;

	/* INIT, VERSION 3 and its extensions */
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	put_u32(&sb, 5);
	strbuf_addch(&sb, FXP_INIT);
	put_u32(&sb, 3);
	strbuf_add(&m->obuf, sb.buf, sb.len);
	if (pump(m, true, &e) < 0)
		goto fail;
	const uint8_t *p = (const uint8_t *)m->ibuf.buf + m->ioff;
	uint32_t n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	uint32_t version;
	if (n < 5 || n > MAX_PACKET ||
	    msftp_parse_version(p + 4, n, &version, &m->posix_rename) < 0 || version < 3) {
		lost(m, &e, "the sftp subsystem did not answer as SFTP version 3");
		goto fail;
	}
	m->ioff += 4 + (size_t)n;
	return 0;
fail:
	fs->msftp = NULL;
	msftp_free(m);
	return dp_err(err, DPE_CONNECT, "cannot start SFTP on '%s' through its master: %s (does "
		      "the server have the sftp subsystem?)", ssh_session_name(s), e.msg);
}

void msftp_close(struct fs *fs)
{
	if (!fs->msftp)
		return;
	struct msftp *m = fs->msftp;
	if (!m->lost.kind) {
		/* the server ends at the end of its input */
		struct dp_error ignored;
		pump(m, false, &ignored);
		mux_session_close_stdin(m->ms);
		int status;
		(void)mux_exec_finish(m->ms, 5000, &status, &ignored);
		m->ms = NULL;
	}
	msftp_free(m);
	fs->msftp = NULL;
}

int msftp_put_new(struct fs *fs, const char *path, const void *buf, size_t len, int mode,
		  struct dp_error *err)
{
	struct m_file *f;
	if (open_new(fs, path, (unsigned)mode, &f, NULL, err) < 0)
		return -1;
	for (const char *p = buf; len;) {
		ssize_t n = m_write(fs, f, p, len, err);
		if (n < 0) {
			m_abandon(fs, f);
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	int r = fs->dead ? -1 : close_handle(fs, &f->h, path, err);
	m_file_free(f);
	return r;
}

int msftp_rename_new(struct fs *fs, const char *from, const char *to, struct dp_error *err)
{
	struct fstat_ st;
	struct dp_error e2;
	if (plain_rename(fs, from, to, NULL, err) == 0)
		return 0;
	if (!fs->dead && m_stat(fs, to, true, &st, &e2) == 0)
		return 1;
	return -1;
}
