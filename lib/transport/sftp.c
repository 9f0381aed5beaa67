/* SPDX-License-Identifier: MIT */
/*
 * cp over SFTP. struct fs is a file system seen through a handful of operations, the
 * local one (POSIX calls) or the remote one (libssh2_sftp_*); copy_item() walks a
 * source tree on one and writes it on the other.
 *
 * Throughput comes from libssh2 pipelining: sftp_read with a large buffer keeps many
 * read requests in flight (read-ahead), and sftp_write sends the whole buffer it is
 * given as many write requests and returns as acknowledgements arrive; the copy loop
 * keeps that buffer topped up (a sliding window, as libssh2's sftp_write_sliding
 * example), so the pipe never drains between chunks.
 *
 * A small file costs round trips, one request after another (open, write, close,
 * rename), and libssh2 keeps one request of each kind per SFTP session: so the files
 * of a tree go several at a time, each on an SFTP channel of its own on the same
 * connection (the pool). The session does not block during a copy: a file is a
 * state machine (file_step) whose step is called again where libssh2 said EAGAIN,
 * and the walk's own calls move the pool on while they wait.
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
#include "transport/tarcopy.h"
#include "transport/sftp_fs.h"
#include "transport/ssh_internal.h"
#include "base/strbuf.h"
#include "base/cloexec.h"
#include "base/termesc.h"

/* The copy buffer: an upload keeps at least half of it in write requests, which must
 * be more than the server's channel window (OpenSSH's is 2 MiB) or the pipe drains
 * while the window is reopened: with 2 MiB here, a 32 MiB upload over 50 ms took 2.7 s
 * against scp's 1.9 s; with 4 MiB, 1.9 s. */
#define COPY_BUF (4 * 1024 * 1024)

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

