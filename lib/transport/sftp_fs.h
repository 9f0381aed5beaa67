/* SPDX-License-Identifier: MIT */
/* What sftp.c's copy shares with the file systems it copies between (sftp.c: the
 * local one and libssh2's SFTP; sftp_mux.c: SFTP through an OpenSSH master); not an
 * API: nothing outside lib/transport/ includes it. */
#ifndef DISPATCH_SFTP_FS_H
#define DISPATCH_SFTP_FS_H

#include <libssh2.h>
#include <libssh2_sftp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/error.h"

struct fstat_ {
	enum { T_FILE, T_DIR, T_LINK, T_OTHER } type;
	unsigned mode;                  /* permission bits (07777) */
	uint64_t size;
	long atime, mtime;
};

/* What an operation on a file system that does not block returns instead of
 * waiting for its server (libssh2 said EAGAIN): its caller comes back later with the
 * same arguments. Only the SFTP channels of the files in flight (sftp.c's pool) say
 * it; the local file system, the walk's SFTP session and SFTP through a master wait. */
#define FS_AGAIN (-2)

#define SFTP_TIMEOUT_S 120              /* nothing from the server for this long: connection lost */
#define SFTP_TIMEOUT_MS (SFTP_TIMEOUT_S * 1000)

/* The last component of a source path, trailing slashes ignored ("a/b/" -> "b"):
 * the name a source takes under a destination directory (sftp.c, tarcopy.c). */
char *sftp_base_name(const char *path);
/* dir/name, one '/' between; name alone for a dir "" or "."; dir alone for a name "". */
char *sftp_join(const char *dir, const char *name);

struct fs;
struct fs_ops {
	/* -1 with DPE_NOTFOUND when path does not exist */
	int (*stat)(struct fs *fs, const char *path, bool follow, struct fstat_ *st, struct dp_error *err);
	/* the names in path, sorted, and where the listing holds them (SFTP's does), each
	 * one's lstat in *sts (else *sts is left NULL); a remote one's names are those
	 * sftp_listing_check takes, the message of each name it refused in *refused */
	int (*list)(struct fs *fs, const char *path, char ***names, struct fstat_ **sts,
		    char ***refused, struct dp_error *err);
	int (*readlink)(struct fs *fs, const char *path, char **target, struct dp_error *err);
	int (*symlink)(struct fs *fs, const char *target, const char *path, struct dp_error *err);
	/* 1 when it made the directory, 0 when one was there already */
	int (*mkdir)(struct fs *fs, const char *path, struct dp_error *err);
	int (*open_read)(struct fs *fs, const char *path, void **h, struct dp_error *err);
	/* 0 at the end */
	ssize_t (*read)(struct fs *fs, void *h, char *buf, size_t len, struct dp_error *err);
	int (*close_read)(struct fs *fs, void *h);
	/* a new file beside path, under a temporary name (*tmp: NULL at the first call,
	 * kept by a call that says FS_AGAIN, NULL again after a failure); mode: the one
	 * it will have, which the file may have from the start */
	int (*open_temp)(struct fs *fs, const char *path, unsigned mode, char **tmp, void **h,
			 struct dp_error *err);
	/* may take less than len; the rest must be offered again, first */
	ssize_t (*write)(struct fs *fs, void *h, const char *buf, size_t len, struct dp_error *err);
	/* sets mode (and times when st->mtime >= 0) on an open file, then closes it */
	int (*finish)(struct fs *fs, void *h, const struct fstat_ *st, struct dp_error *err);
	int (*abandon)(struct fs *fs, void *h);
	int (*set_attrs)(struct fs *fs, const char *path, const struct fstat_ *st, struct dp_error *err);
	int (*rename)(struct fs *fs, const char *from, const char *to, struct dp_error *err);
	int (*unlink)(struct fs *fs, const char *path, struct dp_error *err);
	/* an empty directory (cp --delete) */
	int (*rmdir)(struct fs *fs, const char *path, struct dp_error *err);
};

struct msftp;
struct pool;
struct fs {
	const struct fs_ops *ops;
	const char *name;               /* "" locally; "host:" remotely, for messages */
	struct ssh_session *s;
	LIBSSH2_SESSION *ls;
	LIBSSH2_SFTP *sftp;
	struct msftp *msftp;            /* through a master (sftp_mux.c) instead of ls, sftp */
	bool dead;                      /* the connection is gone */
	struct pool *pool;              /* sftp.c: the files in flight beside the walk */
	bool slot;                      /* one of the pool's channels: says FS_AGAIN */
	int step;                       /* how far an operation of several requests got */
};

