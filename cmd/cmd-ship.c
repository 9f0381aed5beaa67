/* SPDX-License-Identifier: MIT */
/*
 * dispatch ship: a snapshot of the repository (lib/code/snapshot.h)
 *   HOST:PATH           streamed over one SSH channel into `tar -x` on the host
 *                       (lib/ship.h);
 *   --output FILE       written to a file, atomically (a temporary file beside it,
 *                       renamed at the end), or to stdout with '-'.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dispatch.h"
#include "code/snapshot.h"
#include "ship.h"
#include "transport/ssh.h"
#include "base/cloexec.h"

static const char *opt_output;
static struct snapshot_opts snap; /* its mode: SNAPSHOT_REF unless --dirty or --files */
static int opt_mode;

static const struct dp_option ship_options[] = {
	OPT_STRING('o', "output", &opt_output, "FILE", "write the tar.gz to FILE ('-' for stdout)", "file"),
	OPT_STRING(0, "repo", &snap.repo, "DIR", "the repository (default: the one around the current directory)", "dir"),
	OPT_STRING(0, "ref", &snap.ref, "REF", "the files of commit, tag or branch REF, as git archive (default HEAD)", NULL),
	OPT_CMDMODE(0, "dirty", &opt_mode, SNAPSHOT_DIRTY, "the work tree as it is now, untracked files included, ignored ones not"),
	OPT_CMDMODE(0, "files", &opt_mode, SNAPSHOT_FILES, "only the paths given as operands (relative to --repo)"),
	OPT_END,
};

#define ONE_KIND "--ref, --dirty and --files do not go together: choose one"
static const struct dp_rule ship_rules[] = {
	{ DP_EXCLUDES, "--ref", "--dirty --files", ONE_KIND },
	{ DP_EXCLUDES, "--dirty", "--files", ONE_KIND },
	{ 0 },
};

/* The temporary file beside the output, removed unless renamed into place. */
struct outfile {
	const char *path;
	char *tmp;
	int fd;
};

static void outfile_release(struct outfile *o)
{
	if (o->fd > STDOUT_FILENO)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
}

static int outfile_open(struct outfile *o, const char *path, struct dp_error *err)
{
	o->path = path;
	o->fd = -1;
	if (streq(path, "-")) {
		o->fd = STDOUT_FILENO;
		return 0;
	}
	const char *slash = strrchr(path, '/');
	if (slash)
		o->tmp = xasprintf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1);
	else
		o->tmp = xasprintf(".%s.XXXXXX", path);
	o->fd = cloexec_mkstemp(o->tmp);
	if (o->fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return dp_err(err, DPE_FAIL, "cannot create '%s': %s", path, strerror(errno));
	}
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(o->fd, 0666 & ~mask) < 0)
		return dp_err(err, DPE_FAIL, "cannot create '%s': %s", path, strerror(errno));
	return 0;
}

static int outfile_commit(struct outfile *o, struct dp_error *err)
{
	if (!o->tmp)
		return 0;
	int r = close(o->fd);
	o->fd = -1;
	if (r < 0)
		return dp_err(err, DPE_FAIL, "cannot write '%s': %s", o->path, strerror(errno));
	if (rename(o->tmp, o->path) < 0)
		return dp_err(err, DPE_FAIL, "cannot rename '%s' to '%s': %s", o->tmp, o->path,
			      strerror(errno));
	free(o->tmp);
	o->tmp = NULL;
	return 0;
}

/* ---- HOST:PATH ---- */

/* "HOST:PATH" as scp reads it: HOST up to the first ':'. 0 when arg is not one. */
static int split_remote(const char *arg, char **host, char **path)
{
	const char *colon = strchr(arg, ':');
	if (!colon || colon == arg)
		return -1;
	*host = xstrndup(arg, (size_t)(colon - arg));
	*path = xstrdup(colon + 1);
	return 0;
}

