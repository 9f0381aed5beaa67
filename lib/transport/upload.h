/* SPDX-License-Identifier: MIT */
/*
 * Files to a host over SFTP on an open session (no scp or sftp subprocess): job
 * scripts and packed code. A file is created with its final mode, so a private file
 * is never readable by others, not even for a moment.
 *
 * Paths are the server's: absolute, or relative to the login directory (SFTP
 * expands neither ~ nor $VAR; resolve those with the shell first).
 */
#ifndef DISPATCH_UPLOAD_H
#define DISPATCH_UPLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct ssh_session;
struct upload;

/* Start SFTP on the session. Errors are DPE_CONNECT (the server has no SFTP
 * subsystem, or the connection broke). */
int upload_open(struct ssh_session *s, struct upload **out, struct dp_error *err);
void upload_close(struct upload *u);
static inline void upload_closep(struct upload **u) { upload_close(*u); }
#define _cleanup_upload_ _cleanup_(upload_closep)

/* Write len bytes to a new file path with mode (e.g. 0700); a file already there is
 * an error (DPE_FAIL), so two writers never mix their bytes. */
int upload_new_file(struct upload *u, const char *path, const void *buf, size_t len, int mode,
		    struct dp_error *err);

/* 1 with *size when path exists (following symlinks), 0 when it does not, -1 with
 * err on failure. */
int upload_stat(struct upload *u, const char *path, uint64_t *size, struct dp_error *err);

/* Rename from to to; 0 when done, 1 when to exists already (from is left), -1 with
 * err. */
int upload_rename(struct upload *u, const char *from, const char *to, struct dp_error *err);
int upload_remove(struct upload *u, const char *path, struct dp_error *err);

#endif
