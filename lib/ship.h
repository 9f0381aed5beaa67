/* SPDX-License-Identifier: MIT */
/*
 * A snapshot shipped to a directory on a host: the tar.gz streams over one SSH
 * channel into `tar -x` there, as lib/code/snapshot.h writes it. The connection is
 * opened on the first byte (a bad ref never connects); no thread, pipe or temporary
 * file anywhere.
 */
#ifndef DISPATCH_SHIP_H
#define DISPATCH_SHIP_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "code/snapshot.h"

struct ssh_ctx;

struct ship_target {
	const struct ssh_ctx *sc;
	const char *host;
	const char *path;               /* on the host; "~", "~/..." and "~USER/..." expand */
	const char *dest;               /* "HOST:PATH", for messages */
	/* Bytes sent so far, at most every 0.1 s while they go, then once more at the end
	 * (done: the snapshot was complete) when any were sent; may be NULL. */
	void (*progress)(void *data, uint64_t sent, double seconds, bool done, bool ok);
	void *data;
};

/* The word the remote sh gets for path: quoted, except that a leading "~" or "~/" is
 * "$HOME" and "~USER/" stays an unquoted tilde prefix (USER made of name characters).
 * An empty path is the home directory, as scp takes it. -1 when ~USER is not a name. */
int ship_dir_word(struct strbuf *sb, const char *path);

/* Snapshot (opts->write is set here) into t->path on t->host. What tar said, when the
 * user should see it, is left in said (empty otherwise). On failure: DPE_INPUT (a path
 * that cannot be expanded), DPE_CONNECT, DPE_FAIL (extracting failed: the remote exit
 * status is in the message), or the snapshot's own error. *seconds: how long the
 * bytes took to go. */
int ship_to_host(const struct ship_target *t, struct snapshot_opts *opts,
		 struct snapshot_info *info, struct strbuf *said, double *seconds,
		 struct dp_error *err);

#endif
