/* SPDX-License-Identifier: MIT */
/*
 * cp -r's trees as one tar stream on one exec channel, where SFTP would pay round
 * trips for every file (open, write, close, rename: a tree of 20 small files 150 ms
 * away takes seconds over SFTP, one stream takes about one round trip more than the
 * connection). lib/transport/sftp.c calls it for the sources it fits, and copies the
 * others itself:
 *
 *	a directory, with -r and without --update or --delete (those compare with
 *	what is there, file by file), whose target does not exist yet (SFTP merges
 *	into an existing tree), on a host with tar, mktemp and `mv -T`.
 *
 * The guarantees are cp's: the tree is extracted into a new private directory beside
 * its target and renamed into place whole, so no file appears under its final name
 * before it is complete; a file that cannot be read is named and left out, the rest
 * copied; modes as the SFTP copy sets them (less the remote umask, exact with -p,
 * times too); on a lost connection or Ctrl-C nothing is left under the target's name.
 */
#ifndef DISPATCH_TARCOPY_H
#define DISPATCH_TARCOPY_H

#include <stdbool.h>

#include "base/error.h"
#include "transport/sftp.h"

struct ssh_session;

/* Whether c's options let a tree go as a tar stream at all. */
bool tar_copy_fits(const struct sftp_copy *c);

/* Uploads the local directories among srcs[0..n) to dest (a remote path relative to
 * the home, "." for it) as tar streams, one per source; sftp[i] is set for each
 * source SFTP must copy instead (not a directory, its target exists, the host
 * lacks tar). Items go to c->copied once in place, failures to c->failed. Returns 0
 * when every source it took was copied, 1 when some failed (reported; err holds the
 * first), -1 when the copy must stop (connection lost, interrupted: err). */
int tar_upload(struct ssh_session *s, char *const *srcs, const char *dest,
	       const struct sftp_copy *c, bool *sftp, struct dp_error *err);

/* Downloads the remote directories among srcs[0..n) (paths relative to the home) to
 * the local dest the same way, as sftp[i] and the return value say for upload. */
int tar_download(struct ssh_session *s, char *const *srcs, const char *dest,
		 const struct sftp_copy *c, bool *sftp, struct dp_error *err);

/* What a download does with the stream, for tests and fuzzing: the tar stream on fd
 * (a `tar -c` of a directory named base) into dir (an empty directory, where a
 * download's private one would be), every entry under dir/t or refused. The number
 * of entries refused or failed, or -1 with err when the stream broke. */
int tar_extract_fd(int fd, const char *base, const char *dir, struct dp_error *err);

#endif