static cJSON *json_str_or_null(const char *s)
{
	return s && *s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static void print_json(const char *output, const char *host, const char *path,
		       const struct snapshot_opts *so, const struct snapshot_info *info)
{
	static const char *const modes[] = { "ref", "dirty", "files" };
	cJSON *doc = cJSON_CreateObject();
	cJSON_AddItemToObject(doc, "output", json_str_or_null(output));
	cJSON_AddItemToObject(doc, "host", host ? cJSON_CreateString(host) : cJSON_CreateNull());
	cJSON_AddItemToObject(doc, "path", path ? cJSON_CreateString(path) : cJSON_CreateNull());
	cJSON_AddStringToObject(doc, "mode", modes[so->mode]);
	cJSON_AddItemToObject(doc, "ref", json_str_or_null(so->mode == SNAPSHOT_REF ?
							   (so->ref ? so->ref : "HEAD") : NULL));
	cJSON_AddItemToObject(doc, "commit", json_str_or_null(info->commit));
	cJSON_AddItemToObject(doc, "tree", json_str_or_null(info->tree));
	cJSON_AddStringToObject(doc, "sha256", info->sha256);
	cJSON_AddNumberToObject(doc, "bytes", (double)info->bytes);
	cJSON_AddNumberToObject(doc, "tar_bytes", (double)info->tar_bytes);
	cJSON_AddNumberToObject(doc, "files", (double)info->files);
	cJSON_AddNumberToObject(doc, "mtime", (double)info->mtime);
	if (so->mode == SNAPSHOT_REF) {
		cJSON_AddNullToObject(doc, "dirty");
	} else {
		cJSON *d = cJSON_AddObjectToObject(doc, "dirty");
		cJSON_AddNumberToObject(d, "modified", (double)info->modified);
		cJSON_AddNumberToObject(d, "untracked", (double)info->untracked);
		cJSON_AddNumberToObject(d, "deleted", (double)info->deleted);
	}
	json_print(doc);
}

static int ship_file(struct dp_ctx *ctx, struct snapshot_opts *so, const char *output,
		     struct snapshot_info *info)
{
	if (streq(output, "-") && ctx->json)
		return usage_error(ctx, "--json and --output - both want stdout: write the tarball to a file");
	if (streq(output, "-") && stdout_is_tty()) {
		error_msg("refusing to write a tar.gz to a terminal: redirect stdout or give --output FILE");
		return DPE_INPUT;
	}

	struct dp_error err = { 0 };
	struct outfile out = { 0 };
	int r = outfile_open(&out, output, &err);
	if (r == 0) {
		fflush(stdout);
		so->write = snapshot_write_fd;
		so->write_arg = &out.fd;
		r = snapshot_create(so, info, &err);
	}
	if (r == 0)
		r = outfile_commit(&out, &err);
	outfile_release(&out);
	if (r < 0)
		return report_error(&err);
	info_msg(ctx, "wrote %llu bytes (%llu files, %llu bytes of tar) to '%s', sha256 %s",
		 (unsigned long long)info->bytes, (unsigned long long)info->files,
		 (unsigned long long)info->tar_bytes, output, info->sha256);
	return 0;
}

struct bar {
	const char *dest;
};

static void progress_draw(void *data, uint64_t sent, double seconds, bool final, bool ok)
{
	const struct bar *b = data;
	char size[32], rate[32];
	format_bytes(size, sizeof(size), (double)sent);
	format_bytes(rate, sizeof(rate), seconds > 0 ? (double)sent / seconds : 0);
	fprintf(stderr, "\rshipping to %s: %s, %s/s%s\033[K%s", b->dest, size, rate,
		final && ok ? ", done." : "", final ? "\n" : "");
	fflush(stderr);
}

static int ship_remote(struct dp_ctx *ctx, struct snapshot_opts *so, const char *dest,
		       const char *host, const char *path, struct snapshot_info *info)
{
	_cleanup_strbuf_ struct strbuf word = STRBUF_INIT, said = STRBUF_INIT;
	if (ship_dir_word(&word, path) < 0)
		return usage_error(ctx, "cannot expand '%s' in '%s': only ~, ~/ and ~USER/ are (USER a plain name)",
				   path, dest);
	struct bar b = { .dest = dest };
	struct ship_target t = { .sc = ctx->ssh, .host = host, .path = path, .dest = dest, .data = &b };
	if (ctx->verbosity >= 0 && stderr_is_tty())
		t.progress = progress_draw;
	struct dp_error err = { 0 };
	double seconds = 0;
	int r = ship_to_host(&t, so, info, &said, &seconds, &err);
	fwrite(said.buf, 1, said.len, stderr);
	if (r < 0)
		return report_error(&err);
	info_msg(ctx, "shipped %llu bytes (%llu files, %llu bytes of tar) to '%s' in %.2f s, sha256 %s",
		 (unsigned long long)info->bytes, (unsigned long long)info->files,
		 (unsigned long long)info->tar_bytes, dest, seconds, info->sha256);
	return 0;
}

static int cmd_ship(struct dp_ctx *ctx, const struct dp_args *args)
{
	snap.mode = (enum snapshot_mode)opt_mode;
	/* The destination: --output FILE, or else the first operand, HOST:PATH. */
	_cleanup_free_ char *host = NULL, *path = NULL;
	int first = 0;
	if (!opt_output) {
		if (args->npos == 0)
			return usage_error(ctx, "'ship' needs a destination: HOST:PATH, or --output FILE");
		if (split_remote(args->pos[0], &host, &path) < 0)
			return usage_error(ctx, "'%s' is not HOST:PATH (to write a file, use --output FILE)",
					   args->pos[0]);
		first = 1;
	}
	if (snap.mode == SNAPSHOT_FILES && args->npos == first)
		return usage_error(ctx, "--files needs the paths to snapshot");
	if (snap.mode != SNAPSHOT_FILES && args->npos > first)
		return usage_error(ctx, "unexpected argument '%s' (to snapshot only some paths, use --files)",
				   args->pos[first]);

	_cleanup_strv_free_ char **files = NULL;
	for (int i = first; i < args->npos; i++)
		strv_add(&files, args->pos[i]);
	snap.files = files;
	snap.want_sha256 = ctx->json || ctx->verbosity > 0;

	struct snapshot_info info;
	int rc = opt_output ? ship_file(ctx, &snap, opt_output, &info)
			: ship_remote(ctx, &snap, args->pos[0], host, path, &info);
	if (rc)
		return rc;

	if (snap.mode != SNAPSHOT_REF && ctx->verbosity >= 0) {
		char line[128];
		snapshot_summary(&info, line, sizeof(line));
		note_msg("snapshot of %s: %s",
			 snap.mode == SNAPSHOT_DIRTY ? "the work tree" : "the named paths", line);
	}
	if (ctx->json)
		print_json(opt_output, host, path, &snap, &info);
	return 0;
}

const struct dispatch_cmd dispatch_cmd_ship = {
	.name = "ship",
	.summary = "copy the repository (a commit, the work tree, or some paths) to a host or a tar.gz",
	.usage = "HOST:PATH [--repo DIR] [--ref REF | --dirty | --files PATH...]\n"
		 "--output FILE.tar.gz [--repo DIR] [--ref REF | --dirty | --files PATH...]",
	.description = "Snapshots the repository: the files 'git archive REF' would write (default\n"
		       "HEAD), the work tree as it is now (--dirty), or only some paths (--files),\n"
		       "and extracts it into PATH on HOST over one SSH connection, or writes it to\n"
		       "FILE. The bytes are deterministic: the same content gives the same sha256.",
	.opts = ship_options,
	.rules = ship_rules,
	.min_args = 0,
	.max_args = -1,
	.flags = CMD_WANTS_INVENTORY | CMD_NEEDS_SSH,
	.fn = cmd_ship,
};
