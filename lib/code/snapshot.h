/* SPDX-License-Identifier: MIT */
/*
 * Repository snapshots as tar.gz, made in-process with libgit2 and libarchive and
 * compressed on every core (pgzip.h). Three kinds:
 *
 *   SNAPSHOT_REF    the files 'git archive REF' writes: tracked files of that commit
 *                   (or tree), executable bits, symlinks, export-ignore honoured,
 *                   submodules as empty directories, text filters (eol, ident) applied.
 *   SNAPSHOT_DIRTY  the work tree as it is now: tracked files as on disk (staged and
 *                   unstaged edits; deleted files left out) plus untracked files that
 *                   are not ignored; export-ignore honoured.
 *   SNAPSHOT_FILES  the named paths (relative to opts.repo) as on disk; a directory
 *                   brings its tracked and untracked-not-ignored files, a named file
 *                   comes even when ignored.
 *
 * The bytes are deterministic: entries in git's tree order, every mtime the commit's
 * time (for DIRTY and FILES: HEAD's, or SNAPSHOT_EPOCH when there is no commit),
 * uid/gid 0 without user or group names, modes 0664/0775 (as git archive), a gzip
 * header without name or time. The same content therefore gives the same sha256.
 *
 * Output goes through opts.write, called from the caller's thread in order (a file,
 * a buffer, an SSH channel). Memory stays bounded by a few 1 MiB blocks per core
 * plus the largest single file (libgit2 reads a blob whole).
 */
#ifndef DISPATCH_SNAPSHOT_H
#define DISPATCH_SNAPSHOT_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "code/pgzip.h"

/* 1980-01-01T00:00:00Z: the mtime when there is no commit to take one from. */
#define SNAPSHOT_EPOCH 315532800

enum snapshot_mode { SNAPSHOT_REF, SNAPSHOT_DIRTY, SNAPSHOT_FILES };

struct snapshot_opts {
	const char *repo;         /* a directory in the work tree (or a bare repository,
				     for REF); NULL for "." */
	enum snapshot_mode mode;
	const char *ref;          /* REF: anything rev-parse takes; NULL for "HEAD" */
	char *const *files;       /* FILES: NULL-terminated, relative to repo */
	int level;                /* gzip level 1..9; 0 for 6 */
	int threads;              /* compression threads; 0 for one per CPU */
	bool want_sha256;         /* fill info->sha256 (hashing costs a little time) */
	dp_write_fn write;        /* where the tar.gz bytes go */
	void *write_arg;
};

struct snapshot_info {
	char commit[41];          /* the commit archived (REF) or HEAD; "" when none */
	char tree[41];            /* REF: the tree archived (a cache key); else "" */
	char sha256[65];          /* of the tar.gz bytes, with want_sha256; else "" */
	int64_t mtime;            /* the time stamp of every entry */
	uint64_t bytes;           /* tar.gz bytes written */
	uint64_t tar_bytes;       /* uncompressed tar size */
	uint64_t files;           /* regular files and symlinks written */
	uint64_t modified;        /* DIRTY/FILES: tracked files that differ from HEAD */
	uint64_t untracked;       /* DIRTY/FILES: untracked files included */
	uint64_t deleted;         /* DIRTY/FILES: tracked files missing on disk, left out */
	char subdir[PATH_MAX];    /* opts.repo below the top of its work tree; "" at the top */
	char name[256];           /* the work tree's directory name (a bare repository's,
				     without ".git"); "" when not known */
};

/* Writes the snapshot. Errors: DPE_INPUT (not a repository, bare repository for
 * DIRTY/FILES, a path outside the repository), DPE_NOTFOUND (unknown ref, no commit
 * yet, a named path that does not exist), DPE_FAIL (reading or writing failed). When
 * it fails, some bytes may already have been written. */
int snapshot_create(const struct snapshot_opts *opts, struct snapshot_info *info,
		    struct dp_error *err);

/* "3 modified, 1 untracked" (", 2 deleted" when some were left out): the line
 * commands print to stderr for DIRTY snapshots. */
void snapshot_summary(const struct snapshot_info *info, char *buf, size_t size);

/* Ready-made sinks for opts.write: arg is an int * (a file descriptor; retries short
 * writes and EINTR) or a struct strbuf * (the whole tarball in memory). */
int snapshot_write_fd(void *arg, const void *buf, size_t len);
int snapshot_write_strbuf(void *arg, const void *buf, size_t len);

#endif
