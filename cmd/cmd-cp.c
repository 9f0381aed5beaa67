/* SPDX-License-Identifier: MIT */
/*
 * dispatch cp SRC... DEST: files and trees to or from one host over SFTP (lib/transport/sftp.h),
 * new trees as tar streams (lib/transport/tarcopy.h), on one connection, with a progress
 * line per file on a terminal and --json.
 */
#include <cjson/cJSON.h>
#include <signal.h>

#include "dispatch.h"
#include "transport/sftp.h"
#include "transport/ssh.h"

static struct sftp_copy c;
static long split_size;

static const struct dp_option cp_options[] = {
	OPT_BOOL('r', "recursive", &c.recursive, "copy directories and their contents"),
	OPT_BOOL('p', "preserve", &c.preserve, "keep modes exactly (no umask) and modification times"),
	OPT_BOOL('u', "update", &c.update, "skip files whose destination has the same size and modification time (times kept)"),
	OPT_BOOL(0, "delete", &c.delete_extra, "with -r and --update: remove what the destination has that the source lacks"),
	OPT_BOOL(0, "sftp", &c.sftp_only, "copy trees file by file over SFTP, never as one tar stream"),
	OPT_INT(0, "connections", &c.connections, "K", "a large file over up to K connections at once "
		"(default 2 with two cores or more; 1: one)", 1, 16),
	OPT_SIZE(0, "split-size", &split_size, "SIZE", "what a large file is: SIZE bytes or more (default 64M)",
		 .min = 1),
	OPT_END,
};

static const struct dp_rule cp_rules[] = {
	{ DP_REQUIRES, "--delete", "--update", "--delete removes what the source lacks: give --update "
	  "too (the files that match are kept, not copied again)" },
	{ DP_REQUIRES, "--delete", "-r", "--delete is for directories: give -r" },
	{ 0 },
};

static volatile sig_atomic_t cancel;

static void on_signal(int sig)
{
	cancel = sig;
}

struct cp_state {
	const struct dp_ctx *ctx;
	bool bar;                       /* progress on the terminal */
	double start, file_start, last_draw;
	const char *file;               /* the file file_start is of (several are in flight) */
	uint64_t files, bytes, skipped, removed;
	unsigned failures;
	cJSON *items, *deleted;
};

/* "data/x.bin   42%   420.0 MiB   95.2 MiB/s", redrawn at most 10 times a second */
static void progress(void *data, const char *src, uint64_t done, uint64_t total)
{
	struct cp_state *st = data;
	double t = monotonic_seconds();
	if (!st->bar)
		return;
	if (done == 0) {
		st->file_start = t;
		st->file = src;
	}
	bool end = done == total;
	if (!end && done && t - st->last_draw < 0.1)
		return;
	st->last_draw = t;
	char amount[32], speed[32], rate[40];
	format_bytes(amount, sizeof(amount), (double)done);
	double secs = t - st->file_start;
	format_bytes(speed, sizeof(speed), secs > 0.01 ? (double)done / secs : 0);
	/* a file started before the latest one (several are in flight): rate unknown */
	snprintf(rate, sizeof(rate), "%s%s", st->file == src ? speed : "-", st->file == src ? "/s" : "");
	int pct = total ? (int)(done * 100 / total) : 100;
	const char *slash = strrchr(src, '/');
	/* a name the server gave: written out, never acted on by the terminal */
	_cleanup_free_ char *name = printable(slash && slash[1] ? slash + 1 : src);
	fprintf(stderr, "\r%-40.40s %3d%% %12s %14s\033[K%s", name, pct, amount, rate,
		end ? "\n" : "");
}

static const char *type_name(enum sftp_item_type t)
{
	return t == SFTP_DIR ? "dir" : t == SFTP_SYMLINK ? "symlink" : "file";
}

static void copied(void *data, const struct sftp_item *it)
{
	struct cp_state *st = data;
	if (it->skipped)
		st->skipped++;
	else if (it->type == SFTP_FILE) {
		st->files++;
		st->bytes += it->bytes;
	}
	_cleanup_free_ char *src = printable(it->src), *dest = printable(it->dest);
	info_msg(st->ctx, "%s -> %s%s", src, dest, it->skipped ? " (up to date: skipped)" : "");
	if (!st->items)
		return;
	char mode[8];
	snprintf(mode, sizeof(mode), "%04o", it->mode);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "src", it->src);
	cJSON_AddStringToObject(o, "dest", it->dest);
	cJSON_AddStringToObject(o, "type", type_name(it->type));
	cJSON_AddNumberToObject(o, "bytes", (double)it->bytes);
	cJSON_AddStringToObject(o, "mode", mode);
	cJSON_AddBoolToObject(o, "skipped", it->skipped);
	if (it->type == SFTP_FILE && !it->skipped)
		cJSON_AddNumberToObject(o, "connections", it->connections);
	cJSON_AddItemToArray(st->items, o);
}

