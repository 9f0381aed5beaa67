/* SPDX-License-Identifier: MIT */
/* A snapshot streamed into tar on a host: ship.h. */
#include "ship.h"

#include <ctype.h>
#include <stdlib.h>

#include "base/shquote.h"
#include "base/util.h"
#include "transport/ssh.h"

int ship_dir_word(struct strbuf *sb, const char *path)
{
	if (!*path) {
		strbuf_adds(sb, "\"$HOME\"");
		return 0;
	}
	if (path[0] != '~') {
		sh_quote(sb, path);
		return 0;
	}
	const char *slash = strchr(path, '/');
	size_t ulen = slash ? (size_t)(slash - path - 1) : strlen(path + 1);
	if (ulen == 0) {
		strbuf_adds(sb, "\"$HOME\"");
	} else {
		for (size_t i = 1; i <= ulen; i++)
			if (!(isalnum((unsigned char)path[i]) || path[i] == '_' || path[i] == '.' ||
			      (path[i] == '-' && i > 1)))
				return -1;
		strbuf_add(sb, path, ulen + 1);
	}
	if (slash && slash[1]) {
		strbuf_addch(sb, '/');
		sh_quote(sb, slash + 1);
	}
	return 0;
}

/* The snapshot's sink: the connection, opened on the first write, and the remote
 * command's output (tar says nothing unless it fails). */
struct sink {
	const struct ship_target *t;
	const char *command;
	struct ssh_session *s;
	struct ssh_channel *ch;
	struct strbuf said;             /* the remote command's stdout and stderr */
	struct dp_error err;            /* why the sink failed, when it did */
	double start, shown;            /* when the first byte went, progress was told */
	uint64_t sent;
};

static int sink_said(void *data, const char *buf, size_t len)
{
	strbuf_add(&((struct sink *)data)->said, buf, len);
	return 0;
}

static int sink_write(void *arg, const void *buf, size_t len)
{
	struct sink *k = arg;
	if (!k->s) {
		if (ssh_session_open(k->t->sc, k->t->host, &k->s, &k->err) < 0)
			return -1;
		struct ssh_exec x = {
			.command = k->command,
			.raw = true,
			.in_fd = -1,
			.on_stdout = sink_said,
			.on_stderr = sink_said,
			.data = k,
		};
		if (ssh_exec_start(k->s, &x, &k->ch, &k->err) < 0)
			return -1;
		k->start = k->shown = monotonic_seconds();
	}
	if (ssh_exec_write(k->ch, buf, len, &k->err) < 0)
		return -1;
	k->sent += len;
	double now = monotonic_seconds();
	if (k->t->progress && now - k->shown >= 0.1) {
		k->shown = now;
		k->t->progress(k->t->data, k->sent, now - k->start, false, false);
	}
	return 0;
}

/* Ends the remote command and says how it went. snap_r and snap_err are the
 * snapshot's outcome. */
static int sink_finish(struct sink *k, int snap_r, const struct dp_error *snap_err,
		       struct strbuf *said, struct dp_error *err)
{
	int status = -1;
	if (k->t->progress && k->sent)
		k->t->progress(k->t->data, k->sent, monotonic_seconds() - k->start, true, snap_r == 0);
	if (!k->ch) {   /* never started: a bad ref, not a repository, no connection */
		*err = k->err.kind ? k->err : *snap_err;
		return -1;
	}
	int fr = ssh_exec_finish(k->ch, &status, err);
	k->ch = NULL;
	if (fr < 0)
		return -1;
	if (snap_r < 0 && !k->err.kind) {
		*err = *snap_err;       /* tar's words on the cut stream would only confuse */
		return -1;
	}
	strbuf_add(said, k->said.buf, k->said.len);
	if (status != 0)
		return dp_err(err, DPE_FAIL, "extracting into '%s' failed (remote exit status %d)",
			      k->t->dest, status);
	if (snap_r < 0) {
		*err = k->err;
		return -1;
	}
	return 0;
}

int ship_to_host(const struct ship_target *t, struct snapshot_opts *opts,
		 struct snapshot_info *info, struct strbuf *said, double *seconds,
		 struct dp_error *err)
{
	_cleanup_strbuf_ struct strbuf dir = STRBUF_INIT, script = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf command = STRBUF_INIT;
	if (ship_dir_word(&dir, t->path) < 0)
		return dp_err(err, DPE_INPUT, "cannot expand '%s' in '%s': only ~, ~/ and ~USER/ are "
			      "(USER a plain name)", t->path, t->dest);
	/* sh whatever the login shell is; tar creates what is missing below dir. */
	strbuf_addf(&script, "mkdir -p -- %s && exec tar -xzf - -C %s", dir.buf, dir.buf);
	sh_any_command(&command, script.buf);

	struct sink k = { .t = t, .command = command.buf };
	strbuf_init(&k.said);
	opts->write = sink_write;
	opts->write_arg = &k;
	struct dp_error snap_err = { 0 };
	int sr = snapshot_create(opts, info, &snap_err);
	int r = sink_finish(&k, sr, &snap_err, said, err);
	*seconds = k.start > 0 ? monotonic_seconds() - k.start : 0;
	ssh_session_free(k.s);
	strbuf_release(&k.said);
	return r;
}