/* An entry of a directory as its server listed it: the name as sent (len bytes,
 * which may hold anything, NUL included), its lstat where the listing carried one
 * (has_st: its type and size at least). */
struct sftp_dirent {
	char *name;
	size_t len;
	struct fstat_ st;
	bool has_st;
};

/* What a copy takes of the listing e[0..n) of dir that host's server sent: the
 * names, sorted, into *names, with their lstats into *sts when every entry carried
 * one (else *sts stays NULL); and for each name it refuses, a message saying so
 * (host, dir and the name, escaped for a terminal) into *refused. A name is refused
 * that, joined to a local path, could name anything but a new entry of that
 * directory: an empty one, ".", "..", one holding a '/' or a NUL, and one listed
 * before in the same listing (the first is taken). The "." and ".." that every
 * listing holds (directories, once each) are left out quietly, as sftp does. Frees
 * e's names (not e). The same for both remote file systems (sftp.c, sftp_mux.c). */
void sftp_listing_check(const char *host, const char *dir, struct sftp_dirent *e, size_t n,
			char ***names, struct fstat_ **sts, char ***refused);

/* sftp.c: the failure of a libssh2 SFTP call on fs (what it tried, on path) as err
 * says it: the server's status for a refusal (DPE_NOTFOUND or DPE_FAIL), else the
 * connection is lost (DPE_CONNECT, fs->dead set). Returns -1. */
int sftp_remote_err(struct fs *fs, struct dp_error *err, const char *what, const char *path);

/* sftp_ranges.c: one large regular file between the local file system and an SFTP
 * server reached with libssh2 (not a master), over up to `connections` connections
 * (the copy's own and others opened like it, in batch mode, where it logged in
 * without a prompt: ssh_session_unattended), each with a thread for the network and
 * one for the disk. The files are open already: both ends of the copy, under their
 * temporary name on the destination's side. */
struct ssh_ctx;
struct sftp_ranges {
	struct fs *remote;              /* the copy's remote file system */
	LIBSSH2_SFTP_HANDLE *h;         /* the file open on it: the source (download), or
					   the temporary file (upload: cut there when the
					   source shrank) */
	const char *path;               /* h's path: every connection opens it again */
	bool upload;
	int fd;                         /* the local file: the source (upload), or the
					   temporary file (download) */
	const char *local;              /* fd's path, for messages */
	uint64_t size;                  /* what is copied */
	int connections;                /* at most this many (the copy's own included) */
	const struct ssh_ctx *ssh;      /* how the others are opened; NULL: none */
	void (*progress)(void *data, uint64_t done);    /* from the caller's thread */
	void *data;
	volatile sig_atomic_t *cancel;
};
/* 0 when the file is copied, with the bytes copied in *copied (size, or less when
 * the source shrank meanwhile: the copy ends where it ended, as scp's) and how many
 * connections moved some of them in *used; 1 when nothing was copied because the
 * copy's own connection took no SFTP channel more (copy it the usual way); -1 with err
 * (DPE_CONNECT when a connection was lost, remote->dead set when it was the copy's
 * own; "interrupted" after cancel). */
int sftp_ranges_copy(const struct sftp_ranges *r, uint64_t *copied, int *used, struct dp_error *err);

/* ".NAME.dispatch-SUFFIX" in the directory of path (sftp.c) */
char *sftp_temp_name(const char *path, const char *suffix);

/* sftp_mux.c: the remote file system of a session through a master: the server's
 * sftp subsystem, spoken here (SFTP version 3, as OpenSSH's sftp-server). */
int msftp_open(struct ssh_session *s, struct fs *fs, struct dp_error *err);
void msftp_close(struct fs *fs);
/* sftp_put_new and sftp_rename_new over it */
int msftp_put_new(struct fs *fs, const char *path, const void *buf, size_t len, int mode,
		  struct dp_error *err);
int msftp_rename_new(struct fs *fs, const char *from, const char *to, struct dp_error *err);

/* sftp_mux.c's parsers of what the server sends, pure (fuzz-sftp-reply): an ATTRS
 * block (its size, -1 when malformed); an SSH_FXP_NAME's count and entries, each
 * added to *e (*n of them) as sent, for sftp_listing_check (-1 when malformed,
 * entries added so far stay); an SSH_FXP_VERSION packet from its type byte on (-1
 * when malformed). */
ssize_t msftp_parse_attrs(const void *buf, size_t len, struct fstat_ *st);
int msftp_parse_names(const void *buf, size_t len, struct sftp_dirent **e, size_t *n);
int msftp_parse_version(const void *body, size_t len, uint32_t *version, bool *posix_rename);

#endif