static void removed(void *data, const char *dest, enum sftp_item_type type)
{
	struct cp_state *st = data;
	st->removed++;
	_cleanup_free_ char *shown = printable(dest);
	info_msg(st->ctx, "deleted %s %s", type_name(type), shown);
	if (st->deleted)
		cJSON_AddItemToArray(st->deleted, cJSON_CreateString(dest));
}

static void failed(void *data, const struct dp_error *err)
{
	struct cp_state *st = data;
	st->failures++;
	if (st->bar)
		fputs("\r\033[K", stderr);
	error_msg("%s", err->msg);
}

/* What the operands say (cp_host), for cp_fn once the session is open. */
static char **srcs, *host, *dest;
static bool upload;

static int cp_host(struct dp_ctx *ctx, const struct dp_args *args, const char **out)
{
	/* Exactly one side remote: every source on one host and a local DEST, or local
	 * sources and a remote DEST. */
	int last = args->npos - 1;
	char *h = NULL, *p = NULL;
	if (sftp_split_operand(args->pos[last], &h, &p)) {
		upload = true;
		host = h;
		dest = p;
	} else {
		dest = xstrdup(args->pos[last]);
	}
	for (int i = 0; i < last; i++) {
		bool remote = sftp_split_operand(args->pos[i], &h, &p);
		if (upload && remote) {
			free(h);
			free(p);
			return usage_error(ctx, "'%s' and '%s' are both remote: one side of a copy must be local",
					   args->pos[i], args->pos[last]);
		}
		if (!upload && !remote)
			return usage_error(ctx, "no remote side: write the remote paths as HOST:PATH");
		if (remote) {
			if (host && !streq(host, h)) {
				_cleanup_free_ char *other = h;
				free(p);
				return usage_error(ctx, "sources on two hosts ('%s' and '%s'): copy from one host at a time",
						   host, other);
			}
			if (host)
				free(h);
			else
				host = h;
			strv_push(&srcs, p);
		} else {
			strv_add(&srcs, args->pos[i]);
		}
	}
	if (!upload && host == NULL)
		return usage_error(ctx, "no remote side: write the remote paths as HOST:PATH");
	*out = host;
	return 0;
}

static int cp_fn(struct dp_ctx *ctx, const struct dp_args *args)
{
	(void)args;
	struct cp_state st = {
		.ctx = ctx,
		.bar = stderr_is_tty() && ctx->verbosity >= 0,
		.start = monotonic_seconds(),
	};
	if (ctx->json) {
		st.items = cJSON_CreateArray();
		st.deleted = cJSON_CreateArray();
	}
	c.progress = progress;
	c.copied = copied;
	c.removed = removed;
	c.failed = failed;
	c.data = &st;
	c.cancel = &cancel;
	c.ssh = ctx->ssh;
	c.split_size = (uint64_t)split_size;

	struct dp_error err = { 0 };
	struct ssh_session *s = ctx->session;
	struct sigaction sa = { .sa_handler = on_signal }, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	signal(SIGPIPE, SIG_IGN);
	int r = upload ? sftp_upload(s, srcs, dest, &c, &err) : sftp_download(s, srcs, dest, &c, &err);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	strv_free(srcs);
	free(host);
	free(dest);

	if (st.items) {
		cJSON *doc = cJSON_CreateObject();
		cJSON_AddNumberToObject(doc, "files", (double)st.files);
		cJSON_AddNumberToObject(doc, "bytes", (double)st.bytes);
		cJSON_AddNumberToObject(doc, "skipped", (double)st.skipped);
		cJSON_AddItemToObject(doc, "deleted", st.deleted);
		cJSON_AddNumberToObject(doc, "seconds", (double)(long)((monotonic_seconds() - st.start) * 1000) / 1000);
		cJSON_AddItemToObject(doc, "items", st.items);
		json_print(doc);
	}
	if (r == 0)
		return 0;
	if (!st.failures)
		report_error(&err);
	if (cancel)
		return 128 + cancel;
	return err.kind ? err.kind : DPE_FAIL;
}

const struct dispatch_cmd dispatch_cmd_cp = {
	.name = "cp",
	.summary = "copy files and directories to or from a host (SFTP)",
	.usage = "[-r] [-p] [-u [--delete]] [--sftp] [--connections K] [--split-size SIZE] SRC... DEST",
	.description = "Copy files (and with -r, directories) between this machine and a host.\n"
		       "Exactly one side is remote, written HOST:PATH;\n"
		       "remote paths are relative to the remote home. With several sources,\n"
		       "DEST is a directory. A directory whose target does not exist yet goes\n"
		       "as one tar stream where the host has tar (put in place once complete);\n"
		       "the rest, and everything with --sftp, file by file over SFTP. --update\n"
		       "copies only what changed (size or modification time), --delete removes\n"
		       "what the source no longer has. A large file copied alone goes over\n"
		       "several connections at once (--connections) where ssh logs in without\n"
		       "asking anything, each connection's cipher on a core of its own; through\n"
		       "an OpenSSH master, or after a password or passphrase, over one.",
	.opts = cp_options,
	.rules = cp_rules,
	.min_args = 2,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH | CMD_NEEDS_SESSION,
	.session_host = cp_host,
	.fn = cp_fn,
};