static int l_list(struct fs *fs, const char *path, char ***names, struct fstat_ **sts,
		  char ***refused, struct dp_error *err)
{
	(void)fs;
	(void)refused;
	*sts = NULL;            /* a local stat costs no round trip */
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
	if (mkdir(path, 0700) == 0)
		return 1;
	if (errno != EEXIST)
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

static int l_close_read(struct fs *fs, void *h)
{
	(void)fs;
	close((int)(intptr_t)h);
	return 0;
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

/* The file is private (mkstemp's 0600) until finish gives it its mode. */
static int l_open_temp(struct fs *fs, const char *path, unsigned mode, char **tmp, void **h,
		       struct dp_error *err)
{
	(void)fs;
	(void)mode;
	char *t = sftp_temp_name(path, "XXXXXX");
	int fd = cloexec_mkstemp(t);
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

static int l_abandon(struct fs *fs, void *h)
{
	struct l_file *f = h;
	(void)fs;
	close(f->fd);
	l_free(f);
	return 0;
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

static int l_rmdir(struct fs *fs, const char *path, struct dp_error *err)
{
	(void)fs;
	if (rmdir(path) < 0)
		return local_err(err, "remove directory", path);
	return 0;
}

static const struct fs_ops local_ops = {
	l_stat, l_list, l_readlink, l_symlink, l_mkdir, l_open_read, l_read, l_close_read, l_open_temp,
	l_write, l_finish, l_abandon, l_set_attrs, l_rename, l_unlink, l_rmdir,
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
int sftp_remote_err(struct fs *fs, struct dp_error *err, const char *what, const char *path)
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
	if (code == LIBSSH2_ERROR_EAGAIN && ssh_session_closed(fs->s))  /* the copy's wait saw it */
		return dp_err(err, DPE_CONNECT, "connection to '%s' lost while trying to %s '%s': "
			      "the connection was closed by the server or the network",
			      ssh_session_name(fs->s), what, path);
	if (code == LIBSSH2_ERROR_EAGAIN)       /* the copy's wait gave up */
		return dp_err(err, DPE_CONNECT, "connection to '%s' lost while trying to %s '%s': "
			      "no answer for %d s", ssh_session_name(fs->s), what, path, SFTP_TIMEOUT_S);
	return dp_err(err, DPE_CONNECT, "connection to '%s' lost while trying to %s '%s': %s",
		      ssh_session_name(fs->s), what, path, msg && *msg ? msg : "unknown error");
}

/* A copy's session does not block: while one SFTP call waits for its answer, the
 * files in flight on the other channels move on. NB makes a call again while libssh2
 * says EAGAIN, moving the pool on and waiting for the socket in between (nb_wait);
 * on a slot's channel it gives up at once, and the operation hands FS_AGAIN back
 * (AGAIN). On a blocking session (single files) EAGAIN never comes. */
static bool nb_wait(struct fs *fs);
#define NB(fs, rc, call) \
	do { (rc) = (call); } while ((rc) == LIBSSH2_ERROR_EAGAIN && nb_wait(fs))
#define NB_PTR(fs, p, call)                                                             \
	do { (p) = (call); } while (!(p) && libssh2_session_last_errno((fs)->ls) ==       \
					    LIBSSH2_ERROR_EAGAIN && nb_wait(fs))
#define AGAIN(fs, rc) ((fs)->slot && (rc) == LIBSSH2_ERROR_EAGAIN)
#define AGAIN_PTR(fs, p) (!(p) && AGAIN(fs, libssh2_session_last_errno((fs)->ls)))

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
	int rc;
	NB(fs, rc, libssh2_sftp_stat_ex(fs->sftp, path, (unsigned)strlen(path),
					follow ? LIBSSH2_SFTP_STAT : LIBSSH2_SFTP_LSTAT, &a));
	if (AGAIN(fs, rc))
		return FS_AGAIN;
	if (rc != 0)
		return sftp_remote_err(fs, err, "stat", path);
	stat_from_attrs(st, &a);
	return 0;
}

/* The listing carries each entry's lstat (OpenSSH's sftp-server sends it): a tree
 * downloads without a stat per entry. Every entry goes to sftp_listing_check as
 * sent ("." and ".." too). */
static int r_list(struct fs *fs, const char *path, char ***names, struct fstat_ **sts,
		  char ***refused, struct dp_error *err)
{
	const unsigned long need = LIBSSH2_SFTP_ATTR_PERMISSIONS | LIBSSH2_SFTP_ATTR_SIZE;
	LIBSSH2_SFTP_HANDLE *d;
	*sts = NULL;
	NB_PTR(fs, d, libssh2_sftp_open_ex(fs->sftp, path, (unsigned)strlen(path), 0, 0,
					   LIBSSH2_SFTP_OPENDIR));
	if (!d)
		return sftp_remote_err(fs, err, "open directory", path);
	char name[4096];
	LIBSSH2_SFTP_ATTRIBUTES a;
	struct sftp_dirent *e = NULL;
	size_t n = 0;
	int rc, r = 0;
	for (;;) {
		/* rc: the length of the name as sent, a NUL inside it included; 0 for an
		 * empty name, which (unlike the end) fills in the attributes */
		a.flags = ~0UL;
		NB(fs, rc, libssh2_sftp_readdir_ex(d, name, sizeof(name), NULL, 0, &a));
		if (rc < 0 || (rc == 0 && a.flags == ~0UL))
			break;
		e = xrealloc(e, (n + 1) * sizeof(*e));
		e[n].name = xmalloc((size_t)rc + 1);
		memcpy(e[n].name, name, (size_t)rc + 1);
		e[n].len = (size_t)rc;
		stat_from_attrs(&e[n].st, &a);
		e[n].has_st = (a.flags & need) == need;
		n++;
	}
	if (rc < 0)
		r = sftp_remote_err(fs, err, "read directory", path);
	NB(fs, rc, libssh2_sftp_close_handle(d));
	sftp_listing_check(ssh_session_name(fs->s), path, e, n, names, sts, refused);
	free(e);
	return r;
}

static int r_readlink(struct fs *fs, const char *path, char **target, struct dp_error *err)
{
	char buf[4096];
	int n;
	NB(fs, n, libssh2_sftp_symlink_ex(fs->sftp, path, (unsigned)strlen(path), buf,
					  sizeof(buf) - 1, LIBSSH2_SFTP_READLINK));
	if (n < 0)
		return sftp_remote_err(fs, err, "read link", path);
	*target = xstrndup(buf, (size_t)n);
	return 0;
}

/* Whether path is a symlink to target. */
static bool r_link_is(struct fs *fs, const char *path, const char *target)
{
	char buf[4096];
	int n;
	NB(fs, n, libssh2_sftp_symlink_ex(fs->sftp, path, (unsigned)strlen(path), buf,
					  sizeof(buf) - 1, LIBSSH2_SFTP_READLINK));
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
	int rc;
	if (r_stat(fs, path, false, &st, &ignored) == 0 && st.type != T_DIR)
		NB(fs, rc, libssh2_sftp_unlink_ex(fs->sftp, path, (unsigned)strlen(path)));
	if (fs->dead)
		return dp_err(err, ignored.kind, "%s", ignored.msg);
	NB(fs, rc, libssh2_sftp_symlink_ex(fs->sftp, target, (unsigned)strlen(target), (char *)path,
					   (unsigned)strlen(path), LIBSSH2_SFTP_SYMLINK));
	if (rc == 0 || r_link_is(fs, path, target))
		return 0;
	return sftp_remote_err(fs, err, "create symlink", path);
}

static int r_mkdir(struct fs *fs, const char *path, struct dp_error *err)
{
	int rc;
	NB(fs, rc, libssh2_sftp_mkdir_ex(fs->sftp, path, (unsigned)strlen(path), 0700));
	if (rc == 0)
		return 1;
	struct fstat_ st;
	struct dp_error ignored;
	if (!fs->dead && r_stat(fs, path, true, &st, &ignored) == 0 && st.type == T_DIR)
		return 0;
	return sftp_remote_err(fs, err, "create directory", path);
}

/* An open remote file: read, or written under a temporary name. */
struct r_file {
	LIBSSH2_SFTP_HANDLE *h;
	char *path;
	unsigned mode;                  /* what the open asked for */
	int step;                       /* finish: how far it got */
	bool failed;
};

static struct r_file *r_file_new(LIBSSH2_SFTP_HANDLE *h, const char *path, unsigned mode)
{
	struct r_file *f = xcalloc(1, sizeof(*f));
	f->h = h;
	f->path = xstrdup(path);
	f->mode = mode;
	return f;
}

static void r_file_free(struct r_file *f)
{
	free(f->path);
	free(f);
}

static int r_open_read(struct fs *fs, const char *path, void **h, struct dp_error *err)
{
	LIBSSH2_SFTP_HANDLE *f;
	NB_PTR(fs, f, libssh2_sftp_open_ex(fs->sftp, path, (unsigned)strlen(path), LIBSSH2_FXF_READ, 0,
					   LIBSSH2_SFTP_OPENFILE));
	if (AGAIN_PTR(fs, f))
		return FS_AGAIN;
	if (!f)
		return sftp_remote_err(fs, err, "open", path);
	*h = r_file_new(f, path, 0);
	return 0;
}

static ssize_t r_read(struct fs *fs, void *h, char *buf, size_t len, struct dp_error *err)
{
	struct r_file *f = h;
	ssize_t n;
	NB(fs, n, libssh2_sftp_read(f->h, buf, len));
	if (AGAIN(fs, n))
		return FS_AGAIN;
	if (n < 0)
		return sftp_remote_err(fs, err, "read", f->path);
	return n;
}

/* Handles are closed even on a dead connection: libssh2 frees them only there. */
static int r_close_read(struct fs *fs, void *h)
{
	struct r_file *f = h;
	int rc;
	NB(fs, rc, libssh2_sftp_close_handle(f->h));
	if (AGAIN(fs, rc))
		return FS_AGAIN;
	r_file_free(f);
	return 0;
}

/* The file has its mode from the open (OpenSSH's sftp-server creates it with the
 * mode the request carries, less its umask); with -p, finish sets it exactly. */
static int r_open_temp(struct fs *fs, const char *path, unsigned mode, char **tmp, void **h,
		       struct dp_error *err)
{
	static unsigned counter;
	for (int i = 0; i < 10; i++) {
		if (!*tmp) {
			char suffix[32];
			snprintf(suffix, sizeof(suffix), "%06x", (unsigned)(getpid() * 7919u + (unsigned)time(NULL) * 31u + counter++) & 0xffffff);
			*tmp = sftp_temp_name(path, suffix);
		}
		LIBSSH2_SFTP_HANDLE *f;
		NB_PTR(fs, f, libssh2_sftp_open_ex(fs->sftp, *tmp, (unsigned)strlen(*tmp),
			LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_EXCL, mode & 0777,
			LIBSSH2_SFTP_OPENFILE));
		if (AGAIN_PTR(fs, f))
			return FS_AGAIN;
		if (f) {
			*h = r_file_new(f, *tmp, mode & 0777);
			return 0;
		}
		sftp_remote_err(fs, err, "create a file beside", path);
		free(*tmp);
		*tmp = NULL;
		if (fs->dead || libssh2_sftp_last_error(fs->sftp) != LIBSSH2_FX_FAILURE)
			break;          /* FAILURE is how sftp-server says EEXIST */
	}
	return -1;
}

static ssize_t r_write(struct fs *fs, void *h, const char *buf, size_t len, struct dp_error *err)
{
	struct r_file *f = h;
	ssize_t n;
	NB(fs, n, libssh2_sftp_write(f->h, buf, len));
	if (AGAIN(fs, n))
		return FS_AGAIN;
	if (n < 0)
		return sftp_remote_err(fs, err, "write", f->path);
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

/* Without -p (st->mtime < 0) the file keeps the mode its open gave it, the server's
 * umask applied (as scp's and sftp's uploads); with -p it gets st's mode exactly and
 * its times. */
enum { FIN_FSETSTAT = 1, FIN_CLOSE };

static int r_finish(struct fs *fs, void *h, const struct fstat_ *st, struct dp_error *err)
{
	struct r_file *f = h;
	LIBSSH2_SFTP_ATTRIBUTES a;
	int rc;
	switch (f->step) {
	case 0:
		f->step = st->mtime >= 0 ? FIN_FSETSTAT : FIN_CLOSE;
		return r_finish(fs, h, st, err);
	case FIN_FSETSTAT:
		attrs_of(&a, st);
		NB(fs, rc, libssh2_sftp_fstat_ex(f->h, &a, 1));
		if (AGAIN(fs, rc))
			return FS_AGAIN;
		if (rc != 0) {
			sftp_remote_err(fs, err, "set the mode of", f->path);
			f->failed = true;
		}
		f->step = FIN_CLOSE;
		/* fall through */
	default:
		NB(fs, rc, libssh2_sftp_close_handle(f->h));
		if (AGAIN(fs, rc))
			return FS_AGAIN;
		if (rc != 0 && !f->failed) {
			sftp_remote_err(fs, err, "write", f->path);
			f->failed = true;
		}
		rc = f->failed ? -1 : 0;
		r_file_free(f);
		return rc;
	}
}

static int r_abandon(struct fs *fs, void *h)
{
	return r_close_read(fs, h);
}

static int r_set_attrs(struct fs *fs, const char *path, const struct fstat_ *st, struct dp_error *err)
{
	LIBSSH2_SFTP_ATTRIBUTES a;
	int rc;
	attrs_of(&a, st);
	NB(fs, rc, libssh2_sftp_stat_ex(fs->sftp, path, (unsigned)strlen(path), LIBSSH2_SFTP_SETSTAT, &a));
	if (rc != 0)
		return sftp_remote_err(fs, err, "set the mode of", path);
	return 0;
}

/* SFTP version 3 has no overwriting rename (OpenSSH's server links the new name and
 * fails when it exists), so the temporary file takes the final name through OpenSSH's
 * posix-rename@openssh.com extension: rename(2), atomic, replacing what was there.
 * A server without the extension gets the plain rename, after removing an existing
 * file: for a moment the final name is absent there, but never partial. The steps
 * (fs->step) go on where a slot's FS_AGAIN left them. */
enum { REN_POSIX, REN_PLAIN, REN_UNLINK, REN_AGAIN };

static int r_rename(struct fs *fs, const char *from, const char *to, struct dp_error *err)
{
	long flags = LIBSSH2_SFTP_RENAME_OVERWRITE | LIBSSH2_SFTP_RENAME_ATOMIC | LIBSSH2_SFTP_RENAME_NATIVE;
	unsigned lf = (unsigned)strlen(from), lt = (unsigned)strlen(to);
	int rc;
	switch (fs->step) {
	case REN_POSIX:
		NB(fs, rc, libssh2_sftp_posix_rename_ex(fs->sftp, from, lf, to, lt));
		if (AGAIN(fs, rc))
			return FS_AGAIN;
		if (rc == 0 || rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
			break;          /* done, or the connection */
		fs->step = REN_PLAIN;
		/* fall through */
	case REN_PLAIN:
		NB(fs, rc, libssh2_sftp_rename_ex(fs->sftp, from, lf, to, lt, flags));
		if (AGAIN(fs, rc))
			return FS_AGAIN;
		if (rc == 0 || rc != LIBSSH2_ERROR_SFTP_PROTOCOL)
			break;
		fs->step = REN_UNLINK;
		/* fall through */
	case REN_UNLINK:
		NB(fs, rc, libssh2_sftp_unlink_ex(fs->sftp, to, lt));
		if (AGAIN(fs, rc))
			return FS_AGAIN;
		if (rc != 0)
			break;
		fs->step = REN_AGAIN;
		/* fall through */
	default:
		NB(fs, rc, libssh2_sftp_rename_ex(fs->sftp, from, lf, to, lt, flags));
		if (AGAIN(fs, rc))
			return FS_AGAIN;
		break;
	}
	fs->step = 0;
	if (rc != 0)
		return sftp_remote_err(fs, err, "rename a temporary file to", to);
	return 0;
}

static int r_unlink(struct fs *fs, const char *path, struct dp_error *err)
{
	int rc;
	if (fs->dead)
		return dp_err(err, DPE_CONNECT, "connection lost");
	NB(fs, rc, libssh2_sftp_unlink_ex(fs->sftp, path, (unsigned)strlen(path)));
	if (AGAIN(fs, rc))
		return FS_AGAIN;
	if (rc != 0)
		return sftp_remote_err(fs, err, "remove", path);
	return 0;
}

static int r_rmdir(struct fs *fs, const char *path, struct dp_error *err)
{
	int rc;
	if (fs->dead)
		return dp_err(err, DPE_CONNECT, "connection lost");
	NB(fs, rc, libssh2_sftp_rmdir_ex(fs->sftp, path, (unsigned)strlen(path)));
	if (AGAIN(fs, rc))
		return FS_AGAIN;
	if (rc != 0)
		return sftp_remote_err(fs, err, "remove directory", path);
	return 0;
}

static const struct fs_ops remote_ops = {
	r_stat, r_list, r_readlink, r_symlink, r_mkdir, r_open_read, r_read, r_close_read, r_open_temp,
	r_write, r_finish, r_abandon, r_set_attrs, r_rename, r_unlink, r_rmdir,
};

/* ---- what a listing may hold ---- */

static int cmp_dirent(const void *a, const void *b)
{
	const struct sftp_dirent *x = *(const struct sftp_dirent *const *)a;
	const struct sftp_dirent *y = *(const struct sftp_dirent *const *)b;
	int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return x < y ? -1 : x > y;      /* the same name: in the order listed */
}

static bool dirent_is(const struct sftp_dirent *e, const char *name)
{
	return e->len == strlen(name) && memcmp(e->name, name, e->len) == 0;
}

void sftp_listing_check(const char *host, const char *dir, struct sftp_dirent *e, size_t n,
			char ***names, struct fstat_ **sts, char ***refused)
{
	_cleanup_free_ const struct sftp_dirent **p = xcalloc(n ? n : 1, sizeof(*p));
	bool all = true, quiet[2] = { false, false };   /* "." and ".." left out */
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		p[i] = &e[i];
		all = all && e[i].has_st;
	}
	qsort(p, n, sizeof(*p), cmp_dirent);
	*sts = all && n ? xmalloc(n * sizeof(**sts)) : NULL;
	for (size_t i = 0; i < n; i++) {
		const struct sftp_dirent *d = p[i];
		bool again = i > 0 && p[i - 1]->len == d->len && memcmp(p[i - 1]->name, d->name, d->len) == 0;
		bool dots = dirent_is(d, ".") || dirent_is(d, "..");
		const char *why = NULL;
		if (dots && !quiet[d->len - 1] && (!d->has_st || d->st.type == T_DIR)) {
			quiet[d->len - 1] = true;
			continue;       /* the directory's own entries */
		}
		if (d->len == 0)
			why = "it is empty";
		else if (memchr(d->name, '\0', d->len))
			why = "it holds a NUL byte";
		else if (memchr(d->name, '/', d->len))
			why = "it holds a '/'";
		else if (dots)
			why = d->len == 1 ? "it names the directory itself" : "it names the directory above";
		else if (again)
			why = "it was listed before";
		if (why) {
			_cleanup_free_ char *name = term_escape(d->name, d->len);
			_cleanup_free_ char *where = term_escape(dir, strlen(dir));
			strv_push(refused, xasprintf("skipping the name '%s' that '%s' listed in '%s': %s "
						     "(a listing names entries of its directory only: "
						     "is the server compromised?)", name, host, where, why));
			continue;
		}
		if (*sts)
			(*sts)[kept] = d->st;
		strv_add(names, d->name);
		kept++;
	}
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
}

/* ---- the copy ---- */

/* SFTP channels for the files in flight, beside the walk's own: OpenSSH lets a
 * connection have 10 sessions (MaxSessions); a server that refuses one more ends
 * the growing there. A channel costs three round trips to open (channel, subsystem,
 * SFTP version), one at a time (libssh2 keeps one opening per session), so they
 * open as the walk finds no free one. */
#define SLOTS 8

/* A regular file on its way. file_step takes it as far as it goes without waiting
 * for a server, on the walk's file systems or on a slot's channel. */
enum fstep { F_CHECK, F_OPEN_READ, F_OPEN_TEMP, F_COPY, F_FINISH, F_RENAME, F_ABANDON, F_UNLINK,
	     F_CLOSE_READ };

struct job {
	char *src, *dest, *tmp;
	struct fstat_ st, want;         /* the source's; what the copy gets */
	struct fs *from, *to;
	void *in, *out;
	enum fstep step;
	char *buf;
	size_t cap, off, have;          /* the bytes not yet taken: buf[off, off + have) */
	uint64_t got, done;
	bool eof, failed;
	bool ranges;                    /* a large file: over sftp_ranges.c's threads */
	int connections;                /* ... that moved some of it */
	struct dp_error err;
};

struct slot {
	struct fs fs;                   /* the remote file system on a channel of its own */
	struct job *job;                /* NULL: free */
};

struct copy;
struct pool {
	struct copy *cp;
	struct fs *remote;              /* the walk's */
	struct slot slot[SLOTS];
	int n;                          /* channels open */
	bool opening;                   /* the next one is being opened */
	bool full;                      /* the server refused one: no more */
	struct job *queue[SLOTS];       /* files the walk found, waiting for a channel */
	int queued;
	int idle_ms;                    /* waited with nothing arriving */
	int rounds;                     /* passes in a row without a wait on the socket */
};

/* A directory gets its mode and times once the files in it are all in place: the
 * mode may forbid writing there, and a file's arrival would change the times. */
struct dir_attrs {
	char *src, *dest;
	struct fstat_ want;
	bool as_is;             /* --update: the directory has them already */
};

struct copy {
	const struct sftp_copy *c;
	struct fs *from, *to;
	struct pool *pool;              /* NULL: one file at a time on the walk's file systems */
	bool stop;                      /* a failure ended the whole copy */
	bool many;                      /* several sources */
	struct dir_attrs *dirs;         /* with a pool: the directories' modes, set at the end */
	size_t ndirs;
	unsigned umask;                 /* the process's, which a download applies without -p */
	int result;                     /* 0, or the first failure, in first_err */
	unsigned long writes;           /* entries made or removed so far (a directory that
					   had one changes its time: --update sets it again) */
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
	if (e->kind == DPE_CONNECT && cp->pool)
		cp->pool->remote->dead = true;  /* what follows is cleanup, in bounded waits */
	if (!cp->result) {
		cp->result = -1;
		cp->first_err = *e;
	}
	if (cp->c->failed)
		cp->c->failed(cp->c->data, e);
	if (fatal)
		cp->stop = true;
	return fatal ? -1 : 0;
}

/* The mode and times a copy of st gets. With -p (preserve), st's: its mode bits
 * exactly (set-id bits too) and its times. Without, as scp and sftp: the permission
 * bits less the local umask on a download, and times left to the clock. An upload
 * sends the permission bits with the new file, and the server's umask applies as it
 * creates it (finish sets nothing more); a directory gets them exactly (as sftp's
 * upload does). */
static struct fstat_ wanted(const struct copy *cp, const struct fstat_ *st)
{
	struct fstat_ want = *st;
	if (cp->c->preserve)
		return want;
	want.mode &= 0777;
	if (cp->to->ops == &local_ops)
		want.mode &= ~cp->umask;
	if (!cp->c->update)
		want.mtime = -1; /* (--update keeps them: the next copy compares them) */
	return want;
}

char *sftp_join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	if (!*name)
		return xstrdup(dir);
	if (n == 0 || streq(dir, "."))
		return xstrdup(name);
	return xasprintf("%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", name);
}

static void done_item(struct copy *cp, const char *src, const char *dest, enum sftp_item_type type,
		      uint64_t bytes, unsigned mode)
{
	struct sftp_item it = { src, dest, type, bytes, mode, false, type == SFTP_FILE };
	if (cp->c->copied)
		cp->c->copied(cp->c->data, &it);
}

/* --update: a symbolic link whose dest is a link to the same target is left. */
static bool up_to_date_link(struct copy *cp, const char *target, const struct fstat_ *d,
			    const char *dest)
{
	_cleanup_free_ char *there = NULL;
	struct dp_error ignored;
	return cp->c->update && d && d->type == T_LINK &&
	       cp->to->ops->readlink(cp->to, dest, &there, &ignored) == 0 && streq(there, target);
}

/* --update: a regular file whose dest (d, its lstat; NULL: none) has its size and
 * modification time is not copied again. */
static bool up_to_date(const struct copy *cp, const struct fstat_ *st, const struct fstat_ *d)
{
	return cp->c->update && d && d->type == T_FILE && st->type == T_FILE &&
	       d->size == st->size && d->mtime == st->mtime;
}

/* What a failed file left is removed: the temporary file, open or not. */
static int job_fail(struct job *j)
{
	j->failed = true;
	j->step = j->out ? F_ABANDON : j->tmp ? F_UNLINK : F_CLOSE_READ;
	return 1;
}

/* One round of the copy loop. The buffer is topped up once half of it was taken:
 * the bytes left (at most half) move to its start, so each byte is moved at most
 * once, where moving the rest after every write (an SFTP write returns as soon as
 * one 30 kB request is acknowledged) moved the whole buffer per request. The writer
 * is always offered at least half the buffer (the SFTP requests kept in flight)
 * until the end of the file. */
static int copy_step(struct copy *cp, struct job *j)
{
	bool moved = false;
	if (!j->buf)            /* allocated once the file is on its way */
		j->buf = xmalloc(j->cap ? j->cap : 1);
	/* Interrupted: what libssh2 was given to write is written first. It may have
	 * sent a request in part (as the channel's window allowed), and any other
	 * request sent on the channel before its end would be read by the server as the
	 * rest of it: the file's close and the removal that follow would never be
	 * answered. At most the buffer goes on. */
	if (cancelled(cp) && !(j->have && j->to->sftp)) {
		dp_err(&j->err, DPE_FAIL, "interrupted");
		return job_fail(j);
	}
	if (!j->eof && j->have <= j->cap / 2 && !cancelled(cp)) {
		if (j->off) {
			memmove(j->buf, j->buf + j->off, j->have);
			j->off = 0;
		}
		/* The size the source had when it was looked at is copied, as scp does (a
		 * file that shrinks ends early). Asking for no more than that matters:
		 * libssh2 keeps four times the length asked for in read requests in
		 * flight, and reading on to see the end would cost a round trip. */
		size_t room = j->cap - j->have;
		if (j->st.size - j->got < room)
			room = (size_t)(j->st.size - j->got);
		ssize_t n = room ? j->from->ops->read(j->from, j->in, j->buf + j->have, room, &j->err) : 0;
		if (n < 0 && n != FS_AGAIN)
			return job_fail(j);
		if (n >= 0) {
			j->have += (size_t)n;
			j->got += (uint64_t)n;
			j->eof = n == 0 || j->got == j->st.size;
			moved = true;
		}
	}
	if (j->have) {
		ssize_t w = j->to->ops->write(j->to, j->out, j->buf + j->off, j->have, &j->err);
		if (w < 0 && w != FS_AGAIN)
			return job_fail(j);
		if (w > 0) {
			j->off += (size_t)w;
			j->have -= (size_t)w;
			j->done += (uint64_t)w;
			moved = true;
			if (cp->c->progress)
				cp->c->progress(cp->c->data, j->src, j->done, j->st.size);
		}
	}
	if (j->eof && !j->have)
		j->step = F_FINISH;
	return moved || j->step == F_FINISH ? 1 : FS_AGAIN;
}

static void pool_drain(struct pool *p);

struct ranges_job {
	struct copy *cp;
	struct job *j;
};

static void ranges_progress(void *data, uint64_t done)
{
	struct ranges_job *rj = data;
	rj->cp->c->progress(rj->cp->c->data, rj->j->src, done, rj->j->st.size);
}

static int ranges_connections(const struct sftp_copy *c)
{
	if (c->connections > 0)
		return c->connections;
	return sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 2 : 1;
}

/* A large file alone (ranges_wanted): over several connections and threads
 * (sftp_ranges.c), the walk waiting for them, as it waits for one file. */
static int ranges_step(struct copy *cp, struct job *j)
{
	bool up = j->to->sftp != NULL;
	struct fs *remote = up ? j->to : j->from;
	struct r_file *rf = up ? j->out : j->in;
	struct ranges_job rj = { cp, j };
	pool_drain(cp->pool);           /* the walk's channel being opened, if any */
	struct sftp_ranges r = {
		.remote = remote,
		.h = rf->h,
		.path = rf->path,
		.upload = up,
		.fd = up ? (int)(intptr_t)j->in : ((struct l_file *)j->out)->fd,
		.local = up ? j->src : j->tmp,
		.size = j->st.size,
		.connections = ranges_connections(cp->c),
		.ssh = cp->c->ssh,
		.progress = cp->c->progress ? ranges_progress : NULL,
		.data = &rj,
		.cancel = cp->c->cancel,
	};
	uint64_t copied = 0;
	int rc = sftp_ranges_copy(&r, &copied, &j->connections, &j->err);
	if (rc < 0)
		return job_fail(j);
	if (rc > 0) {           /* no channel more: on the walk's, as other files */
		j->ranges = false;
		return 1;
	}
	j->got = j->done = copied;
	j->eof = true;
	if (cp->c->progress)
		cp->c->progress(cp->c->data, j->src, copied, j->st.size);
	j->step = F_FINISH;
	return 1;
}

/* Whether a file goes over sftp_ranges.c: one alone, large, on libssh2's SFTP. An
 * upload's temporary file has its final mode from its creation, and the other
 * connections open it again to write: not one without the owner's write bit. */
static bool ranges_wanted(const struct copy *cp, const struct fstat_ *st)
{
	uint64_t min = cp->c->split_size ? cp->c->split_size : SFTP_SPLIT_SIZE;
	bool up = cp->to->sftp != NULL;
	return cp->pool && !cp->to->msftp && !cp->from->msftp && st->size >= min &&
	       !(up && !(wanted(cp, st).mode & 0200));
}

/* Moves a file on: FS_AGAIN when it waits for a server, 1 when it moved (call
 * again), 0 when it is over (in place, or its failure reported and what it left
 * removed). An interrupt is seen between chunks only: a step that said FS_AGAIN has
 * a request of its channel's outstanding, and is called again until it ends. */
static int file_step(struct copy *cp, struct job *j)
{
	struct fs *from = j->from, *to = j->to;
	struct dp_error e2 = { 0 };
	struct fstat_ dst;
	int r;

	switch (j->step) {
	case F_CHECK:           /* what is at dest may be replaced, unless a directory */
		r = to->ops->stat(to, j->dest, true, &dst, &e2);
		if (r == FS_AGAIN)
			return r;
		if (r == 0 && dst.type == T_DIR) {
			dp_err(&j->err, DPE_FAIL, "cannot overwrite directory '%s%s' with non-directory '%s%s'",
			       to->name, j->dest, from->name, j->src);
			return job_fail(j);
		}
		if (r < 0 && to->dead) {
			j->err = e2;
			return job_fail(j);
		}
		j->step = F_OPEN_READ;
		return 1;
	case F_OPEN_READ:
		r = from->ops->open_read(from, j->src, &j->in, &j->err);
		if (r == FS_AGAIN)
			return r;
		if (r < 0)
			return job_fail(j);
		if (cp->c->progress)
			cp->c->progress(cp->c->data, j->src, 0, j->st.size);
		j->step = F_OPEN_TEMP;
		return 1;
	case F_OPEN_TEMP:
		r = to->ops->open_temp(to, j->dest, j->want.mode, &j->tmp, &j->out, &j->err);
		if (r == FS_AGAIN)
			return r;
		if (r < 0)
			return job_fail(j);
		j->step = F_COPY;
		return 1;
	case F_COPY:
		return j->ranges ? ranges_step(cp, j) : copy_step(cp, j);
	case F_FINISH:
		r = to->ops->finish(to, j->out, &j->want, &j->err);
		if (r == FS_AGAIN)
			return r;
		j->out = NULL;          /* closed, even when it failed */
		if (r < 0)
			return job_fail(j);
		j->step = F_RENAME;
		return 1;
	case F_RENAME:
		r = to->ops->rename(to, j->tmp, j->dest, &j->err);
		if (r == FS_AGAIN)
			return r;
		if (r < 0)
			return job_fail(j);
		free(j->tmp);           /* the file is in place */
		j->tmp = NULL;
		j->step = F_CLOSE_READ;
		return 1;
	case F_ABANDON:
		if (to->ops->abandon(to, j->out) == FS_AGAIN)
			return FS_AGAIN;
		j->out = NULL;
		j->step = F_UNLINK;
		return 1;
	case F_UNLINK:
		if (to->ops->unlink(to, j->tmp, &e2) == FS_AGAIN)
			return FS_AGAIN;
		j->step = F_CLOSE_READ;
		return 1;
	case F_CLOSE_READ:
		if (j->in && from->ops->close_read(from, j->in) == FS_AGAIN)
			return FS_AGAIN;
		j->in = NULL;
		if (j->failed) {
			if (!cp->stop)  /* after a failure that ended the copy: quiet */
				item_failed(cp, &j->err);
		} else if (cp->c->copied) {
			struct sftp_item it = { j->src, j->dest, SFTP_FILE, j->done, j->want.mode, false,
						j->ranges ? j->connections : 1 };
			cp->c->copied(cp->c->data, &it);
		}
		return 0;
	}
	return 0;
}

static struct job *job_new(struct copy *cp, const char *src, const char *dest, const struct fstat_ *st,
			   bool check)
{
	struct job *j = xcalloc(1, sizeof(*j));
	j->src = xstrdup(src);
	j->dest = xstrdup(dest);
	j->st = *st;
	j->want = wanted(cp, st);
	j->step = check ? F_CHECK : F_OPEN_READ;
	j->cap = st->size < COPY_BUF ? (size_t)st->size : COPY_BUF;
	return j;
}

static void job_free(struct job *j)
{
	free(j->src);
	free(j->dest);
	free(j->tmp);
	free(j->buf);
	free(j);
}

/* ---- the files in flight ---- */

/* The next channel, while one is being opened: 1 when that ended. */
static int pool_open_step(struct pool *p)
{
	if (!p->opening)
		return 0;
	LIBSSH2_SFTP *sftp = libssh2_sftp_init(p->remote->ls);
	if (!sftp && libssh2_session_last_errno(p->remote->ls) == LIBSSH2_ERROR_EAGAIN)
		return 0;
	p->opening = false;
	if (!sftp) {
		p->full = true;
		return 1;
	}
	struct slot *sl = &p->slot[p->n++];
	sl->fs = *p->remote;
	sl->fs.sftp = sftp;
	sl->fs.slot = true;
	sl->fs.step = 0;
	sl->job = NULL;
	return 1;
}

/* Moves every file in flight on as far as it goes, the waiting ones onto free
 * channels, and opens the next channel while files wait: how many steps moved. */
static int pool_step(struct pool *p)
{
	int moved = pool_open_step(p);
	while (p->queued && p->cp->stop)        /* the copy ended: they stay where they are */
		job_free(p->queue[--p->queued]);
	for (int i = 0; i < p->n; i++) {
		struct slot *sl = &p->slot[i];
		int r;
		if (!sl->job && p->queued) {
			struct job *j = p->queue[0];
			memmove(p->queue, p->queue + 1, (size_t)--p->queued * sizeof(*p->queue));
			j->from = p->cp->from == p->remote ? &sl->fs : p->cp->from;
			j->to = p->cp->to == p->remote ? &sl->fs : p->cp->to;
			sl->job = j;
		}
		while (sl->job && (r = file_step(p->cp, sl->job)) != FS_AGAIN) {
			moved++;
			if (r == 0) {
				job_free(sl->job);
				sl->job = NULL;
			}
		}
	}
	if (p->queued && !p->opening && !p->full && p->n < SLOTS)
		p->opening = true;
	return moved;
}

/* Whether a channel with a request outstanding holds data that libssh2 read off
 * the socket while serving another one: no wakeup would come for it. */
static bool pool_queued(struct pool *p)
{
	unsigned long avail = 0;
	libssh2_channel_window_read_ex(libssh2_sftp_get_channel(p->remote->sftp), &avail, NULL);
	for (int i = 0; !avail && i < p->n; i++)
		if (p->slot[i].job)
			libssh2_channel_window_read_ex(libssh2_sftp_get_channel(p->slot[i].fs.sftp),
						       &avail, NULL);
	return avail > 0;
}

/* Something waits for the server: the files in flight move on, and when none moved,
 * the socket is waited on. -1 when nothing arrived for SFTP_TIMEOUT_S or a ProxyJump
 * hop failed: the connection is lost. */
static int pool_wait(struct pool *p)
{
	struct ssh_session *s = p->remote->s;
	if (pool_step(p) > 0) {
		p->idle_ms = 0;
		return 0;
	}
	int q = ssh_session_pump(s);
	if (q != 0)
		return q;       /* a hop failed (-1), or holds data already (1): at once */
	if (pool_queued(p) && p->rounds++ < 4)
		return 0;
	p->rounds = 0;
	/* Nothing moved, nothing is queued: a socket at its end would wake every wait
	 * at once, for ever (libssh2 may answer EAGAIN on it again and again), and the
	 * idle count below would never grow. */
	if (ssh_session_closed(s))
		return -1;
	int r = ssh_session_wait(s, 100);
	if (r < 0)
		return -1;
	p->idle_ms = r > 0 ? 0 : p->idle_ms + 100;
	return p->idle_ms >= SFTP_TIMEOUT_S * 1000 ? -1 : 0;
}

static bool nb_wait(struct fs *fs)
{
	return !fs->slot && fs->pool && pool_wait(fs->pool) >= 0;
}

/* Sets a file going: it waits for a channel with at most SLOTS - 1 others; when
 * that many wait already, or no channel opens at all, it goes on the walk's own
 * channel (the walk goes on when it is copied). */
static void run_here(struct copy *cp, struct job *j)
{
	j->from = cp->from;
	j->to = cp->to;
	while (file_step(cp, j) != 0)
		;
	job_free(j);
}

/* No channel opened: the files that waited for one are copied on the walk's. */
static void pool_fallback(struct pool *p)
{
	while (p->full && !p->n && p->queued) {
		struct job *j = p->queue[0];
		memmove(p->queue, p->queue + 1, (size_t)--p->queued * sizeof(*p->queue));
		run_here(p->cp, j);
	}
}

static void pool_add(struct copy *cp, struct job *j)
{
	struct pool *p = cp->pool;
	if (p)
		pool_fallback(p);
	if (p && !(p->full && !p->n) && p->queued < SLOTS) {
		p->queue[p->queued++] = j;
		pool_step(p);
		return;
	}
	run_here(cp, j);
}

static bool pool_busy(const struct pool *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->slot[i].job)
			return true;
	return p->opening || p->queued;
}

/* Until every file in flight is over (and the channel being opened, open). */
static void pool_drain(struct pool *p)
{
	while (p && pool_busy(p)) {
		pool_fallback(p);
		if (pool_wait(p) >= 0)
			continue;
		while (p->queued)
			job_free(p->queue[--p->queued]);
		for (int i = 0; i < p->n; i++) {        /* the connection is lost */
			struct job *j = p->slot[i].job;
			if (!j)
				continue;
			p->slot[i].fs.dead = true;
			dp_err(&j->err, DPE_CONNECT, "connection to '%s' lost while copying '%s%s'",
			       ssh_session_name(p->remote->s), j->from->name, j->src);
			item_failed(p->cp, &j->err);
			job_free(j);
			p->slot[i].job = NULL;
		}
		p->opening = false;
	}
}

/* The channels end at once, in one round trip rather than one each. */
static void pool_close(struct pool *p)
{
	pool_drain(p);
	double deadline = monotonic_seconds() + (p->remote->dead ? 1 : 10);
	int left;
	do {
		left = 0;
		for (int i = 0; i < p->n; i++) {
			if (!p->slot[i].fs.sftp)
				continue;
			if (libssh2_sftp_shutdown(p->slot[i].fs.sftp) == LIBSSH2_ERROR_EAGAIN)
				left++;
			else
				p->slot[i].fs.sftp = NULL;
		}
		if (left && ssh_session_pump(p->remote->s) == 0)
			ssh_session_wait(p->remote->s, 100);
	} while (left && monotonic_seconds() < deadline);
	free(p);
}

/* ---- the walk ---- */

static int copy_item(struct copy *cp, const char *src, const char *dest, bool top,
		     const struct fstat_ *known, bool fresh, const struct fstat_ *dest_st);

/* name's lstat in a listing of dir on the destination (dsts where the listing held
 * them, else asked); false when it is not there. */
static bool dest_entry(struct copy *cp, const char *dir, char **dnames, const struct fstat_ *dsts,
		       const char *name, struct fstat_ *st)
{
	for (size_t k = 0; dnames && dnames[k]; k++) {
		if (!streq(dnames[k], name))
			continue;
		if (dsts) {
			*st = dsts[k];
			return true;
		}
		_cleanup_free_ char *d = sftp_join(dir, name);
		struct dp_error ignored;
		return cp->to->ops->stat(cp->to, d, false, st, &ignored) == 0;
	}
	return false;
}

/* --delete: dest, which the source does not have, removed: a directory with what
 * it holds, depth first, through no symbolic link (a link is removed, never
 * followed); -1 only when the whole copy must stop. */
static int remove_tree(struct copy *cp, const char *dest, const struct fstat_ *st)
{
	struct dp_error err = { 0 };
	int r;
	if (cp->stop || cancelled(cp))
		return -1;
	if (st->type == T_DIR) {
		_cleanup_strv_free_ char **names = NULL, **refused = NULL;
		_cleanup_free_ struct fstat_ *sts = NULL;
		if (cp->to->ops->list(cp->to, dest, &names, &sts, &refused, &err) < 0)
			return item_failed(cp, &err);
		for (size_t i = 0; names && names[i]; i++) {
			struct fstat_ in;
			if (!dest_entry(cp, dest, names, sts, names[i], &in))
				continue;
			_cleanup_free_ char *d = sftp_join(dest, names[i]);
			if (remove_tree(cp, d, &in) < 0)
				return -1;
		}
		r = cp->to->ops->rmdir(cp->to, dest, &err);
	} else {
		r = cp->to->ops->unlink(cp->to, dest, &err);
	}
	if (r < 0)
		return item_failed(cp, &err);
	cp->writes++;
	if (cp->c->removed)
		cp->c->removed(cp->c->data, dest, st->type == T_DIR ? SFTP_DIR
				: st->type == T_LINK ? SFTP_SYMLINK : SFTP_FILE);
	return 0;
}

/* fresh: dest's parent was just made, so nothing is at dest. top: dest is what the
 * command line named. A local symbolic link where a directory goes is followed only
 * there: below the top it is refused, whether the copy found it or made it (from a
 * link of another source merged into the same directory), so that nothing a server
 * lists can lead a download out of its destination. */
static int copy_dir(struct copy *cp, const char *src, const char *dest, const struct fstat_ *st,
		    bool fresh, bool top, const struct fstat_ *dest_st, struct dp_error *err)
{
	_cleanup_strv_free_ char **names = NULL, **refused = NULL;
	_cleanup_free_ struct fstat_ *sts = NULL;
	struct fstat_ dst;
	struct dp_error e2;
	bool local = cp->to->ops == &local_ops;
	bool follow = !local || top;

	/* --update: the parent's listing said dest is a directory already (no stat, no
	 * mkdir: round trips a far host would count) */
	bool known = dest_st && dest_st->type == T_DIR && !top;
	if (!known && (!fresh || local) && cp->to->ops->stat(cp->to, dest, follow, &dst, &e2) == 0 &&
	    dst.type != T_DIR)
		return dp_err(err, DPE_FAIL, "cannot overwrite non-directory '%s%s' with directory '%s%s'",
			      cp->to->name, dest, cp->from->name, src);
	if (cp->to->dead)
		return dp_err(err, e2.kind, "%s", e2.msg);
	if (cp->from->ops->list(cp->from, src, &names, &sts, &refused, err) < 0)
		return -1;
	for (char **m = refused; m && *m; m++) {
		dp_err(&e2, DPE_FAIL, "%s", *m);
		if (item_failed(cp, &e2) < 0)
			return -2;
	}
	int made = known ? 0 : cp->to->ops->mkdir(cp->to, dest, err);
	if (made < 0)
		return -1;
	unsigned long writes = cp->writes + (made == 1);
	/* --update and --delete: what dest holds already, from one listing */
	_cleanup_strv_free_ char **dnames = NULL, **drefused = NULL;
	_cleanup_free_ struct fstat_ *dsts = NULL;
	bool compare = (cp->c->update || cp->c->delete_extra) && made == 0;
	if (compare && cp->to->ops->list(cp->to, dest, &dnames, &dsts, &drefused, err) < 0)
		return -1;
	for (size_t i = 0; names && names[i]; i++) {
		_cleanup_free_ char *s = sftp_join(src, names[i]), *d = sftp_join(dest, names[i]);
		struct fstat_ dst_st;
		bool have = compare && dest_entry(cp, dest, dnames, dsts, names[i], &dst_st);
		if (copy_item(cp, s, d, false, sts ? &sts[i] : NULL, made == 1, have ? &dst_st : NULL) < 0)
			return -2;      /* fatal, already recorded */
	}
	for (size_t k = 0; compare && cp->c->delete_extra && dnames && dnames[k]; k++) {
		struct fstat_ dst_st;
		if (strv_contains(names, dnames[k]) ||
		    !dest_entry(cp, dest, dnames, dsts, dnames[k], &dst_st))
			continue;
		_cleanup_free_ char *d = sftp_join(dest, dnames[k]);
		if (remove_tree(cp, d, &dst_st) < 0)
			return -2;
	}
	struct fstat_ want = wanted(cp, st);
	/* --update: a directory whose mode and time are the wanted ones already (a file
	 * renamed into it changes its time) */
	bool as_is = known && cp->c->update && cp->writes == writes && dest_st->mode == want.mode &&
		     want.mtime >= 0 && dest_st->mtime == want.mtime;
	if (cp->pool) {         /* files of it may still be on their way: at the end */
		cp->dirs = xrealloc(cp->dirs, (cp->ndirs + 1) * sizeof(*cp->dirs));
		cp->dirs[cp->ndirs++] = (struct dir_attrs){ xstrdup(src), xstrdup(dest), want, as_is };
		return 0;
	}
	if (!as_is && cp->to->ops->set_attrs(cp->to, dest, &want, err) < 0)
		return -1;
	done_item(cp, src, dest, SFTP_DIR, 0, want.mode);
	return 0;
}

/* The directories' modes and times, deepest first (the order they were left in),
 * once every file is in place. */
static void set_dir_attrs(struct copy *cp)
{
	for (size_t i = 0; i < cp->ndirs; i++) {
		struct dir_attrs *d = &cp->dirs[i];
		struct dp_error err = { 0 };
		if (cp->stop)
			;
		else if (!d->as_is && cp->to->ops->set_attrs(cp->to, d->dest, &d->want, &err) < 0)
			item_failed(cp, &err);
		else
			done_item(cp, d->src, d->dest, SFTP_DIR, 0, d->want.mode);
		free(d->src);
		free(d->dest);
	}
	free(cp->dirs);
}

/* Copies src to dest (st: src's lstat when known already; dest_st: dest's, when the
 * listing of its directory said, for --update); returns -1 only when the whole copy
 * must stop. */
static int copy_item(struct copy *cp, const char *src, const char *dest, bool top,
		     const struct fstat_ *known, bool fresh, const struct fstat_ *dest_st)
{
	struct dp_error err = { 0 };
	struct fstat_ st;
	int r = 0;

	if (cp->stop)
		return -1;
	if (cancelled(cp)) {
		dp_err(&err, DPE_FAIL, "interrupted");
		return item_failed(cp, &err);
	}
	if (known)
		st = *known;
	else if (cp->from->ops->stat(cp->from, src, top, &st, &err) < 0)
		return item_failed(cp, &err);
	switch (st.type) {
	case T_LINK: {
		_cleanup_free_ char *target = NULL;
		r = cp->from->ops->readlink(cp->from, src, &target, &err);
		if (r == 0 && up_to_date_link(cp, target, dest_st, dest)) {
			done_item(cp, src, dest, SFTP_SYMLINK, 0, st.mode);
			break;
		}
		if (r == 0)
			r = cp->to->ops->symlink(cp->to, target, dest, &err);
		cp->writes++;
		if (r == 0)
			done_item(cp, src, dest, SFTP_SYMLINK, 0, st.mode);
		break;
	}
	case T_DIR:
		if (!cp->c->recursive)
			r = dp_err(&err, DPE_FAIL, "omitting directory '%s%s' (use -r to copy directories)",
				   cp->from->name, src);
		else
			r = copy_dir(cp, src, dest, &st, fresh, top, dest_st, &err);
		if (r == -2)
			return -1;
		break;
	case T_FILE: {
		struct fstat_ cur;
		struct dp_error ignored;
		if (cp->c->update && top && !dest_st &&
		    cp->to->ops->stat(cp->to, dest, true, &cur, &ignored) == 0)
			dest_st = &cur;
		if (up_to_date(cp, &st, dest_st)) {
			struct sftp_item it = { src, dest, SFTP_FILE, 0, st.mode, true, 0 };
			if (cp->c->copied)
				cp->c->copied(cp->c->data, &it);
			return 0;
		}
		cp->writes++;
		/* one file alone goes on the walk's channel at once: a channel of its own
		 * would cost three round trips first */
		if (top && !cp->many) {
			struct job *j = job_new(cp, src, dest, &st, true);
			j->ranges = ranges_wanted(cp, &st);
			run_here(cp, j);
		}
		else
			pool_add(cp, job_new(cp, src, dest, &st, !fresh));
		return cp->stop ? -1 : 0;
	}
	case T_OTHER:
		r = dp_err(&err, DPE_FAIL, "skipping '%s%s': not a regular file", cp->from->name, src);
		break;
	}
	if (r < 0)
		return item_failed(cp, &err);
	return 0;
}

char *sftp_base_name(const char *path)
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
	struct copy cp = { .c = c, .from = from, .to = to, .many = strv_len(srcs) > 1 };
	mode_t mask = umask(022);

	umask(mask);
	cp.umask = (unsigned)mask;
	struct fs *remote = from->sftp ? from : to->sftp ? to : NULL;
	struct fstat_ st;
	struct dp_error e2;
	bool into = false;

	if (remote) {   /* libssh2's SFTP: several files in flight */
		cp.pool = xcalloc(1, sizeof(*cp.pool));
		cp.pool->cp = &cp;
		cp.pool->remote = remote;
		remote->pool = cp.pool;
		libssh2_session_set_blocking(remote->ls, 0);
		/* files to come: the first channel opens while the walk starts */
		cp.pool->opening = c->recursive || cp.many;
	}
	int r = -1;
	if (to->ops->stat(to, dest, true, &st, &e2) == 0)
		into = st.type == T_DIR;
	else if (e2.kind != DPE_NOTFOUND) {
		dp_err(err, e2.kind, "%s", e2.msg);
		goto out;
	}
	if (!into && strv_len(srcs) > 1) {
		dp_err(err, DPE_FAIL, "target '%s%s' is not a directory", to->name, dest);
		goto out;
	}

	for (char *const *s = srcs; *s; s++) {
		_cleanup_free_ char *base = sftp_base_name(*s);
		_cleanup_free_ char *d = NULL;
		if (!into)
			d = xstrdup(dest);
		else if (streq(base, ".") || streq(base, "..") || streq(base, "/"))
			d = xstrdup(dest);      /* "cp -r . host:dir" merges into dir */
		else
			d = sftp_join(dest, base);
		if (copy_item(&cp, *s, d, true, NULL, false, NULL) < 0)
			break;
	}
	pool_drain(cp.pool);
	set_dir_attrs(&cp);
	r = 0;
	if (cp.result < 0) {
		*err = cp.first_err;
		r = -1;
	}
out:
	if (cp.pool) {
		pool_close(cp.pool);
		remote->pool = NULL;
		libssh2_session_set_blocking(remote->ls, 1);
	}
	return r;
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
		return sftp_remote_err(&f->fs, err, "create", path);
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
		return sftp_remote_err(&f->fs, err, "write", path);
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
	sftp_remote_err(&f->fs, err, "rename a temporary file to", to);
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

/* The trees that fit go as tar streams first (lib/transport/tarcopy.h): 0 or 1 (some
 * failed: err) with *rest the sources left for SFTP (NULL when none: done), or -1. */
typedef int tar_fn(struct ssh_session *s, char *const *srcs, const char *dest,
		   const struct sftp_copy *c, bool *sftp, struct dp_error *err);
static int tar_first(struct ssh_session *s, char *const *srcs, const char *dest,
		     const struct sftp_copy *c, tar_fn *fn, char ***rest, struct dp_error *err)
{
	size_t n = strv_len((char **)srcs), m = 0;
	*rest = xcalloc(n + 1, sizeof(**rest));
	if (!tar_copy_fits(c)) {
		memcpy(*rest, srcs, n * sizeof(*srcs));
		return 0;
	}
	_cleanup_free_ bool *left = xcalloc(n + 1, sizeof(*left));
	struct dp_error terr = { 0 };
	int r = fn(s, srcs, dest, c, left, &terr);
	*err = terr;
	if (r < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (left[i])
			(*rest)[m++] = srcs[i];
	if (!m) {
		free(*rest);
		*rest = NULL;
		return r ? -1 : 0;
	}
	return r;
}

int sftp_upload(struct ssh_session *s, char *const *srcs, const char *dest,
		const struct sftp_copy *c, struct dp_error *err)
{
	struct fs local = { .ops = &local_ops, .name = "" }, remote = { 0 };
	_cleanup_free_ char *name = NULL, *rdest = NULL;
	_cleanup_free_ char **rest = NULL;
	if (remote_path(dest, &rdest, err) < 0)
		return -1;
	int tr = tar_first(s, srcs, rdest, c, tar_upload, &rest, err);
	if (tr < 0 || !rest)
		return tr;
	if (open_remote(s, &remote, &name, err) < 0)
		return -1;
	struct dp_error terr = *err;
	int r = copy_all(&local, &remote, rest, rdest, c, err);
	close_remote(&remote);
	if (r == 0 && tr) {
		*err = terr;
		r = -1;
	}
	return r;
}

int sftp_download(struct ssh_session *s, char *const *srcs, const char *dest,
		  const struct sftp_copy *c, struct dp_error *err)
{
	struct fs local = { .ops = &local_ops, .name = "" }, remote = { 0 };
	_cleanup_free_ char *name = NULL;
	_cleanup_strv_free_ char **rsrcs = NULL;
	_cleanup_free_ char **rest = NULL;
	for (char *const *p = srcs; *p; p++) {
		char *r;
		if (remote_path(*p, &r, err) < 0)
			return -1;
		strv_push(&rsrcs, r);
	}
	int tr = tar_first(s, rsrcs, dest, c, tar_download, &rest, err);
	if (tr < 0 || !rest)
		return tr;
	if (open_remote(s, &remote, &name, err) < 0)
		return -1;
	struct dp_error terr = *err;
	int r = copy_all(&remote, &local, rest, dest, c, err);
	close_remote(&remote);
	if (r == 0 && tr) {
		*err = terr;
		r = -1;
	}
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
