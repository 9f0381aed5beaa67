/* SPDX-License-Identifier: MIT */
/*
 * Copying files and trees to and from a host over SFTP, on one SSH session (as scp -r
 * and cp -r): permission bits kept (and times with preserve), symlinks inside a tree
 * copied as symlinks, symlinks named on the command line followed (cp -H). A file is
 * written under a temporary name in its destination directory and renamed into place
 * once complete, so a partial file never appears under the final name; a failed copy
 * removes its temporary file (except on a remote side whose connection died). A
 * regular file is copied as long as it was when looked at (as scp): one that grows
 * meanwhile is copied up to that size, one that shrinks up to its new end.
 *
 * One copy algorithm runs over two file systems, the local one and the SFTP one:
 * upload and download are the same code with the sides swapped.
 */
#ifndef DISPATCH_SFTP_H
#define DISPATCH_SFTP_H

#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct ssh_session;
struct ssh_ctx;

#define SFTP_SPLIT_SIZE (64u << 20)

enum sftp_item_type { SFTP_FILE, SFTP_DIR, SFTP_SYMLINK };

struct sftp_item {
	const char *src, *dest;
	enum sftp_item_type type;
	uint64_t bytes;                 /* regular files: the size copied */
	unsigned mode;                  /* permission bits */
	bool skipped;                   /* --update: dest had the same size and time */
	int connections;                /* regular files: how many connections moved bytes */
};

struct sftp_copy {
	bool recursive;                 /* directories too (cp -r); else they are refused */
	bool preserve;                  /* modification and access times too (cp -p) */
	bool update;                    /* skip a regular file whose dest has its size and
					   modification time (the times are kept, so that
					   the next copy can tell) */
	bool sftp_only;                 /* never a tree as a tar stream (lib/transport/
					   tarcopy.h): file by file over SFTP */
	/* A regular file of at least split_size bytes (0: SFTP_SPLIT_SIZE), copied alone
	 * on a direct connection, goes over up to `connections` connections at once (0:
	 * two where there are two cores or more), each a thread with its own cipher
	 * stream: the copy's own connection, and others opened like it through ssh in
	 * batch mode where it logged in without asking anything (never a second prompt).
	 * Whatever their number, the disk is then on threads of its own. */
	int connections;
	uint64_t split_size;
	const struct ssh_ctx *ssh;      /* NULL: the copy's connection only */
	bool delete_extra;              /* with update and recursive: remove what a copied
					   directory's dest holds that its source does not
					   (never through a symbolic link) */
	/* Each thing delete_extra removed (a directory after what it held). */
	void (*removed)(void *data, const char *dest, enum sftp_item_type type);
	/* A regular file's progress: at its start (done 0), as data goes, at its end. */
	void (*progress)(void *data, const char *src, uint64_t done, uint64_t total);
	/* Each item once it is in place. */
	void (*copied)(void *data, const struct sftp_item *it);
	/* A source (or an entry of a tree) that could not be copied: the copy goes on
	 * with the next one, unless the connection is lost or cancel is set. Failures
	 * before any item (a bad dest, no SFTP) come only in the return value. */
	void (*failed)(void *data, const struct dp_error *err);
	void *data;
	volatile sig_atomic_t *cancel;  /* set (by a signal handler) to stop */
};

/* Copy local srcs to the remote dest (upload) or remote srcs to the local dest
 * (download). As cp: with an existing directory as dest each source goes into it
 * under its own name; else there must be one source, which becomes dest. Remote
 * paths are relative to the remote home; "~" and "~/..." name it too.
 * Returns 0 when everything was copied; -1 otherwise, err holding the first failure
 * (DPE_NOTFOUND a missing source, DPE_CONNECT a lost connection, DPE_FAIL others). */
int sftp_upload(struct ssh_session *s, char *const *srcs, const char *dest,
		const struct sftp_copy *c, struct dp_error *err);
int sftp_download(struct ssh_session *s, char *const *srcs, const char *dest,
		  const struct sftp_copy *c, struct dp_error *err);

/* Single files on one SFTP session, for job scripts and packed code: paths are the
 * server's (absolute, or relative to the login directory; SFTP expands neither ~ nor
 * $VAR: resolve those with the shell first). Errors are worded as the copies' are:
 * DPE_CONNECT when the connection is lost (or the server has no SFTP subsystem),
 * DPE_NOTFOUND, DPE_FAIL. */
struct sftp_files;
int sftp_files_open(struct ssh_session *s, struct sftp_files **out, struct dp_error *err);
void sftp_files_close(struct sftp_files *f);
static inline void sftp_files_closep(struct sftp_files **f) { sftp_files_close(*f); }
#define _cleanup_sftp_files_ _cleanup_(sftp_files_closep)
/* Progress of the sftp_put_new calls that follow: at the start (done 0), as the
 * server acknowledges data, and at the end (done == total). fn NULL: none. */
void sftp_files_set_progress(struct sftp_files *f,
			     void (*fn)(void *data, const char *path, uint64_t done, uint64_t total),
			     void *data);
/* A new file with its final mode from the start (a private file is never readable by
 * others, not even for a moment); a file already there is an error, so two writers
 * never mix their bytes. */
int sftp_put_new(struct sftp_files *f, const char *path, const void *buf, size_t len, int mode,
		 struct dp_error *err);
/* 1 with *size when path exists (following symlinks), 0 when it does not, -1. */
int sftp_size(struct sftp_files *f, const char *path, uint64_t *size, struct dp_error *err);
/* Rename from to to, never replacing: 0 when done, 1 when to exists (from is left), -1. */
int sftp_rename_new(struct sftp_files *f, const char *from, const char *to, struct dp_error *err);
/* err may be NULL. */
int sftp_remove(struct sftp_files *f, const char *path, struct dp_error *err);

/* Split a cp operand as scp does: "HOST:PATH" is remote (HOST an alias, user@host,
 * [v6addr] or host:PORT written as "host:PORT:PATH"), anything whose first ':'
 * comes after a '/', or that starts with '/' or '.', is a local path. Returns true
 * for a remote operand, with *host and *path allocated (path may be empty: the
 * home directory). */
bool sftp_split_operand(const char *arg, char **host, char **path);

#endif
